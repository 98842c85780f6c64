import type { JournalEntry, KeptReceipt, UploadAction, UploadJournal } from './upload-journal.js';

const DB_NAME = 'archive-upload';
const STORE = 'entries';
const ACTIONS = 'actions';
/** Receipts owed, per account: `{account, receipts}`. */
const OWED = 'owed';

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });
}

function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction failed'));
  });
}

let opened: Promise<IDBDatabase> | undefined;

function database(): Promise<IDBDatabase> {
  opened ??= new Promise<IDBDatabase>((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 3);
    req.onupgradeneeded = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains(STORE))
        db.createObjectStore(STORE, { keyPath: ['account', 'path'] }).createIndex('account', 'account');
      if (!db.objectStoreNames.contains(ACTIONS)) db.createObjectStore(ACTIONS, { keyPath: 'account' });
      if (!db.objectStoreNames.contains(OWED)) db.createObjectStore(OWED, { keyPath: 'account' });
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB could not be opened'));
  });
  return opened;
}

/** The journal of one account's folder upload in IndexedDB. */
export class IndexedDbJournal implements UploadJournal {
  constructor(private readonly account: string) {}

  async load(): Promise<JournalEntry[]> {
    const db = await database();
    const rows = await request(
      db.transaction(STORE).objectStore(STORE).index('account').getAll(IDBKeyRange.only(this.account)),
    );
    return (rows as Array<JournalEntry & { account: string }>).map(({ account: _, ...entry }) => entry);
  }

  async loadAction(): Promise<UploadAction | undefined> {
    const db = await database();
    const row = (await request(db.transaction(ACTIONS).objectStore(ACTIONS).get(this.account))) as
      (UploadAction & { account: string }) | undefined;
    if (!row) return undefined;
    const { account: _, ...action } = row;
    return action;
  }

  async saveAction(action: UploadAction): Promise<void> {
    const db = await database();
    const tx = db.transaction(ACTIONS, 'readwrite');
    tx.objectStore(ACTIONS).put({ ...action, account: this.account });
    await done(tx);
  }

  async save(entries: readonly JournalEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const db = await database();
    const tx = db.transaction(STORE, 'readwrite');
    const store = tx.objectStore(STORE);
    for (const entry of entries) store.put({ ...entry, account: this.account });
    await done(tx);
  }

  async remove(paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    const db = await database();
    const tx = db.transaction(STORE, 'readwrite');
    const store = tx.objectStore(STORE);
    for (const path of paths) store.delete([this.account, path]);
    await done(tx);
  }

  async clear(): Promise<void> {
    const db = await database();
    const tx = db.transaction([STORE, ACTIONS], 'readwrite');
    const range = IDBKeyRange.bound([this.account], [this.account, []]);
    tx.objectStore(STORE).delete(range);
    tx.objectStore(ACTIONS).delete(this.account);
    await done(tx);
  }

  async loadOwed(): Promise<KeptReceipt[]> {
    const db = await database();
    const row = (await request(db.transaction(OWED).objectStore(OWED).get(this.account))) as
      { receipts: KeptReceipt[] } | undefined;
    return row?.receipts ?? [];
  }

  async saveOwed(owed: readonly KeptReceipt[]): Promise<void> {
    const db = await database();
    const tx = db.transaction(OWED, 'readwrite');
    if (owed.length === 0) tx.objectStore(OWED).delete(this.account);
    else tx.objectStore(OWED).put({ account: this.account, receipts: owed });
    await done(tx);
  }
}
