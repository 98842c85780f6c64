import type { Config } from '../config.js';
import type { ArchiveStore } from './port.js';

/**
 * MongoDB when MONGODB_URI is set, the embedded store in DATA_DIR otherwise. Each adapter is
 * loaded only when chosen: the MongoDB driver alone holds ~25 MB the embedded store never needs.
 */
export async function openStore(config: Pick<Config, 'mongodbUri' | 'mongodbDb' | 'dataDir' | 'chunkSize'>): Promise<ArchiveStore> {
  if (config.mongodbUri) {
    const { openMongoStore } = await import('./mongo/index.js');
    return openMongoStore({ uri: config.mongodbUri, dbName: config.mongodbDb, chunkSize: config.chunkSize });
  }
  const { openEmbeddedStore } = await import('./embedded/index.js');
  return openEmbeddedStore({ dataDir: config.dataDir, chunkSize: config.chunkSize });
}
