import type { Db } from '../embedded/database.js';
import { catalogEntries } from './embedded.js';
import type { CatalogSeeding, SeededCatalogEntry } from './seeding.js';

/** The embedded catalog's seeding (seeding.ts): the content's commit's own insert, in one transaction. */
export class EmbeddedCatalogSeeding implements CatalogSeeding {
  constructor(
    private readonly db: Db,
    private readonly chunkSize: number,
  ) {}

  async seed(entries: Iterable<SeededCatalogEntry>): Promise<number> {
    const catalog = catalogEntries(this.db);
    return this.db.transaction(() => {
      let count = 0;
      for (const { fileId, ...entry } of entries) {
        catalog.insert(fileId, entry, this.chunkSize);
        count++;
      }
      return count;
    })();
  }
}
