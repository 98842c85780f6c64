import type { Unit } from '../../../shared/schemas.js';
import type { WithdrawalReason } from '../../../shared/withdrawals.js';
import { addMissingColumns, type Db, type EmbeddedSchema } from '../embedded/database.js';
import { scopeWhere } from '../embedded/scopes.js';
import type { ViewScope } from '../ledger/port.js';
import type { Person, WithdrawalRecord, WithdrawalState, WithdrawalStore } from './port.js';

export const withdrawalSchema: EmbeddedSchema = {
  tables: `
-- Withdrawals of upload actions (撤回) and their restores; kept after a restore as the record.
-- open_key is the upload's key while the withdrawal is not restored (NULL after): at most one
-- open withdrawal per upload.
CREATE TABLE IF NOT EXISTS withdrawals (
  id           TEXT PRIMARY KEY,
  upload_key   TEXT NOT NULL,
  open_key     TEXT UNIQUE,
  account_id   TEXT NOT NULL,
  account_name TEXT NOT NULL,
  unit_id      TEXT NOT NULL,
  unit         TEXT NOT NULL,
  city         TEXT,
  county       TEXT,
  town         TEXT,
  file_id      TEXT NOT NULL,
  file_name    TEXT NOT NULL,
  file_length  INTEGER NOT NULL,
  uploaded_at  INTEGER NOT NULL,
  by_id        TEXT NOT NULL,
  by_name      TEXT NOT NULL,
  at           INTEGER NOT NULL,
  reason       TEXT NOT NULL,
  note         TEXT,
  state        TEXT NOT NULL,
  cleared      INTEGER NOT NULL DEFAULT 1,
  changed_at   INTEGER NOT NULL,
  restored_by_id   TEXT,
  restored_by_name TEXT,
  restored_at      INTEGER,
  purged_by_id     TEXT,
  purged_by_name   TEXT,
  purged_at        INTEGER
);
CREATE INDEX IF NOT EXISTS withdrawals_trash ON withdrawals (city, county, town, at) WHERE open_key IS NOT NULL;
`,
  upgrade(db) {
    // Data directories made before purging (2026-11-28) lack who purged and when.
    addMissingColumns(db, 'withdrawals', { purged_by_id: 'TEXT', purged_by_name: 'TEXT', purged_at: 'INTEGER' });
    // Before holds were asked after a withdrawal was recorded (2026-11-29), they were asked before: cleared.
    addMissingColumns(db, 'withdrawals', { cleared: 'INTEGER NOT NULL DEFAULT 1' });
    db.exec(`
DROP INDEX IF EXISTS withdrawals_unfinished;
DROP INDEX IF EXISTS withdrawals_unfinished_steps;
CREATE INDEX IF NOT EXISTS withdrawals_by_state ON withdrawals (state, changed_at, id);
CREATE INDEX IF NOT EXISTS withdrawals_expiring ON withdrawals (at) WHERE state = 'withdrawn';
CREATE INDEX IF NOT EXISTS withdrawals_file ON withdrawals (file_id) WHERE open_key IS NOT NULL;
`);
  },
};

interface Row {
  id: string;
  upload_key: string;
  account_id: string;
  account_name: string;
  unit: string;
  file_id: string;
  file_name: string;
  file_length: number;
  uploaded_at: number;
  by_id: string;
  by_name: string;
  at: number;
  reason: WithdrawalReason;
  note: string | null;
  state: WithdrawalState;
  cleared: number;
  changed_at: number;
  restored_by_id: string | null;
  restored_by_name: string | null;
  restored_at: number | null;
  purged_by_id: string | null;
  purged_by_name: string | null;
  purged_at: number | null;
}

const recordOf = (r: Row): WithdrawalRecord => ({
  id: r.id,
  uploadKey: r.upload_key,
  upload: {
    account: { id: r.account_id, username: r.account_name },
    unit: JSON.parse(r.unit) as Unit,
    fileId: r.file_id,
    fileName: r.file_name,
    fileLength: r.file_length,
    at: new Date(r.uploaded_at),
  },
  withdrawnBy: { id: r.by_id, username: r.by_name },
  withdrawnAt: new Date(r.at),
  reason: r.reason,
  note: r.note,
  state: r.state,
  cleared: r.cleared === 1,
  changedAt: new Date(r.changed_at),
  restoredBy: r.restored_by_id === null ? null : { id: r.restored_by_id, username: r.restored_by_name! },
  restoredAt: r.restored_at === null ? null : new Date(r.restored_at),
  purgedBy: r.purged_by_id === null ? null : { id: r.purged_by_id, username: r.purged_by_name! },
  purgedAt: r.purged_at === null ? null : new Date(r.purged_at),
});

/** Withdrawals written in one transaction: a receipt's 10,000 in a few commits. */
const PER_TRANSACTION = 500;

export class EmbeddedWithdrawalStore implements WithdrawalStore {
  private readonly insert;
  private readonly byOpenKey;
  private readonly byId;
  private readonly move;

  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      `INSERT INTO withdrawals (id, upload_key, open_key, account_id, account_name, unit_id, unit, city, county, town,
         file_id, file_name, file_length, uploaded_at, by_id, by_name, at, reason, note, state, cleared, changed_at)
       VALUES (@id, @uploadKey, @uploadKey, @accountId, @accountName, @unitId, @unit, @city, @county, @town,
         @fileId, @fileName, @fileLength, @uploadedAt, @byId, @byName, @at, @reason, @note, @state, @cleared, @changedAt)
       ON CONFLICT (open_key) DO NOTHING`,
    );
    this.byOpenKey = db.prepare<[string], Row>('SELECT * FROM withdrawals WHERE open_key = ?');
    this.byId = db.prepare<[string], Row>('SELECT * FROM withdrawals WHERE id = ?');
    this.move = db.prepare(
      `UPDATE withdrawals SET state = @to, changed_at = @at,
         cleared = CASE WHEN @to = 'purging' THEN 0 ELSE cleared END,
         open_key = CASE WHEN @to = 'restored' THEN NULL ELSE open_key END,
         restored_by_id = COALESCE(@restorerId, restored_by_id), restored_by_name = COALESCE(@restorerName, restored_by_name),
         restored_at = CASE WHEN @restorerId IS NULL THEN restored_at ELSE @at END,
         purged_by_id = COALESCE(@purgerId, purged_by_id), purged_by_name = COALESCE(@purgerName, purged_by_name),
         purged_at = CASE WHEN @purgerId IS NULL THEN purged_at ELSE @at END
       WHERE id = @id AND state = @from`,
    );
    this.openAll = db.transaction((records: readonly WithdrawalRecord[]) => records.map((r) => this.openOne(r)));
    this.advanceAll = db.transaction(
      (ids: readonly string[], from: WithdrawalState, to: WithdrawalState, at: Date, by?: Person) =>
        ids.filter((id) => this.advanceOne(id, from, to, at, by)),
    );
    const clear = db.prepare("UPDATE withdrawals SET cleared = 1 WHERE id = ? AND state = 'withdrawing'");
    this.clearAll = db.transaction((ids: readonly string[]) => ids.filter((id) => clear.run(id).changes === 1));
    const stop = db.prepare("DELETE FROM withdrawals WHERE id = ? AND state = 'withdrawing' AND cleared = 0");
    this.stopAll = db.transaction((ids: readonly string[]) => ids.filter((id) => stop.run(id).changes === 1));
    this.clearPurgeOf = db.prepare("UPDATE withdrawals SET cleared = 1 WHERE id = ? AND state = 'purging'");
    this.stopPurgeOf = db.prepare(
      `UPDATE withdrawals SET state = 'withdrawn', cleared = 1, changed_at = ?,
         purged_by_id = NULL, purged_by_name = NULL, purged_at = NULL
       WHERE id = ? AND state = 'purging' AND cleared = 0`,
    );
  }

  private readonly clearPurgeOf;
  private readonly stopPurgeOf;

  async clearPurge(id: string): Promise<boolean> {
    // One statement: of a clear and a stop (which needs `cleared = 0`) racing, SQLite orders them.
    return this.clearPurgeOf.run(id).changes === 1;
  }

  async stopPurge(id: string, at: Date): Promise<boolean> {
    return this.stopPurgeOf.run(at.getTime(), id).changes === 1;
  }

  private readonly openAll;
  private readonly advanceAll;
  private readonly clearAll;
  private readonly stopAll;

  async open(r: WithdrawalRecord): Promise<{ record: WithdrawalRecord; opened: boolean }> {
    return this.openOne(r);
  }

  async openMany(records: readonly WithdrawalRecord[]): Promise<Array<{ record: WithdrawalRecord; opened: boolean }>> {
    const answers: Array<{ record: WithdrawalRecord; opened: boolean }> = [];
    for (let at = 0; at < records.length; at += PER_TRANSACTION)
      answers.push(...this.openAll.immediate(records.slice(at, at + PER_TRANSACTION)));
    return answers;
  }

  async advanceMany(
    ids: readonly string[],
    from: WithdrawalState,
    to: WithdrawalState,
    at: Date,
    by?: Person,
  ): Promise<Set<string>> {
    const moved = new Set<string>();
    for (let i = 0; i < ids.length; i += PER_TRANSACTION)
      for (const id of this.advanceAll.immediate(ids.slice(i, i + PER_TRANSACTION), from, to, at, by)) moved.add(id);
    return moved;
  }

  async clearMany(ids: readonly string[]): Promise<Set<string>> {
    const cleared = new Set<string>();
    // Each statement is atomic: a stop (a DELETE of the uncleared) and a clear never both succeed.
    for (let at = 0; at < ids.length; at += PER_TRANSACTION)
      for (const id of this.clearAll.immediate(ids.slice(at, at + PER_TRANSACTION))) cleared.add(id);
    return cleared;
  }

  async stopMany(ids: readonly string[]): Promise<Set<string>> {
    const stopped = new Set<string>();
    for (let at = 0; at < ids.length; at += PER_TRANSACTION)
      for (const id of this.stopAll.immediate(ids.slice(at, at + PER_TRANSACTION))) stopped.add(id);
    return stopped;
  }

  async getMany(ids: readonly string[]): Promise<Map<string, WithdrawalRecord>> {
    const found = new Map<string, WithdrawalRecord>();
    const unique = [...new Set(ids)];
    for (let at = 0; at < unique.length; at += 500) {
      const some = unique.slice(at, at + 500);
      const rows = this.db
        .prepare<string[], Row>(`SELECT * FROM withdrawals WHERE id IN (${some.map(() => '?').join(', ')})`)
        .all(...some);
      for (const row of rows) found.set(row.id, recordOf(row));
    }
    return found;
  }

  private openOne(r: WithdrawalRecord): { record: WithdrawalRecord; opened: boolean } {
    const u = r.upload;
    const { changes } = this.insert.run({
      id: r.id,
      uploadKey: r.uploadKey,
      accountId: u.account.id,
      accountName: u.account.username,
      unitId: u.unit.id,
      unit: JSON.stringify(u.unit),
      city: u.unit.city,
      county: u.unit.county ?? null,
      town: u.unit.town ?? null,
      fileId: u.fileId,
      fileName: u.fileName,
      fileLength: u.fileLength,
      uploadedAt: u.at.getTime(),
      byId: r.withdrawnBy.id,
      byName: r.withdrawnBy.username,
      at: r.withdrawnAt.getTime(),
      reason: r.reason,
      note: r.note,
      state: r.state,
      cleared: r.cleared ? 1 : 0,
      changedAt: r.changedAt.getTime(),
    });
    if (changes === 1) return { record: r, opened: true };
    return { record: recordOf(this.byOpenKey.get(r.uploadKey)!), opened: false };
  }

  async advance(id: string, from: WithdrawalState, to: WithdrawalState, at: Date, by?: Person): Promise<boolean> {
    return this.advanceOne(id, from, to, at, by);
  }

  private advanceOne(id: string, from: WithdrawalState, to: WithdrawalState, at: Date, by?: Person): boolean {
    const { changes } = this.move.run({
      id,
      from,
      to,
      at: at.getTime(),
      // Who moved it: the restorer, or, into `purging`, the purger.
      restorerId: to === 'purging' ? null : (by?.id ?? null),
      restorerName: to === 'purging' ? null : (by?.username ?? null),
      purgerId: to === 'purging' ? (by?.id ?? null) : null,
      purgerName: to === 'purging' ? (by?.username ?? null) : null,
    });
    return changes === 1;
  }

  async close(id: string, at: Date): Promise<boolean> {
    const { changes } = this.db
      .prepare(
        `UPDATE withdrawals SET state = 'disposed', changed_at = ?, open_key = NULL
         WHERE id = ? AND state NOT IN ('restored', 'disposed')`,
      )
      .run(at.getTime(), id);
    return changes === 1;
  }

  async drop(id: string): Promise<void> {
    this.db.prepare("DELETE FROM withdrawals WHERE id = ? AND state = 'withdrawing'").run(id);
  }

  async get(id: string): Promise<WithdrawalRecord | undefined> {
    const row = this.byId.get(id);
    return row && recordOf(row);
  }

  async openOf(uploadKeys: readonly string[]): Promise<Map<string, WithdrawalRecord>> {
    const found = new Map<string, WithdrawalRecord>();
    const unique = [...new Set(uploadKeys)];
    // A few hundred a statement: a receipt's 10,000 in a few dozen reads, not 10,000.
    for (let at = 0; at < unique.length; at += 500) {
      const some = unique.slice(at, at + 500);
      const rows = this.db
        .prepare<string[], Row>(`SELECT * FROM withdrawals WHERE open_key IN (${some.map(() => '?').join(', ')})`)
        .all(...some);
      for (const row of rows) found.set(row.upload_key, recordOf(row));
    }
    return found;
  }

  async trash(
    scope: ViewScope | undefined,
    page: { limit: number; offset: number },
  ): Promise<{ items: WithdrawalRecord[]; total: number }> {
    const where = scopeWhere('w', scope);
    const filter = `FROM withdrawals w WHERE w.open_key IS NOT NULL AND w.state <> 'purged' AND ${where.sql}`;
    const total = this.db
      .prepare<Record<string, string>, { n: number }>(`SELECT COUNT(*) AS n ${filter}`)
      .get(where.params)!.n;
    const rows = this.db
      .prepare<Record<string, unknown>, Row>(
        `SELECT w.* ${filter} ORDER BY w.at DESC, w.id LIMIT @limit OFFSET @offset`,
      )
      .all({ ...where.params, limit: page.limit, offset: page.offset });
    return { items: rows.map(recordOf), total };
  }

  async unfinished(
    states: readonly WithdrawalState[],
    before: Date,
    limit: number,
    after?: Pick<WithdrawalRecord, 'id' | 'changedAt'>,
  ): Promise<WithdrawalRecord[]> {
    if (states.length === 0) return [];
    const from = after ? 'AND (changed_at, id) > (@afterAt, @afterId)' : '';
    return this.db
      .prepare<Record<string, unknown>, Row>(
        `SELECT * FROM withdrawals
         WHERE state IN (${states.map((_, i) => `@s${i}`).join(', ')}) AND changed_at < @before ${from}
         ORDER BY changed_at, id LIMIT @limit`,
      )
      .all({
        ...Object.fromEntries(states.map((state, i) => [`s${i}`, state])),
        before: before.getTime(),
        afterAt: after?.changedAt.getTime() ?? null,
        afterId: after?.id ?? null,
        limit,
      })
      .map(recordOf);
  }

  async expired(before: Date, limit: number): Promise<WithdrawalRecord[]> {
    return this.db
      .prepare<[number, number], Row>(
        "SELECT * FROM withdrawals WHERE state = 'withdrawn' AND at < ? ORDER BY at LIMIT ?",
      )
      .all(before.getTime(), limit)
      .map(recordOf);
  }

  async ofFile(fileId: string): Promise<WithdrawalRecord[]> {
    return this.db
      .prepare<[string], Row>(
        "SELECT * FROM withdrawals WHERE file_id = ? AND open_key IS NOT NULL AND state <> 'purged' ORDER BY at",
      )
      .all(fileId)
      .map(recordOf);
  }
}
