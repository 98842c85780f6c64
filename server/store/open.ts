import { ConfigError, StoreUnreachableError } from '../errors.js';
import type { ArchiveStore } from './archive-store.js';

/** The stores the archive can run on (the setting STORE). */
export const STORE_KINDS = ['embedded', 'mongodb'] as const;

/** Which store runs, as the configuration decided it (STORE, MONGODB_URI): MongoDB's comes with its URI. */
export type StoreChoice = { store: 'embedded'; mongodbUri?: undefined } | { store: 'mongodb'; mongodbUri: string };

/** Which store to open, and how (from the configuration: STORE, MONGODB_URI, MONGODB_DB, DATA_DIR, CHUNK_SIZE). */
export type StoreConfig = StoreChoice & {
  mongodbDb?: string | undefined;
  dataDir: string;
  chunkSize: number;
};

/** Opens the chosen store once its adapter is loaded; an attempt waits for a server at most `attemptTimeoutMs`. */
export type StoreOpener = (attemptTimeoutMs?: number) => Promise<ArchiveStore>;

/**
 * The adapter of the store the configuration chose, loaded: MongoDB's, or the embedded store's in
 * DATA_DIR. Each adapter is loaded only when chosen: the MongoDB driver alone holds ~25 MB the
 * embedded store never needs.
 */
export async function loadStoreAdapter(config: StoreConfig): Promise<StoreOpener> {
  if (config.store === 'mongodb') {
    const { openMongoStore } = await import('./mongo.js');
    return (attemptTimeoutMs) =>
      openMongoStore({
        uri: config.mongodbUri,
        dbName: config.mongodbDb,
        chunkSize: config.chunkSize,
        connectTimeoutMs: attemptTimeoutMs,
      });
  }
  const { openEmbeddedStore } = await import('./embedded.js');
  return async () => openEmbeddedStore({ dataDir: config.dataDir, chunkSize: config.chunkSize });
}

/** The store the configuration chose, opened (one attempt). */
export async function openStore(config: StoreConfig, attemptTimeoutMs?: number): Promise<ArchiveStore> {
  return (await loadStoreAdapter(config))(attemptTimeoutMs);
}

/**
 * Opens the store, retrying an unreachable one with backoff (1 s, 2 s, 4 s… at most 15 s apart)
 * for up to `timeoutMs`, counted once its adapter is loaded (loading the MongoDB driver takes
 * seconds on a busy machine; it is no wait for the database): a database started together with
 * the service may come up later. Wrong settings fail at once.
 */
export async function openStoreRetrying(
  config: StoreConfig,
  timeoutMs: number,
  onRetry: (attempt: number, delayMs: number, err: Error) => void,
  load: (config: StoreConfig) => Promise<StoreOpener> = loadStoreAdapter,
): Promise<ArchiveStore> {
  const open = await load(config);
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      // Each attempt waits for the server at most half the time left (1-10 s), leaving room to retry.
      return await open(Math.max(1_000, Math.min(10_000, (deadline - Date.now()) / 2)));
    } catch (err) {
      if (!(err instanceof StoreUnreachableError)) throw err;
      const delayMs = Math.min(15_000, 1_000 * 2 ** (attempt - 1), deadline - Date.now());
      if (delayMs <= 0)
        throw new ConfigError(
          `${err.message} (gave up after ${attempt} attempt(s) in ${Math.round(timeoutMs / 1000)} s; STORE_CONNECT_TIMEOUT_SECONDS)`,
        );
      onRetry(attempt, delayMs, err);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
