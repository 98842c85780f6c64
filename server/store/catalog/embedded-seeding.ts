import type { Db } from '../embedded/database.js';
import { catalogEntries } from './embedded.js';
import type { CatalogSeeding, SeededCatalogEntry } from './seeding.js';

/**
 * The embedded catalog's seeding (seeding.ts): the content's commit's own insert, in one
 * transaction. The indexes others read the catalog through are dropped first and made again after
 * the rows (a fraction of the time of keeping them row by row); the content keys' unique index,
 * which the insert itself looks collisions up in, stays.
 */
export class EmbeddedCatalogSeeding implements CatalogSeeding {
  constructor(
    private readonly db: Db,
    private readonly chunkSize: number,
  ) {}

  async seed(entries: Iterable<SeededCatalogEntry>): Promise<number> {
    const { db } = this;
    const catalog = catalogEntries(db);
    const indexes = db
      .prepare<[], { name: string; sql: string }>(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name = 'catalog'",
      )
      .all();
    return db.transaction(() => {
      for (const { name } of indexes) db.exec(`DROP INDEX ${name}`);
      let count = 0;
      for (const { fileId, ...entry } of entries) {
        catalog.insert(fileId, entry, this.chunkSize);
        count++;
      }
      for (const { sql } of indexes) db.exec(sql);
      return count;
    })();
  }
}
