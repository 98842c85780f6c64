import { catalogEntryFromRow, type CatalogRow } from '../embedded/catalog-rows.js';
import { addMissingColumns, hasColumn, rebuildTable, type Db, type EmbeddedSchema } from '../embedded/database.js';
import type { Catalog, CatalogEntry, ContentKey, DeletingEntry, NewCatalogEntry } from './port.js';

/**
 * The catalog's table, named `name`. file_no is the archive's own number for a file, in the order
 * files were catalogued: the ledger and the other tables about files are keyed by it, so the rows
 * of files stored together sit together in every index (the public file ids are random, and rows
 * keyed by them land on a different page of each index per file). Never shown: an id must not
 * tell when a file was first uploaded.
 */
const catalogTable = (name: string) => `
CREATE TABLE IF NOT EXISTS ${name} (
  file_no       INTEGER PRIMARY KEY,
  file_id       TEXT NOT NULL UNIQUE,
  md5           TEXT NOT NULL,
  sha256        TEXT NOT NULL,
  length        INTEGER NOT NULL,
  chunk_size    INTEGER NOT NULL,
  chunk_count   INTEGER NOT NULL,
  file_name     TEXT NOT NULL,
  content_type  TEXT NOT NULL,
  upload_date   INTEGER NOT NULL,
  md5_collision INTEGER NOT NULL DEFAULT 0,
  -- When its content began to be deleted (NULL: live); its sha256 is then suffixed with '~' and
  -- its file id, so the content's identity is free for a new upload of it.
  deleting_at   INTEGER,
  -- 1 once that deletion was cleared of holds (docs/decisions/holds.md); a hold stops only one not cleared.
  deletion_cleared INTEGER,
  -- 1: deleted, a tombstone that keeps its file number (see EmbeddedCatalog.remove).
  removed       INTEGER,
  -- MD5 first: the same index finds a content by its key and every content with an MD5.
  UNIQUE (md5, sha256, length)
);`;

const CATALOG_INDEXES = `
CREATE INDEX IF NOT EXISTS catalog_upload_date ON catalog (upload_date);
DROP INDEX IF EXISTS catalog_md5;
`;

/**
 * Indexes others read the catalog through (after the upgrade: the first needs file numbers). Most
 * hold every column a report reads, so a report reads the index and not the table.
 */
const CATALOG_READ_INDEXES = `
-- Sizes, names and public ids of files for joins (and name searches) without reading the
-- catalog's rows.
CREATE INDEX IF NOT EXISTS catalog_file_sizes ON catalog (file_no, length, file_name, file_id);
-- Files in size order: the repeat uploaders' table by size walks it (a file's entries looked up
-- in turn) instead of sorting every repeat entry by its file's size.
CREATE INDEX IF NOT EXISTS catalog_lengths ON catalog (length, file_no);
CREATE INDEX IF NOT EXISTS catalog_collisions ON catalog (md5) WHERE md5_collision = 1;
CREATE INDEX IF NOT EXISTS catalog_being_deleted ON catalog (deleting_at) WHERE deleting_at IS NOT NULL AND removed IS NULL;
`;

/** Whether the catalog has its current form: file numbers, and its content key led by MD5. */
function catalogIsCurrent(db: Db): boolean {
  const keyedByMd5 = db
    .prepare(
      `SELECT 1 FROM pragma_index_list('catalog') AS l, pragma_index_info(l.name) AS i
       WHERE l."unique" = 1 AND i.seqno = 0 AND i.name = 'md5'`,
    )
    .get();
  return hasColumn(db, 'catalog', 'file_no') && keyedByMd5 !== undefined;
}

export const catalogSchema: EmbeddedSchema = {
  tables: catalogTable('catalog') + CATALOG_INDEXES,
  upgrade(db) {
    numberCatalog(db);
    addMissingColumns(db, 'catalog', { deleting_at: 'INTEGER', removed: 'INTEGER', deletion_cleared: 'INTEGER' });
    db.exec(CATALOG_READ_INDEXES);
  },
};

function numberCatalog(db: Db): void {
  // A catalog made before file numbers: numbered in the order its files were first uploaded.
  // (One numbered already keeps its numbers: other tables hold them.) Looked at first without
  // the write lock (every start), then again with it: of two processes starting at once, one
  // rebuilds.
  if (catalogIsCurrent(db)) return;
  db.transaction(() => {
    if (catalogIsCurrent(db)) return;
    const numbered = hasColumn(db, 'catalog', 'file_no') ? 'file_no, ' : '';
    rebuildTable(
      db,
      'catalog',
      catalogTable('catalog_next'),
      `INSERT INTO catalog_next (${numbered}file_id, md5, sha256, length, chunk_size, chunk_count, file_name, content_type, upload_date, md5_collision)
           SELECT ${numbered}file_id, md5, sha256, length, chunk_size, chunk_count, file_name, content_type, upload_date, md5_collision
           FROM catalog ORDER BY upload_date, rowid`,
    );
    db.exec(CATALOG_INDEXES);
  }).immediate();
}

/**
 * The catalog's writes that the content's commit makes inside its own transaction (the entry and
 * the bytes' location are committed together, or neither): the only way into the catalog's table
 * from outside the catalog.
 */
export interface CatalogEntries {
  /** The entry that holds a content, if one does. */
  held(key: ContentKey): CatalogEntry | undefined;
  /**
   * Catalogues a content whose bytes are stored as `fileId`, chunked by `chunkSize`; flags every
   * entry sharing its MD5 if another content has it. Answers the entry as inserted and its file number.
   */
  insert(fileId: string, entry: NewCatalogEntry, chunkSize: number): { entry: CatalogEntry; fileNo: number };
}

export function catalogEntries(db: Db): CatalogEntries {
  const insertEntry = db.prepare(
    `INSERT INTO catalog (file_id, md5, sha256, length, chunk_size, chunk_count, file_name, content_type, upload_date, md5_collision)
     VALUES (@file_id, @md5, @sha256, @length, @chunk_size, @chunk_count, @file_name, @content_type, @upload_date, @md5_collision)`,
  );
  const findByKey = db.prepare<[string, string, number], CatalogRow>(
    'SELECT * FROM catalog WHERE sha256 = ? AND md5 = ? AND length = ?',
  );
  const findCollision = db.prepare<[string, string], { file_id: string }>(
    // Another content: an entry of this one being deleted (its SHA-256 suffixed) is no collision.
    'SELECT file_id FROM catalog WHERE md5 = ? AND substr(sha256, 1, 64) <> ? LIMIT 1',
  );
  const flagCollisions = db.prepare('UPDATE catalog SET md5_collision = 1 WHERE md5 = ? AND md5_collision = 0');
  return {
    held(key) {
      const row = findByKey.get(key.sha256, key.md5, key.length);
      return row && catalogEntryFromRow(row);
    },
    insert(fileId, entry, chunkSize) {
      const { md5, sha256, length } = entry.key;
      const collision = findCollision.get(md5, sha256) !== undefined;
      const row: Omit<CatalogRow, 'file_no'> = {
        file_id: fileId,
        md5,
        sha256,
        length,
        chunk_size: chunkSize,
        chunk_count: Math.ceil(length / chunkSize),
        file_name: entry.fileName,
        content_type: entry.contentType,
        upload_date: entry.uploadDate.getTime(),
        md5_collision: collision ? 1 : 0,
      };
      const fileNo = Number(insertEntry.run(row).lastInsertRowid);
      if (collision) flagCollisions.run(md5);
      // The entry as inserted (not read back: a lookup per new file).
      return { entry: catalogEntryFromRow({ ...row, file_no: fileNo }), fileNo };
    },
  };
}

export class EmbeddedCatalog implements Catalog {
  private readonly byId;
  private readonly byKey;

  constructor(private readonly db: Db) {
    this.byId = db.prepare<[string], CatalogRow>('SELECT * FROM catalog WHERE file_id = ? AND deleting_at IS NULL');
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
      .prepare<[string, number], CatalogRow>(
        'SELECT * FROM catalog WHERE file_id > ? AND deleting_at IS NULL ORDER BY file_id LIMIT ?',
      )
      .all(afterFileId ?? '', limit)
      .map(catalogEntryFromRow);
  }

  async count(): Promise<number> {
    return this.db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM catalog WHERE deleting_at IS NULL').get()!.n;
  }

  async beginDeletion(fileId: string, at: Date): Promise<DeletingEntry | undefined> {
    // One statement: of a deletion and a commit racing, SQLite orders them.
    this.db
      .prepare(
        `UPDATE catalog SET deleting_at = ?, deletion_cleared = 0, sha256 = sha256 || '~' || file_id
         WHERE file_id = ? AND deleting_at IS NULL`,
      )
      .run(at.getTime(), fileId);
    const row = this.db.prepare<[string], CatalogRow>('SELECT * FROM catalog WHERE file_id = ?').get(fileId);
    return row ? deletingEntryOf(row) : undefined;
  }

  async cancelDeletion(fileId: string): Promise<boolean> {
    try {
      return (
        this.db
          .prepare(
            `UPDATE catalog SET deleting_at = NULL, deletion_cleared = NULL, sha256 = substr(sha256, 1, 64)
             WHERE file_id = ? AND deleting_at IS NOT NULL AND removed IS NULL AND COALESCE(deletion_cleared, 0) = 0`,
          )
          .run(fileId).changes > 0
      );
    } catch (err) {
      // The content was stored anew meanwhile: this entry stays live out of its identity.
      if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
      return (
        this.db
          .prepare(
            `UPDATE catalog SET deleting_at = NULL, deletion_cleared = NULL
             WHERE file_id = ? AND deleting_at IS NOT NULL AND removed IS NULL AND COALESCE(deletion_cleared, 0) = 0`,
          )
          .run(fileId).changes > 0
      );
    }
  }

  async clearDeletion(fileId: string): Promise<boolean> {
    // One statement: a cancel needs it not cleared, so of the two racing SQLite applies one.
    return (
      this.db
        .prepare(
          'UPDATE catalog SET deletion_cleared = 1 WHERE file_id = ? AND deleting_at IS NOT NULL AND removed IS NULL',
        )
        .run(fileId).changes === 1
    );
  }

  async deletions(before: Date, limit: number): Promise<DeletingEntry[]> {
    return this.db
      .prepare<[number, number], CatalogRow>(
        'SELECT * FROM catalog WHERE deleting_at IS NOT NULL AND removed IS NULL AND deleting_at < ? ORDER BY deleting_at LIMIT ?',
      )
      .all(before.getTime(), limit)
      .flatMap((row) => deletingEntryOf(row) ?? []);
  }

  /**
   * The row stays, as a tombstone no read offers: every table about files is keyed by file number,
   * and SQLite gives a new row the number after the highest, so deleting the last row would give
   * the next content its number, and with it the rows kept of the deleted one (the ledger's record
   * of its purged uploads).
   */
  async remove(fileId: string): Promise<void> {
    this.db
      .prepare('UPDATE catalog SET removed = 1, md5_collision = 0 WHERE file_id = ? AND deleting_at IS NOT NULL')
      .run(fileId);
  }
}

function deletingEntryOf(row: CatalogRow): DeletingEntry | undefined {
  if (row.deleting_at === null || row.deleting_at === undefined || row.removed) return undefined;
  return {
    ...catalogEntryFromRow(row),
    deletingSince: new Date(row.deleting_at),
    deletionCleared: row.deletion_cleared === 1,
  };
}
