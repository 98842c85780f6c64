import path from 'node:path';
import type { ArchiveStore } from '../port.js';
import { EmbeddedAccountStore, EmbeddedClaimStore, EmbeddedSessionStore, EmbeddedTokenStore } from './accounts.js';
import { EmbeddedAuditLog } from './audit.js';
import { EmbeddedCatalog } from './catalog.js';
import { ContentFiles } from './content-files.js';
import { EmbeddedContentStore, recordLostBytes } from './content.js';
import { openDatabase } from './database.js';
import { EmbeddedJobStore } from './jobs.js';
import { EmbeddedLedger } from './ledger.js';
import { EmbeddedFingerprintQueue, EmbeddedNearDuplicateIndex } from './near-duplicates.js';
import { EmbeddedRateCounts } from './rate-counts.js';
import { EmbeddedLoginAttempts } from './login-attempts.js';
import { EmbeddedReports } from './reports.js';
import { EmbeddedUploadStore } from './uploads.js';

/** The default store, nothing to install: SQLite (WAL) for the records, content files for the bytes, all in DATA_DIR. */
export function openEmbeddedStore(options: { dataDir: string; chunkSize: number; /** Tests: sync content files more often. */ syncEveryBytes?: number }): ArchiveStore {
  const db = openDatabase(options.dataDir);
  const files = new ContentFiles(path.join(options.dataDir, 'content'), {
    syncEveryBytes: options.syncEveryBytes,
    onSyncFailed: (id, durable) => recordLostBytes(db, id, durable),
  });
  const content = new EmbeddedContentStore(db, files, options.chunkSize);
  return {
    kind: 'embedded',
    audit: new EmbeddedAuditLog(db),
    content,
    catalog: new EmbeddedCatalog(db),
    ledger: new EmbeddedLedger(db),
    reports: new EmbeddedReports(db),
    accounts: new EmbeddedAccountStore(db),
    sessions: new EmbeddedSessionStore(db),
    tokens: new EmbeddedTokenStore(db),
    claims: new EmbeddedClaimStore(db),
    uploads: new EmbeddedUploadStore(db),
    jobs: new EmbeddedJobStore(db),
    rateCounts: new EmbeddedRateCounts(db),
    loginAttempts: new EmbeddedLoginAttempts(db),
    nearDuplicates: new EmbeddedNearDuplicateIndex(db),
    fingerprintQueue: new EmbeddedFingerprintQueue(db),
    async ping() {
      db.prepare('SELECT 1').get();
    },
    async close() {
      await content.close();
      if (db.open) db.close();
    },
  };
}
