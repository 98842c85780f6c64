import { MongoClient } from 'mongodb';
import { ConfigError } from '../../errors.js';
import type { ArchiveStore } from '../port.js';
import { MongoAccountStore, MongoClaimStore, MongoSessionStore, MongoTokenStore } from './accounts.js';
import { MongoAuditLog } from './audit.js';
import { MongoCatalog } from './catalog.js';
import { collections, createIndexes } from './collections.js';
import { MongoContentStore } from './content.js';
import { MongoLedger } from './ledger.js';
import { MongoReports } from './reports.js';
import { MongoUploadStore } from './uploads.js';

export interface MongoStoreOptions {
  uri: string;
  /** Database name; defaults to the one in the URI, else "archive". */
  dbName?: string | undefined;
  chunkSize: number;
  serverSelectionTimeoutMS?: number;
}

/** The production store. Works on a standalone server, a replica set or a sharded cluster. */
export async function openMongoStore(options: MongoStoreOptions): Promise<ArchiveStore> {
  let client: MongoClient;
  try {
    client = new MongoClient(options.uri, { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000, appName: 'archive-dedup' });
    await client.connect();
  } catch (err) {
    throw new ConfigError(`cannot reach MongoDB at MONGODB_URI: ${(err as Error).message}`);
  }
  const db = client.db(options.dbName ?? (client.options.dbName && client.options.dbName !== 'test' ? client.options.dbName : 'archive'));
  const c = collections(db);
  await createIndexes(c);
  return {
    kind: 'mongodb',
    audit: new MongoAuditLog(c),
    content: new MongoContentStore(db, c, options.chunkSize),
    catalog: new MongoCatalog(c),
    ledger: new MongoLedger(c),
    reports: new MongoReports(c),
    accounts: new MongoAccountStore(c),
    sessions: new MongoSessionStore(c),
    tokens: new MongoTokenStore(c),
    claims: new MongoClaimStore(c),
    uploads: new MongoUploadStore(c),
    async ping() {
      await db.command({ ping: 1 });
    },
    async close() {
      await client.close();
    },
  };
}
