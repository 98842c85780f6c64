import type { ReceiptRow, ReceiptOutcome } from '../../../shared/receipts.js';

/** A folder upload's receipt (上传清单) as stored: one record, its rows as the archive checked them. */
export interface ReceiptRecord {
  id: string;
  accountId: string;
  title: string;
  startedAt: Date;
  updatedAt: Date;
  counts: Record<ReceiptOutcome, number>;
  /** What it takes to keep, as the service measured it (receiptBytes: its title and rows as JSON, UTF-8). */
  bytes: number;
  rows: ReceiptRow[];
}

export type ReceiptHeader = Omit<ReceiptRecord, 'rows'>;

export interface ReceiptStore {
  /** Stores the receipt, replacing the account's receipt of the same id (the page sends it again as retries finish). */
  put(receipt: ReceiptRecord): Promise<void>;
  get(accountId: string, id: string): Promise<ReceiptRecord | undefined>;
  /** The `bytes` of the account's receipt of this id, without reading its rows; undefined: there is none. */
  sizeOf(accountId: string, id: string): Promise<number | undefined>;
  /** The account's receipts, the most recently updated first, without their rows. */
  list(accountId: string, page: { limit: number; offset: number }): Promise<{ items: ReceiptHeader[]; total: number }>;
  /**
   * Clears what writes begun before `before` left unfinished (a crash between their steps, on a
   * store without transactions: rows nothing points at); returns how many. Run by the garbage
   * collector's sweep.
   */
  finishInterrupted(before: Date): Promise<number>;
}
