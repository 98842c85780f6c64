import path from 'node:path';
import {
  accountSchema,
  EmbeddedAccountStore,
  EmbeddedLoginAttempts,
  EmbeddedRateCounts,
  EmbeddedSessionStore,
  EmbeddedTokenStore,
} from './accounts/embedded.js';
import type { ArchiveStore } from './archive-store.js';
import { auditSchema, EmbeddedAuditLog } from './audit/embedded.js';
import { catalogSchema, EmbeddedCatalog } from './catalog/embedded.js';
import { EmbeddedCatalogSeeding } from './catalog/embedded-seeding.js';
import type { CatalogSeeding } from './catalog/seeding.js';
import { claimSchema, EmbeddedClaimStore } from './claims/embedded.js';
import { ContentFiles } from './content/content-files.js';
import type { CompactionOptions } from './content/embedded-compaction.js';
import { contentSchema, EmbeddedContentStore, newFileId, recordLostBytes, recordPack } from './content/embedded.js';
import { PackFiles, packsFolder } from './content/packs.js';
import { openDatabase, type Db, type EmbeddedSchema } from './embedded/database.js';
import { EmbeddedJobStore, jobSchema } from './jobs/embedded.js';
import { EmbeddedLedger, ledgerSchema } from './ledger/embedded.js';
import { EmbeddedLedgerSeeding } from './ledger/embedded-seeding.js';
import type { LedgerSeeding } from './ledger/seeding.js';
import {
  EmbeddedFingerprintQueue,
  EmbeddedNearDuplicateIndex,
  nearDuplicateSchema,
} from './near-duplicates/embedded.js';
import { EmbeddedFileTexts, fileTextSchema } from './file-texts/embedded.js';
import { EmbeddedReceiptStore, receiptSchema } from './receipts/embedded.js';
import { EmbeddedReports } from './reports/embedded.js';
import { EmbeddedUploadStore, uploadSchema } from './uploads/embedded.js';
import { EmbeddedUnitFiles } from './unit-files/embedded.js';
import { EmbeddedUnitStore, unitSchema } from './units/embedded.js';
import { EmbeddedWithdrawalStore, withdrawalSchema } from './withdrawals/embedded.js';
import { EmbeddedHoldStore, holdSchema } from './holds/embedded.js';
import { disposalSchema, EmbeddedDisposalStore } from './disposals/embedded.js';

/** Every capability's tables, in the order their upgrades run (the reports' last: they index the others' tables). */
const SCHEMAS: readonly EmbeddedSchema[] = [
  catalogSchema,
  contentSchema,
  ledgerSchema,
  uploadSchema,
  claimSchema,
  unitSchema,
  accountSchema,
  auditSchema,
  jobSchema,
  nearDuplicateSchema,
  fileTextSchema,
  receiptSchema,
  withdrawalSchema,
  holdSchema,
  disposalSchema,
];

/** Opens (creating or upgrading if needed) the embedded store's database in `dataDir`. */
export function openEmbeddedDatabase(dataDir: string): Db {
  return openDatabase(dataDir, SCHEMAS);
}

/** The default store, nothing to install: SQLite (WAL) for the records, content files for the bytes, all in DATA_DIR. */
export function openEmbeddedStore(options: {
  dataDir: string;
  chunkSize: number;
  /** Tests: sync content files more often. */ syncEveryBytes?: number;
  /** Tests: see each step of a pack's compaction (and crash there). */ compaction?: CompactionOptions;
}): ArchiveStore {
  const db = openEmbeddedDatabase(options.dataDir);
  const files = new ContentFiles(path.join(options.dataDir, 'content'), {
    syncEveryBytes: options.syncEveryBytes,
    onSyncFailed: (id, durable) => recordLostBytes(db, id, durable),
  });
  const packs = new PackFiles(packsFolder(options.dataDir), {
    onNewPack: (packId) => recordPack(db, packId, Date.now()),
    newId: newFileId,
  });
  const content = new EmbeddedContentStore(db, files, packs, options.chunkSize, options.compaction);
  const reports = EmbeddedReports.open(db);
  return {
    kind: 'embedded',
    audit: new EmbeddedAuditLog(db),
    content,
    catalog: new EmbeddedCatalog(db),
    ledger: new EmbeddedLedger(db),
    unitFiles: new EmbeddedUnitFiles(db),
    reports,
    units: new EmbeddedUnitStore(db),
    accounts: new EmbeddedAccountStore(db),
    sessions: new EmbeddedSessionStore(db),
    tokens: new EmbeddedTokenStore(db),
    claims: new EmbeddedClaimStore(db),
    uploads: new EmbeddedUploadStore(db),
    receipts: new EmbeddedReceiptStore(db),
    withdrawals: new EmbeddedWithdrawalStore(db),
    holds: new EmbeddedHoldStore(db),
    disposals: new EmbeddedDisposalStore(db),
    jobs: new EmbeddedJobStore(db),
    rateCounts: new EmbeddedRateCounts(db),
    loginAttempts: new EmbeddedLoginAttempts(db),
    nearDuplicates: new EmbeddedNearDuplicateIndex(db),
    fingerprintQueue: new EmbeddedFingerprintQueue(db),
    fileTexts: new EmbeddedFileTexts(db),
    async ping() {
      db.prepare('SELECT 1').get();
    },
    async close() {
      await content.close();
      reports.close();
      if (db.open) db.close();
    },
  };
}

/**
 * A store's seeding: what the benchmarks fill a store with, through the modules of the capabilities
 * that own the tables (catalog/seeding.ts, ledger/seeding.ts; each checked by its conformance
 * suite). Not part of ArchiveStore: no service seeds.
 */
export interface StoreSeeding {
  readonly catalog: CatalogSeeding;
  readonly ledger: LedgerSeeding;
  close(): Promise<void>;
}

/**
 * The embedded store's seeding, on a connection of its own to the database in `dataDir` (made or
 * upgraded as the store makes it). Its writes are not synced: a seeding that a crash interrupts is
 * made again. Its indexes are sorted in a temporary file, not in memory (a province's ledger
 * indexes are gigabytes). `progress` is told what the ledger's seeding has done, a line at a time.
 */
export function openEmbeddedSeeding(options: {
  dataDir: string;
  chunkSize: number;
  progress?: (line: string) => void;
}): StoreSeeding {
  const db = openEmbeddedDatabase(options.dataDir);
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -2000000');
  db.pragma('temp_store = FILE');
  return {
    catalog: new EmbeddedCatalogSeeding(db, options.chunkSize),
    ledger: new EmbeddedLedgerSeeding(db, options.progress),
    async close() {
      db.close();
    },
  };
}
