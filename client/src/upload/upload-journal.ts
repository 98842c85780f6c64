/**
 * What this browser remembers of a clerk's folder upload, so that a reload, a crash or a closed
 * tab loses nothing and counts nothing twice: each file by its path in the folder, with its own
 * upload key, where it stood (sent and not yet answered, proved with a claim, finished) and how
 * it ended. Kept in IndexedDB per account (another clerk on this browser sees none of it).
 */
export type JournalState = 'waiting' | 'proving' | 'sending' | 'done' | 'failed';

export type JournalOutcome =
  | { kind: 'instant' | 'stored' | 'duplicate'; fileId: string; uploadCount: number }
  | { kind: 'failed'; code: string; message: string; retry: boolean };

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
}

export interface UploadJournal {
  load(): Promise<JournalEntry[]>;
  /** Written before a request that may count the entries is sent. */
  save(entries: readonly JournalEntry[]): Promise<void>;
  remove(paths: readonly string[]): Promise<void>;
  clear(): Promise<void>;
}

const DB_NAME = 'archive-upload';
const STORE = 'entries';

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });
}

function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction failed'));
  });
}

let opened: Promise<IDBDatabase> | undefined;

function database(): Promise<IDBDatabase> {
  opened ??= new Promise<IDBDatabase>((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => {
      const store = req.result.createObjectStore(STORE, { keyPath: ['account', 'path'] });
      store.createIndex('account', 'account');
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB could not be opened'));
  });
  return opened;
}

/** The journal of one account's folder upload in IndexedDB. */
export class IndexedDbJournal implements UploadJournal {
  constructor(private readonly account: string) {}

  async load(): Promise<JournalEntry[]> {
    const db = await database();
    const rows = await request(
      db.transaction(STORE).objectStore(STORE).index('account').getAll(IDBKeyRange.only(this.account)),
    );
    return (rows as Array<JournalEntry & { account: string }>).map(({ account: _, ...entry }) => entry);
  }

  async save(entries: readonly JournalEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const db = await database();
    const tx = db.transaction(STORE, 'readwrite');
    const store = tx.objectStore(STORE);
    for (const entry of entries) store.put({ ...entry, account: this.account });
    await done(tx);
  }

  async remove(paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    const db = await database();
    const tx = db.transaction(STORE, 'readwrite');
    const store = tx.objectStore(STORE);
    for (const path of paths) store.delete([this.account, path]);
    await done(tx);
  }

  async clear(): Promise<void> {
    const db = await database();
    const tx = db.transaction(STORE, 'readwrite');
    const range = IDBKeyRange.bound([this.account], [this.account, []]);
    tx.objectStore(STORE).delete(range);
    await done(tx);
  }
}

/** A journal that forgets (IndexedDB unavailable: a private window's quota, an old browser). */
export class MemoryJournal implements UploadJournal {
  #entries = new Map<string, JournalEntry>();
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
  }
}
