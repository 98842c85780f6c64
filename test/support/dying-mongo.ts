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
  'findOneAndReplace',
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
    // Its files' leases run out as it dies: the next request takes them over at once.
    ledger: new MongoLedger(dyingAfter(ledgerWrites(client.db(mongo.dbName)), writes), { leaseMs: 0 }),
    close: () => client.close(),
  };
}

/** Where a paused ledger stops: before its `nth` call (from 1) of `method` on the collection `collection`. */
export interface Stop {
  collection: string;
  method: string;
  nth: number;
}

/**
 * The store's collections as a request sees them that the test stops at chosen calls, to run
 * another request in between (deterministic interleavings, no sleeps). `stopAt` arms the next stop
 * and answers when the request reaches it; `go` lets it on and disarms a stop not reached (arm
 * the next one right after: the request makes no call before the caller's next await). `waitsForLease` settles when the
 * request first reads a file's lease (another request holds it: it waits its turn).
 */
export function pausing<C extends Record<string, object>>(c: C) {
  const calls = new Map<string, number>();
  let armed: { stop: Stop; reached: () => void } | undefined;
  let release: (() => void) | undefined;
  let leaseRead: () => void = () => {};
  const waitsForLease = new Promise<void>((resolve) => (leaseRead = resolve));
  const watch = (collectionName: string, collection: object): object =>
    new Proxy(collection, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const call = `${collectionName}.${String(name)}`;
          const n = (calls.get(call) ?? 0) + 1;
          calls.set(call, n);
          if (collectionName === 'fileLeases' && name === 'findOne') leaseRead();
          const stop = armed?.stop;
          if (stop && stop.collection === collectionName && stop.method === name && stop.nth === n) {
            const reached = armed!.reached;
            armed = undefined;
            const gate = new Promise<void>((resolve) => (release = resolve));
            reached();
            return gate.then(() => (value as (...a: unknown[]) => unknown).apply(target, args));
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return {
    collections: Object.fromEntries(Object.entries(c).map(([name, coll]) => [name, watch(name, coll)])) as C,
    stopAt(stop: Stop): Promise<void> {
      return new Promise<void>((reached) => (armed = { stop, reached }));
    },
    go(): void {
      armed = undefined;
      const r = release;
      release = undefined;
      r?.();
    },
    waitsForLease,
  };
}
