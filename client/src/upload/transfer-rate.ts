/** How far back the speed looks: long enough to smooth the steps of batched files, short enough to follow a change. */
export const RATE_WINDOW_MS = 10_000;
/** No speed is told before the samples span this long. */
export const RATE_MIN_SPAN_MS = 2_000;

/**
 * A transfer's speed (as 百度网盘's and 阿里云盘's transfer lists show it): the bytes sent over the
 * last RATE_WINDOW_MS, from samples of the bytes sent so far, taken whenever the page redraws.
 */
export class RateMeter {
  #samples: Array<{ at: number; sent: number }> = [];

  constructor(
    private readonly windowMs = RATE_WINDOW_MS,
    private readonly minSpanMs = RATE_MIN_SPAN_MS,
  ) {}

  /** The bytes sent so far, at `now` (ms). Fewer than before (a list cleared or restarted): it starts over. */
  add(now: number, sent: number): void {
    const last = this.#samples[this.#samples.length - 1];
    if (last && sent < last.sent) this.#samples = [];
    this.#samples.push({ at: now, sent });
    // Keeps one sample at or before the window's start, so the window is always spanned.
    while (this.#samples.length > 2 && this.#samples[1]!.at <= now - this.windowMs) this.#samples.shift();
  }

  /** Bytes per second over the window that ends at `now`; undefined until the samples span long enough. */
  rate(now: number): number | undefined {
    const first = this.#samples[0];
    const last = this.#samples[this.#samples.length - 1];
    if (!first || !last || last.at - first.at < this.minSpanMs) return undefined;
    // Nothing sent since the last sample is still time spent: a stalled transfer slows down to 0.
    const span = Math.max(now, last.at) - first.at;
    return span > 0 ? ((last.sent - first.sent) * 1000) / span : undefined;
  }

  /** Forgets the samples (paused, or a new list). */
  reset(): void {
    this.#samples = [];
  }
}

/** Seconds left for `remaining` bytes at `rate` bytes per second; undefined when nothing moves. */
export function secondsLeft(remaining: number, rate: number | undefined): number | undefined {
  if (remaining <= 0) return 0;
  if (rate === undefined || rate <= 0) return undefined;
  return remaining / rate;
}

/** A time left as a person says it: 约 40 秒, 约 3 分钟, 约 1.5 小时. */
export type RoughDuration = { unit: 'seconds' | 'minutes' | 'hours'; value: number };

export function roughDuration(seconds: number): RoughDuration {
  // Under a minute, tens of seconds (at least ten): a countdown by the second would only jitter.
  if (seconds < 55) return { unit: 'seconds', value: Math.max(10, Math.ceil(seconds / 10) * 10) };
  if (seconds < 59.5 * 60) return { unit: 'minutes', value: Math.max(1, Math.round(seconds / 60)) };
  return { unit: 'hours', value: Math.round(seconds / 360) / 10 };
}

/** What a list still has to send, and what it sent: from its files' sizes, outcomes and progress. */
export interface TransferFile {
  size: number;
  /** Bytes hashed (phase 'hashing') or sent (phase 'sending') so far. */
  progress: number;
  phase: string;
  outcome?: { kind: string };
  /** Whether its bytes are at hand (a file remembered from before a reload may wait for them). */
  file?: unknown;
}

export function transferBytes(items: readonly TransferFile[]): { sent: number; remaining: number } {
  let sent = 0;
  let remaining = 0;
  for (const item of items) {
    const kind = item.outcome?.kind;
    if (kind === 'stored' || kind === 'duplicate') sent += item.size;
    else if (!item.outcome && item.file) {
      const moving = item.phase === 'sending' ? Math.min(item.progress, item.size) : 0;
      sent += moving;
      remaining += item.size - moving;
    }
  }
  return { sent, remaining };
}
