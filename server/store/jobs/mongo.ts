import type { Db } from 'mongodb';
import { isDuplicateKey } from '../mongo/documents.js';
import type { JobRecord, JobStore } from './port.js';

/** A background job (`jobs`): `_id` is its name; the holder's lease keeps it to one instance. */
export interface JobDoc {
  _id: string;
  holder: string | null;
  leaseUntil: Date | null;
  state: unknown;
}

export function jobCollections(db: Db) {
  return { jobs: db.collection<JobDoc>('jobs') };
}

export type JobCollections = ReturnType<typeof jobCollections>;

/** Job leases as conditional single-document updates (no transactions). */
export class MongoJobStore implements JobStore {
  constructor(private readonly c: JobCollections) {}

  async acquire(name: string, holder: string, now: Date, leaseMs: number): Promise<boolean> {
    try {
      // Upserts when the job never ran; a held lease matches nothing, and the upsert then
      // collides with the existing document.
      const taken = await this.c.jobs.findOneAndUpdate(
        { _id: name, $or: [{ holder: null }, { leaseUntil: { $lt: now } }] },
        { $set: { holder, leaseUntil: new Date(now.getTime() + leaseMs) }, $setOnInsert: { state: null } },
        { upsert: true, returnDocument: 'after' },
      );
      return taken?.holder === holder;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async renew(name: string, holder: string, now: Date, leaseMs: number, state: unknown): Promise<boolean> {
    const r = await this.c.jobs.updateOne(
      { _id: name, holder },
      { $set: { leaseUntil: new Date(now.getTime() + leaseMs), state } },
    );
    return r.matchedCount === 1;
  }

  async release(name: string, holder: string, state: unknown): Promise<void> {
    await this.c.jobs.updateOne({ _id: name, holder }, { $set: { holder: null, leaseUntil: null, state } });
  }

  async get(name: string): Promise<JobRecord | undefined> {
    const doc = await this.c.jobs.findOne({ _id: name });
    return doc ? { name: doc._id, holder: doc.holder, leaseUntil: doc.leaseUntil, state: doc.state } : undefined;
  }
}
