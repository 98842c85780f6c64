import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** A statement for a read thread: its rows come back whole (a report's partition, small by its LIMIT). */
export interface ReadRequest {
  id: number;
  sql: string;
  params: Record<string, unknown>;
}

export type ReadReply = { id: number; rows: unknown[] } | { id: number; error: string };

export interface ReadThreadData {
  file: string;
  cacheKiB: number;
}

// The thread's own read-only connection, with the settings of `readConnection` (database.ts):
// its sorts go to a temporary file past its cache, not into memory.
const { file, cacheKiB } = workerData as ReadThreadData;
const db = new Database(file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 10000');
db.pragma(`cache_size = -${cacheKiB}`);
db.pragma('temp_store = FILE');
const compiled = new Map<string, Database.Statement>();

parentPort!.on('message', (m: ReadRequest) => {
  let reply: ReadReply;
  try {
    let statement = compiled.get(m.sql);
    if (!statement) compiled.set(m.sql, (statement = db.prepare(m.sql)));
    reply = { id: m.id, rows: statement.all(m.params) };
  } catch (err) {
    reply = { id: m.id, error: (err as Error).message };
  }
  parentPort!.postMessage(reply);
});
