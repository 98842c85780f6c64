import type { Config } from '../config.js';
import { openEmbeddedStore } from './embedded/index.js';
import { openMongoStore } from './mongo/index.js';
import type { ArchiveStore } from './port.js';

/** MongoDB when MONGODB_URI is set, the embedded store in DATA_DIR otherwise. */
export async function openStore(config: Pick<Config, 'mongodbUri' | 'mongodbDb' | 'dataDir' | 'chunkSize'>): Promise<ArchiveStore> {
  if (config.mongodbUri) return openMongoStore({ uri: config.mongodbUri, dbName: config.mongodbDb, chunkSize: config.chunkSize });
  return openEmbeddedStore({ dataDir: config.dataDir, chunkSize: config.chunkSize });
}
