import type { Db, MongoClient } from 'mongodb';
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
import type { StoreSeeding } from './embedded.js';
import { createAuditIndexes, MongoAuditLog } from './audit/mongo.js';
import { createCatalogIndexes, MongoCatalog } from './catalog/mongo.js';
import { MongoCatalogSeeding } from './catalog/mongo-seeding.js';
import { claimCollections, createClaimIndexes, MongoClaimStore } from './claims/mongo.js';
import { createReceiptIndexes, MongoReceiptStore, receiptCollections } from './receipts/mongo.js';
import { createWithdrawalIndexes, MongoWithdrawalStore, withdrawalCollections } from './withdrawals/mongo.js';
import { createHoldIndexes, holdCollections, MongoHoldStore } from './holds/mongo.js';
import { createDisposalIndexes, disposalCollections, MongoDisposalStore } from './disposals/mongo.js';
import { contentCollections, createContentIndexes, MongoContentStore } from './content/mongo.js';
import { jobCollections, MongoJobStore } from './jobs/mongo.js';
import { createLedgerIndexes, MongoLedger } from './ledger/mongo.js';
import { MongoLedgerSeeding } from './ledger/mongo-seeding.js';
import {
  createNearDuplicateIndexes,
  MongoFingerprintQueue,
  MongoNearDuplicateIndex,
  nearDuplicateCollections,
} from './near-duplicates/mongo.js';
import { createFileTextIndexes, fileTextCollections, MongoFileTexts } from './file-texts/mongo.js';
import { MongoReports } from './reports/mongo.js';
import { createUploadIndexes, MongoUploadStore } from './uploads/mongo.js';
import { MongoUnitFiles } from './unit-files/mongo.js';
import { createUnitIndexes, MongoUnitStore, unitCollections } from './units/mongo.js';
import { auditCollections } from './mongo/audit-documents.js';
import { catalogCollections } from './mongo/catalog-documents.js';
import { connectMongo, type MongoConnectionOptions } from './mongo/connection.js';
import { ledgerCollections } from './mongo/ledger-documents.js';
import { uploadCollections } from './mongo/upload-documents.js';
export interface MongoStoreOptions extends MongoConnectionOptions {
  chunkSize: number;
}

/** The production store (see connectMongo for where it runs and what it throws). */
export async function openMongoStore(options: MongoStoreOptions): Promise<ArchiveStore> {
  const { client, db, c } = await connectPrepared(options);
  return storeOver(client, db, c, options.chunkSize);
}

/** Connects, with the indexes created and earlier versions' data brought up to date. */
async function connectPrepared(options: MongoStoreOptions) {
  let c: Collections | undefined;
  const { client, db } = await connectMongo(options, async (db) => {
    c = collectionsOf(db);
    await createIndexes(c);
    await new MongoNearDuplicateIndex(c).replaceTextKeyed(new Date());
    await new MongoAccountStore(c).keyUsernames();
    await new MongoAccountStore(c).indexSearch();
    await new MongoLedger(c).claimEarlierFirstUploads();
    await new MongoLedger(c).rememberEarlierNames();
  });
  return { client, db, c: c! };
}

/** The MongoDB store's seeding (StoreSeeding, server/store/embedded.ts), on a connection of its own. */
export async function openMongoSeeding(options: MongoStoreOptions): Promise<StoreSeeding> {
  const { client, c } = await connectPrepared(options);
  return {
    catalog: new MongoCatalogSeeding(c, options.chunkSize),
    ledger: new MongoLedgerSeeding(c),
    async close() {
      await client.close();
    },
  };
}

/** Every capability's collections, under the names its adapter uses (the product fixes the collection names). */
function collectionsOf(db: Db) {
  return {
    ...catalogCollections(db),
    ...contentCollections(db),
    ...ledgerCollections(db),
    ...uploadCollections(db),
    ...claimCollections(db),
    ...unitCollections(db),
    ...accountCollections(db),
    ...auditCollections(db),
    ...jobCollections(db),
    ...receiptCollections(db),
    ...withdrawalCollections(db),
    ...holdCollections(db),
    ...disposalCollections(db),
    ...nearDuplicateCollections(db),
    ...fileTextCollections(db),
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
    createUnitIndexes(c),
    createAccountIndexes(c),
    createAuditIndexes(c),
    createNearDuplicateIndexes(c),
    createFileTextIndexes(c),
    createReceiptIndexes(c),
    createWithdrawalIndexes(c),
    createHoldIndexes(c),
    createDisposalIndexes(c),
  ]);
}

function storeOver(client: MongoClient, db: Db, c: Collections, chunkSize: number): ArchiveStore {
  return {
    kind: 'mongodb',
    audit: new MongoAuditLog(c),
    content: new MongoContentStore(c, chunkSize),
    catalog: new MongoCatalog(c),
    ledger: new MongoLedger(c),
    unitFiles: new MongoUnitFiles(c),
    reports: new MongoReports(c),
    units: new MongoUnitStore(c),
    accounts: new MongoAccountStore(c),
    sessions: new MongoSessionStore(c),
    tokens: new MongoTokenStore(c),
    claims: new MongoClaimStore(c),
    uploads: new MongoUploadStore(c),
    receipts: new MongoReceiptStore(c),
    withdrawals: new MongoWithdrawalStore(c),
    holds: new MongoHoldStore(c),
    disposals: new MongoDisposalStore(c),
    jobs: new MongoJobStore(c),
    rateCounts: new MongoRateCounts(c),
    loginAttempts: new MongoLoginAttempts(c),
    nearDuplicates: new MongoNearDuplicateIndex(c),
    fingerprintQueue: new MongoFingerprintQueue(c),
    fileTexts: new MongoFileTexts(c),
    async ping() {
      await db.command({ ping: 1 });
    },
    async close() {
      await client.close();
    },
  };
}
