import type { Db, EmbeddedSchema } from '../embedded/database.js';
import type { ClaimRecord, ClaimStore } from './port.js';

export const claimSchema: EmbeddedSchema = {
  tables: `
CREATE TABLE IF NOT EXISTS claims (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL,
  file_id      TEXT NOT NULL,
  file_name    TEXT NOT NULL,
  content_type TEXT NOT NULL,
  ranges       TEXT NOT NULL,
  expected     TEXT NOT NULL,
  expires_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS claims_expiry ON claims (expires_at);
CREATE INDEX IF NOT EXISTS claims_account ON claims (account_id, expires_at);
`,
};

interface ClaimRow {
  id: string;
  account_id: string;
  file_id: string;
  file_name: string;
  content_type: string;
  ranges: string;
  expected: string;
  expires_at: number;
}

export class EmbeddedClaimStore implements ClaimStore {
  private readonly createAll;
  private readonly takeAll;

  constructor(private readonly db: Db) {
    const insert = db.prepare(
      'INSERT INTO claims (id, account_id, file_id, file_name, content_type, ranges, expected, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const takeOne = db.prepare<[string], ClaimRow>('DELETE FROM claims WHERE id = ? RETURNING *');
    // One transaction for a bulk request's claims, not one commit (and WAL write) each.
    this.createAll = db.transaction((claims: readonly ClaimRecord[]) => {
      for (const c of claims)
        insert.run(
          c.id,
          c.accountId,
          c.fileId,
          c.fileName,
          c.contentType,
          JSON.stringify(c.ranges),
          JSON.stringify(c.expected),
          c.expiresAt.getTime(),
        );
    });
    this.takeAll = db.transaction((ids: readonly string[]) => {
      const taken = new Map<string, ClaimRecord>();
      for (const id of ids) {
        const row = taken.has(id) ? undefined : takeOne.get(id);
        if (row) taken.set(id, claimFromRow(row));
      }
      return taken;
    });
  }

  async create(claim: ClaimRecord): Promise<void> {
    this.createAll([claim]);
  }

  async createMany(claims: readonly ClaimRecord[]): Promise<void> {
    if (claims.length > 0) this.createAll(claims);
  }

  async take(id: string): Promise<ClaimRecord | undefined> {
    return this.takeAll([id]).get(id);
  }

  async takeMany(ids: readonly string[]): Promise<Map<string, ClaimRecord>> {
    return ids.length > 0 ? this.takeAll(ids) : new Map();
  }

  async countOutstanding(accountId: string, now: Date): Promise<number> {
    return this.db
      .prepare<[string, number], { n: number }>(
        'SELECT COUNT(*) AS n FROM claims WHERE account_id = ? AND expires_at > ?',
      )
      .get(accountId, now.getTime())!.n;
  }

  async purgeExpired(now: Date): Promise<void> {
    this.db.prepare('DELETE FROM claims WHERE expires_at <= ?').run(now.getTime());
  }
}

function claimFromRow(row: ClaimRow): ClaimRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    fileId: row.file_id,
    fileName: row.file_name,
    contentType: row.content_type,
    ranges: JSON.parse(row.ranges) as ClaimRecord['ranges'],
    expected: JSON.parse(row.expected) as string[],
    expiresAt: new Date(row.expires_at),
  };
}
