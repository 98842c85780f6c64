import type { Db, EmbeddedSchema } from '../embedded/database.js';
import { likePattern } from '../embedded/sql.js';
import type { UnitSubtree } from '../ledger/port.js';
import type { Catalog, CatalogEntry, CatalogListing, CatalogListQuery, ContentKey } from './port.js';

export const catalogSchema: EmbeddedSchema = {
  tables: `
CREATE TABLE IF NOT EXISTS catalog (
  file_id       TEXT PRIMARY KEY,
  md5           TEXT NOT NULL,
  sha256        TEXT NOT NULL,
  length        INTEGER NOT NULL,
  chunk_size    INTEGER NOT NULL,
  chunk_count   INTEGER NOT NULL,
  file_name     TEXT NOT NULL,
  content_type  TEXT NOT NULL,
  upload_date   INTEGER NOT NULL,
  md5_collision INTEGER NOT NULL DEFAULT 0,
  UNIQUE (sha256, md5, length)
);
CREATE INDEX IF NOT EXISTS catalog_md5 ON catalog (md5);
CREATE INDEX IF NOT EXISTS catalog_upload_date ON catalog (upload_date);
`,
};

type ListingRow = CatalogRow & {
  display_name: string;
  display_type: string;
  uploads: number;
  mine: number;
  first_upload: number;
  last_upload: number;
};

/** A listing's statement parameters: whose uploads are "mine", the name searched for, the page. */
const listingParams = (q: CatalogListQuery) => ({
  accountId: q.accountId,
  pattern: q.nameContains ? likePattern(q.nameContains) : null,
  limit: q.limit,
  offset: q.offset,
});

export class EmbeddedCatalog implements Catalog {
  private readonly byId;
  private readonly byKey;

  constructor(private readonly db: Db) {
    this.byId = db.prepare<[string], CatalogRow>('SELECT * FROM catalog WHERE file_id = ?');
    this.byKey = db.prepare<[string, string, number], CatalogRow>(
      'SELECT * FROM catalog WHERE sha256 = ? AND md5 = ? AND length = ?',
    );
  }

  async get(fileId: string): Promise<CatalogEntry | undefined> {
    const row = this.byId.get(fileId);
    return row && catalogEntryFromRow(row);
  }

  async findByKey(key: ContentKey): Promise<CatalogEntry | undefined> {
    const row = this.byKey.get(key.sha256, key.md5, key.length);
    return row && catalogEntryFromRow(row);
  }

  async scan(afterFileId: string | undefined, limit: number): Promise<CatalogEntry[]> {
    return this.db
      .prepare<[string, number], CatalogRow>('SELECT * FROM catalog WHERE file_id > ? ORDER BY file_id LIMIT ?')
      .all(afterFileId ?? '', limit)
      .map(catalogEntryFromRow);
  }

  async count(): Promise<number> {
    return this.db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM catalog').get()!.n;
  }

  async list(query: CatalogListQuery): Promise<{ items: CatalogListing[]; total: number }> {
    if (query.unitId !== undefined) return this.listForUnits(query, { unitId: query.unitId });
    if (query.subtree !== undefined) return this.listForUnits(query, query.subtree);
    return this.listAll(query);
  }

  /**
   * A unit's view (or a subtree's): files its accounts uploaded, most recently uploaded first,
   * under the names they gave them.
   */
  private listForUnits(q: CatalogListQuery, who: { unitId: string } | UnitSubtree) {
    const nameFilter = q.nameContains
      ? `AND (l.upload_file_name LIKE @pattern ESCAPE '\\' OR l.last_upload_file_name LIKE @pattern ESCAPE '\\')`
      : '';
    const columns =
      'unitId' in who
        ? ['unit_id']
        : ['city', 'county', 'town'].filter((c) => c in who && who[c as keyof UnitSubtree] !== undefined);
    const match = (alias: string) => columns.map((c) => `${alias}.${c} = @${c}`).join(' AND ');
    const params = {
      ...('unitId' in who
        ? { unit_id: who.unitId }
        : Object.fromEntries(columns.map((c) => [c, who[c as keyof UnitSubtree]]))),
      ...listingParams(q),
    };
    // SQLite takes bare columns from the row that holds the one MAX(), so display_name and
    // display_type are the latest upload's (first_upload is a subquery to keep that MAX() the only aggregate of its kind).
    const rows = this.db
      .prepare<typeof params, ListingRow>(
        `SELECT c.*, l.last_upload_file_name AS display_name, l.last_content_type AS display_type, MAX(l.last_upload_time) AS last_upload,
                (SELECT MIN(f.upload_time) FROM ledger f WHERE ${match('f')} AND f.file_id = l.file_id) AS first_upload,
                SUM(l.upload_count) AS uploads,
                SUM(CASE WHEN l.user_id = @accountId THEN l.upload_count ELSE 0 END) AS mine
         FROM ledger l JOIN catalog c ON c.file_id = l.file_id
         WHERE ${match('l')} ${nameFilter}
         GROUP BY l.file_id ORDER BY last_upload DESC, c.file_id LIMIT @limit OFFSET @offset`,
      )
      .all(params);
    const { total } = this.db
      .prepare<typeof params, { total: number }>(
        `SELECT COUNT(DISTINCT l.file_id) AS total FROM ledger l WHERE ${match('l')} ${nameFilter}`,
      )
      .get(params)!;
    return { items: rows.map(listingFromRow), total };
  }

  /** The whole archive, newest content first; counts are computed per page only. */
  private listAll(q: CatalogListQuery) {
    const nameFilter = q.nameContains ? `WHERE c.file_name LIKE @pattern ESCAPE '\\'` : '';
    const params = listingParams(q);
    const rows = this.db
      .prepare<typeof params, ListingRow>(
        `SELECT c.*, c.file_name AS display_name, c.content_type AS display_type, c.upload_date AS first_upload,
                COALESCE((SELECT MAX(last_upload_time) FROM ledger WHERE file_id = c.file_id), c.upload_date) AS last_upload,
                COALESCE((SELECT SUM(upload_count) FROM ledger WHERE file_id = c.file_id), 0) AS uploads,
                COALESCE((SELECT SUM(upload_count) FROM ledger WHERE file_id = c.file_id AND user_id = @accountId), 0) AS mine
         FROM catalog c ${nameFilter}
         ORDER BY c.upload_date DESC, c.file_id LIMIT @limit OFFSET @offset`,
      )
      .all(params);
    const { total } = this.db
      .prepare<typeof params, { total: number }>(`SELECT COUNT(*) AS total FROM catalog c ${nameFilter}`)
      .get(params)!;
    return { items: rows.map(listingFromRow), total };
  }
}

function listingFromRow(row: ListingRow): CatalogListing {
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

export interface CatalogRow {
  file_id: string;
  md5: string;
  sha256: string;
  length: number;
  chunk_size: number;
  chunk_count: number;
  file_name: string;
  content_type: string;
  upload_date: number;
  md5_collision: number;
}

export function catalogEntryFromRow(row: CatalogRow): CatalogEntry {
  return {
    fileId: row.file_id,
    md5: row.md5,
    sha256: row.sha256,
    length: row.length,
    chunkSize: row.chunk_size,
    chunkCount: row.chunk_count,
    fileName: row.file_name,
    contentType: row.content_type,
    uploadDate: new Date(row.upload_date),
    md5Collision: row.md5_collision === 1,
  };
}
