import type { ReceiptRequest } from '../../../shared/receipts.js';

/**
 * What this browser remembers of a clerk's folder upload, so that a reload, a crash or a closed
 * tab loses nothing and counts nothing twice: each file by its path in the folder, with its own
 * upload key, where it stood (sent and not yet answered, proved with a claim, finished) and how
 * it ended. Kept in IndexedDB per account (another clerk on this browser sees none of it).
 */
export type JournalState = 'waiting' | 'proving' | 'sending' | 'done' | 'failed';

/** How a file ended; a counted one says how it was counted (for the receipt: the key or the claim). */
export type JournalOutcome =
  | { kind: 'instant'; fileId: string; uploadCount: number; claimId: string }
  | { kind: 'stored' | 'duplicate'; fileId: string; uploadCount: number; via: 'batch' | 'tus' }
  | { kind: 'failed'; code: string; message: string; retry: boolean }
  /** Sent into this unit by this clerk before, and not counted again (the clerk's choice). */
  | { kind: 'skipped'; fileId: string; lastUploadTime: string; uploadCount: number };

/** The folder upload itself: its receipt's id, what it is called, when it started. */
export interface UploadAction {
  receiptId: string;
  title: string;
  startedAt: string;
  /** What the receipt kept on the server last held (rows by outcome), so a reload resends only a changed one. */
  kept?: string;
}

export interface JournalEntry {
  path: string;
  size: number;
  lastModified: number;
  type: string;
  /** The file's upload key: a file sent again under it is counted once. */
  key: string;
  state: JournalState;
  md5?: string;
  sha256?: string;
  /** A proof sent and not answered: sent again with the same claim, it is answered as counted. */
  claim?: { claimId: string; digests: string[] };
  outcome?: JournalOutcome;
  finishedAt?: number;
  /** Counted without its bytes as identical to this file of the same list (see UploadItem.sameAs). */
  sameAs?: string;
}

/** A list's receipt as it stands: its action, the request that keeps it, and its shape (rows by outcome). */
export interface KeptReceipt {
  action: UploadAction;
  request: ReceiptRequest;
  shape: string;
}

export interface UploadJournal {
  load(): Promise<JournalEntry[]>;
  loadAction(): Promise<UploadAction | undefined>;
  saveAction(action: UploadAction): Promise<void>;
  /** Written before a request that may count the entries is sent. */
  save(entries: readonly JournalEntry[]): Promise<void>;
  remove(paths: readonly string[]): Promise<void>;
  /** Forgets the entries and the action (not the receipts owed). */
  clear(): Promise<void>;
  /** Receipts of cleared lists that the archive has not kept yet: a reload sends them again. */
  loadOwed(): Promise<KeptReceipt[]>;
  /** Replaces the receipts owed. */
  saveOwed(owed: readonly KeptReceipt[]): Promise<void>;
}

/** A journal that forgets (IndexedDB unavailable: a private window's quota, an old browser). */
export class MemoryJournal implements UploadJournal {
  #entries = new Map<string, JournalEntry>();
  #action: UploadAction | undefined;
  #owed: KeptReceipt[] = [];
  async loadAction(): Promise<UploadAction | undefined> {
    return this.#action;
  }
  async saveAction(action: UploadAction): Promise<void> {
    this.#action = { ...action };
  }
  async load(): Promise<JournalEntry[]> {
    return [...this.#entries.values()];
  }
  async save(entries: readonly JournalEntry[]): Promise<void> {
    for (const entry of entries) this.#entries.set(entry.path, { ...entry });
  }
  async remove(paths: readonly string[]): Promise<void> {
    for (const path of paths) this.#entries.delete(path);
  }
  async clear(): Promise<void> {
    this.#entries.clear();
    this.#action = undefined;
  }
  async loadOwed(): Promise<KeptReceipt[]> {
    return JSON.parse(JSON.stringify(this.#owed)) as KeptReceipt[];
  }
  async saveOwed(owed: readonly KeptReceipt[]): Promise<void> {
    // A copy, as IndexedDB keeps one (structuredClone is not in Chromium 86).
    this.#owed = JSON.parse(JSON.stringify(owed)) as KeptReceipt[];
  }
}
