import type { ArchiveStore } from '../port.js';
import { EmbeddedAccountStore, EmbeddedSessionStore, EmbeddedTokenStore } from './accounts.js';
import { EmbeddedCatalog } from './catalog.js';
import { EmbeddedContentStore } from './content.js';
import { openDatabase } from './database.js';
import { EmbeddedLedger } from './ledger.js';

/** The default store: one SQLite file (WAL) in DATA_DIR, nothing to install. */
export function openEmbeddedStore(options: { dataDir: string; chunkSize: number }): ArchiveStore {
  const db = openDatabase(options.dataDir);
  return {
    kind: 'embedded',
    content: new EmbeddedContentStore(db, options.chunkSize),
    catalog: new EmbeddedCatalog(db),
    ledger: new EmbeddedLedger(db),
    accounts: new EmbeddedAccountStore(db),
    sessions: new EmbeddedSessionStore(db),
    tokens: new EmbeddedTokenStore(db),
    async ping() {
      db.prepare('SELECT 1').get();
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
