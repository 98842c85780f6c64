import type { IncrementResponse, Options, Store } from 'express-rate-limit';
import type { RateCounts } from '../store/port.js';

/**
 * express-rate-limit's counters kept in the archive's store, so every instance behind a load
 * balancer counts the same attempts (the library's default store counts per process).
 */
export class SharedRateLimitStore implements Store {
  readonly localKeys = false;
  private windowMs = 60_000;

  constructor(
    private readonly counts: RateCounts,
    private readonly clock: () => number = Date.now,
  ) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  /** Fixed windows on the clock: every instance agrees which window a moment belongs to. */
  private windowEnd(): Date {
    return new Date((Math.floor(this.clock() / this.windowMs) + 1) * this.windowMs);
  }

  async increment(key: string): Promise<IncrementResponse> {
    const resetTime = this.windowEnd();
    return { totalHits: await this.counts.hit(key, resetTime), resetTime };
  }

  async decrement(key: string): Promise<void> {
    await this.counts.undo(key, this.windowEnd());
  }

  async resetKey(key: string): Promise<void> {
    await this.counts.reset(key);
  }
}
