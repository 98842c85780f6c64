import type { HoldState } from '../../../shared/holds.js';
import type { Db, EmbeddedSchema } from '../embedded/database.js';
import type { HeldFile, HoldRecord, HoldStore, Person } from './port.js';

export const holdSchema: EmbeddedSchema = {
  tables: `
-- Holds (冻结) on files or on a unit; kept after they are lifted, as the record. active is 1 until
-- lifted. area: the lineage of the units the hold belongs to (who sees and lifts it).
CREATE TABLE IF NOT EXISTS holds (
  id          TEXT PRIMARY KEY,
  unit_id     TEXT,
  unit        TEXT,
  files       TEXT,
  area        TEXT NOT NULL,
  reason      TEXT NOT NULL,
  by_id       TEXT NOT NULL,
  by_name     TEXT NOT NULL,
  at          INTEGER NOT NULL,
  active      INTEGER NOT NULL,
  lifted_by_id   TEXT,
  lifted_by_name TEXT,
  lifted_at      INTEGER
);
CREATE INDEX IF NOT EXISTS holds_placed ON holds (at);
CREATE INDEX IF NOT EXISTS holds_unit ON holds (unit_id) WHERE active = 1 AND unit_id IS NOT NULL;
-- The files each file hold names, while it is active (removed when it is lifted; the hold's files
-- column keeps them): which of a purge's or a withdrawal's files are held, by the index.
CREATE TABLE IF NOT EXISTS held_files (
  file_id TEXT NOT NULL,
  hold_id TEXT NOT NULL,
  PRIMARY KEY (file_id, hold_id)
) WITHOUT ROWID;
`,
};

interface Row {
  id: string;
  unit: string | null;
  files: string | null;
  area: string;
  reason: string;
  by_id: string;
  by_name: string;
  at: number;
  lifted_by_id: string | null;
  lifted_by_name: string | null;
  lifted_at: number | null;
}

const recordOf = (r: Row): HoldRecord => ({
  id: r.id,
  files: r.files === null ? null : (JSON.parse(r.files) as HeldFile[]),
  unit: r.unit === null ? null : (JSON.parse(r.unit) as HoldRecord['unit']),
  area: r.area,
  reason: r.reason,
  placedBy: { id: r.by_id, username: r.by_name },
  placedAt: new Date(r.at),
  liftedBy: r.lifted_by_id === null ? null : { id: r.lifted_by_id, username: r.lifted_by_name! },
  liftedAt: r.lifted_at === null ? null : new Date(r.lifted_at),
});

const STATE_SQL: Record<HoldState, string> = { active: 'active = 1', lifted: 'active = 0', all: 'true' };

export class EmbeddedHoldStore implements HoldStore {
  constructor(private readonly db: Db) {}

  async place(h: HoldRecord): Promise<boolean> {
    const insert = this.db.prepare(
      `INSERT OR IGNORE INTO holds (id, unit_id, unit, files, area, reason, by_id, by_name, at, active)
       VALUES (@id, @unitId, @unit, @files, @area, @reason, @byId, @byName, @at, 1)`,
    );
    const held = this.db.prepare('INSERT OR IGNORE INTO held_files (file_id, hold_id) VALUES (?, ?)');
    return this.db.transaction(() => {
      const { changes } = insert.run({
        id: h.id,
        unitId: h.unit?.id ?? null,
        unit: h.unit && JSON.stringify(h.unit),
        files: h.files && JSON.stringify(h.files),
        area: h.area,
        reason: h.reason,
        byId: h.placedBy.id,
        byName: h.placedBy.username,
        at: h.placedAt.getTime(),
      });
      if (changes === 0) return false;
      for (const file of h.files ?? []) held.run(file.id, h.id);
      return true;
    })();
  }

  async lift(id: string, by: Person, at: Date): Promise<boolean> {
    return this.db.transaction(() => {
      const { changes } = this.db
        .prepare(
          `UPDATE holds SET active = 0, lifted_by_id = ?, lifted_by_name = ?, lifted_at = ?
           WHERE id = ? AND active = 1`,
        )
        .run(by.id, by.username, at.getTime(), id);
      if (changes === 1) this.db.prepare('DELETE FROM held_files WHERE hold_id = ?').run(id);
      return changes === 1;
    })();
  }

  async get(id: string): Promise<HoldRecord | undefined> {
    const row = this.db.prepare<[string], Row>('SELECT * FROM holds WHERE id = ?').get(id);
    return row && recordOf(row);
  }

  async list(
    area: string | undefined,
    state: HoldState,
    page: { limit: number; offset: number },
  ): Promise<{ items: HoldRecord[]; total: number }> {
    const filter = `FROM holds WHERE ${STATE_SQL[state]} AND (@area IS NULL OR substr(area, 1, length(@area)) = @area)`;
    const params = { area: area ?? null };
    const total = this.db.prepare<typeof params, { n: number }>(`SELECT COUNT(*) AS n ${filter}`).get(params)!.n;
    const rows = this.db
      .prepare<typeof params & { limit: number; offset: number }, Row>(
        `SELECT * ${filter} ORDER BY at DESC, id LIMIT @limit OFFSET @offset`,
      )
      .all({ ...params, ...page });
    return { items: rows.map(recordOf), total };
  }

  async covering(fileIds: readonly string[], unitIds: readonly string[]): Promise<HoldRecord[]> {
    const found = new Map<string, HoldRecord>();
    const add = (rows: Row[]) => rows.forEach((r) => found.set(r.id, recordOf(r)));
    const files = [...new Set(fileIds)];
    for (let at = 0; at < files.length; at += 500) {
      const some = files.slice(at, at + 500);
      add(
        this.db
          .prepare<string[], Row>(
            `SELECT * FROM holds WHERE active = 1 AND id IN
               (SELECT hold_id FROM held_files WHERE file_id IN (${some.map(() => '?').join(', ')}))`,
          )
          .all(...some),
      );
    }
    const units = [...new Set(unitIds)];
    for (let at = 0; at < units.length; at += 500) {
      const some = units.slice(at, at + 500);
      add(
        this.db
          .prepare<string[], Row>(
            `SELECT * FROM holds WHERE active = 1 AND unit_id IN (${some.map(() => '?').join(', ')})`,
          )
          .all(...some),
      );
    }
    return [...found.values()];
  }

  async heldUnits(): Promise<string[]> {
    return this.db
      .prepare<[], { unit_id: string }>('SELECT DISTINCT unit_id FROM holds WHERE active = 1 AND unit_id IS NOT NULL')
      .all()
      .map((r) => r.unit_id);
  }
}
