import type { RateCounts } from '../port.js';
import type { Db } from './database.js';

/** Counters in one table; every process on DATA_DIR counts in the same rows. */
export class EmbeddedRateCounts implements RateCounts {
  private hits = 0;

  constructor(private readonly db: Db) {}

  async hit(key: string, windowEnd: Date): Promise<number> {
    // Ended windows are dropped now and then, so the table stays as small as the current window.
    if (++this.hits % 100 === 0) this.db.prepare('DELETE FROM rate_counts WHERE window_end < ?').run(Date.now());
    const row = this.db
      .prepare<[string, number], { hits: number }>(
        'INSERT INTO rate_counts (key, window_end, hits) VALUES (?, ?, 1) ON CONFLICT (key, window_end) DO UPDATE SET hits = hits + 1 RETURNING hits',
      )
      .get(key, windowEnd.getTime());
    return row!.hits;
  }

  async undo(key: string, windowEnd: Date): Promise<void> {
    this.db.prepare('UPDATE rate_counts SET hits = hits - 1 WHERE key = ? AND window_end = ? AND hits > 0').run(key, windowEnd.getTime());
  }

  async reset(key: string): Promise<void> {
    this.db.prepare('DELETE FROM rate_counts WHERE key = ?').run(key);
  }
}
