import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';

/**
 * File numbers: the archive's own number for each catalogued file (`catalog.file_no`), in the
 * order files were catalogued. The ledger, its tallies, names and per-file sums, the packs and the
 * chunk sums key their rows by it (server/store/catalog/embedded.ts says why). The catalog gives
 * the numbers; every other embedded capability finds a file's number here, never in the catalog's
 * table itself.
 */

/** Per database, its statement for fileNumberOf: prepared once (every counted upload asks). */
const fileNumberStatements = new WeakMap<Db, Statement<[string], { file_no: number }>>();

/** A catalogued file's number, from its public id; undefined for a file not catalogued. */
export function fileNumberOf(db: Db, fileId: string): number | undefined {
  let statement = fileNumberStatements.get(db);
  if (!statement) {
    statement = db.prepare<[string], { file_no: number }>('SELECT file_no FROM catalog WHERE file_id = ?');
    fileNumberStatements.set(db, statement);
  }
  return statement.get(fileId)?.file_no;
}
