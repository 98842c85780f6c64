import { Worker } from 'node:worker_threads';
import { readConnection, type Db } from './database.js';
import type { SelectionBatch, SelectionThreadData } from './selection-thread.js';

/** One statement's rows, all of them, and how many there are. */
export interface Selection {
  /** A SELECT with its ORDER BY and no LIMIT; its rows may carry the number of rows as `total` (a window count). */
  sql: string;
  params: Record<string, unknown>;
  /** A statement answering `n`, the number of rows, where the rows do not carry it. */
  count?: string;
}

/**
 * The rows of `selection`, `batch` at a time, each batch turned into items as it is read: an
 * export holds one batch, however many rows there are, and reads each row once (a page at an
 * OFFSET reads every row before it again).
 *
 * Read on a worker thread of its own (`selection-thread.ts`), on a read-only connection opened
 * for the export and closed when the iteration ends, however it ends: a selection that sorts (the
 * cross-unit files of a city, 139,000 at 10^7 entries) computes every row before its first, and
 * on the thread that serves requests that held the whole server for seconds. The thread reads
 * one batch ahead of the one being written, then waits. Count and rows are read in one
 * transaction, one snapshot (WAL: writers go on meanwhile).
 *
 * What `items` looks up beside the selection (a cross-unit file's units) it reads on `lookups`, a
 * read-only connection opened at its first use: not the store's own, whose 32 MiB page cache an
 * export of every file would fill with pages no upload needs (an export of 150,000 cross-unit
 * files raised the server's memory by 25 MB more that way, and evicted the uploads' index pages).
 */
export async function* selectionBatches<Row extends object, Item>(
  db: Db,
  selection: Selection,
  batch: number,
  items: (rows: Row[], lookups: () => Db) => Item[],
): AsyncGenerator<{ items: Item[]; total: number }> {
  // The selection reads its index in order, each page once, or sorts its groups: 2 MiB of cache
  // do. Lookups read a few entries of one file each: 1 MiB holds the ledger index's inner pages
  // (8 MiB took 16 MB more of the server's memory through the cross-unit export, no faster).
  const { sql, params, count } = selection;
  await readerSlots.take();
  const reader = new SelectionReader<Row>({ file: db.name, cacheKiB: 2048, sql, params, count, batch });
  let side: Db | undefined;
  const lookups = () => (side ??= readConnection(db, 1024));
  try {
    let sent = false;
    for (;;) {
      const { rows, total, last } = await reader.next();
      if (rows.length > 0 || !sent || !last) yield { items: items(rows, lookups), total: total ?? 0 };
      sent = true;
      if (last) return;
    }
  } finally {
    reader.close();
    readerSlots.give();
    side?.close();
  }
}

/**
 * Exports read at once, each on its thread (about 10 MB of memory apiece); more wait for one to
 * end, so that exports asked for at once cannot take the server past its memory.
 */
const READERS_AT_ONCE = 4;
const readerSlots = new (class {
  private free = READERS_AT_ONCE;
  private readonly waiting: Array<() => void> = [];

  async take(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
})();

/** The batches a selection thread sends, one at a time, granting it the next as each is taken. */
class SelectionReader<Row> {
  private readonly worker: Worker;
  private readonly flags: Int32Array;
  private readonly arrived: SelectionBatch[] = [];
  private waiting: ((b: SelectionBatch) => void) | undefined;
  private ended: Error | undefined;

  constructor(data: Omit<SelectionThreadData, 'signal'>) {
    const signal = new SharedArrayBuffer(8);
    this.flags = new Int32Array(signal);
    // The first batch and one ahead.
    this.flags[0] = 2;
    this.worker = new Worker(new URL('./selection-thread.js', import.meta.url), { workerData: { ...data, signal } });
    this.worker.on('message', (b: SelectionBatch) => this.arrive(b));
    this.worker.on('error', (err: Error) => this.end(err));
    this.worker.on('exit', (code) => this.end(new Error(`the export's reading thread exited with code ${code}`)));
  }

  /** The next batch; its taking lets the thread read one more. */
  async next(): Promise<{ rows: Row[]; total: number | undefined; last: boolean }> {
    const b =
      this.arrived.shift() ??
      (this.ended ? { error: this.ended.message } : await new Promise<SelectionBatch>((r) => (this.waiting = r)));
    if ('error' in b) throw new Error(b.error);
    Atomics.add(this.flags, 0, 1);
    Atomics.notify(this.flags, 0);
    return b as { rows: Row[]; total: number | undefined; last: boolean };
  }

  private arrive(b: SelectionBatch): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting(b);
    else this.arrived.push(b);
  }

  private end(err: Error): void {
    this.ended ??= err;
    this.arrive({ error: this.ended.message });
  }

  /** Stops the thread wherever it is (between batches it waits: woken, it closes its connection). */
  close(): void {
    Atomics.store(this.flags, 1, 1);
    Atomics.notify(this.flags, 0);
    void this.worker.terminate();
  }
}
