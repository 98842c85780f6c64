import { readConnection, type Db } from './database.js';

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
 * Read on a read-only connection of its own (`readConnection`), opened for the export and closed
 * when the iteration ends, however it ends: a statement being iterated keeps its connection busy,
 * so the connection it came from could run nothing else meanwhile. Count and rows are read in one
 * transaction, one snapshot (WAL: writers go on meanwhile).
 *
 * What `items` looks up beside the selection (a cross-unit file's units) it reads on `lookups`, a
 * second such connection opened at its first use: not the store's own, whose 32 MiB page cache an
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
  const reader = readConnection(db, 2048);
  let side: Db | undefined;
  const lookups = () => (side ??= readConnection(db, 1024));
  try {
    reader.exec('BEGIN');
    let total = selection.count
      ? reader.prepare<Record<string, unknown>, { n: number }>(selection.count).get(selection.params)!.n
      : undefined;
    let rows: Row[] = [];
    let sent = false;
    for (const row of reader.prepare<Record<string, unknown>, Row>(selection.sql).iterate(selection.params)) {
      total ??= (row as { total?: number }).total;
      rows.push(row);
      if (rows.length === batch) {
        const page = { items: items(rows, lookups), total: total ?? 0 };
        rows = [];
        sent = true;
        yield page;
      }
    }
    if (rows.length > 0 || !sent) yield { items: items(rows, lookups), total: total ?? 0 };
  } finally {
    reader.close();
    side?.close();
  }
}
