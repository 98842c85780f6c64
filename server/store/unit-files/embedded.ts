import { FILE_KIND_RULES, GENERIC_TYPES, type FileKind, type FileKindRule } from '../../../shared/file-types.js';
import { defaultFileOrder, FILE_NAMES_SHOWN, FILE_UPLOADERS_SHOWN, type FileSort } from '../../../shared/schemas.js';
import { catalogEntryFromRow, type CatalogRow } from '../embedded/catalog-rows.js';
import type { Db } from '../embedded/database.js';
import { scopeWhere } from '../embedded/scopes.js';
import { likePattern } from '../embedded/sql.js';
import type { ViewScope } from '../ledger/port.js';
import {
  viewScopeOf,
  type FolderPage,
  type FolderQuery,
  type UnitFileListing,
  type UnitFilesPage,
  type UnitFilesQuery,
  type UnitFiles,
  type ViewUpload,
  type ViewUploadsQuery,
} from './port.js';
import { folderRange } from './folders.js';

/**
 * 本单位文件 on the embedded store: the ledger's entries and names (ledger, ledger_names) summed per
 * file and joined to the catalog's entries (catalog, through its index catalog_file_sizes), read
 * only. The tables are their owners' (server/store/ledger/embedded.ts, catalog/embedded.ts), and so
 * are the indexes this reads through (ledger_unit_files, ledger_names_file, catalog_file_sizes).
 */

type ListingRow = CatalogRow & {
  display_name: string;
  display_type: string;
  uploads: number;
  mine: number;
  first_upload: number;
  last_upload: number;
  /** Rows of the whole selection (a window over it), where the statement counts them. */
  total?: number;
};

/** The columns of a sort, in a unit's (subtree's) listing; ties go by file id, so pages never overlap. */
/** Sub-folders of one level a unit's folder page reads by skipping (see unitLevel). */
const MAX_SKIPPED_FOLDERS = 64;

const SCOPE_SORT_COLUMNS: Record<FileSort, string> = {
  name: 'sort_name',
  size: 'size',
  firstUpload: 'first_upload',
  lastUpload: 'last_upload',
  unitCount: 'uploads',
  myCount: 'mine',
};

/** The columns of a sort, in the whole archive's listing. */
const ALL_SORT_COLUMNS: Record<FileSort, string> = {
  name: 'c.file_name',
  size: 'c.length',
  firstUpload: 'first_upload',
  lastUpload: 'last_upload',
  unitCount: 'uploads',
  myCount: 'mine',
};

/** A listing's statement parameters: whose uploads are "mine", the filters, the page. */
const listingParams = (q: UnitFilesQuery) => ({
  accountId: q.accountId,
  pattern: q.nameContains ? likePattern(q.nameContains) : null,
  uploader: q.uploaderId ?? null,
  from: q.firstUploadFrom?.getTime() ?? null,
  before: q.firstUploadBefore?.getTime() ?? null,
  limit: q.limit,
  offset: q.offset,
});

/** SQL text of a constant (the kind rules' types and extensions: the code's own, never a caller's). */
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** Whether the upload of media type `type` named `name` (SQL expressions) is of a kind (shared/file-types.ts). */
function kindCondition(kind: FileKind, type: string, name: string): string {
  const rule = (r: FileKindRule) =>
    [
      ...(r.types.length > 0 ? [`${type} IN (${r.types.map(literal).join(', ')})`] : []),
      ...r.typePrefixes.map((prefix) => `substr(${type}, 1, ${prefix.length}) = ${literal(prefix)}`),
      `(${type} IN (${GENERIC_TYPES.map(literal).join(', ')}) AND (${r.extensions
        .map((e) => `${name} LIKE ${literal(`%.${e}`)}`)
        .join(' OR ')}))`,
    ].join(' OR ');
  if (kind !== 'other') return `(${rule(FILE_KIND_RULES[kind])})`;
  return `NOT (${Object.values(FILE_KIND_RULES)
    .map((r) => `(${rule(r)})`)
    .join(' OR ')})`;
}

export class EmbeddedUnitFiles implements UnitFiles {
  constructor(private readonly db: Db) {}

  async list(query: UnitFilesQuery): Promise<UnitFilesPage> {
    const scope = viewScopeOf(query);
    const sort = query.sort ?? (scope ? 'lastUpload' : 'firstUpload');
    const order = query.order ?? defaultFileOrder(sort);
    const { rows, total } = scope ? this.listInScope(query, scope, sort, order) : this.listAll(query, sort, order);
    const fileNos = JSON.stringify(rows.map((r) => r.file_no));
    const names = this.namesOf(fileNos, scope);
    const uploaders = this.uploadersOf(fileNos, scope);
    const items = rows.map((row) => {
      const named = names.get(row.file_no);
      const uploaded = uploaders.get(row.file_no);
      return {
        ...listingFromRow(row),
        names: named?.values ?? [],
        nameCount: named?.count ?? 0,
        uploaders: uploaded?.values ?? [],
        uploaderCount: uploaded?.count ?? 0,
      };
    });
    return { items, total, sort, order };
  }

  /**
   * A unit's view (or a subtree's): the files its accounts uploaded, under the names they gave
   * them, summed from its ledger entries; the filters pick files, the sums stay the view's.
   */
  private listInScope(
    q: UnitFilesQuery,
    scope: ViewScope,
    sort: FileSort,
    order: 'asc' | 'desc',
    /** Only these files (a JSON array of file numbers): a folder's page. */
    only?: string,
  ) {
    const where = scopeWhere('l', scope);
    const params = { ...where.params, ...listingParams(q), ...(only !== undefined && { only }) };
    const named = q.nameContains
      ? `AND l.file_no IN (SELECT n.file_no FROM ledger_names n WHERE ${scopeWhere('n', scope).sql} AND n.name LIKE @pattern ESCAPE '\\')`
      : '';
    const having = [
      ...(q.uploaderId !== undefined ? ['SUM(l.user_id = @uploader) > 0'] : []),
      ...(q.kind ? [`MAX(${kindCondition(q.kind, 'l.last_content_type', 'l.last_upload_file_name')}) = 1`] : []),
      ...(q.firstUploadFrom ? ['MIN(l.upload_time) >= @from'] : []),
      ...(q.firstUploadBefore ? ['MIN(l.upload_time) < @before'] : []),
    ];
    // Summed from an index that holds every column read (ledger_unit_files), so the unit's rows
    // are read in index order, not one by one; the name shown is looked up for the page only,
    // unless the files are sorted by it (then the largest "time + name" is the latest upload's).
    const files = `
      SELECT l.file_no AS fno,
             MIN(l.upload_time) AS first_upload, MAX(l.last_upload_time) AS last_upload,
             SUM(l.upload_count) AS uploads,
             SUM(CASE WHEN l.user_id = @accountId THEN l.upload_count ELSE 0 END) AS mine
             ${sort === 'name' ? `, substr(MAX(printf('%015d', l.last_upload_time) || l.last_upload_file_name), 16) AS sort_name` : ''}
      FROM ledger l WHERE ${where.sql} ${named}
      ${only !== undefined ? 'AND l.file_no IN (SELECT value FROM json_each(@only))' : ''}
      GROUP BY l.file_no ${having.length > 0 ? `HAVING ${having.join(' AND ')}` : ''}`;
    const direction = order.toUpperCase();
    const orderBy = `${SCOPE_SORT_COLUMNS[sort]} ${direction}, fid`;
    // The page, with the selection's size beside each row (one pass; ties go by the files' public
    // ids, read from the catalog's index of sizes in file number order); then its catalog entries
    // and its latest names and types.
    const latest = (column: string) =>
      `(SELECT x.${column} FROM ledger x WHERE x.file_no = p.fno AND ${scopeWhere('x', scope).sql}
        ORDER BY x.last_upload_time DESC, x.id DESC LIMIT 1)`;
    const rows = this.db
      .prepare<typeof params, ListingRow>(
        `WITH files AS (${files}),
         page AS (
           SELECT f.*, s.file_id AS fid, s.length AS size, COUNT(*) OVER () AS total
           FROM files f JOIN catalog s INDEXED BY catalog_file_sizes ON s.file_no = f.fno
           ORDER BY ${orderBy} LIMIT @limit OFFSET @offset)
         SELECT c.*, p.*, ${latest('last_upload_file_name')} AS display_name, ${latest('last_content_type')} AS display_type
         FROM page p JOIN catalog c ON c.file_no = p.fno ORDER BY ${orderBy}`,
      )
      .all(params);
    if (rows.length > 0 || q.offset === 0) return { rows, total: rows[0]?.total ?? 0 };
    // A page past the end: counted on its own.
    const { total } = this.db
      .prepare<typeof params, { total: number }>(`WITH files AS (${files}) SELECT COUNT(*) AS total FROM files`)
      .get(params)!;
    return { rows, total };
  }

  /**
   * One folder: its sub-folders and files read from the names the view's units uploaded files
   * under, through the index ledger_names_unit_paths (unit_id, name, file_no) in a unit's view:
   * only the names under the folder are read, in name order, from the index alone (a unit of
   * 100,000 files reads the folder's names, never the table). A reach's or the archive's view
   * reads its units' names (ledger_names_file's table by its levels), then the same way.
   */
  async folder(q: FolderQuery): Promise<FolderPage> {
    const scope = viewScopeOf(q);
    const where = scopeWhere('n', scope);
    const range = folderRange(q.folder);
    const params = { ...where.params, low: range.low, high: range.high, start: range.start };
    // The names under the folder, each (name, file) once (a reach's units may share one), with
    // what follows the folder's path: `rest`.
    const under = `SELECT DISTINCT n.name, n.file_no, substr(n.name, @start) AS rest FROM ledger_names n
      WHERE ${where.sql} ${range.low !== null ? 'AND n.name >= @low AND n.name < @high' : ''}`;
    const level = scope && 'unitId' in scope ? this.unitLevel(scope.unitId, range) : undefined;
    const counts = level
      ? { folders: level.folders.length, files: level.files }
      : this.db
          .prepare<typeof params, { folders: number; files: number }>(
            `WITH under AS (${under})
             SELECT COUNT(DISTINCT CASE WHEN instr(rest, '/') > 0 THEN substr(rest, 1, instr(rest, '/') - 1) END) AS folders,
                    COALESCE(SUM(instr(rest, '/') = 0), 0) AS files
             FROM under`,
          )
          .get(params)!;
    const folderOffset = Math.min(q.offset, counts.folders);
    const folders = level
      ? level.folders.slice(folderOffset, folderOffset + q.limit)
      : this.db
          .prepare<typeof params & { limit: number; offset: number }, { name: string; files: number }>(
            `WITH under AS (${under})
             SELECT substr(rest, 1, instr(rest, '/') - 1) AS name, COUNT(*) AS files
             FROM under WHERE instr(rest, '/') > 0
             GROUP BY 1 ORDER BY 1 LIMIT @limit OFFSET @offset`,
          )
          .all({ ...params, limit: q.limit, offset: folderOffset });
    const fileLimit = q.limit - folders.length;
    const named =
      fileLimit > 0 && counts.files > Math.max(0, q.offset - counts.folders)
        ? this.db
            .prepare<
              typeof params & { limit: number; offset: number },
              { name: string; file_no: number; rest: string }
            >(
              `WITH under AS (${under})
               SELECT name, file_no, rest FROM under WHERE instr(rest, '/') = 0
               ORDER BY name, file_no LIMIT @limit OFFSET @offset`,
            )
            .all({ ...params, limit: fileLimit, offset: Math.max(0, q.offset - counts.folders) })
        : [];
    const listed = await this.filesOf(
      q,
      scope,
      named.map((n) => n.file_no),
    );
    const files = named.flatMap((n) => {
      const listing = listed.get(n.file_no);
      return listing ? [{ ...listing, path: n.rest }] : [];
    });
    return { folders, files, folderTotal: counts.folders, fileTotal: counts.files };
  }

  /**
   * A unit's folder level by skipping through ledger_names_unit_paths: one seek finds the next
   * sub-folder's first name past the one before (passing over the files between, in the index),
   * and its names are counted in their range of the index; the level's files are what is left.
   * The top of a unit of 100,000 files (a handful of year folders) takes a few seeks and one count
   * of each range, where grouping every name under it took 0.6 s. A unit's names are each (name,
   * file) once (the table's key), so nothing is counted twice. Undefined past
   * MAX_SKIPPED_FOLDERS sub-folders: a level of thousands is grouped faster in one pass.
   */
  private unitLevel(
    unitId: string,
    range: ReturnType<typeof folderRange>,
  ): { folders: Array<{ name: string; files: number }>; files: number } | undefined {
    const bounds = range.high !== null ? 'AND name < @high' : '';
    const nextFolder = this.db.prepare<
      { unit: string; from: string; high: string | null; start: number },
      { name: string }
    >(
      `SELECT name FROM ledger_names INDEXED BY ledger_names_unit_paths
       WHERE unit_id = @unit AND name >= @from ${bounds} AND instr(substr(name, @start), '/') > 0
       ORDER BY name LIMIT 1`,
    );
    const count = (high: string | null) =>
      this.db.prepare<{ unit: string; low: string; high: string | null }, { n: number }>(
        `SELECT COUNT(*) AS n FROM ledger_names INDEXED BY ledger_names_unit_paths
         WHERE unit_id = @unit AND name >= @low ${high !== null ? 'AND name < @high' : ''}`,
      );
    const countFolder = count('');
    const folders: Array<{ name: string; files: number }> = [];
    let under = 0;
    for (let from = range.low ?? ''; ;) {
      const next = nextFolder.get({ unit: unitId, from, high: range.high, start: range.start });
      if (!next) break;
      if (folders.length === MAX_SKIPPED_FOLDERS) return undefined;
      const rest = next.name.slice(range.prefix.length);
      const name = rest.slice(0, rest.indexOf('/'));
      const files = countFolder.get({
        unit: unitId,
        low: `${range.prefix}${name}/`,
        high: `${range.prefix}${name}0`,
      })!.n;
      folders.push({ name, files });
      under += files;
      from = `${range.prefix}${name}0`; // past every name under it ('0' follows '/')
    }
    // In code-point order, as the grouping sorts them (names sort by their whole path: 'a-b/…' before 'a/…').
    folders.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
    const all = count(range.high).get({ unit: unitId, low: range.low ?? '', high: range.high })!.n;
    return { folders, files: all - under };
  }

  /** The listing's rows of some files (by file number), summed in the view as `list` sums them. */
  private async filesOf(q: FolderQuery, scope: ViewScope | undefined, fileNos: number[]) {
    const byNumber = new Map<number, UnitFileListing>();
    if (fileNos.length === 0) return byNumber;
    const only = JSON.stringify([...new Set(fileNos)]);
    const query: UnitFilesQuery = { ...q, limit: fileNos.length, offset: 0 };
    const { rows } = scope
      ? this.listInScope(query, scope, 'name', 'asc', only)
      : this.listAll(query, 'name', 'asc', only);
    const names = this.namesOf(only, scope);
    const uploaders = this.uploadersOf(only, scope);
    for (const row of rows) {
      const named = names.get(row.file_no);
      const uploaded = uploaders.get(row.file_no);
      byNumber.set(row.file_no, {
        ...listingFromRow(row),
        names: named?.values ?? [],
        nameCount: named?.count ?? 0,
        uploaders: uploaded?.values ?? [],
        uploaderCount: uploaded?.count ?? 0,
      });
    }
    return byNumber;
  }

  /**
   * The actions recorded in upload_keys that count now (state 'counted'), of some files or of the
   * names under a folder, through upload_keys_entry (file_no, unit_id, account_id): the folder's
   * files are found through its names first (ledger_names_unit_paths), their actions then by file.
   */
  async uploads(q: ViewUploadsQuery): Promise<ViewUpload[]> {
    const scope = viewScopeOf(q);
    const names = scopeWhere('n', scope);
    const range = q.folder !== undefined ? folderRange(q.folder) : undefined;
    const params = {
      ...names.params,
      fileIds: JSON.stringify(q.fileIds ?? []),
      low: range?.low ?? null,
      high: range?.high ?? null,
      account: q.accountId ?? null,
      since: q.since?.getTime() ?? null,
      limit: q.limit,
    };
    const files = range
      ? `SELECT DISTINCT n.file_no FROM ledger_names n WHERE ${names.sql}
         ${range.low !== null ? 'AND n.name >= @low AND n.name < @high' : ''}`
      : 'SELECT c.file_no FROM catalog c WHERE c.file_id IN (SELECT value FROM json_each(@fileIds))';
    const inScope = !scope
      ? 'true'
      : 'unitId' in scope
        ? 'k.unit_id = @scope_unit'
        : (['city', 'county', 'town'] as const)
            .filter((level) => scope.subtree[level] !== undefined)
            .map((level) => `json_extract(k.unit, '$.${level}') = @scope_${level}`)
            .join(' AND ');
    const rows = this.db
      .prepare<typeof params, { key: string; file_id: string; file_name: string; account_id: string; at: number }>(
        `SELECT k.key, k.file_id, k.file_name, k.account_id, k.at
         FROM upload_keys k INDEXED BY upload_keys_entry
         WHERE k.file_no IN (${files}) AND ${inScope} AND k.state = 'counted'
           ${range && range.low !== null ? 'AND k.file_name >= @low AND k.file_name < @high' : ''}
           ${q.accountId !== undefined ? 'AND k.account_id = @account' : ''}
           ${q.since !== undefined ? 'AND k.at >= @since' : ''}
         ORDER BY k.at, k.key LIMIT @limit`,
      )
      .all(params);
    return rows.map((r) => ({
      key: r.key,
      fileId: r.file_id,
      fileName: r.file_name,
      accountId: r.account_id,
      at: new Date(r.at),
    }));
  }

  /**
   * The whole archive, from the catalog (every content held, under its first name); the ledger
   * is summed per file shown, or per file selected when sorting by those sums.
   */
  private listAll(q: UnitFilesQuery, sort: FileSort, order: 'asc' | 'desc', only?: string) {
    const orderBy = `${ALL_SORT_COLUMNS[sort]} ${order.toUpperCase()}, c.file_id`;
    const params = { ...listingParams(q), ...(only !== undefined && { only }) };
    const filters = [
      ...(only !== undefined ? ['c.file_no IN (SELECT value FROM json_each(@only))'] : []),
      // Not a content being deleted, nor a deleted one's tombstone.
      'c.deleting_at IS NULL',
      ...(q.nameContains
        ? [
            `(c.file_name LIKE @pattern ESCAPE '\\' OR c.file_no IN (SELECT n.file_no FROM ledger_names n WHERE n.name LIKE @pattern ESCAPE '\\'))`,
          ]
        : []),
      ...(q.uploaderId !== undefined
        ? ['c.file_no IN (SELECT u.file_no FROM ledger u WHERE u.user_id = @uploader)']
        : []),
      ...(q.kind ? [kindCondition(q.kind, 'c.content_type', 'c.file_name')] : []),
      ...(q.firstUploadFrom ? ['c.upload_date >= @from'] : []),
      ...(q.firstUploadBefore ? ['c.upload_date < @before'] : []),
    ];
    const where = filters.length > 0 ? `WHERE ${filters.join(' AND ')}` : '';
    const rows = this.db
      .prepare<typeof params, ListingRow>(
        `SELECT c.*, c.file_name AS display_name, c.content_type AS display_type, c.upload_date AS first_upload,
                COALESCE((SELECT MAX(last_upload_time) FROM ledger WHERE file_no = c.file_no), c.upload_date) AS last_upload,
                COALESCE((SELECT SUM(upload_count) FROM ledger WHERE file_no = c.file_no), 0) AS uploads,
                COALESCE((SELECT SUM(upload_count) FROM ledger WHERE file_no = c.file_no AND user_id = @accountId), 0) AS mine
         FROM catalog c ${where}
         ORDER BY ${orderBy} LIMIT @limit OFFSET @offset`,
      )
      .all(params);
    const { total } = this.db
      .prepare<typeof params, { total: number }>(`SELECT COUNT(*) AS total FROM catalog c ${where}`)
      .get(params)!;
    return { rows, total };
  }

  /**
   * The first few of a per-file list for the page's files (`fileNos`: a JSON array) and how long
   * each list is: `grouped` yields one row per file and item (file_no, value, and `rank`, the order).
   */
  private firstOfEach(grouped: string, params: Record<string, unknown>, shown: number) {
    const rows = this.db
      .prepare<Record<string, unknown>, { file_no: number; value: string; total: number }>(
        `SELECT file_no, value, total FROM (
           SELECT file_no, value, ROW_NUMBER() OVER (PARTITION BY file_no ORDER BY rank) AS nth,
                  COUNT(*) OVER (PARTITION BY file_no) AS total
           FROM (${grouped}))
         WHERE nth <= @shown ORDER BY file_no, nth`,
      )
      .all({ ...params, shown });
    const byFile = new Map<number, { values: string[]; count: number }>();
    for (const r of rows) {
      const file = byFile.get(r.file_no) ?? { values: [], count: r.total };
      file.values.push(r.value);
      byFile.set(r.file_no, file);
    }
    return byFile;
  }

  /** The view's names of each file, first used first (ties A→Z), at most FILE_NAMES_SHOWN each. */
  private namesOf(fileNos: string, scope: ViewScope | undefined) {
    const where = scopeWhere('n', scope);
    return this.firstOfEach(
      `SELECT n.file_no, n.name AS value, printf('%015d', MIN(n.first_used)) || n.name AS rank
       FROM ledger_names n WHERE n.file_no IN (SELECT value FROM json_each(@fileNos)) AND ${where.sql}
       GROUP BY n.file_no, n.name`,
      { ...where.params, fileNos },
      FILE_NAMES_SHOWN,
    );
  }

  /** The view's uploaders of each file, by login, first uploader first, at most FILE_UPLOADERS_SHOWN each. */
  private uploadersOf(fileNos: string, scope: ViewScope | undefined) {
    const where = scopeWhere('l', scope);
    return this.firstOfEach(
      `SELECT l.file_no, MAX(l.user_name) AS value, printf('%015d', MIN(l.upload_time)) || l.user_id AS rank
       FROM ledger l WHERE l.file_no IN (SELECT value FROM json_each(@fileNos)) AND ${where.sql}
       GROUP BY l.file_no, l.user_id`,
      { ...where.params, fileNos },
      FILE_UPLOADERS_SHOWN,
    );
  }
}

function listingFromRow(row: ListingRow): Omit<UnitFileListing, 'names' | 'nameCount' | 'uploaders' | 'uploaderCount'> {
  return {
    entry: catalogEntryFromRow(row),
    displayName: row.display_name,
    displayType: row.display_type,
    uploadCount: row.uploads,
    myUploadCount: row.mine,
    firstUploadTime: new Date(row.first_upload),
    lastUploadTime: new Date(row.last_upload),
  };
}
