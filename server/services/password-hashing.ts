import { LoginBusyError } from '../errors.js';
import type { PasswordHashingPolicy } from '../limits.js';

/** Who a check is for: its client address, and the account and address pair when the pair is known. */
export interface HashingClaimant {
  address: string | null;
  /** Set when the account has logged in from this address lately (the throttle's "known" pair). */
  knownPair?: string;
}

/**
 * The waiting checks of one lane, by key (an address, or a known pair), taken in turn: one of a
 * key, then one of the next key, so a key with many waiting delays the others by one check a round.
 */
class Lane {
  /** Map order is the round: a key whose check is taken goes to its end. */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** Checks waiting or running, by key. */
  private readonly held = new Map<string, number>();
  size = 0;

  holds(key: string): number {
    return this.held.get(key) ?? 0;
  }

  hold(key: string): void {
    this.held.set(key, this.holds(key) + 1);
  }

  release(key: string): void {
    const n = this.holds(key) - 1;
    if (n > 0) this.held.set(key, n);
    else this.held.delete(key);
  }

  wait(key: string, start: () => void): void {
    const queue = this.waiting.get(key);
    if (queue) queue.push(start);
    else this.waiting.set(key, [start]);
    this.size++;
  }

  take(): (() => void) | undefined {
    const first = this.waiting.entries().next();
    if (first.done) return undefined;
    const [key, queue] = first.value;
    const start = queue.shift()!;
    this.waiting.delete(key);
    if (queue.length > 0) this.waiting.set(key, queue);
    this.size--;
    return start;
  }
}

/**
 * A bound on the password checks of logins (and password changes), in two lanes: tries from an
 * address the account has logged in from lately (a clerk at the office) go first, and one place
 * is kept for them (with one concurrency, none), so a clerk's check starts at once rather than
 * after a guess's; all others (new addresses, unknown usernames, guessers) share the second lane
 * in turn by address. Which
 * lane a try takes never depends on whether its username exists (an unknown username is never
 * "known" anywhere), so neither the queue nor its refusals tell a guesser which names exist.
 * A guesser cannot get into the first lane without a password that works. Each instance bounds
 * its own hashing (it is its own CPU and memory).
 */
export class PasswordHashing {
  private running = 0;
  /** Of the running checks, those of the second lane. */
  private runningOther = 0;
  private readonly known = new Lane();
  private readonly other = new Lane();
  /** A running mean of a check's time, for the Retry-After of a refusal. */
  private meanMs = 100;

  constructor(private readonly policy: PasswordHashingPolicy) {}

  /** Runs `check` when its turn comes; refuses at once (LoginBusyError) when its lane or its address has too many waiting. */
  async run<T>(claimant: HashingClaimant, check: () => Promise<T>): Promise<T> {
    const [lane, key] = this.laneOf(claimant);
    lane.hold(key);
    try {
      await this.turn(lane, key);
      const started = performance.now();
      try {
        return await check();
      } finally {
        this.meanMs = 0.8 * this.meanMs + 0.2 * (performance.now() - started);
        this.running--;
        if (lane === this.other) this.runningOther--;
        this.next();
      }
    } finally {
      lane.release(key);
    }
  }

  /** Checks running and waiting now (for tests and metrics). */
  load(): { running: number; known: number; other: number } {
    return { running: this.running, known: this.known.size, other: this.other.size };
  }

  private laneOf({ address, knownPair }: HashingClaimant): [Lane, string] {
    const { perKey, queueLength, concurrency } = this.policy;
    // A known pair's tries beyond its share (a script retrying in a loop) queue with everyone else's.
    if (knownPair !== undefined && this.known.holds(knownPair) < perKey && this.known.size < queueLength)
      return [this.known, knownPair];
    const key = address ?? '-';
    if (this.other.holds(key) >= perKey || this.other.size >= queueLength) {
      const ahead = this.known.size + this.other.size + this.running;
      throw new LoginBusyError(Math.max(1, Math.ceil((ahead * this.meanMs) / concurrency / 1000)));
    }
    return [this.other, key];
  }

  /** Places the second lane may take: all but the one kept for the first. */
  private get otherPlaces(): number {
    return Math.max(1, this.policy.concurrency - 1);
  }

  private turn(lane: Lane, key: string): Promise<void> {
    return new Promise((resolve) => {
      lane.wait(key, resolve);
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.policy.concurrency) {
      let start = this.known.take();
      if (!start && this.runningOther < this.otherPlaces) {
        start = this.other.take();
        if (start) this.runningOther++;
      }
      if (!start) return;
      this.running++;
      start();
    }
  }
}
