import { MongoFingerprintQueue, MongoNearDuplicateIndex } from './near-duplicates.js';
import { MongoClient, type Db } from 'mongodb';
import { ConfigError, StoreUnreachableError } from '../../errors.js';
import type { ArchiveStore } from '../port.js';
import { MongoAccountStore, MongoClaimStore, MongoSessionStore, MongoTokenStore } from './accounts.js';
import { MongoAuditLog } from './audit.js';
import { MongoCatalog } from './catalog.js';
import { collections, createIndexes } from './collections.js';
import { MongoContentStore } from './content.js';
import { MongoJobStore } from './jobs.js';
import { MongoLedger } from './ledger.js';
import { MongoRateCounts } from './rate-counts.js';
import { MongoLoginAttempts } from './login-attempts.js';
import { MongoReports } from './reports.js';
import { MongoUploadStore } from './uploads.js';

export interface MongoStoreOptions {
  uri: string;
  /** Database name; defaults to the one in the URI, else "archive". */
  dbName?: string | undefined;
  chunkSize: number;
  /** How long this attempt to open the store waits for a server (start-up retries in short attempts). */
  connectTimeoutMs?: number;
}

/** How long an operation waits for a server to select (a failover takes a few seconds). */
const SERVER_SELECTION_MS = 10_000;

/** MongoDB answered, but the settings are wrong: retrying cannot help. */
function isSettingsError(err: unknown): boolean {
  const e = err as { name?: string; code?: number };
  return e.name === 'MongoParseError' || e.name === 'MongoInvalidArgumentError' || e.name === 'MongoMissingCredentialsError' || e.code === 18 /* AuthenticationFailed */;
}

/**
 * The production store. Works on a standalone server, a replica set or a sharded cluster.
 * Throws a ConfigError for wrong settings, a StoreUnreachableError (worth retrying) otherwise.
 */
export async function openMongoStore(options: MongoStoreOptions): Promise<ArchiveStore> {
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
    const db = client.db(options.dbName ?? (client.options.dbName && client.options.dbName !== 'test' ? client.options.dbName : 'archive'));
    await createIndexes(collections(db));
    await new MongoNearDuplicateIndex(collections(db)).replaceTextKeyed(new Date());
    return storeOver(client, db, options.chunkSize);
  } catch (err) {
    await client.close().catch(() => {});
    if (isSettingsError(err)) throw new ConfigError(`MongoDB refused the settings in MONGODB_URI: ${(err as Error).message}`);
    throw new StoreUnreachableError(`cannot reach MongoDB at MONGODB_URI: ${(err as Error).message}`);
  }
}

/** Connects, or fails after `ms` (the client's own wait for a server stays as it was set). */
async function connectWithin(client: MongoClient, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const connecting = client.connect();
  connecting.catch(() => {}); // settled after a timeout: the client is closed then
  try {
    await Promise.race([connecting, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no server answered within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function storeOver(client: MongoClient, db: Db, chunkSize: number): ArchiveStore {
  const c = collections(db);
  return {
    kind: 'mongodb',
    audit: new MongoAuditLog(c),
    content: new MongoContentStore(c, chunkSize),
    catalog: new MongoCatalog(c),
    ledger: new MongoLedger(c),
    reports: new MongoReports(c),
    accounts: new MongoAccountStore(c),
    sessions: new MongoSessionStore(c),
    tokens: new MongoTokenStore(c),
    claims: new MongoClaimStore(c),
    uploads: new MongoUploadStore(c),
    jobs: new MongoJobStore(c),
    rateCounts: new MongoRateCounts(c),
    loginAttempts: new MongoLoginAttempts(c),
    nearDuplicates: new MongoNearDuplicateIndex(c),
    fingerprintQueue: new MongoFingerprintQueue(c),
    async ping() {
      await db.command({ ping: 1 });
    },
    async close() {
      await client.close();
    },
  };
}
