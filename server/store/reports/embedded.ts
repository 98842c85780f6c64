import type { Unit } from '../../../shared/schemas.js';
import type * as Rows from '../../../shared/reports.js';
import { UPLOADERS_PER_ROW } from '../../../shared/reports.js';
import { readConnection, type Db } from '../embedded/database.js';
import type { PairRow } from '../embedded/pair-rows.js';
import { joinedRows, likePattern, splitJoinedRows, sqliteOrder } from '../embedded/sql.js';
import type {
  Batches,
  CollisionReportQuery,
  CrossUnitReportQuery,
  NearDuplicateReportQuery,
  Page,
  RepeatReportQuery,
  ReportFilter,
  ReportPaging,
  Reports,
  SavingsReportQuery,
  StoredCrossUnitRow,
  StoredRepeatRow,
  Unpaged,
} from './port.js';
import { selectionBatches, type Selection } from '../embedded/batches.js';
import { inPartition, inStripe, inStripes, ReadThreads } from '../embedded/read-threads.js';
import type { BoundedTopStatements } from '../embedded/read-thread.js';

type Params = Record<string, unknown>;

/** A WHERE clause being built, with its named parameters. */
class Conditions {
  readonly clauses: string[] = [];
  readonly params: Params = {};

  add(clause: string, params: Params = {}): this {
    this.clauses.push(clause);
    Object.assign(this.params, params);
    return this;
  }

  /** A copy with one more clause. */
  and(clause: string, params: Params = {}): Conditions {
    const copy = new Conditions();
    copy.clauses.push(...this.clauses, clause);
    Object.assign(copy.params, this.params, params);
    return copy;
  }

  get sql(): string {
    return this.clauses.length > 0 ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }
}

/** Files whose stored name is like @name, of those `partition` holds if given (needs a table alias before it). */
const namedFiles = (partition?: string) =>
  `file_no IN (SELECT file_no FROM catalog WHERE file_name LIKE @name ESCAPE '\\'${partition ? ` AND ${partition}` : ''})`;
const NAMED_FILES = namedFiles();

/** Filters on ledger rows (alias `l`): time overlap, unit subtree, and, for tables of stored files, the catalog name. */
function ledgerConditions(f: ReportFilter, nameColumn: 'l.upload_file_name' | 'catalog'): Conditions {
  const where = new Conditions();
  if (f.from) where.add('l.last_upload_time >= @from', { from: f.from.getTime() });
  if (f.to) where.add('l.upload_time < @to', { to: f.to.getTime() });
  subtree(where, f, 'l.');
  if (f.fileName) {
    where.add(nameColumn === 'catalog' ? `l.${NAMED_FILES}` : "l.upload_file_name LIKE @name ESCAPE '\\'", {
      name: likePattern(f.fileName),
    });
  }
  return where;
}

function subtree(where: Conditions, f: ReportFilter, prefix: string): void {
  if (!f.unit) return;
  where.add(`${prefix}city = @city`, { city: f.unit.city });
  if (f.unit.county) where.add(`${prefix}county = @county`, { county: f.unit.county });
  if (f.unit.town) where.add(`${prefix}town = @town`, { town: f.unit.town });
}

/** ORDER BY for a sort field, with a unique key after it so pages never overlap. */
function orderBy(
  columns: Record<string, string>,
  paging: Pick<ReportPaging, 'sort' | 'order'>,
  tieBreak: string,
): string {
  const direction = paging.order === 'asc' ? 'ASC' : 'DESC';
  const column = columns[paging.sort];
  if (!column) throw new Error(`unknown sort field ${paging.sort}`);
  return `ORDER BY ${column
    .split(',')
    .map((c) => `${c} ${direction}`)
    .join(', ')}, ${tieBreak}`;
}

/** The unit's names, without its coordinates; absent levels stay absent. */
const reportUnit = (json: string): Rows.ReportUnit => {
  const { coordinates: _, ...unit } = JSON.parse(json) as Unit;
  return unit;
};
const DAY_MS = 86_400_000;
const dayTexts = new Map<number, string>();
const pad = (n: number, width: number) => String(n).padStart(width, '0');
/**
 * `new Date(ms).toISOString()`, each day's part made once: a page of cross-unit duplicates has
 * tens of thousands of times, and this halves their cost. Joined, not concatenated: V8 keeps a
 * concatenation as a tree of parts until it is written out, which then costs more.
 */
const iso = (ms: number): string => {
  if (!(Number.isInteger(ms) && ms >= 0 && ms < 253_402_300_800_000)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  let date = dayTexts.get(day);
  if (date === undefined) dayTexts.set(day, (date = new Date(day * DAY_MS).toISOString().slice(0, 11)));
  const t = ms - day * DAY_MS;
  return [
    date,
    pad(Math.floor(t / 3_600_000), 2),
    ':',
    pad(Math.floor(t / 60_000) % 60, 2),
    ':',
    pad(Math.floor(t / 1000) % 60, 2),
    '.',
    pad(t % 1000, 3),
    'Z',
  ].join('');
};

/**
 * A repeat entry's columns (aliases `l`, the ledger, and `c`, the catalog), its uploads counted
 * as `count` says (with or without its copies inside one upload).
 */
const entryColumns = (count: string) =>
  `l.user_id, l.user_name, l.unit, c.file_id, l.upload_file_name, c.length, ${count} AS upload_count, l.copies, l.upload_count - 1 - l.copies AS resends, l.upload_time, l.last_upload_time`;
/** An entry's uploads: all, or without its copies inside one upload (each receipt once). */
const uploadsOf = (copies: RepeatReportQuery['copies']) =>
  copies === 'exclude' ? '(l.upload_count - l.copies)' : 'l.upload_count';
type EntryRow = {
  user_id: string;
  user_name: string;
  unit: string;
  file_id: string;
  upload_file_name: string;
  length: number;
  upload_count: number;
  copies: number;
  resends: number;
  upload_time: number;
  last_upload_time: number;
};
const entryItem = (r: EntryRow): StoredRepeatRow => ({
  userId: r.user_id,
  userName: r.user_name,
  unit: reportUnit(r.unit),
  fileId: r.file_id,
  fileName: r.upload_file_name,
  fileLength: r.length,
  uploadCount: r.upload_count,
  copies: r.copies,
  resends: r.resends,
  firstUploadTime: iso(r.upload_time),
  lastUploadTime: iso(r.last_upload_time),
});
/** A repeat uploaders' row grouped by user or unit. */
type RepeatGroupRow = {
  total: number;
  user_id: string;
  user_name: string;
  unit: string;
  users: number;
  files: number;
  uploads: number;
  repeats: number;
  repeat_bytes: number;
  copies: number;
  resends: number;
  first: number;
  last: number;
};

/** No filter but the minimum: the report over every repeat entry. */
const unfiltered = (q: Unpaged<RepeatReportQuery>) =>
  !q.from && !q.to && !q.unit && !q.fileName && !q.userName && !q.unitId;

/**
 * How many repeat entries are uploaded `min` times or more, every one of them counted (copies
 * included): at the least minimum, the sum of the accounts' kept sums (100,000 rows at a
 * province's size, not 1.7 million index entries); else from the index in the default order
 * (ledger_repeat_counts, narrow: the number and id of each). Without the catalog: every entry's
 * file has its catalog row (a removed file keeps it, a tombstone), so the join the table's rows
 * make drops none.
 */
const repeatEntriesCount = (min: number) =>
  min === 2
    ? 'SELECT COALESCE(SUM(files), 0) AS n FROM ledger_repeat_users'
    : 'SELECT COUNT(*) AS n FROM ledger INDEXED BY ledger_repeat_counts WHERE upload_count >= @min AND upload_count >= 2';

/**
 * Where a page of every repeat entry picks its entries from, when an index serves its order
 * (absent: the table's own selection, sorted): most uploads first from ledger_repeat_counts (a
 * page half-way through walks the index to it, no sort); by size, the catalog's files from
 * catalog_lengths in size order, each file's repeat entries from ledger_repeat_files, and only a
 * run of files of one size sorted by entry (a first page reads the few largest files, not 1.7
 * million entries sorted by their file's size). Fewer uploads first, or a page far into the
 * sizes, sort as the table does.
 */
function repeatEntryPick(q: Unpaged<RepeatReportQuery>): string | undefined {
  const paged = q as Partial<ReportPaging>;
  if (q.sort === 'uploadCount' && q.order === 'desc')
    return `FROM ledger l INDEXED BY ledger_repeat_counts WHERE l.upload_count >= @min AND l.upload_count >= 2
      ORDER BY l.upload_count DESC, l.id`;
  if (q.sort === 'fileLength' && q.min === 2 && (paged.offset ?? Infinity) <= REPEAT_SIZE_WALK_OFFSET)
    return `FROM catalog c INDEXED BY catalog_lengths CROSS JOIN ledger l INDEXED BY ledger_repeat_files
      WHERE l.file_no = c.file_no AND l.upload_count >= @min AND l.upload_count >= 2
      ORDER BY c.length ${q.order === 'asc' ? 'ASC' : 'DESC'}, l.id`;
  return undefined;
}
/**
 * How far into the table by size a page still walks the files in size order (each file's repeat
 * entries looked up; a walk to the middle of a province reads a million files) rather than sort.
 */
const REPEAT_SIZE_WALK_OFFSET = 10_000;

/** The repeat uploaders' rows grouped by user or unit: each sort field's column, as both their statements name it. */
const REPEAT_GROUP_SORTS = {
  repeatUploads: 'repeats',
  files: 'files',
  users: 'users',
  uploads: 'uploads',
  repeatBytes: 'repeat_bytes',
  lastUploadTime: 'last',
  firstUploadTime: 'first',
  userName: 'user_name',
};

/**
 * The table grouped by user or unit over every repeat entry, from the sums the ledger keeps of
 * them (ledger_repeat_users, ledger_repeat_unit_files): the same rows as summing the entries, in
 * the same order (ties by user and unit, or by unit).
 */
function repeatSums(q: Unpaged<RepeatReportQuery>) {
  const byUser = q.group === 'user';
  const key = byUser ? 'u.user_id, u.unit_id' : 'u.unit_id';
  const order = orderBy(REPEAT_GROUP_SORTS, q, key);
  const sql = byUser
    ? `SELECT u.user_id, u.user_name, u.unit, 1 AS users, u.files, u.uploads, u.uploads - u.files AS repeats,
         u.repeat_bytes, u.copies, u.uploads - u.files - u.copies AS resends, u.first, u.last, COUNT(*) OVER () AS total
       FROM ledger_repeat_users u ${order}`
    : `SELECT NULL AS user_id, NULL AS user_name, MAX(u.unit) AS unit, COUNT(*) AS users, MAX(f.files) AS files,
         SUM(u.uploads) AS uploads, SUM(u.uploads - u.files) AS repeats, SUM(u.repeat_bytes) AS repeat_bytes,
         SUM(u.copies) AS copies, SUM(u.uploads - u.files - u.copies) AS resends, MIN(u.first) AS first, MAX(u.last) AS last,
         COUNT(*) OVER () AS total
       FROM ledger_repeat_users u JOIN ledger_repeat_unit_files f ON f.unit_id = u.unit_id GROUP BY u.unit_id ${order}`;
  return { kind: 'group' as const, sql, params: {}, item: repeatGroupItem(byUser) };
}

/** A row of the table grouped by user or unit. */
const repeatGroupItem =
  (byUser: boolean) =>
  (r: RepeatGroupRow): StoredRepeatRow => {
    const totals = {
      unit: reportUnit(r.unit),
      files: r.files,
      uploads: r.uploads,
      repeatUploads: r.repeats,
      repeatBytes: r.repeat_bytes,
      copies: r.copies,
      resends: r.resends,
      firstUploadTime: iso(r.first),
      lastUploadTime: iso(r.last),
    };
    return byUser ? { userId: r.user_id, userName: r.user_name, ...totals } : { ...totals, users: r.users };
  };

/** A file of the cross-unit table, as its statement reads it. */
type CrossUnitFileRow = {
  total?: number;
  file_no: number;
  file_id: string;
  file_name: string;
  length: number;
  units: number;
  users: number;
  uploads: number;
  first: number;
  last: number;
};

/**
 * How many entries (about one per user of each file) a walk down the files with the most units may
 * read before summing every file of the partition at once is the cheaper way (`boundedTop`): a
 * quarter of what summing them all reads for 3 months of two years at 10^7 (the walk for a first
 * page reads 100,000 there).
 */
const WALK_BUDGET = 250_000;

/** The cross-unit table's sort fields over its files' sums (alias `f`) and, by name or size, the catalog (`c`). */
const CROSS_UNIT_SORT_COLUMNS = {
  units: 'f.units',
  uploads: 'f.uploads',
  users: 'f.users',
  fileLength: 'c.length',
  lastUploadTime: 'f.last',
  firstUploadTime: 'f.first',
  fileName: 'c.file_name',
};
/** The row fields of those sort fields. */
const CROSS_UNIT_SORT_FIELDS: Record<string, keyof CrossUnitFileRow> = {
  units: 'units',
  uploads: 'uploads',
  users: 'users',
  fileLength: 'length',
  lastUploadTime: 'last',
  firstUploadTime: 'first',
  fileName: 'file_name',
};

/** The cross-unit table's order as `orderBy(CROSS_UNIT_SORT_COLUMNS, q, 'f.file_id')` gives it to SQLite. */
function crossUnitOrder(q: Pick<ReportPaging, 'sort' | 'order'>): (a: CrossUnitFileRow, b: CrossUnitFileRow) => number {
  const field = CROSS_UNIT_SORT_FIELDS[q.sort];
  if (!field) throw new Error(`unknown sort field ${q.sort}`);
  const direction = q.order === 'asc' ? 1 : -1;
  return (a, b) => direction * sqliteOrder(a[field]!, b[field]!) || sqliteOrder(a.file_id, b.file_id);
}

/**
 * A date window's cross-unit files in a partition (no unit filter): the files whose first and
 * last upload (kept in ledger_files) overlap the window, as no entry of any other file can, with
 * entries of at least `@min` units in the window. `files`: the conditions that pick them from
 * ledger_files (`inStripe`); `summed`: their entries summed (`sums`), read through ledger_file a
 * stripe of file numbers at a time (`inStripes`); `count`: how many there are.
 */
function crossUnitWindow(q: CrossUnitReportQuery, entries: Conditions, sums: string) {
  const files = new Conditions().add('t.units >= @min');
  if (q.from) files.add('t.last >= @from');
  if (q.to) files.add('t.first < @to');
  const summed = (columns: string, range: string, having: string) =>
    `SELECT ${columns} FROM ledger_files t CROSS JOIN ledger l INDEXED BY ledger_file ON l.file_no = t.file_no
     ${[...files.clauses, range].reduce((where, clause) => where.and(clause), entries).sql} GROUP BY t.file_no HAVING ${having}`;
  return {
    files: files.and(inStripe('t.file_no')),
    /** The partition's files, summed. */
    summed: inStripes('t.file_no', (range) =>
      summed(`t.file_no, t.file_id, ${sums}`, range, 'COUNT(DISTINCT l.unit_id) >= @min'),
    ),
    /** How many files the partition has (for two units or more: the least unit id is not the greatest). */
    count: `SELECT SUM(n) AS total FROM (${inStripes(
      't.file_no',
      (range) =>
        `SELECT COUNT(*) AS n FROM (${summed('t.file_no', range, q.min === 2 ? 'MIN(l.unit_id) <> MAX(l.unit_id)' : 'COUNT(DISTINCT l.unit_id) >= @min')})`,
    )})`,
  };
}

/**
 * A date window's cross-unit files by their units, most first (the window's first view), walked
 * down the files' units in all (`boundedTop`): no file has more units in the window than in all,
 * so the walk stops at the first file with fewer units in all than the page's last has in the
 * window (at 10^7, 3 months of two years: about 250 files a partition of 140,000). Walked files
 * are summed with their users. The total is counted without the units.
 */
function mostSharedFirst(
  window: ReturnType<typeof crossUnitWindow>,
  entries: Conditions,
  sums: string,
  whole: string,
  rows: number,
): BoundedTopStatements {
  return {
    candidates: `SELECT t.file_no, t.file_id, t.units AS bound, t.users AS cost
      FROM ledger_files t INDEXED BY ledger_files_shared ${window.files.and('t.units >= 2').sql} ORDER BY t.units DESC`,
    row: `SELECT @file_no AS file_no, @file_id AS file_id, ${sums}, COUNT(DISTINCT l.user_id) AS users
      FROM ledger l INDEXED BY ledger_file ${entries.and('l.file_no = @file_no').sql} HAVING COUNT(DISTINCT l.unit_id) >= @min`,
    count: window.count,
    whole,
    key: 'units',
    tie: 'file_id',
    rows,
    budget: WALK_BUDGET,
  };
}

/** How many rows the partitions have in all: each partition's total rides on its rows (none: it has none). */
const partitionsTotal = (parts: Array<Array<{ total: number }>>) =>
  parts.reduce((sum, rows) => sum + (rows[0]?.total ?? 0), 0);

/** A cross-unit page from each partition's first offset + limit files in the table's order. */
function crossUnitMerged(
  parts: Array<Array<CrossUnitFileRow & { total: number }>>,
  q: CrossUnitReportQuery,
): { rows: CrossUnitFileRow[]; total: number } {
  return {
    rows: mergeOrdered(parts, crossUnitOrder(q)).slice(q.offset, q.offset + q.limit),
    total: partitionsTotal(parts),
  };
}

/** Lists each in `order`, merged into one in that order. */
function mergeOrdered<T>(lists: T[][], order: (a: T, b: T) => number): T[] {
  const merged: T[] = [];
  const next = lists.map(() => 0);
  for (;;) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      if (next[i]! < lists[i]!.length && (best < 0 || order(lists[i]![next[i]!]!, lists[best]![next[best]!]!) < 0))
        best = i;
    }
    if (best < 0) return merged;
    merged.push(lists[best]![next[best]!++]!);
  }
}

/** A row of the savings table, with the sums over all rows. */
type SavingsRow = {
  total: number;
  city: string;
  county: string | null;
  town: string | null;
  period: string;
  uploads: number;
  saved_uploads: number;
  saved_bytes: number;
  all_uploads: number;
  all_saved_uploads: number;
  all_saved_bytes: number;
};

/**
 * The space saved without a file name filter: from the day tallies' sums per unit level and day
 * (upload_day_sums, kept by the ledger: server/store/ledger/embedded-day-sums.ts), at the finest
 * level the filter or the rows need (a city's rows per county read its counties' sums), which
 * sum the same tallies as upload_days and are a few thousand to a few hundred thousand rows, not
 * ten million. Their '' levels are the tallies' null.
 */
function savingsOfDaySums(q: Unpaged<SavingsReportQuery>, keys: string[]): SavingsSums {
  const level = Math.max(
    q.unit?.town ? 3 : q.unit?.county ? 2 : 1,
    keys.includes('town') ? 3 : keys.includes('county') ? 2 : 1,
  );
  const where = savingsDays(q).add(`d.level = ${level}`);
  return {
    from: `SELECT d.city, NULLIF(d.county, '') AS county, NULLIF(d.town, '') AS town, d.day, d.week, d.month,
                  d.uploads, d.saved_uploads, d.saved_bytes
           FROM upload_day_sums d ${where.sql}`,
    params: where.params,
  };
}

/**
 * The space saved by the files whose catalog name is like the filter's: from their day tallies
 * (upload_days, one per file, unit and day), which are the only ones that tell files apart.
 * Read in file order, so summed by the table's own rows' columns (`savingsKeys`): a sort of the
 * tallies by one unit level, not three (the named files' 510,000 tallies at 10^7 entries).
 */
function savingsOfNamedFiles(q: Unpaged<SavingsReportQuery> & { fileName: string }, partition?: string): SavingsSums {
  const where = savingsDays(q).add(`d.${namedFiles(partition)}`, { name: likePattern(q.fileName) });
  const fine = savingsKeys(q);
  return {
    from: `SELECT ${fine.map((k) => `d.${k} AS ${k}`).join(', ')},
                  SUM(d.uploads) AS uploads, SUM(d.saved_uploads) AS saved_uploads, SUM(d.saved_uploads * d.file_length) AS saved_bytes
           FROM upload_days d ${where.sql} GROUP BY ${fine.map((k) => `d.${k}`).join(', ')}`,
    params: where.params,
  };
}

/**
 * The columns the savings table's rows are by: per unit one level below the filter (a town filter
 * keeps the town itself), or the period.
 */
const savingsKeys = (q: Pick<SavingsReportQuery, 'group' | 'unit'>) =>
  q.group !== 'unit'
    ? [q.group]
    : !q.unit
      ? ['city']
      : !q.unit.county
        ? ['city', 'county']
        : ['city', 'county', 'town'];

/** Rows of the space saved (columns: their unit's levels or days, and their figures) that the report sums. */
interface SavingsSums {
  from: string;
  params: Params;
}

/** The days and unit subtree the filters pick, on the alias `d` (upload_days and upload_day_sums have both). */
function savingsDays(q: Unpaged<SavingsReportQuery>): Conditions {
  const where = new Conditions();
  if (q.fromDay) where.add('d.day >= @fromDay', { fromDay: q.fromDay });
  if (q.toDay) where.add('d.day <= @toDay', { toDay: q.toDay });
  subtree(where, q, 'd.');
  return where;
}

/** A row of the collisions table, as its statement reads it. */
type CollisionSqlRow = {
  total: number;
  md5: string;
  file_id: string;
  sha256: string;
  length: number;
  file_name: string;
  upload_date: number;
  uploads: number;
  files_with_md5: number;
};
const collisionItem = (r: CollisionSqlRow): Rows.CollisionRow => ({
  md5: r.md5,
  fileId: r.file_id,
  sha256: r.sha256,
  fileLength: r.length,
  fileName: r.file_name,
  uploadDate: iso(r.upload_date),
  uploads: r.uploads,
  filesWithMd5: r.files_with_md5,
});

/** A near-duplicate pair with its files and review, as its statement reads it. */
type PairSqlRow = PairRow & {
  total: number;
  a_name: string;
  a_length: number;
  a_type: string;
  a_date: number;
  r_at: number | null;
  r_user_name: string | null;
  r_note: string | null;
  b_name: string;
  b_length: number;
  b_type: string;
  b_date: number;
};

/**
 * The reports in SQL, reading covering indexes (database.ts, REPORT_INDEXES). A page that groups
 * also returns the number of rows over all pages (`COUNT(*) OVER ()`, computed before LIMIT), so
 * the grouping runs once per request; only a page past the end needs a second query for the
 * total. A page read in an index's order (entries, files' kept sums) stops at its last row, and
 * its total is counted apart.
 *
 * Read on a connection of the reports' own (`readConnection`), never the store's: a report scans
 * far more of the ledger than any upload, and a grouped page sorts every entry it sums (200,000 at
 * 10^6 ledger entries, with their units' text: about 45 MB). On the store's connection those pages
 * filled its 32 MiB cache and the sort took as much again in memory; here they take 4 MiB, and
 * the sort goes to a temporary file past that.
 */
export class EmbeddedReports implements Reports {
  /** The reports of `db`'s archive, on a read-only connection of their own that `close` closes. */
  static open(db: Db): EmbeddedReports {
    return new EmbeddedReports(readConnection(db, 4096), new ReadThreads(db.name, 4096));
  }

  private constructor(
    private readonly db: Db,
    /** Where a page that sums millions of entries sums them, in partitions at once. */
    private readonly threads: ReadThreads,
  ) {}

  close(): void {
    this.threads.close();
    if (this.db.open) this.db.close();
  }

  private page<Row extends { total?: number }>(
    sql: string,
    params: Params,
    paging: ReportPaging,
  ): { rows: Row[]; total: number } {
    const rows = this.db
      .prepare<Params, Row>(`${sql} LIMIT @limit OFFSET @offset`)
      .all({ ...params, limit: paging.limit, offset: paging.offset });
    if (rows.length > 0 || paging.offset === 0) return { rows, total: rows[0]?.total ?? 0 };
    const total = this.db.prepare<Params, { n: number }>(`SELECT COUNT(*) AS n FROM (${sql})`).get(params)!.n;
    return { rows, total };
  }

  /** Rows over all pages for a page read without a window total: counted only when the page does not tell. */
  private total(countSql: string, params: Params, paging: ReportPaging, pageRows: number): number {
    if (pageRows > 0 && pageRows < paging.limit) return paging.offset + pageRows;
    if (pageRows === 0 && paging.offset === 0) return 0;
    return this.db.prepare<Params, { n: number }>(countSql).get(params)!.n;
  }

  async repeatUploaders(q: RepeatReportQuery): Promise<Page<StoredRepeatRow>> {
    const s = this.repeatSelection(q);
    if (s.kind === 'entry' && s.partitioned) {
      // Picked on the read threads, a partition of the files each: each partition's first
      // offset + limit entries (id and sort key) and its count, in one statement, merged here;
      // then the page's entries read in full. One pass over the entries the filters pick, not a
      // page's sort and then a count (a file name's 86,000 repeat entries of 1.7 million at 10^7).
      const dir = q.order === 'asc' ? 'ASC' : 'DESC';
      const parts = await this.threads.partitioned<{ id: number; k: number | string; total: number }>(
        `WITH e AS MATERIALIZED (SELECT l.id, ${s.partitioned.key} AS k ${s.partitioned.from})
         SELECT id, k, (SELECT COUNT(*) FROM e) AS total FROM e ORDER BY k ${dir}, id LIMIT @rows`,
        { ...s.params, rows: q.offset + q.limit },
      );
      const direction = q.order === 'asc' ? 1 : -1;
      const picked = mergeOrdered(parts, (a, b) => direction * sqliteOrder(a.k, b.k) || a.id - b.id).slice(
        q.offset,
        q.offset + q.limit,
      );
      const rows =
        picked.length === 0
          ? []
          : this.db
              .prepare<Params, EntryRow>(
                `SELECT ${entryColumns(s.uploads)} FROM ledger l JOIN catalog c INDEXED BY catalog_file_sizes ON c.file_no = l.file_no
                 WHERE l.id IN (SELECT value FROM json_each(@ids)) ${s.order}`,
              )
              .all({ ids: JSON.stringify(picked.map((p) => p.id)) });
      return { total: partitionsTotal(parts), items: rows.map(entryItem) };
    }
    if (s.kind === 'entry') {
      // The page's entries are picked from the index (narrow rows to sort), then read in full.
      const rows = this.db
        .prepare<Params, EntryRow>(
          `SELECT ${entryColumns(s.uploads)}
           FROM (SELECT l.id ${s.pick} LIMIT @limit OFFSET @offset) p
           JOIN ledger l ON l.id = p.id JOIN catalog c INDEXED BY catalog_file_sizes ON c.file_no = l.file_no ${s.order}`,
        )
        .all({ ...s.params, limit: q.limit, offset: q.offset });
      const total = this.total(s.count, s.params, q, rows.length);
      return { total, items: rows.map(entryItem) };
    }
    const { rows, total } = this.page<RepeatGroupRow>(s.sql, s.params, q);
    return { total, items: rows.map(s.item) };
  }

  repeatUploaderBatches(q: Unpaged<RepeatReportQuery>, batch: number): Batches<StoredRepeatRow> {
    const s = this.repeatSelection(q);
    return s.kind === 'entry'
      ? selectionBatches<EntryRow, StoredRepeatRow>(this.db, s, batch, (rows) => rows.map(entryItem))
      : selectionBatches<RepeatGroupRow, StoredRepeatRow>(this.db, s, batch, (rows) => rows.map(s.item));
  }

  /** The repeat uploaders' rows, in the table's order (all of them: a page adds its LIMIT). */
  private repeatSelection(q: Unpaged<RepeatReportQuery>) {
    const count = uploadsOf(q.copies);
    const where = ledgerConditions(q, 'l.upload_file_name').add(`${count} >= @min`, { min: q.min });
    if (q.userName) where.add('l.user_name = @userName', { userName: q.userName });
    if (q.unitId) where.add('l.unit_id = @unitId', { unitId: q.unitId });
    // The repeat entries' own index (its condition, implied by any minimum the API takes, is
    // stated for SQLite): everything these tables read, in file order, so the catalog's sizes are
    // read in order too; SQLite would rather avoid a sort and read each entry's row. The catalog
    // through its index of sizes, not its primary key, which would read each row.
    const repeats = q.min >= 2;
    if (repeats) where.add('l.upload_count >= 2');
    const from = `FROM ledger l ${repeats ? 'INDEXED BY ledger_repeat_files' : ''} JOIN catalog c INDEXED BY catalog_file_sizes ON c.file_no = l.file_no ${where.sql}`;
    if (q.group === 'entry') {
      const columns: Record<string, string> = {
        uploadCount: count,
        lastUploadTime: 'l.last_upload_time',
        firstUploadTime: 'l.upload_time',
        userName: 'l.user_name',
        fileName: 'l.upload_file_name',
        fileLength: 'c.length',
      };
      const order = orderBy(columns, q, 'l.id');
      const everyEntry = repeats && q.copies !== 'exclude' && unfiltered(q);
      const indexed = everyEntry ? repeatEntryPick(q) : undefined;
      return {
        kind: 'entry' as const,
        pick: indexed ?? `${from} ${order}`,
        // Where no index gives the order: a partition's entries and their sort key (`repeatUploaders` picks on the read threads).
        partitioned: indexed
          ? undefined
          : {
              from: `FROM ledger l ${repeats ? 'INDEXED BY ledger_repeat_files' : ''} JOIN catalog c INDEXED BY catalog_file_sizes ON c.file_no = l.file_no ${where.and(inPartition('l.file_no')).sql}`,
              key: columns[q.sort]!,
            },
        order,
        uploads: count,
        params: where.params,
        sql: `SELECT ${entryColumns(count)} ${from} ${order}`,
        count: everyEntry ? repeatEntriesCount(q.min) : `SELECT COUNT(*) AS n ${from}`,
      };
    }
    if (q.min === 2 && q.copies !== 'exclude' && unfiltered(q)) return repeatSums(q);
    const byUser = q.group === 'user';
    const groupBy = byUser ? 'l.user_id, l.unit_id' : 'l.unit_id';
    const order = orderBy(REPEAT_GROUP_SORTS, q, groupBy);
    // A user's entries in a unit are of distinct files (the ledger's key): counted, not told apart.
    const sql = `SELECT l.user_id, MAX(l.user_name) AS user_name, MAX(l.unit) AS unit, ${byUser ? '1 AS users, COUNT(*) AS files' : 'COUNT(DISTINCT l.user_id) AS users, COUNT(DISTINCT l.file_no) AS files'},
              SUM(${count}) AS uploads, SUM(${count} - 1) AS repeats, SUM((${count} - 1) * c.length) AS repeat_bytes,
              SUM(l.copies) AS copies, SUM(l.upload_count - 1 - l.copies) AS resends, MIN(l.upload_time) AS first, MAX(l.last_upload_time) AS last, COUNT(*) OVER () AS total
       ${from} GROUP BY ${groupBy} ${order}`;
    return { kind: 'group' as const, sql, params: where.params, item: repeatGroupItem(byUser) };
  }

  async crossUnit(q: CrossUnitReportQuery): Promise<Page<StoredCrossUnitRow>> {
    if (q.unit || q.from || q.to || q.fileName) {
      const found =
        q.fileName && !(q.unit || q.from || q.to)
          ? await this.crossUnitNamedPage(q)
          : await this.crossUnitSummedPage(q);
      return { total: found.total, items: await this.crossUnitThreadItems(q, found.rows) };
    }
    const s = this.crossUnitKeptSelection(q);
    const rows = this.db
      .prepare<Params, CrossUnitFileRow>(s.page)
      .all({ ...s.params, limit: q.limit, offset: q.offset });
    return { total: this.total(s.count, s.params, q, rows.length), items: this.crossUnitItems(q, rows) };
  }

  crossUnitBatches(q: Unpaged<CrossUnitReportQuery>, batch: number): Batches<StoredCrossUnitRow> {
    return selectionBatches<CrossUnitFileRow, StoredCrossUnitRow>(
      this.db,
      this.crossUnitSelection(q),
      batch,
      (rows, lookups) => this.crossUnitItems(q, rows, lookups()),
    );
  }

  /**
   * A page of the files summed over the entries the filters pick (a unit subtree, a date window):
   * summed on the read threads, a partition of the files each, at once, and each partition's first
   * offset + limit files in the table's order merged here (at 10^7 entries, 3 months of two years
   * sum 1.2 million entries of 290,000 files, a city's entries 139,000 files: 1.6–1.9 s and
   * 0.7–1.0 s on one thread). A subtree's entries are one range of their own index
   * (ledger_area_files), in file order; a date window's are those of `crossUnitWindow`, and by
   * units, most first, walked (`mostSharedFirst`). The accounts, and the catalog's names and
   * sizes, are read for the page's files alone unless the page is sorted by them.
   */
  private async crossUnitSummedPage(q: CrossUnitReportQuery): Promise<{ rows: CrossUnitFileRow[]; total: number }> {
    const entries = ledgerConditions(q, 'catalog');
    const byUsers = q.sort === 'users';
    const byCatalog = q.sort === 'fileLength' || q.sort === 'fileName';
    const sums = `COUNT(DISTINCT l.unit_id) AS units, ${byUsers ? 'COUNT(DISTINCT l.user_id) AS users, ' : ''}
      SUM(l.upload_count) AS uploads, MIN(l.upload_time) AS first, MAX(l.last_upload_time) AS last`;
    const window = q.unit ? undefined : crossUnitWindow(q, entries, sums);
    let summed: string;
    let params: Params = { ...entries.params, min: q.min, rows: q.offset + q.limit };
    if (window) {
      summed = window.summed;
      const last = this.db.prepare<[], { n: number | null }>('SELECT MAX(file_no) AS n FROM ledger_files').get()!.n;
      params = { ...params, stripe: this.threads.stripeLength(last ?? 0) };
    } else {
      summed = `SELECT l.file_no, (SELECT file_id FROM ledger_files WHERE file_no = l.file_no) AS file_id, ${sums}
        FROM ledger l INDEXED BY ledger_area_files ${entries.and(inPartition('l.file_no')).sql}
        GROUP BY l.file_no HAVING COUNT(DISTINCT l.unit_id) >= @min`;
    }
    const order = orderBy(CROSS_UNIT_SORT_COLUMNS, q, 'f.file_id');
    const whole = `WITH f AS MATERIALIZED (${summed})
       SELECT f.*, ${byCatalog ? 'c.file_name, c.length, ' : ''}(SELECT COUNT(*) FROM f) AS total
       FROM f ${byCatalog ? 'JOIN catalog c INDEXED BY catalog_file_sizes ON c.file_no = f.file_no' : ''} ${order} LIMIT @rows`;
    const mostUnitsFirst = q.min >= 2 && q.sort === 'units' && q.order !== 'asc' && !q.fileName;
    const parts =
      window && mostUnitsFirst
        ? await this.threads.partitionedTop<CrossUnitFileRow>(
            mostSharedFirst(window, entries, sums, whole, q.offset + q.limit),
            params,
          )
        : await this.threads.partitioned<CrossUnitFileRow & { total: number }>(whole, params);
    const { rows, total } = crossUnitMerged(parts, q);
    if (rows.length === 0) return { rows, total };
    if (!byCatalog) {
      const catalogued = new Map(
        this.db
          .prepare<Params, { file_no: number; file_name: string; length: number }>(
            `SELECT file_no, file_name, length FROM catalog INDEXED BY catalog_file_sizes WHERE file_no IN (SELECT value FROM json_each(@fileNos))`,
          )
          .all({ fileNos: JSON.stringify(rows.map((r) => r.file_no)) })
          .map((c) => [c.file_no, c]),
      );
      for (const r of rows) {
        const { file_name, length } = catalogued.get(r.file_no)!;
        Object.assign(r, { file_name, length });
      }
    }
    // Users are counted where the page is sorted by them, and for files a walk summed.
    const uncounted = rows.filter((r) => r.users === undefined);
    if (uncounted.length > 0) {
      const users = new Map(
        this.db
          .prepare<Params, { file_no: number; users: number }>(
            `SELECT l.file_no, COUNT(DISTINCT l.user_id) AS users FROM ledger l INDEXED BY ledger_file
             ${entries.and('l.file_no IN (SELECT value FROM json_each(@uncounted))').sql} GROUP BY l.file_no`,
          )
          .all({ ...entries.params, uncounted: JSON.stringify(uncounted.map((r) => r.file_no)) })
          .map((u) => [u.file_no, u.users]),
      );
      for (const r of uncounted) r.users = users.get(r.file_no)!;
    }
    return { rows, total };
  }

  /**
   * A page of the files whose stored name is like the filter, from their kept sums: on the read
   * threads, a partition of the files each, the names matched, the files picked and counted, and
   * each partition's first offset + limit files merged here. On one thread the name was matched
   * twice, for the page and for its count (at 10^7, 100,000 of 2,000,000 names: 0.9–1.0 s).
   */
  private async crossUnitNamedPage(q: CrossUnitReportQuery): Promise<{ rows: CrossUnitFileRow[]; total: number }> {
    const parts = await this.threads.partitioned<CrossUnitFileRow & { total: number }>(
      `WITH f AS MATERIALIZED (SELECT f.* FROM ledger_files f WHERE +f.units >= @min AND f.${namedFiles(inPartition('file_no'))})
       SELECT f.*, c.file_name, c.length, (SELECT COUNT(*) FROM f) AS total
       FROM f JOIN catalog c INDEXED BY catalog_file_sizes ON c.file_no = f.file_no
       ${orderBy(CROSS_UNIT_SORT_COLUMNS, q, 'f.file_id')} LIMIT @rows`,
      { min: q.min, name: likePattern(q.fileName!), rows: q.offset + q.limit },
    );
    return crossUnitMerged(parts, q);
  }

  /** The cross-unit table's files, in its order, without their units (all of them: an export). */
  private crossUnitSelection(q: Unpaged<CrossUnitReportQuery>): Selection {
    return q.unit || q.from || q.to ? this.crossUnitSummedSelection(q) : this.crossUnitKeptSelection(q);
  }

  /** The cross-unit table's files summed over the entries the filters pick (`crossUnitSummedPage` a page's). */
  private crossUnitSummedSelection(q: Unpaged<CrossUnitReportQuery>): Selection {
    const where = ledgerConditions(q, 'catalog');
    const params = { ...where.params, min: q.min };
    // Summed over the entries the filters pick, with the number of rows (a window count), read
    // in file order so they are summed as read. A subtree's entries are one range of their own
    // index (ledger_area_files). A time window's: those of the files whose first and last
    // upload (kept in ledger_files) overlap it, as no entry of any other file can, each file's
    // read through ledger_file: a quarter of two years reads a fifth of the entries, not all.
    let entries = `FROM ledger l INDEXED BY ledger_area_files ${where.sql}`;
    // Grouped by the column SQLite reads in order (by l.file_no, it would sort the time
    // window's entries first).
    let fileNo = 'l.file_no';
    if (!q.unit) {
      fileNo = 't.file_no';
      let overlapping = where;
      if (q.from) overlapping = overlapping.and('t.last >= @from');
      if (q.to) overlapping = overlapping.and('t.first < @to');
      entries = `FROM ledger_files t CROSS JOIN ledger l INDEXED BY ledger_file ON l.file_no = t.file_no ${overlapping.sql}`;
    }
    return {
      sql: `SELECT f.*, c.file_id, c.file_name, c.length, COUNT(*) OVER () AS total
       FROM (SELECT ${fileNo} AS file_no, COUNT(DISTINCT l.unit_id) AS units, COUNT(DISTINCT l.user_id) AS users, SUM(l.upload_count) AS uploads,
                    MIN(l.upload_time) AS first, MAX(l.last_upload_time) AS last
             ${entries} GROUP BY ${fileNo} HAVING COUNT(DISTINCT l.unit_id) >= @min) f
       JOIN catalog c INDEXED BY catalog_file_sizes ON c.file_no = f.file_no ${orderBy(CROSS_UNIT_SORT_COLUMNS, q, 'c.file_id')}`,
      params,
    };
  }

  /**
   * The cross-unit table's files from their kept sums (no unit or time filter), with the statement
   * of a page (`page`) and its count.
   */
  private crossUnitKeptSelection(q: Unpaged<CrossUnitReportQuery>): Selection & { count: string; page: string } {
    const where = ledgerConditions(q, 'catalog');
    // Ties go by the files' public ids (from ledger_files, whose index of units holds them).
    const order = (tieBreak: string) => orderBy(CROSS_UNIT_SORT_COLUMNS, q, tieBreak);
    const params = { ...where.params, min: q.min };
    // Sums over all of each file's entries are kept in ledger_files (a file name filter picks
    // whole files). `+f.units`: no index range for the minimum, so SQLite reads the files in
    // number order alongside the catalog's (25 ms for 200,000 files), or by the units index when
    // that is the order asked for: its condition, implied by any minimum the API takes, stated
    // for SQLite then only (else it reads that index and looks up each file's size: 200 ms).
    const files = new Conditions().add('+f.units >= @min');
    if (q.min >= 2 && q.sort === 'units') files.add('f.units >= 2');
    if (q.fileName) files.add(`f.${NAMED_FILES}`);
    const from = `FROM ledger_files f JOIN catalog c INDEXED BY catalog_file_sizes ON c.file_no = f.file_no ${files.sql}`;
    // A page picks its files first, reading only their numbers and what they are ordered by, then
    // reads those rows in full: the files it skips are not joined to the catalog (a page half-way
    // down skipped 700,000 files at 10^7, 2.5 s of catalog reads), unless they are ordered by it.
    // Files of two units or more (implied by any minimum the API takes) are all in
    // ledger_files_shared, which holds everything else the pick reads: stated for SQLite.
    const byCatalog = q.sort === 'fileLength' || q.sort === 'fileName';
    const picked = q.min >= 2 && !files.clauses.includes('f.units >= 2') ? files.and('f.units >= 2') : files;
    const pick = byCatalog ? from : `FROM ledger_files f ${picked.sql}`;
    return {
      sql: `SELECT f.*, c.file_name, c.length ${from} ${order('f.file_id')}`,
      page: `SELECT f.*, c.file_name, c.length
        FROM (SELECT f.file_no ${pick} ${order('f.file_id')} LIMIT @limit OFFSET @offset) p
        JOIN ledger_files f ON f.file_no = p.file_no JOIN catalog c INDEXED BY catalog_file_sizes ON c.file_no = f.file_no
        ${order('f.file_id')}`,
      params,
      // Counted without the catalog (every file summed there is catalogued): in the units index.
      count: `SELECT COUNT(*) AS n FROM ledger_files f ${files.sql}`,
    };
  }

  /** The table's rows of these files, each with its units (the filters' entries), read on `db`. */
  private crossUnitItems(
    q: Unpaged<CrossUnitReportQuery>,
    rows: CrossUnitFileRow[],
    db: Db = this.db,
  ): StoredCrossUnitRow[] {
    const read = crossUnitUploaders(q, rows);
    const all = { ...read.params, part: 0, parts: 1 };
    const units = db.prepare<Params, PageUnit>(read.units).all(all);
    const named = namedUnits(units);
    // Each file's text parsed as it is read: a batch's are megabytes at once.
    const uploaders = db.prepare<Params, FileUploaders>(read.uploaders).iterate({ ...all, named: named.json });
    return crossUnitRows(rows, named.units, uploaders);
  }

  /** `crossUnitItems` read on the read threads, the files shared among them (a page's). */
  private async crossUnitThreadItems(q: CrossUnitReportQuery, rows: CrossUnitFileRow[]): Promise<StoredCrossUnitRow[]> {
    const read = crossUnitUploaders(q, rows);
    const named = namedUnits((await this.threads.partitioned<PageUnit>(read.units, read.params)).flat());
    const uploaders = await this.threads.partitioned<FileUploaders>(read.uploaders, {
      ...read.params,
      named: named.json,
    });
    return crossUnitRows(rows, named.units, uploaders.flat());
  }

  async savings(
    q: SavingsReportQuery,
  ): Promise<Page<Rows.SavingsUnitRow | Rows.SavingsPeriodRow> & { summary: Rows.SavingsFigures }> {
    const {
      sql,
      params: where,
      item,
      summary: summarySql,
    } = this.savingsSelection(q, q.fileName ? await this.namedFileSums({ ...q, fileName: q.fileName }) : undefined);
    const { rows, total } = this.page<SavingsRow>(sql, where, q);
    let summary: Rows.SavingsFigures;
    if (rows[0]) {
      summary = {
        uploads: rows[0].all_uploads,
        savedUploads: rows[0].all_saved_uploads,
        savedBytes: rows[0].all_saved_bytes,
      };
    } else {
      const s = this.db
        .prepare<Params, { uploads: number | null; saved_uploads: number | null; saved_bytes: number | null }>(
          summarySql,
        )
        .get(where)!;
      summary = { uploads: s.uploads ?? 0, savedUploads: s.saved_uploads ?? 0, savedBytes: s.saved_bytes ?? 0 };
    }
    return { total, summary, items: rows.map(item) };
  }

  savingsBatches(q: Unpaged<SavingsReportQuery>, batch: number): Batches<Rows.SavingsUnitRow | Rows.SavingsPeriodRow> {
    const s = this.savingsSelection(q);
    return selectionBatches<SavingsRow, Rows.SavingsUnitRow | Rows.SavingsPeriodRow>(this.db, s, batch, (rows) =>
      rows.map(s.item),
    );
  }

  /**
   * The named files' day tallies for a page, summed on the read threads, a partition of the files
   * each, at once (their rows' columns as `savingsOfNamedFiles` sums them): the catalog's names
   * and the tallies of the files they match are each read a part per core (100,000 files of
   * 2,000,000 and their 510,000 tallies: 1.1–1.4 s on one thread).
   */
  private async namedFileSums(q: Unpaged<SavingsReportQuery> & { fileName: string }): Promise<SavingsSums> {
    const named = savingsOfNamedFiles(q, inPartition('file_no'));
    const parts = await this.threads.partitioned<Record<string, unknown>>(named.from, named.params);
    const columns = [...savingsKeys(q), 'uploads', 'saved_uploads', 'saved_bytes'];
    return {
      from: `SELECT ${columns.map((k) => `value ->> '${k}' AS ${k}`).join(', ')} FROM json_each(@partitionSums)`,
      params: { partitionSums: JSON.stringify(parts.flat()) },
    };
  }

  /**
   * The savings table's rows in its order, each with the sums over all rows (all of them: a page
   * adds its LIMIT), and the statement of the sums alone (for a page past the end); from `sums`
   * where they were summed already.
   */
  private savingsSelection(q: Unpaged<SavingsReportQuery>, summed?: SavingsSums) {
    const keys = savingsKeys(q);
    const key = keys.join(', ');
    const order = orderBy(
      { savedBytes: 'saved_bytes', savedUploads: 'saved_uploads', uploads: 'uploads', unit: key, period: key },
      q,
      key,
    );
    const figures = (r: SavingsRow): Rows.SavingsFigures => ({
      uploads: r.uploads,
      savedUploads: r.saved_uploads,
      savedBytes: r.saved_bytes,
    });
    const item = (r: SavingsRow): Rows.SavingsUnitRow | Rows.SavingsPeriodRow =>
      q.group === 'unit'
        ? {
            city: r.city,
            ...(keys.includes('county') && { county: r.county }),
            ...(keys.includes('town') && { town: r.town }),
            ...figures(r),
          }
        : { period: r.period, ...figures(r) };
    const sums =
      summed ?? (q.fileName ? savingsOfNamedFiles({ ...q, fileName: q.fileName }) : savingsOfDaySums(q, keys));
    const sql = `SELECT ${keys.map((k) => `${k} AS ${q.group === 'unit' ? k : 'period'}`).join(', ')},
                   SUM(uploads) AS uploads, SUM(saved_uploads) AS saved_uploads, SUM(saved_bytes) AS saved_bytes,
                   SUM(SUM(uploads)) OVER () AS all_uploads, SUM(SUM(saved_uploads)) OVER () AS all_saved_uploads,
                   SUM(SUM(saved_bytes)) OVER () AS all_saved_bytes, COUNT(*) OVER () AS total
                 FROM (${sums.from}) GROUP BY ${key} ${order}`;
    return {
      sql,
      params: sums.params,
      item,
      summary: `SELECT SUM(uploads) AS uploads, SUM(saved_uploads) AS saved_uploads, SUM(saved_bytes) AS saved_bytes FROM (${sums.from})`,
    };
  }

  async collisions(q: CollisionReportQuery): Promise<Page<Rows.CollisionRow>> {
    const s = this.collisionSelection(q);
    const { rows, total } = this.page<CollisionSqlRow>(s.sql, s.params, q);
    return { total, items: rows.map(collisionItem) };
  }

  collisionBatches(q: Unpaged<CollisionReportQuery>, batch: number): Batches<Rows.CollisionRow> {
    return selectionBatches<CollisionSqlRow, Rows.CollisionRow>(this.db, this.collisionSelection(q), batch, (rows) =>
      rows.map(collisionItem),
    );
  }

  /** The collisions table's rows in its order (all of them: a page adds its LIMIT). */
  private collisionSelection(q: Unpaged<CollisionReportQuery>): Selection {
    const where = new Conditions().add('c.md5_collision = 1');
    if (q.from) where.add('c.upload_date >= @from', { from: q.from.getTime() });
    if (q.to) where.add('c.upload_date < @to', { to: q.to.getTime() });
    if (q.fileName) where.add("c.file_name LIKE @name ESCAPE '\\'", { name: likePattern(q.fileName) });
    // Uploads counted within the unit subtree; with a subtree, only files it uploaded.
    const uploadsWhere = new Conditions().add('l.file_no = c.file_no');
    subtree(uploadsWhere, q, 'l.');
    const order = orderBy(
      {
        md5: 'md5, upload_date',
        uploadDate: 'upload_date',
        fileLength: 'length',
        fileName: 'file_name',
        uploads: 'uploads',
      },
      q,
      'file_id',
    );
    return {
      sql: `SELECT *, COUNT(*) OVER () AS total FROM (
         SELECT c.md5, c.file_id, c.sha256, c.length, c.file_name, c.upload_date,
                (SELECT COALESCE(SUM(l.upload_count), 0) FROM ledger l ${uploadsWhere.sql}) AS uploads,
                (SELECT COUNT(*) FROM catalog m WHERE m.md5 = c.md5) AS files_with_md5
         FROM catalog c ${where.sql})
       WHERE uploads >= @min ${q.unit ? 'AND uploads > 0' : ''} ${order}`,
      params: { ...where.params, ...uploadsWhere.params, min: q.min },
    };
  }

  async nearDuplicates(q: NearDuplicateReportQuery): Promise<Page<Rows.NearDuplicateRow>> {
    const s = this.nearDuplicateSelection(q);
    const { rows, total } = this.page<PairSqlRow>(s.sql, s.params, q);
    return { total, items: this.nearDuplicateItems(rows) };
  }

  nearDuplicateBatches(q: Unpaged<NearDuplicateReportQuery>, batch: number): Batches<Rows.NearDuplicateRow> {
    return selectionBatches<PairSqlRow, Rows.NearDuplicateRow>(
      this.db,
      this.nearDuplicateSelection(q),
      batch,
      (rows, lookups) => this.nearDuplicateItems(rows, lookups()),
    );
  }

  /** The near-duplicate pairs in the table's order (all of them: a page adds its LIMIT). */
  private nearDuplicateSelection(q: Unpaged<NearDuplicateReportQuery>): Selection {
    const where = new Conditions();
    if (q.from) where.add('p.found_at >= @from', { from: q.from.getTime() });
    if (q.to) where.add('p.found_at < @to', { to: q.to.getTime() });
    if (q.method) where.add('p.method = @method', { method: q.method });
    if (q.status) where.add(q.status === 'open' ? 'r.file_a IS NULL' : 'r.file_a IS NOT NULL');
    if (q.fileName)
      where.add("(a.file_name LIKE @name ESCAPE '\\' OR b.file_name LIKE @name ESCAPE '\\')", {
        name: likePattern(q.fileName),
      });
    if (q.unit) {
      // Pairs where either file was uploaded within the subtree.
      const inSubtree = (column: string) => {
        const w = new Conditions().add(`l.file_no = ${column}`);
        subtree(w, q, 'l.');
        return w;
      };
      const a = inSubtree('a.file_no');
      where.add(
        `(EXISTS (SELECT 1 FROM ledger l ${a.sql}) OR EXISTS (SELECT 1 FROM ledger l ${inSubtree('b.file_no').sql}))`,
        a.params,
      );
    }
    const order = orderBy(
      { foundAt: 'p.found_at', jaccard: 'p.jaccard', hamming: 'p.hamming IS NULL,p.hamming' },
      q,
      'p.file_a, p.file_b',
    );
    return {
      sql: `SELECT p.*, a.file_name AS a_name, a.length AS a_length, a.content_type AS a_type, a.upload_date AS a_date,
              b.file_name AS b_name, b.length AS b_length, b.content_type AS b_type, b.upload_date AS b_date,
              r.at AS r_at, r.user_name AS r_user_name, r.note AS r_note, COUNT(*) OVER () AS total
       FROM near_pairs p JOIN catalog a ON a.file_id = p.file_a JOIN catalog b ON b.file_id = p.file_b
       LEFT JOIN near_reviews r ON r.file_a = p.file_a AND r.file_b = p.file_b
       ${where.sql} ${order}`,
      params: where.params,
    };
  }

  /** The table's rows of these pairs, each file with its units. */
  /** The pairs' rows, each file with its units, read on `db`. */
  private nearDuplicateItems(rows: PairSqlRow[], db: Db = this.db): Rows.NearDuplicateRow[] {
    const unitsOf = db.prepare<[string], { unit: string }>(
      'SELECT DISTINCT l.unit FROM ledger l JOIN catalog c USING (file_no) WHERE c.file_id = ? ORDER BY l.unit_id',
    );
    const file = (id: string, name: string, length: number, type: string, date: number, snippet: string) => ({
      fileId: id,
      fileName: name,
      fileLength: length,
      contentType: type,
      uploadDate: iso(date),
      units: unitsOf.all(id).map((u) => reportUnit(u.unit)),
      snippet,
    });
    return rows.map((r) => ({
      a: file(r.file_a, r.a_name, r.a_length, r.a_type, r.a_date, r.snippet_a),
      b: file(r.file_b, r.b_name, r.b_length, r.b_type, r.b_date, r.snippet_b),
      method: r.method,
      hamming: r.hamming,
      jaccard: r.jaccard,
      containment: r.containment,
      foundAt: iso(r.found_at),
      review: r.r_at === null ? null : { at: iso(r.r_at), userName: r.r_user_name!, note: r.r_note! },
      pages: r.pages === null ? null : (JSON.parse(r.pages) as Rows.NearDuplicatePages),
    }));
  }
}

interface PageUnit {
  id: string;
  unit: string;
}
interface FileUploaders {
  file_no: number;
  uploaders: string | null;
}

/**
 * The statements that read the units of these files (a page's, a batch's), with the table's
 * filters but the name (it holds for the whole file), over the files of partition `@part` of
 * `@parts` (0 of 1: all). A page of widely shared files has tens of thousands of units, so per
 * file one text of joined rows: its units earliest first, each as unit id (JSON), unit, user names
 * (JSON), uploads, first and last upload time. The unit (its JSON, the most text) only where the
 * files' entries name a unit id more than one way (`@named`, from `units`: `namedUnits`); else
 * it is the one way they do, read once for them all.
 */
function crossUnitUploaders(q: Unpaged<CrossUnitReportQuery>, rows: CrossUnitFileRow[]) {
  const where = ledgerConditions({ ...q, fileName: undefined }, 'catalog');
  const files = 'json_each(@fileNos) p WHERE p.key % @parts = @part';
  return {
    params: { ...where.params, fileNos: JSON.stringify(rows.map((r) => r.file_no)) },
    units: `SELECT json_quote(l.unit_id) AS id, l.unit FROM ledger l
      ${where.and(`l.file_no IN (SELECT p.value FROM ${files})`).sql} GROUP BY l.unit_id, l.unit`,
    uploaders: `SELECT p.value AS file_no, (
        SELECT ${joinedRows(['json_quote(unit_id)', 'unit', 'user_names', 'uploads', 'first', 'last'], 'first, unit_id')}
        FROM (SELECT l.unit_id, IIF(l.unit_id IN (SELECT value FROM json_each(@named)), MAX(l.unit), '') AS unit,
                     json_group_array(DISTINCT l.user_name) AS user_names, SUM(l.upload_count) AS uploads,
                     MIN(l.upload_time) AS first, MAX(l.last_upload_time) AS last
              FROM ledger l ${where.and('l.file_no = p.value').sql}
              GROUP BY l.unit_id ORDER BY first, l.unit_id LIMIT ${UPLOADERS_PER_ROW})) AS uploaders
      FROM ${files}`,
  };
}

/** By unit id, the unit, or null where the entries name it more than one way; and those ids (JSON). */
function namedUnits(units: PageUnit[]): { units: Map<string, Rows.ReportUnit | null>; json: string } {
  const texts = new Map<string, string | null>();
  for (const u of units) {
    const seen = texts.get(u.id);
    texts.set(u.id, seen === undefined || seen === u.unit ? u.unit : null);
  }
  const named = [...texts].filter(([, text]) => text === null).map(([id]) => JSON.parse(id) as string);
  return {
    units: new Map([...texts].map(([id, text]) => [id, text === null ? null : reportUnit(text)])),
    json: JSON.stringify(named),
  };
}

/** The table's rows of these files, with their units read (`crossUnitUploaders`). */
function crossUnitRows(
  rows: CrossUnitFileRow[],
  units: Map<string, Rows.ReportUnit | null>,
  read: Iterable<FileUploaders>,
): StoredCrossUnitRow[] {
  const uploaders = new Map(
    Array.from(read, ({ file_no, uploaders: text }) => [
      file_no,
      splitJoinedRows(text).map((fields) => {
        const [unitId, unit, userNames, uploads, first, last] = fields as [
          string,
          string,
          string,
          string,
          string,
          string,
        ];
        return {
          unit: unit === '' ? units.get(unitId)! : reportUnit(unit),
          userNames: (JSON.parse(userNames) as string[]).sort(),
          uploads: Number(uploads),
          firstUploadTime: iso(Number(first)),
          lastUploadTime: iso(Number(last)),
        };
      }),
    ]),
  );
  return rows.map((r) => ({
    fileId: r.file_id,
    fileName: r.file_name,
    fileLength: r.length,
    units: r.units,
    users: r.users,
    uploads: r.uploads,
    firstUploadTime: iso(r.first),
    lastUploadTime: iso(r.last),
    uploaders: uploaders.get(r.file_no) ?? [],
  }));
}
