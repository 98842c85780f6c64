import { addMissingColumns, hasColumn, type Db, type EmbeddedSchema } from '../embedded/database.js';
import type { ReceiptHeader, ReceiptRecord, ReceiptStore } from './port.js';

export const receiptSchema: EmbeddedSchema = {
  tables: `
CREATE TABLE IF NOT EXISTS receipts (
  account_id TEXT NOT NULL,
  id         TEXT NOT NULL,
  title      TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  counts     TEXT NOT NULL,
  rows       TEXT NOT NULL,
  -- receiptBytes of title and rows (the daily quota counts what a receipt adds).
  bytes      INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX IF NOT EXISTS receipts_recent ON receipts (account_id, updated_at DESC);
`,
  upgrade(db) {
    // Receipts of an earlier version are measured once, when the column arrives (as stored: the
    // same JSON the service measures).
    if (hasColumn(db, 'receipts', 'bytes')) return;
    addMissingColumns(db, 'receipts', { bytes: 'INTEGER NOT NULL DEFAULT 0' });
    db.exec('UPDATE receipts SET bytes = length(CAST(title AS BLOB)) + length(CAST(rows AS BLOB))');
  },
};

interface ReceiptRow {
  account_id: string;
  id: string;
  title: string;
  started_at: number;
  updated_at: number;
  counts: string;
  bytes: number;
  rows?: string;
}

const header = (row: ReceiptRow): ReceiptHeader => ({
  id: row.id,
  accountId: row.account_id,
  title: row.title,
  startedAt: new Date(row.started_at),
  updatedAt: new Date(row.updated_at),
  counts: JSON.parse(row.counts) as ReceiptHeader['counts'],
  bytes: row.bytes,
});

export class EmbeddedReceiptStore implements ReceiptStore {
  constructor(private readonly db: Db) {}

  async put(r: ReceiptRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO receipts (account_id, id, title, started_at, updated_at, counts, rows, bytes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id, id) DO UPDATE SET title = excluded.title, started_at = excluded.started_at,
           updated_at = excluded.updated_at, counts = excluded.counts, rows = excluded.rows, bytes = excluded.bytes`,
      )
      .run(
        r.accountId,
        r.id,
        r.title,
        r.startedAt.getTime(),
        r.updatedAt.getTime(),
        JSON.stringify(r.counts),
        JSON.stringify(r.rows),
        r.bytes,
      );
  }

  /** Nothing: a receipt is one row, written in one statement. */
  async finishInterrupted(): Promise<number> {
    return 0;
  }

  async sizeOf(accountId: string, id: string): Promise<number | undefined> {
    return this.db
      .prepare<[string, string], { bytes: number }>('SELECT bytes FROM receipts WHERE account_id = ? AND id = ?')
      .get(accountId, id)?.bytes;
  }

  async get(accountId: string, id: string): Promise<ReceiptRecord | undefined> {
    const row = this.db
      .prepare<[string, string], ReceiptRow>('SELECT * FROM receipts WHERE account_id = ? AND id = ?')
      .get(accountId, id);
    return row && { ...header(row), rows: JSON.parse(row.rows!) as ReceiptRecord['rows'] };
  }

  async list(
    accountId: string,
    page: { limit: number; offset: number },
  ): Promise<{ items: ReceiptHeader[]; total: number }> {
    const rows = this.db
      .prepare<[string, number, number], ReceiptRow>(
        'SELECT account_id, id, title, started_at, updated_at, counts, bytes FROM receipts WHERE account_id = ? ORDER BY updated_at DESC, id LIMIT ? OFFSET ?',
      )
      .all(accountId, page.limit, page.offset);
    const total = this.db
      .prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM receipts WHERE account_id = ?')
      .get(accountId)!.n;
    return { items: rows.map(header), total };
  }
}
