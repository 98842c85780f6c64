import type { Unit } from '../../../shared/schemas.js';
import { addMissingColumns, type Db, type EmbeddedSchema } from '../embedded/database.js';
import { scopeWhere } from '../embedded/scopes.js';
import type { DisposalRecord, DisposalState, DisposalStore, RegisterFilter, Uploader } from './port.js';

export const disposalSchema: EmbeddedSchema = {
  tables: `
-- The disposal register (销毁清册): one row per file disposed of, kept for ever. file_id is
-- unique: a file is disposed of once (a content stored again later has a new id).
CREATE TABLE IF NOT EXISTS disposals (
  id              TEXT PRIMARY KEY,
  file_id         TEXT NOT NULL UNIQUE,
  file_name       TEXT NOT NULL,
  file_length     INTEGER NOT NULL,
  stored_at       INTEGER NOT NULL,
  units           TEXT NOT NULL,
  uploaders       TEXT NOT NULL,
  first_upload_at INTEGER,
  last_upload_at  INTEGER,
  counted_uploads INTEGER NOT NULL,
  withdrawn_uploads INTEGER NOT NULL,
  reason          TEXT NOT NULL,
  approval_ref    TEXT NOT NULL,
  by_id           TEXT NOT NULL,
  by_name         TEXT NOT NULL,
  at              INTEGER NOT NULL,
  state           TEXT NOT NULL,
  -- While 'disposing': 0 until holds were asked after the entry was recorded (docs/decisions/holds.md).
  cleared         INTEGER NOT NULL DEFAULT 1,
  changed_at      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS disposals_at ON disposals (at DESC, id);
CREATE INDEX IF NOT EXISTS disposals_unfinished ON disposals (changed_at) WHERE state IN ('disposing', 'deleting');
-- The units of each entry, for the register of a unit or a reach.
CREATE TABLE IF NOT EXISTS disposal_units (
  disposal_id TEXT NOT NULL,
  unit_id     TEXT NOT NULL,
  city        TEXT,
  county      TEXT,
  town        TEXT,
  PRIMARY KEY (disposal_id, unit_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS disposal_units_unit ON disposal_units (unit_id);
CREATE INDEX IF NOT EXISTS disposal_units_subtree ON disposal_units (city, county, town);
`,
  upgrade(db) {
    // Entries made before holds were asked after them (2026-11-29) were asked before: cleared.
    addMissingColumns(db, 'disposals', { cleared: 'INTEGER NOT NULL DEFAULT 1' });
  },
};

interface Row {
  id: string;
  file_id: string;
  file_name: string;
  file_length: number;
  stored_at: number;
  units: string;
  uploaders: string;
  first_upload_at: number | null;
  last_upload_at: number | null;
  counted_uploads: number;
  withdrawn_uploads: number;
  reason: string;
  approval_ref: string;
  by_id: string;
  by_name: string;
  at: number;
  state: DisposalState;
  cleared: number;
  changed_at: number;
}

const dateOf = (ms: number | null) => (ms === null ? null : new Date(ms));

const recordOf = (r: Row): DisposalRecord => ({
  id: r.id,
  fileId: r.file_id,
  fileName: r.file_name,
  fileLength: r.file_length,
  storedAt: new Date(r.stored_at),
  units: JSON.parse(r.units) as Unit[],
  uploaders: JSON.parse(r.uploaders) as Uploader[],
  firstUploadAt: dateOf(r.first_upload_at),
  lastUploadAt: dateOf(r.last_upload_at),
  countedUploads: r.counted_uploads,
  withdrawnUploads: r.withdrawn_uploads,
  reason: r.reason,
  approvalRef: r.approval_ref,
  disposedBy: { id: r.by_id, username: r.by_name },
  disposedAt: new Date(r.at),
  state: r.state,
  cleared: r.cleared === 1,
  changedAt: new Date(r.changed_at),
});

export class EmbeddedDisposalStore implements DisposalStore {
  private readonly insert;
  private readonly insertUnit;
  private readonly byFile;
  private readonly byId;

  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      `INSERT INTO disposals (id, file_id, file_name, file_length, stored_at, units, uploaders, first_upload_at,
         last_upload_at, counted_uploads, withdrawn_uploads, reason, approval_ref, by_id, by_name, at, state, cleared, changed_at)
       VALUES (@id, @fileId, @fileName, @fileLength, @storedAt, @units, @uploaders, @firstUploadAt,
         @lastUploadAt, @countedUploads, @withdrawnUploads, @reason, @approvalRef, @byId, @byName, @at, @state, @cleared, @changedAt)
       ON CONFLICT (file_id) DO NOTHING`,
    );
    this.insertUnit = db.prepare(
      `INSERT OR IGNORE INTO disposal_units (disposal_id, unit_id, city, county, town) VALUES (?, ?, ?, ?, ?)`,
    );
    this.byFile = db.prepare<[string], Row>('SELECT * FROM disposals WHERE file_id = ?');
    this.byId = db.prepare<[string], Row>('SELECT * FROM disposals WHERE id = ?');
  }

  async open(r: DisposalRecord): Promise<{ record: DisposalRecord; opened: boolean }> {
    const opened = this.db
      .transaction(() => {
        const { changes } = this.insert.run({
          id: r.id,
          fileId: r.fileId,
          fileName: r.fileName,
          fileLength: r.fileLength,
          storedAt: r.storedAt.getTime(),
          units: JSON.stringify(r.units),
          uploaders: JSON.stringify(r.uploaders),
          firstUploadAt: r.firstUploadAt?.getTime() ?? null,
          lastUploadAt: r.lastUploadAt?.getTime() ?? null,
          countedUploads: r.countedUploads,
          withdrawnUploads: r.withdrawnUploads,
          reason: r.reason,
          approvalRef: r.approvalRef,
          byId: r.disposedBy.id,
          byName: r.disposedBy.username,
          at: r.disposedAt.getTime(),
          state: r.state,
          cleared: r.cleared ? 1 : 0,
          changedAt: r.changedAt.getTime(),
        });
        if (changes !== 1) return false;
        for (const u of r.units) this.insertUnit.run(r.id, u.id, u.city, u.county ?? null, u.town ?? null);
        return true;
      })
      .immediate();
    if (opened) return { record: r, opened };
    return { record: recordOf(this.byFile.get(r.fileId)!), opened };
  }

  async advance(id: string, from: DisposalState, to: DisposalState, at: Date): Promise<boolean> {
    const { changes } = this.db
      .prepare('UPDATE disposals SET state = ?, changed_at = ? WHERE id = ? AND state = ?')
      .run(to, at.getTime(), id, from);
    return changes === 1;
  }

  async clear(id: string): Promise<boolean> {
    // One statement: a stop needs `cleared = 0`, so of the two racing SQLite applies one.
    return (
      this.db.prepare("UPDATE disposals SET cleared = 1 WHERE id = ? AND state = 'disposing'").run(id).changes === 1
    );
  }

  async stop(id: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        const { changes } = this.db
          .prepare("DELETE FROM disposals WHERE id = ? AND state = 'disposing' AND cleared = 0")
          .run(id);
        if (changes === 1) this.db.prepare('DELETE FROM disposal_units WHERE disposal_id = ?').run(id);
        return changes === 1;
      })
      .immediate();
  }

  async get(id: string): Promise<DisposalRecord | undefined> {
    const row = this.byId.get(id);
    return row && recordOf(row);
  }

  async ofFiles(fileIds: readonly string[]): Promise<Map<string, DisposalRecord>> {
    const found = new Map<string, DisposalRecord>();
    for (const fileId of new Set(fileIds)) {
      const row = this.byFile.get(fileId);
      if (row) found.set(fileId, recordOf(row));
    }
    return found;
  }

  async list(
    filter: RegisterFilter,
    page: { limit: number; offset: number },
  ): Promise<{ items: DisposalRecord[]; total: number }> {
    const where = scopeWhere('u', filter.scope);
    const conditions = [
      filter.scope ? `EXISTS (SELECT 1 FROM disposal_units u WHERE u.disposal_id = d.id AND ${where.sql})` : 'true',
      filter.from ? 'd.at >= @from' : 'true',
      filter.to ? 'd.at < @to' : 'true',
    ];
    const params = {
      ...where.params,
      ...(filter.from && { from: filter.from.getTime() }),
      ...(filter.to && { to: filter.to.getTime() }),
    };
    const clause = `FROM disposals d WHERE ${conditions.join(' AND ')}`;
    const total = this.db
      .prepare<Record<string, unknown>, { n: number }>(`SELECT COUNT(*) AS n ${clause}`)
      .get(params)!.n;
    const rows = this.db
      .prepare<Record<string, unknown>, Row>(
        `SELECT d.* ${clause} ORDER BY d.at DESC, d.id LIMIT @limit OFFSET @offset`,
      )
      .all({ ...params, limit: page.limit, offset: page.offset });
    return { items: rows.map(recordOf), total };
  }

  async unfinished(
    before: Date,
    limit: number,
    after?: Pick<DisposalRecord, 'id' | 'changedAt'>,
  ): Promise<DisposalRecord[]> {
    const from = after ? 'AND (changed_at, id) > (@afterAt, @afterId)' : '';
    return this.db
      .prepare<Record<string, unknown>, Row>(
        `SELECT * FROM disposals WHERE state IN ('disposing', 'deleting') AND changed_at < @before ${from}
         ORDER BY changed_at, id LIMIT @limit`,
      )
      .all({ before: before.getTime(), afterAt: after?.changedAt.getTime() ?? null, afterId: after?.id ?? null, limit })
      .map(recordOf);
  }
}
