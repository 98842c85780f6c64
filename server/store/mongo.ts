import { MongoClient, type Db } from 'mongodb';
import { ConfigError, StoreUnreachableError } from '../errors.js';
import {
  accountCollections,
  createAccountIndexes,
  MongoAccountStore,
  MongoLoginAttempts,
  MongoRateCounts,
  MongoSessionStore,
  MongoTokenStore,
} from './accounts/mongo.js';
import type { ArchiveStore } from './archive-store.js';
import { auditCollections, createAuditIndexes, MongoAuditLog } from './audit/mongo.js';
import { catalogCollections, createCatalogIndexes, MongoCatalog } from './catalog/mongo.js';
import { claimCollections, createClaimIndexes, MongoClaimStore } from './claims/mongo.js';
import { contentCollections, createContentIndexes, MongoContentStore } from './content/mongo.js';
import { jobCollections, MongoJobStore } from './jobs/mongo.js';
import { createLedgerIndexes, ledgerCollections, MongoLedger } from './ledger/mongo.js';
import {
  createNearDuplicateIndexes,
  MongoFingerprintQueue,
  MongoNearDuplicateIndex,
  nearDuplicateCollections,
} from './near-duplicates/mongo.js';
import { createReportIndexes, MongoReports } from './reports/mongo.js';
import { createUploadIndexes, MongoUploadStore, uploadCollections } from './uploads/mongo.js';
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
  return (
    e.name === 'MongoParseError' ||
    e.name === 'MongoInvalidArgumentError' ||
    e.name === 'MongoMissingCredentialsError' ||
    e.code === 18
  ); /* AuthenticationFailed */
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
    const db = client.db(
      options.dbName ?? (client.options.dbName && client.options.dbName !== 'test' ? client.options.dbName : 'archive'),
    );
    const c = collectionsOf(db);
    await createIndexes(c);
    await new MongoNearDuplicateIndex(c).replaceTextKeyed(new Date());
    return storeOver(client, db, c, options.chunkSize);
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

/** Every capability's collections, under the names its adapter uses (the product fixes the collection names). */
function collectionsOf(db: Db) {
  return {
    ...catalogCollections(db),
    ...contentCollections(db),
    ...ledgerCollections(db),
    ...uploadCollections(db),
    ...claimCollections(db),
    ...accountCollections(db),
    ...auditCollections(db),
    ...jobCollections(db),
    ...nearDuplicateCollections(db),
  };
}

type Collections = ReturnType<typeof collectionsOf>;

/** Indexes are created explicitly at start-up, never lazily on first use. */
async function createIndexes(c: Collections): Promise<void> {
  await Promise.all([
    createCatalogIndexes(c),
    createContentIndexes(c),
    createLedgerIndexes(c),
    createUploadIndexes(c),
    createClaimIndexes(c),
    createAccountIndexes(c),
    createAuditIndexes(c),
    createNearDuplicateIndexes(c),
    createReportIndexes(c),
  ]);
}

function storeOver(client: MongoClient, db: Db, c: Collections, chunkSize: number): ArchiveStore {
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
