import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** What an export's thread reads: one selection, `batch` rows at a time (batches.ts). */
export interface SelectionThreadData {
  file: string;
  cacheKiB: number;
  sql: string;
  params: Record<string, unknown>;
  /** A statement answering `n`, the number of rows, where the rows do not carry it as `total`. */
  count?: string;
  batch: number;
  /**
   * Int32 [credits, stop]: the batches the reader may read ahead, and 1 once it is to stop. The
   * thread waits on it between batches, inside the statement, which stays open (one snapshot).
   */
  signal: SharedArrayBuffer;
}

export type SelectionBatch = { rows: unknown[]; total: number | undefined; last: boolean } | { error: string };

const { file, cacheKiB, sql, params, count, batch, signal } = workerData as SelectionThreadData;
const flags = new Int32Array(signal);
const CREDITS = 0;
const STOP = 1;

/** Waits for a batch's credit; false once the reader asks the thread to stop. */
function mayRead(): boolean {
  for (;;) {
    if (Atomics.load(flags, STOP) === 1) return false;
    const credits = Atomics.load(flags, CREDITS);
    if (credits > 0) {
      if (Atomics.compareExchange(flags, CREDITS, credits, credits - 1) === credits) return true;
      continue;
    }
    Atomics.wait(flags, CREDITS, 0);
  }
}

// The settings of `readConnection` (database.ts): sorts past the cache go to a temporary file.
const db = new Database(file, { readonly: true, fileMustExist: true });
try {
  db.pragma('busy_timeout = 10000');
  db.pragma(`cache_size = -${cacheKiB}`);
  db.pragma('temp_store = FILE');
  // Count and rows in one transaction: one snapshot, while writers go on (WAL).
  db.exec('BEGIN');
  let total = count ? (db.prepare(count).get(params) as { n: number }).n : undefined;
  let rows: unknown[] = [];
  let stopped = !mayRead();
  if (!stopped) {
    for (const row of db.prepare(sql).iterate(params)) {
      total ??= (row as { total?: number }).total;
      rows.push(row);
      if (rows.length === batch) {
        parentPort!.postMessage({ rows, total, last: false } satisfies SelectionBatch);
        rows = [];
        if (!mayRead()) {
          stopped = true;
          break;
        }
      }
    }
  }
  if (!stopped) parentPort!.postMessage({ rows, total, last: true } satisfies SelectionBatch);
} catch (err) {
  parentPort!.postMessage({ error: (err as Error).message } satisfies SelectionBatch);
} finally {
  db.close();
}
