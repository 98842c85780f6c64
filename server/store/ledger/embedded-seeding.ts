import { monthOf, weekOf } from '../../../shared/calendar.js';
import type { Unit } from '../../../shared/schemas.js';
import type { Db } from '../embedded/database.js';
import { fileNumberOf } from '../embedded/file-numbers.js';
import { keepLedgerTotals } from './embedded-totals.js';
import { countInMemory, type LedgerSeeding, type SeededLedger, type SeededUpload } from './seeding.js';

/** The ledger's tables whose indexes a seeding drops and makes again around its rows. */
const TABLES = ['ledger', 'upload_days', 'ledger_names'];

/**
 * The embedded ledger's seeding (seeding.ts says what it is for): the uploads counted in memory,
 * then the rows written in one transaction. The ledger's secondary indexes are dropped first and
 * made again after the rows (a fraction of the time of keeping them row by row), and the per-file
 * sums and their triggers are made afresh from the entries by `keepLedgerTotals`, as for a data
 * directory made before them: the same rows the triggers would have kept.
 */
export class EmbeddedLedgerSeeding implements LedgerSeeding {
  constructor(private readonly db: Db) {}

  async seed(uploads: Iterable<SeededUpload>): Promise<SeededLedger> {
    const { db } = this;
    if (db.prepare('SELECT 1 FROM ledger LIMIT 1').get())
      throw new Error('a seeding fills an empty ledger: this one has entries');
    const totals = countInMemory(uploads);
    const numbers = new Map<string, number>();
    for (const fileId of totals.files.keys()) {
      const fileNo = fileNumberOf(db, fileId);
      if (fileNo === undefined) throw new Error(`file ${fileId} is not in the catalog: its uploads cannot be seeded`);
      numbers.set(fileId, fileNo);
    }
    const units = new UnitColumns();
    const weeks = new Map<string, string>();
    // Entries numbered as counting makes them (1, 2, … in the order first counted): an action's record names its entry by it.
    const insertEntry = db.prepare(
      `INSERT INTO ledger (id, user_id, user_name, unit_id, unit, file_no, upload_time, last_upload_time, upload_file_name, last_upload_file_name, last_content_type, upload_count)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertAction = db.prepare(
      `INSERT INTO upload_keys (key, account_id, file_id, status, stored, upload_count, at, user_name, unit, unit_id, file_no, file_name, content_type, day, file_length, holds, entry_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertDay = db.prepare(
      `INSERT INTO upload_days (file_no, unit_id, day, week, month, city, county, town, file_length, uploads, saved_uploads)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertName = db.prepare(
      `INSERT INTO ledger_names (unit_id, file_no, name, first_used, city, county, town) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    const indexes = db
      .prepare<[], { name: string; sql: string }>(
        `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL
         AND tbl_name IN (${TABLES.map((t) => `'${t}'`).join(', ')})`,
      )
      .all();
    const triggers = db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'ledger'")
      .all();
    db.transaction(() => {
      for (const { name } of indexes) db.exec(`DROP INDEX ${name}`);
      for (const { name } of triggers) db.exec(`DROP TRIGGER ${name}`);
      db.exec('DROP TABLE ledger_files');
      for (const [i, e] of totals.entries.entries()) {
        const { account } = e.first;
        insertEntry.run(
          i + 1,
          account.id,
          account.username,
          account.unit.id,
          units.json(account.unit),
          numbers.get(e.first.fileId)!,
          e.first.at.getTime(),
          e.lastUploadTime.getTime(),
          e.first.fileName,
          e.lastUploadFileName,
          e.lastContentType,
          e.uploadCount,
        );
      }
      // Tallies and names in the order of their tables' keys (both are kept in it): each row goes
      // at the end of its table's tree, not to a page of it at random.
      const days = totals.days
        .map((d) => ({ d, fileNo: numbers.get(d.fileId)! }))
        .sort((a, b) => a.fileNo - b.fileNo || compare(a.d.unit.id, b.d.unit.id) || compare(a.d.day, b.d.day));
      for (const { d, fileNo } of days) {
        const week = weeks.get(d.day) ?? weeks.set(d.day, weekOf(d.day)).get(d.day)!;
        insertDay.run(
          fileNo,
          d.unit.id,
          d.day,
          week,
          monthOf(d.day),
          ...units.levels(d.unit),
          d.fileLength,
          d.uploads,
          d.savedUploads,
        );
      }
      const names = totals.names
        .map((n) => ({ n, fileNo: numbers.get(n.fileId)! }))
        .sort((a, b) => compare(a.n.unit.id, b.n.unit.id) || a.fileNo - b.fileNo || compare(a.n.name, b.n.name));
      for (const { n, fileNo } of names)
        insertName.run(n.unit.id, fileNo, n.name, n.firstUsed.getTime(), ...units.levels(n.unit));
      for (const { sql } of indexes) db.exec(sql);
      // The actions' records, as the count writes them (the one that stored a file holds its bytes).
      for (const a of totals.actions) {
        const u = a.upload;
        insertAction.run(
          u.key,
          u.account.id,
          u.fileId,
          a.stored ? 'stored' : 'duplicate',
          a.stored ? 1 : 0,
          a.uploadCount,
          u.at.getTime(),
          u.account.username,
          units.json(u.account.unit),
          u.account.unit.id,
          numbers.get(u.fileId)!,
          u.fileName,
          u.contentType,
          u.day,
          u.fileLength,
          a.stored ? 1 : 0,
          a.entry + 1,
        );
      }
    })();
    keepLedgerTotals(db);
    return {
      uploads: totals.uploads,
      recorded: totals.actions.length,
      entries: totals.entries.length,
      uploadDays: totals.days.length,
      names: totals.names.length,
    };
  }
}

/** Strings in about SQLite's order (UTF-16 units, not UTF-8 bytes: only the speed depends on it). */
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A unit's columns as the count writes them, made once per unit object (a seeding has a million rows and a few thousand units). */
class UnitColumns {
  private readonly made = new WeakMap<Unit, { json: string; levels: [string, string | null, string | null] }>();

  private of(unit: Unit) {
    let columns = this.made.get(unit);
    if (!columns) {
      columns = { json: JSON.stringify(unit), levels: [unit.city, unit.county ?? null, unit.town ?? null] };
      this.made.set(unit, columns);
    }
    return columns;
  }

  json(unit: Unit): string {
    return this.of(unit).json;
  }

  levels(unit: Unit): [string, string | null, string | null] {
    return this.of(unit).levels;
  }
}
