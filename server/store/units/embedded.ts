import type { UnitLevel } from '../../../shared/units.js';
import { ConflictError } from '../../errors.js';
import type { Db, EmbeddedSchema } from '../embedded/database.js';
import { likePattern } from '../embedded/sql.js';
import { sortKeyOf, type DirectoryUnit, type UnitQuery, type UnitStore } from './port.js';

export const unitSchema: EmbeddedSchema = {
  tables: `
-- The unit directory: divisions of the provinces in UNIT_REGIONS, and custom units.
CREATE TABLE IF NOT EXISTS units (
  id        TEXT PRIMARY KEY,
  code      TEXT,
  name      TEXT NOT NULL,
  level     TEXT NOT NULL,
  parent_id TEXT,
  path      TEXT NOT NULL, -- JSON array of names, top down
  lineage   TEXT NOT NULL, -- ids top down, each followed by '/'
  sort_key  TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS units_sibling_name ON units (ifnull(parent_id, ''), name);
CREATE INDEX IF NOT EXISTS units_children ON units (parent_id, sort_key);
CREATE INDEX IF NOT EXISTS units_lineage ON units (lineage);
CREATE INDEX IF NOT EXISTS units_name ON units (name);
`,
};

interface UnitRow {
  id: string;
  code: string | null;
  name: string;
  level: string;
  parent_id: string | null;
  path: string;
  lineage: string;
}

function unitOf(row: UnitRow): DirectoryUnit {
  return {
    id: row.id,
    code: row.code,
    name: row.name,
    level: row.level as UnitLevel,
    parentId: row.parent_id,
    path: JSON.parse(row.path) as string[],
    lineage: row.lineage,
  };
}

const INSERT = `INSERT INTO units (id, code, name, level, parent_id, path, lineage, sort_key)
  VALUES (@id, @code, @name, @level, @parentId, @path, @lineage, @sortKey)`;

const params = (u: DirectoryUnit) => ({ ...u, path: JSON.stringify(u.path), sortKey: sortKeyOf(u) });

/** A prefix for LIKE: the lineage's own characters are digits, letters and "/", so nothing to escape. */
const under = (lineage: string) => `${lineage}%`;

export class EmbeddedUnitStore implements UnitStore {
  constructor(private readonly db: Db) {}

  async addMissing(units: DirectoryUnit[]): Promise<number> {
    const insert = this.db.prepare(`${INSERT} ON CONFLICT (id) DO NOTHING`);
    return this.db.transaction(() => units.reduce((added, u) => added + insert.run(params(u)).changes, 0))();
  }

  async add(unit: DirectoryUnit): Promise<void> {
    try {
      this.db.prepare(INSERT).run(params(unit));
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE')
        throw new ConflictError(`There is a unit named "${unit.name}" there already.`, 'unit_name_taken');
      throw err;
    }
  }

  async get(id: string): Promise<DirectoryUnit | undefined> {
    const row = this.db.prepare<[string], UnitRow>('SELECT * FROM units WHERE id = ?').get(id);
    return row && unitOf(row);
  }

  async getMany(ids: string[]): Promise<DirectoryUnit[]> {
    const found: DirectoryUnit[] = [];
    // In slices: SQLite limits a statement's parameters.
    for (let i = 0; i < ids.length; i += 500) {
      const slice = ids.slice(i, i + 500);
      const rows = this.db
        .prepare<string[], UnitRow>(`SELECT * FROM units WHERE id IN (${slice.map(() => '?').join(',')})`)
        .all(...slice);
      found.push(...rows.map(unitOf));
    }
    return found;
  }

  async find(q: UnitQuery): Promise<{ items: DirectoryUnit[]; total: number }> {
    const where: string[] = [];
    const args: Record<string, unknown> = {};
    if (q.within !== undefined) {
      where.push('lineage LIKE @within');
      args.within = under(q.within);
    }
    if (q.parentId !== undefined) where.push(q.parentId === null ? 'parent_id IS NULL' : 'parent_id = @parentId');
    if (q.parentId) args.parentId = q.parentId;
    if (q.level) {
      where.push('level = @level');
      args.level = q.level;
    }
    if (q.q) {
      where.push(`(name LIKE @name ESCAPE '\\' OR code LIKE @code ESCAPE '\\')`);
      args.name = likePattern(q.q);
      args.code = likePattern(q.q).slice(1);
    }
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const total = this.db
      .prepare<[typeof args], { n: number }>(`SELECT COUNT(*) AS n FROM units ${clause}`)
      .get(args)!.n;
    const rows = this.db
      .prepare<[typeof args], UnitRow>(
        `SELECT * FROM units ${clause} ORDER BY sort_key, id LIMIT @limit OFFSET @offset`,
      )
      .all({ ...args, limit: q.limit, offset: q.offset });
    return { items: rows.map(unitOf), total };
  }

  async ids(query: { within?: string; part?: string }): Promise<string[]> {
    const where: string[] = [];
    const args: Record<string, string> = {};
    if (query.within !== undefined) {
      where.push('lineage LIKE @within');
      args.within = under(query.within);
    }
    if (query.part !== undefined) {
      // The path joined in SQLite, names in their order; joining every unit's costs as much as
      // reading them (12 ms for a province), so only those whose JSON path holds the part's
      // longest piece between "/"s are joined: a name holds it as written, unless JSON escapes it.
      const part = query.part;
      const longest = part.split('/').reduce((a, b) => (b.length > a.length ? b : a), '');
      const joined = `instr((SELECT group_concat(n.value, '/' ORDER BY n.key) FROM json_each(units.path) n), @part) > 0`;
      const verbatim = longest !== '' && JSON.stringify(longest) === `"${longest}"`;
      where.push(
        `(${verbatim ? `instr(path, @longest) > 0 AND ` : ''}${joined} OR substr(code, 1, length(@part)) = @part)`,
      );
      args.part = part;
      if (verbatim) args.longest = longest;
    }
    return this.db
      .prepare<[typeof args], { id: string }>(
        `SELECT id FROM units ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}`,
      )
      .all(args)
      .map((r) => r.id);
  }

  async named(name: string): Promise<DirectoryUnit[]> {
    return this.db
      .prepare<[string], UnitRow>('SELECT * FROM units WHERE name = ? ORDER BY sort_key')
      .all(name)
      .map(unitOf);
  }

  async countDivisionsWithin(lineage: string): Promise<number> {
    return this.db
      .prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM units WHERE lineage LIKE ? AND code IS NOT NULL')
      .get(under(lineage))!.n;
  }

  async rename(id: string, name: string): Promise<void> {
    const unit = await this.get(id);
    if (!unit) return;
    const depth = unit.path.length - 1;
    try {
      this.db.transaction(() => {
        this.db
          .prepare('UPDATE units SET name = ?, sort_key = ? WHERE id = ?')
          .run(name, sortKeyOf({ ...unit, name }), id);
        this.db
          .prepare(`UPDATE units SET path = json_set(path, '$[${depth}]', ?) WHERE lineage LIKE ?`)
          .run(name, under(unit.lineage));
      })();
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE')
        throw new ConflictError(`There is a unit named "${name}" there already.`, 'unit_name_taken');
      throw err;
    }
  }
}
