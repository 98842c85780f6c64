import type { StoreSeeding } from '../../server/store/embedded.js';
import type { OpenedStore } from './stores.js';

export type { SeededCatalogEntry } from '../../server/store/catalog/seeding.js';
export type { SeededLedger, SeededUpload } from '../../server/store/ledger/seeding.js';

/**
 * The seeding of an opened store (server/store/embedded.ts, StoreSeeding), on a connection of its
 * own to the same data: what the benchmarks fill a store with, for the conformance suites to check.
 * Close it before the store is disposed of.
 */
export async function seedingOf(opened: OpenedStore): Promise<StoreSeeding> {
  if (opened.mongo) {
    const { openMongoSeeding } = await import('../../server/store/mongo.js');
    return openMongoSeeding({ ...opened.mongo, chunkSize: opened.chunkSize, connectTimeoutMs: 5000 });
  }
  const { openEmbeddedSeeding } = await import('../../server/store/embedded.js');
  return openEmbeddedSeeding({ dataDir: opened.dataDir!, chunkSize: opened.chunkSize });
}
