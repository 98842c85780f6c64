import type { RateCounts } from '../port.js';
import { isDuplicateKey, type Collections } from './collections.js';

/** Counters as single documents updated with $inc; a TTL index removes ended windows. */
export class MongoRateCounts implements RateCounts {
  constructor(private readonly c: Collections) {}

  async hit(key: string, windowEnd: Date, by = 1): Promise<number> {
    const _id = `${key}|${windowEnd.getTime()}`;
    for (;;) {
      try {
        const doc = await this.c.rateCounts.findOneAndUpdate({ _id }, { $inc: { hits: by }, $setOnInsert: { windowEnd } }, { upsert: true, returnDocument: 'after' });
        return doc!.hits;
      } catch (err) {
        // Two first hits raced to insert: the loser increments the winner's document.
        if (!isDuplicateKey(err)) throw err;
      }
    }
  }

  async undo(key: string, windowEnd: Date): Promise<void> {
    await this.c.rateCounts.updateOne({ _id: `${key}|${windowEnd.getTime()}`, hits: { $gt: 0 } }, { $inc: { hits: -1 } });
  }

  async reset(key: string): Promise<void> {
    // An anchored prefix: read from the _id index.
    await this.c.rateCounts.deleteMany({ _id: { $regex: `^${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\|` } });
  }
}
