import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../../errors.js';

export type Db = Database.Database;

/**
 * What a store capability declares of the embedded database (beside its statements, in its own
 * folder): its tables and indexes, and what brings a data directory made by an earlier version up
 * to date.
 */
export interface EmbeddedSchema {
  /** `CREATE … IF NOT EXISTS` statements, run on every open. */
  readonly tables: string;
  /** Run after every capability's tables exist, in the order the capabilities are listed. */
  readonly upgrade?: (db: Db) => void;
}

export function databaseFile(dataDir: string): string {
  return path.join(dataDir, 'archive.sqlite');
}

/** A connection with the archive's settings; every thread that opens the file uses this. */
export function connect(file: string): Db {
  const db = compilingOnce(new Database(file));
  // WAL: readers never block the writer, and a killed process loses at most uncommitted
  // transactions; a catalog entry and its chunks become visible together or not at all.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 10000');
  // A batch of small files touches a few pages of some twenty indexes per file, most at random
  // (ids and checksums). Checkpoints every 40 MiB of WAL (4 MiB by default) copy a page rewritten
  // by many batches into the database once instead of many times: the 10,000-file import bench
  // went from 0.96 to 0.82 ms of server CPU a file. A 32 MiB page cache (2 MiB by default) keeps
  // the indexes' inner pages at hand as the archive grows.
  db.pragma('cache_size = -32768');
  db.pragma('wal_autocheckpoint = 10000');
  // Statement journals (the pages a statement inside a transaction changes, to undo it alone) and
  // sorts stay in memory: past 64 KiB SQLite would write them to a file, 140,000 writes of 4 KiB
  // in the 10,000-file import bench (half the server's write calls).
  db.pragma('temp_store = MEMORY');
  return db;
}

/**
 * A read-only connection to the archive beside the store's own, for what only reads much of it
 * (report pages, exports): its pages go into a cache of its own, `cacheKiB` large, not into the
 * store's 32 MiB, which the uploads' indexes need. Its sorts and window tables go to a temporary
 * file once they outgrow that cache (SQLite sorts in memory up to the cache's size), not into
 * memory: a grouped report page sorts 45 MB of entries at 10^6 ledger entries. A read sees what
 * the store has committed (WAL).
 */
export function readConnection(db: Db, cacheKiB: number): Db {
  const connection = compilingOnce(new Database(db.name, { readonly: true, fileMustExist: true }));
  connection.pragma('busy_timeout = 10000');
  connection.pragma(`cache_size = -${cacheKiB}`);
  connection.pragma('temp_store = FILE');
  return connection;
}

/**
 * `db` compiling each SQL text once: compiling costs more than running most of our statements.
 * A cached statement serves one use at a time, as .get/.all/.run do (an export iterates its
 * selection on a connection of its own).
 */
function compilingOnce(db: Db): Db {
  const compile = db.prepare.bind(db);
  const compiled = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    let statement = compiled.get(sql);
    if (!statement) compiled.set(sql, (statement = compile(sql)));
    return statement;
  }) as Db['prepare'];
  return db;
}

/** Opens (creating if needed) the archive database in `dataDir`, with the capabilities' schemas. */
export function openDatabase(dataDir: string, schemas: readonly EmbeddedSchema[]): Db {
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.accessSync(dataDir, fs.constants.W_OK);
  } catch (err) {
    throw new ConfigError(
      `DATA_DIR ${dataDir} is not a writable directory (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  const db = connect(databaseFile(dataDir));
  for (const schema of schemas) db.exec(schema.tables);
  for (const schema of schemas) schema.upgrade?.(db);
  return db;
}

/** Adds the columns that a table made by an earlier version lacks (name → type and constraints). */
export function addMissingColumns(db: Db, table: string, definitions: Record<string, string>): void {
  const present = new Set(
    db
      .prepare<[], { name: string }>(`SELECT name FROM pragma_table_xinfo('${table}')`)
      .all()
      .map((c) => c.name),
  );
  for (const [name, definition] of Object.entries(definitions)) {
    if (!present.has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${definition}`);
  }
}

/** Whether `table` has a column `column` (a table made by an earlier version may lack it). */
export function hasColumn(db: Db, table: string, column: string): boolean {
  return db.prepare('SELECT 1 FROM pragma_table_xinfo(?) WHERE name = ?').get(table, column) !== undefined;
}

/**
 * Gives a table made by an earlier version its current form: `create` makes it anew (as
 * `${table}_next`, which it must name), `copy` fills that from the old table (an INSERT … SELECT
 * reading `${table}`), then the old one is dropped, with its indexes and triggers (the caller
 * creates its current ones again), and the new one takes its name. Run inside the caller's
 * transaction, so no process sees the table half made.
 */
export function rebuildTable(db: Db, table: string, create: string, copy: string): void {
  db.exec(`DROP TABLE IF EXISTS ${table}_next`);
  db.exec(create);
  db.exec(copy);
  db.exec(`DROP TABLE ${table}`);
  // Legacy renaming leaves other tables' triggers as they are (SQLite's own recipe for changing
  // a table): a trigger naming this table would otherwise fail the rename while it is dropped.
  db.pragma('legacy_alter_table = ON');
  try {
    db.exec(`ALTER TABLE ${table}_next RENAME TO ${table}`);
  } finally {
    db.pragma('legacy_alter_table = OFF');
  }
}
