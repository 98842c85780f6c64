import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { boundedTop } from './bounded-top.js';
import { sqliteOrder } from './sql.js';

type Params = Record<string, unknown>;
type Row = Record<string, unknown>;

/**
 * The first `rows` rows of a ranking, largest `key` first and ties by `tie` ascending (SQLite's
 * order), walked as `boundedTop` does: `candidates` gives rows with `bound` (at least the key of
 * the candidate's row) and `cost`, largest bound first; `row` is run with the candidate's columns
 * beside the parameters and gives its row, or none. When the walk would cost more than `budget`,
 * `whole` ranks every row at once instead. The rows come with `total`, from `count` (one row,
 * `total`) or, for `whole`, from `whole`'s own `total` column. One snapshot for all of it.
 */
export interface BoundedTopStatements {
  candidates: string;
  row: string;
  count: string;
  whole: string;
  key: string;
  tie: string;
  rows: number;
  budget: number;
}

/** A statement for a read thread: its rows come back whole (a report's partition, small by its LIMIT). */
export type ReadRequest = { id: number; params: Params } & ({ sql: string } | { top: BoundedTopStatements });

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
const compiled = new Map<string, Database.Statement<[Params], Row>>();
const statement = (sql: string) => {
  let found = compiled.get(sql);
  if (!found) compiled.set(sql, (found = db.prepare<[Params], Row>(sql)));
  return found;
};

const rankedTop = db.transaction((top: BoundedTopStatements, params: Params): Row[] => {
  const row = statement(top.row);
  const found = boundedTop(statement(top.candidates).iterate(params), {
    bound: (c) => c.bound as number,
    cost: (c) => c.cost as number,
    rowOf: (c) => row.get({ ...params, ...c }),
    key: (r) => r[top.key] as number,
    order: (a, b) => sqliteOrder(b[top.key], a[top.key]) || sqliteOrder(a[top.tie], b[top.tie]),
    rows: top.rows,
    budget: top.budget,
  });
  if (found === undefined) return statement(top.whole).all(params);
  const { total } = statement(top.count).get(params)!;
  return found.map((r) => ({ ...r, total }));
});

parentPort!.on('message', (m: ReadRequest) => {
  let reply: ReadReply;
  try {
    reply = { id: m.id, rows: 'sql' in m ? statement(m.sql).all(m.params) : rankedTop(m.top, m.params) };
  } catch (err) {
    reply = { id: m.id, error: (err as Error).message };
  }
  parentPort!.postMessage(reply);
});
