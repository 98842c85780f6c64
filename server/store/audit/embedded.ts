import type { AuditAction, Unit } from '../../../shared/schemas.js';
import { storedAuditNote } from '../../../shared/audit-notes.js';
import { addMissingColumns, type Db, type EmbeddedSchema } from '../embedded/database.js';
import { selectionBatches } from '../embedded/batches.js';
import type { AuditEvent, AuditLog, AuditSearch } from './port.js';

export const auditSchema: EmbeddedSchema = {
  tables: `
CREATE TABLE IF NOT EXISTS audit (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  at        INTEGER NOT NULL,
  action    TEXT NOT NULL,
  user_id   TEXT,
  user_name TEXT NOT NULL,
  unit      TEXT,
  city      TEXT,
  county    TEXT,
  town      TEXT,
  address   TEXT,
  file_id   TEXT,
  file_name TEXT,
  detail    TEXT NOT NULL,
  note      TEXT
);
CREATE INDEX IF NOT EXISTS audit_at ON audit (at);
CREATE INDEX IF NOT EXISTS audit_action ON audit (action, at);
CREATE INDEX IF NOT EXISTS audit_user ON audit (user_name, at);
CREATE INDEX IF NOT EXISTS audit_unit ON audit (city, county, town, at);
-- Append-only, also for anything that opens the database file through this schema.
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`,
  // Audit logs made before notes: their events keep only the detail; before step keys, none has one.
  upgrade: (db) => {
    addMissingColumns(db, 'audit', { note: 'TEXT', step_key: 'TEXT' });
    db.exec('CREATE UNIQUE INDEX IF NOT EXISTS audit_step_key ON audit (step_key) WHERE step_key IS NOT NULL');
  },
};

interface AuditRow {
  id: number;
  at: number;
  action: AuditAction;
  user_id: string | null;
  user_name: string;
  unit: string | null;
  address: string | null;
  file_id: string | null;
  file_name: string | null;
  detail: string;
  note: string | null;
}

/** `LIKE` on user text: its wildcards are matched literally. */
const likeText = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function auditRow(e: AuditEvent): Record<string, unknown> {
  return {
    at: e.at.getTime(),
    action: e.action,
    userId: e.userId,
    userName: e.userName,
    unit: e.unit && JSON.stringify(e.unit),
    city: e.unit?.city ?? null,
    county: e.unit?.county ?? null,
    town: e.unit?.town ?? null,
    address: e.address,
    fileId: e.fileId,
    fileName: e.fileName,
    detail: e.detail,
    note: e.note && JSON.stringify(e.note),
  };
}

/** Appends one event, synchronously: for use inside another capability's transaction too. */
export function auditAppender(db: Db): (e: AuditEvent) => void {
  const insert = db.prepare(
    `INSERT INTO audit (at, action, user_id, user_name, unit, city, county, town, address, file_id, file_name, detail, note)
     VALUES (@at, @action, @userId, @userName, @unit, @city, @county, @town, @address, @fileId, @fileName, @detail, @note)`,
  );
  return (e) => insert.run(auditRow(e));
}

export class EmbeddedAuditLog implements AuditLog {
  private readonly insert;
  private readonly insertMany;
  private readonly insertOnce;

  constructor(private readonly db: Db) {
    this.insert = auditAppender(db);
    this.insertMany = db.transaction((events: readonly AuditEvent[]) => {
      for (const e of events) this.insert(e);
    });
    const once = db.prepare(
      `INSERT OR IGNORE INTO audit (at, action, user_id, user_name, unit, city, county, town, address, file_id, file_name, detail, note, step_key)
       VALUES (@at, @action, @userId, @userName, @unit, @city, @county, @town, @address, @fileId, @fileName, @detail, @note, @key)`,
    );
    this.insertOnce = db.transaction((events: ReadonlyArray<{ key: string; event: AuditEvent }>) => {
      for (const { key, event } of events) once.run({ ...auditRow(event), key });
    });
  }

  async appendOnce(events: ReadonlyArray<{ key: string; event: AuditEvent }>): Promise<void> {
    this.insertOnce(events);
  }

  async append(e: AuditEvent): Promise<void> {
    this.insert(e);
  }

  async appendMany(events: readonly AuditEvent[]): Promise<void> {
    this.insertMany(events);
  }

  async search(q: AuditSearch): Promise<{ items: Array<AuditEvent & { id: string }>; total: number }> {
    const { filter, params } = searchConditions(q);
    const total = this.db
      .prepare<Record<string, unknown>, { n: number }>(`SELECT COUNT(*) AS n FROM audit ${filter}`)
      .get(params)!.n;
    const rows = this.db
      .prepare<Record<string, unknown>, AuditRow>(
        `SELECT * FROM audit ${filter} ${NEWEST_FIRST} LIMIT @limit OFFSET @offset`,
      )
      .all({ ...params, limit: q.limit, offset: q.offset });
    return { total, items: rows.map(auditEvent) };
  }

  searchBatches(
    q: Omit<AuditSearch, 'limit' | 'offset'>,
    batch: number,
  ): AsyncIterable<{ items: Array<AuditEvent & { id: string }>; total: number }> {
    const { filter, params } = searchConditions(q);
    return selectionBatches<AuditRow, AuditEvent & { id: string }>(
      this.db,
      {
        sql: `SELECT * FROM audit ${filter} ${NEWEST_FIRST}`,
        params,
        count: `SELECT COUNT(*) AS n FROM audit ${filter}`,
      },
      batch,
      (rows) => rows.map(auditEvent),
    );
  }
}

/** Newest first; events of the same millisecond, the later recorded first. */
const NEWEST_FIRST = 'ORDER BY at DESC, id DESC';

function searchConditions(q: Omit<AuditSearch, 'limit' | 'offset'>): {
  filter: string;
  params: Record<string, unknown>;
} {
  const where: string[] = [];
  const params: Record<string, unknown> = {};
  const add = (clause: string, name: string, value: unknown) => {
    where.push(clause);
    params[name] = value;
  };
  if (q.from) add('at >= @from', 'from', q.from.getTime());
  if (q.to) add('at < @to', 'to', q.to.getTime());
  if (q.action) add('action = @action', 'action', q.action);
  if (q.actions) {
    const names = q.actions.map((_, i) => `@action${i}`);
    where.push(names.length > 0 ? `action IN (${names.join(', ')})` : '0');
    q.actions.forEach((action, i) => (params[`action${i}`] = action));
  }
  if (q.userName) add('user_name = @userName', 'userName', q.userName);
  if (q.unit?.city) add('city = @city', 'city', q.unit.city);
  if (q.unit?.county) add('county = @county', 'county', q.unit.county);
  if (q.unit?.town) add('town = @town', 'town', q.unit.town);
  if (q.text) add("(file_name LIKE @text ESCAPE '\\' OR detail LIKE @text ESCAPE '\\')", 'text', likeText(q.text));
  return { filter: where.length > 0 ? `WHERE ${where.join(' AND ')}` : '', params };
}

const auditEvent = (r: AuditRow): AuditEvent & { id: string } => ({
  id: String(r.id),
  at: new Date(r.at),
  action: r.action,
  userId: r.user_id,
  userName: r.user_name,
  unit: r.unit === null ? null : (JSON.parse(r.unit) as Unit),
  address: r.address,
  fileId: r.file_id,
  fileName: r.file_name,
  detail: r.detail,
  note: storedAuditNote(r.note),
});
