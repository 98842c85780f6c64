import type { NewCatalogEntry } from './port.js';

/**
 * Catalogues contents in bulk without their bytes: what the benchmarks seed a store's catalog with,
 * and nothing else (not part of `ArchiveStore`: no service seeds). Each entry as the content's
 * commit catalogues one (chunked by the store's chunk size, MD5 collisions flagged), numbered in
 * the order given; the catalog's conformance suite checks that on both stores. Reading a seeded
 * file's bytes fails: there are none.
 */
export interface CatalogSeeding {
  /** Throws if a content or an id is catalogued already. Answers how many were catalogued. */
  seed(entries: Iterable<SeededCatalogEntry>): Promise<number>;
}

export interface SeededCatalogEntry extends NewCatalogEntry {
  /** The file's public id (the embedded store's or MongoDB's form: 24 hexadecimal digits). */
  fileId: string;
}
