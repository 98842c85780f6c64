import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { BoundedTopStatements, ReadReply, ReadRequest, ReadThreadData } from './read-thread.js';

type Params = Record<string, unknown>;

/** File numbers go to partitions in blocks this long, in turn (see `inPartition`). */
const FILE_BLOCK = 4096;

/**
 * The condition that file number `column` belongs to partition `@part` of `@parts`: blocks of
 * consecutive numbers in turn, so every partition holds some of every period's files (numbers
 * grow with time, and a date window's files are mostly of one period), and a statement reading
 * files in number order reads its partition's in that order too.
 */
export const inPartition = (column: string) => `(${column} / ${FILE_BLOCK}) % @parts = @part`;

/** Stripes per partition, for statements that read a table keyed by file number a range at a time (`inStripes`). */
const STRIPES = 64;

/**
 * A statement over partition `@part`'s files as the union of `statement(range)` over its stripes:
 * `range` is a condition that `column` is in one range of consecutive file numbers. SQLite then
 * reads only the partition's rows of a table keyed by file number (`inPartition` makes it read
 * every row to skip the others': 10% of a date window's cross-unit page at 10^7), each range in
 * file order (a GROUP BY of the file sums them as they are read). Stripe k of all, `@stripe`
 * numbers long (`ReadThreads.stripeLength`), goes to partition k % @parts; the last partition's
 * last stripe has no end, for files numbered since. `inStripe` is the same partition as one condition.
 */
export function inStripes(column: string, statement: (range: string) => string): string {
  return Array.from({ length: STRIPES }, (_, i) => {
    const end = `(@part + @parts * ${i} + 1) * @stripe`;
    const last =
      i === STRIPES - 1 ? `CASE WHEN @part = @parts - 1 THEN ${Number.MAX_SAFE_INTEGER} ELSE ${end} END` : end;
    return statement(`${column} >= (@part + @parts * ${i}) * @stripe AND ${column} < ${last}`);
  }).join(' UNION ALL ');
}

/** The condition that file number `column` is in partition `@part`'s stripes (`inStripes`). */
export const inStripe = (column: string) => `MIN(${column} / @stripe, @parts * ${STRIPES} - 1) % @parts = @part`;

class ReadThread {
  readonly waiting = new Map<number, { resolve(rows: unknown[]): void; reject(err: Error): void }>();
  dead = false;
  lastWork = performance.now();
  private readonly worker: Worker;

  constructor(data: ReadThreadData) {
    this.worker = new Worker(new URL('./read-thread.js', import.meta.url), { workerData: data });
    this.worker.unref();
    this.worker.on('message', (m: ReadReply) => {
      this.lastWork = performance.now();
      const waiting = this.waiting.get(m.id);
      if (!waiting) return;
      this.waiting.delete(m.id);
      if ('error' in m) waiting.reject(new Error(m.error));
      else waiting.resolve(m.rows);
    });
    this.worker.on('error', (err: Error) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`read thread exited with code ${code}`)));
  }

  all(request: ReadRequest): Promise<unknown[]> {
    this.lastWork = performance.now();
    return new Promise((resolve, reject) => {
      this.waiting.set(request.id, { resolve, reject });
      this.worker.postMessage(request);
    });
  }

  private fail(err: Error): void {
    this.dead = true;
    for (const waiting of this.waiting.values()) waiting.reject(err);
    this.waiting.clear();
  }

  terminate(): void {
    this.dead = true;
    void this.worker.terminate();
  }
}

/**
 * Worker threads, each with a read-only connection to the archive, that run one statement over
 * partitions of the files at once: a report page that must sum millions of entries (a date
 * window's cross-unit duplicates, the space saved by a file name) takes the time of its largest
 * partition, on as many cores as there are partitions, and the thread that serves requests waits
 * for none of it. Each partition reads its own snapshot: a page may combine two that differ by
 * the uploads committed between them, as its page and its count already may.
 *
 * Threads start on first use and end after `idleMs` without work, so a server nobody asks such a
 * page of holds none.
 */
export class ReadThreads {
  private threads: ReadThread[] = [];
  private nextId = 1;
  private sweeper: ReturnType<typeof setInterval> | undefined;
  /** How many partitions a statement is run over: one a thread. */
  readonly parts: number;

  constructor(
    private readonly file: string,
    private readonly cacheKiB: number,
    parts = Math.min(4, Math.max(2, os.availableParallelism())),
    private readonly idleMs = 60_000,
  ) {
    this.parts = parts;
  }

  /**
   * `sql` once per partition, in parallel, each given `@part` (0 to parts - 1) and `@parts` beside
   * `params`: the rows of each partition, in partition order. The statement restricts itself to
   * its partition (`inPartition`).
   */
  partitioned<Row>(sql: string, params: Params): Promise<Row[][]> {
    return this.everyPartition({ sql }, params);
  }

  /**
   * A ranking's first rows in each partition, walked as `BoundedTopStatements` says (the
   * statements restrict themselves to their partition), each row with its partition's `total`.
   */
  partitionedTop<Row>(top: BoundedTopStatements, params: Params): Promise<Array<Array<Row & { total: number }>>> {
    return this.everyPartition({ top }, params);
  }

  private async everyPartition<Row>(
    statements: { sql: string } | { top: BoundedTopStatements },
    params: Params,
  ): Promise<Row[][]> {
    const threads = this.live();
    return (await Promise.all(
      threads.map((thread, part) =>
        thread.all({ id: this.nextId++, ...statements, params: { ...params, part, parts: this.parts } }),
      ),
    )) as Row[][];
  }

  /** `@stripe` for `inStripes`: numbers up to `lastFileNo` in STRIPES stripes a partition. */
  stripeLength(lastFileNo: number): number {
    return Math.max(1, Math.ceil((lastFileNo + 1) / (this.parts * STRIPES)));
  }

  /** Threads running now (for tests). */
  get running(): number {
    return this.threads.filter((t) => !t.dead).length;
  }

  private live(): ReadThread[] {
    this.threads = this.threads.filter((t) => !t.dead);
    while (this.threads.length < this.parts)
      this.threads.push(new ReadThread({ file: this.file, cacheKiB: this.cacheKiB }));
    this.sweeper ??= setInterval(() => this.endIdle(), this.idleMs / 2);
    this.sweeper.unref();
    return this.threads;
  }

  private endIdle(): void {
    const idleSince = performance.now() - this.idleMs;
    for (const thread of this.threads)
      if (thread.waiting.size === 0 && thread.lastWork <= idleSince) thread.terminate();
    this.threads = this.threads.filter((t) => !t.dead);
    if (this.threads.length > 0) return;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const thread of this.threads.splice(0)) thread.terminate();
  }
}
