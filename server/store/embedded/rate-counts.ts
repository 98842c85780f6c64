import type { RateCounts } from '../port.js';
import type { Db } from './database.js';

/** Counters in one table; every process on DATA_DIR counts in the same rows. */
export class EmbeddedRateCounts implements RateCounts {
  private hits = 0;

  constructor(private readonly db: Db) {}

  async hit(key: string, windowEnd: Date, by = 1): Promise<number> {
    // Windows that ended long before this one are dropped now and then, so the table stays small.
    // (Measured from the window asked for, not this machine's clock: the caller's clock decides.)
    if (++this.hits % 100 === 0) this.db.prepare('DELETE FROM rate_counts WHERE window_end < ?').run(windowEnd.getTime() - 3600_000);
    const row = this.db
      .prepare<{ key: string; end: number; by: number }, { hits: number }>(
        'INSERT INTO rate_counts (key, window_end, hits) VALUES (@key, @end, @by) ON CONFLICT (key, window_end) DO UPDATE SET hits = hits + @by RETURNING hits',
      )
      .get({ key, end: windowEnd.getTime(), by });
    return row!.hits;
  }

  async undo(key: string, windowEnd: Date): Promise<void> {
    this.db.prepare('UPDATE rate_counts SET hits = hits - 1 WHERE key = ? AND window_end = ? AND hits > 0').run(key, windowEnd.getTime());
  }

  async reset(key: string): Promise<void> {
    this.db.prepare('DELETE FROM rate_counts WHERE key = ?').run(key);
  }
}
