import type { LoginAttemptStore, LoginRecord } from '../port.js';
import { isDuplicateKey, type Collections, type LoginAttemptDoc } from './collections.js';

const record = (d: LoginAttemptDoc): LoginRecord => ({ failures: d.failures, lastFailureAt: d.lastFailureAt, knownUntil: d.knownUntil, expiresAt: d.expiresAt });

/**
 * Login records as single documents, changed by atomic updates only (no transactions), so
 * concurrent failures on one key all count; the TTL index removes a record some time after it
 * expired, so reads also check `expiresAt`.
 */
export class MongoLoginAttempts implements LoginAttemptStore {
  constructor(private readonly c: Collections) {}

  async get(keys: string[], now: Date): Promise<Map<string, LoginRecord>> {
    const docs = await this.c.loginAttempts.find({ _id: { $in: keys }, expiresAt: { $gt: now } }).toArray();
    return new Map(docs.map((d) => [d._id, record(d)]));
  }

  async fail(key: string, at: Date, expiresAt: Date): Promise<LoginRecord> {
    for (;;) {
      // A live record counts one more.
      const live = await this.c.loginAttempts.findOneAndUpdate(
        { _id: key, expiresAt: { $gt: at } },
        { $inc: { failures: 1 }, $set: { lastFailureAt: at }, $max: { expiresAt } },
        { returnDocument: 'after' },
      );
      if (live) return record(live);
      // An expired one starts again (only one of two racing failures matches; the other goes round).
      const restarted = await this.c.loginAttempts.findOneAndUpdate(
        { _id: key, expiresAt: { $lte: at } },
        { $set: { failures: 1, lastFailureAt: at, knownUntil: null, expiresAt } },
        { returnDocument: 'after' },
      );
      if (restarted) return record(restarted);
      const fresh: LoginAttemptDoc = { _id: key, failures: 1, lastFailureAt: at, knownUntil: null, expiresAt };
      try {
        await this.c.loginAttempts.insertOne(fresh);
        return record(fresh);
      } catch (err) {
        // Two first failures raced to insert: the loser counts on the winner's record.
        if (!isDuplicateKey(err)) throw err;
      }
    }
  }

  async succeed(key: string, knownUntil: Date): Promise<void> {
    await this.c.loginAttempts.updateOne({ _id: key }, { $set: { failures: 0, lastFailureAt: null, knownUntil, expiresAt: knownUntil } }, { upsert: true });
  }
}
