import { MongoClient, type Db } from 'mongodb';
import { ConfigError, StoreUnreachableError } from '../../errors.js';

/** Where the MongoDB store is, and how long an attempt to reach it may take. */
export interface MongoConnectionOptions {
  uri: string;
  /** Database name; defaults to the one in the URI, else "archive". */
  dbName?: string | undefined;
  /** How long this attempt to open the store waits for a server (start-up retries in short attempts). */
  connectTimeoutMs?: number;
}

/** How long an operation waits for a server to select (a failover takes a few seconds). */
const SERVER_SELECTION_MS = 10_000;

/** MongoDB answered, but the settings are wrong: retrying cannot help. */
function isSettingsError(err: unknown): boolean {
  const e = err as { name?: string; code?: number };
  const authenticationFailed = e.code === 18;
  return (
    e.name === 'MongoParseError' ||
    e.name === 'MongoInvalidArgumentError' ||
    e.name === 'MongoMissingCredentialsError' ||
    authenticationFailed
  );
}

/**
 * Connects to the archive's database and runs `prepare` on it (the indexes, upgrades of older
 * data). Works on a standalone server, a replica set or a sharded cluster. Throws a ConfigError
 * for wrong settings, a StoreUnreachableError (worth retrying) otherwise, with the client closed.
 */
export async function connectMongo(
  options: MongoConnectionOptions,
  prepare: (db: Db) => Promise<void>,
): Promise<{ client: MongoClient; db: Db }> {
  let client: MongoClient;
  try {
    client = new MongoClient(options.uri, {
      // Not the start-up attempt's time: the client serves for the life of the process.
      serverSelectionTimeoutMS: SERVER_SELECTION_MS,
      appName: 'archive-dedup',
      // Acknowledged only once a majority holds it, so a failover never loses an acknowledged
      // upload or count; reads of majority-committed data from the primary, so any instance sees
      // what another just wrote (a tus HEAD after a PATCH elsewhere). See docs/deployment.md.
      writeConcern: { w: 'majority' },
      readConcern: { level: 'majority' },
      readPreference: 'primary',
    });
  } catch (err) {
    throw new ConfigError(`MONGODB_URI is not valid: ${(err as Error).message}`);
  }
  try {
    await connectWithin(client, options.connectTimeoutMs ?? SERVER_SELECTION_MS);
    const named = client.options.dbName && client.options.dbName !== 'test' ? client.options.dbName : 'archive';
    const db = client.db(options.dbName ?? named);
    await prepare(db);
    return { client, db };
  } catch (err) {
    await client.close().catch(() => {});
    if (isSettingsError(err))
      throw new ConfigError(`MongoDB refused the settings in MONGODB_URI: ${(err as Error).message}`);
    throw new StoreUnreachableError(`cannot reach MongoDB at MONGODB_URI: ${(err as Error).message}`);
  }
}

/** Connects, or fails after `ms` (the client's own wait for a server stays as it was set). */
async function connectWithin(client: MongoClient, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const connecting = client.connect();
  connecting.catch(() => {}); // settled after a timeout: the client is closed then
  try {
    await Promise.race([
      connecting,
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`no server answered within ${ms} ms`)), ms)),
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
