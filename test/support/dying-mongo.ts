import { MongoClient, type Db } from 'mongodb';
import { MongoLedger } from '../../server/store/ledger/mongo.js';
import { auditCollections } from '../../server/store/mongo/audit-documents.js';
import { ledgerCollections } from '../../server/store/mongo/ledger-documents.js';

/** Thrown by every write once the "process" has died. */
export class Killed extends Error {}

const WRITES = [
  'insertOne',
  'updateOne',
  'findOneAndUpdate',
  'insertMany',
  'updateMany',
  'bulkWrite',
  'deleteOne',
  'deleteMany',
];

/**
 * The store's collections as a process sees them that is killed after `writes` writes: the
 * writes before happen, none after (the dead process sends nothing more).
 */
export function dyingAfter<C extends Record<string, object>>(c: C, writes: number): C {
  let done = 0;
  const watch = <T extends object>(collection: T): T =>
    new Proxy(collection, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function' || !WRITES.includes(String(name))) return value;
        return (...args: unknown[]) => {
          if (done >= writes) return Promise.reject(new Killed(`killed before write ${done + 1}`));
          done++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return Object.fromEntries(Object.entries(c).map(([name, collection]) => [name, watch(collection)])) as C;
}

/** What a MongoDB ledger writes to: the ledger, its day tallies and the audit events. */
export const ledgerWrites = (db: Db) => ({ ...ledgerCollections(db), ...auditCollections(db) });

/** A MongoDB ledger on the test database whose process dies after `writes` writes. */
export async function dyingLedger(
  mongo: { uri: string; dbName: string },
  writes: number,
): Promise<{ ledger: MongoLedger; close: () => Promise<void> }> {
  const client = await MongoClient.connect(mongo.uri);
  return {
    ledger: new MongoLedger(dyingAfter(ledgerWrites(client.db(mongo.dbName)), writes)),
    close: () => client.close(),
  };
}
