import { monthOf, weekOf } from '../../../shared/calendar.js';
import type { Unit } from '../../../shared/schemas.js';
import type { Db } from '../embedded/database.js';
import { fileNumberOf } from '../embedded/file-numbers.js';
import { keepLedgerTotals } from './embedded-totals.js';
import { EmbeddedLedger } from './embedded.js';
import {
  countInMemory,
  type LedgerSeeding,
  type SeededLedger,
  type SeededTotals,
  type SeededUpload,
} from './seeding.js';

/** The ledger's tables whose indexes a seeding drops and makes again around its rows. */
const TABLES = ['ledger', 'upload_days', 'ledger_names', 'upload_keys'];
/** Of those indexes, the ones a withdrawal reads through (an entry's uploads, a unit's names of a file), made before it. */
const WITHDRAWAL_INDEXES = ['upload_keys_entry', 'ledger_file'];
/**
 * Withdrawals handed to the ledger's `reverseMany` at once, inside one transaction of the seeding's
 * (its own are savepoints in it): committed 500 at a time, as `reverseMany` does for a server, each
 * commit writes every page its reversals touched, most of them again for the next 500.
 */
const WITHDRAWALS_AT_ONCE = 50_000;

/**
 * The embedded ledger's seeding (seeding.ts says what it is for): the uploads counted in memory,
 * then the rows written in one transaction (the actions' records as they are counted, so that none
 * of them is kept in memory). The ledger's secondary indexes are dropped first and made again after
 * the rows (a fraction of the time of keeping them row by row), and the per-file sums, the repeat
 * uploaders' sums, the day tallies' sums and their triggers are made afresh from the entries and
 * tallies by `keepLedgerTotals`, as for a data directory made before them: the same rows the
 * triggers would have kept. Uploads to withdraw are reversed by the ledger's own `reverseMany`
 * (EmbeddedLedger: the same statements as a withdrawal's) before the indexes the reports read
 * through are made and the per-file sums summed, a file's after another
 * (its entries, tallies and actions are next to each other in their tables), and not one upload
 * at a random place after another in a database a thousand times the size of the page cache.
 */
export class EmbeddedLedgerSeeding implements LedgerSeeding {
  constructor(
    private readonly db: Db,
    /** Told what the seeding has done, a line at a time (a province takes an hour). */
    private readonly progress: (line: string) => void = () => {},
  ) {}

  async seed(uploads: Iterable<SeededUpload>): Promise<SeededLedger> {
    const { db } = this;
    if (db.prepare('SELECT 1 FROM ledger LIMIT 1').get())
      throw new Error('a seeding fills an empty ledger: this one has entries');
    const started = performance.now();
    const took = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
    const numbers = new Map<string, number>();
    const numberOf = (fileId: string): number => {
      let fileNo = numbers.get(fileId);
      if (fileNo === undefined) {
        fileNo = fileNumberOf(db, fileId);
        if (fileNo === undefined) throw new Error(`file ${fileId} is not in the catalog: its uploads cannot be seeded`);
        numbers.set(fileId, fileNo);
      }
      return fileNo;
    };
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
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('ledger', 'upload_days')",
      )
      .all();
    /** The uploads to withdraw: their keys, their change keys, their files. */
    const withdrawals: Array<{ actionKey: string; changeKey: string; fileNo: number }> = [];
    let recorded = 0;
    let totals!: SeededTotals;
    db.transaction(() => {
      for (const { name } of indexes) db.exec(`DROP INDEX ${name}`);
      for (const { name } of triggers) db.exec(`DROP TRIGGER ${name}`);
      db.exec(
        'DROP TABLE ledger_files; DROP TABLE IF EXISTS ledger_repeat_users; DROP TABLE IF EXISTS ledger_repeat_unit_files; DROP TABLE IF EXISTS upload_day_sums',
      );
      // The actions' records, as the count writes them (the one that stored a file holds its bytes).
      totals = countInMemory(uploads, (a) => {
        const u = a.upload;
        const fileNo = numberOf(u.fileId);
        recorded++;
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
          fileNo,
          u.fileName,
          u.contentType,
          u.day,
          u.fileLength,
          a.stored ? 1 : 0,
          a.entry + 1,
        );
        if (u.withdrawal !== undefined) withdrawals.push({ actionKey: u.key, changeKey: u.withdrawal, fileNo });
      });
      this.progress(`${totals.uploads} uploads counted, ${recorded} of them recorded under their keys (${took()})`);
      for (const fileId of totals.files.keys()) numberOf(fileId);
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
      // (Sorted as indexes into typed arrays: an object per row would take a gigabyte for a province.)
      const { days: dayRows, names: nameRows } = totals;
      const dayFiles = Int32Array.from(dayRows, (d) => numbers.get(d.fileId)!);
      const days = Uint32Array.from(dayRows.keys()).sort(
        (a, b) =>
          dayFiles[a]! - dayFiles[b]! ||
          compare(dayRows[a]!.unit.id, dayRows[b]!.unit.id) ||
          compare(dayRows[a]!.day, dayRows[b]!.day),
      );
      for (const i of days) {
        const d = dayRows[i]!;
        const fileNo = dayFiles[i]!;
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
      const nameFiles = Int32Array.from(nameRows, (n) => numbers.get(n.fileId)!);
      const names = Uint32Array.from(nameRows.keys()).sort(
        (a, b) =>
          compare(nameRows[a]!.unit.id, nameRows[b]!.unit.id) ||
          nameFiles[a]! - nameFiles[b]! ||
          compare(nameRows[a]!.name, nameRows[b]!.name),
      );
      for (const i of names) {
        const n = nameRows[i]!;
        insertName.run(n.unit.id, nameFiles[i]!, n.name, n.firstUsed.getTime(), ...units.levels(n.unit));
      }
      this.progress(
        `${totals.entries.length} entries, ${totals.days.length} day tallies, ${totals.names.length} names written (${took()})`,
      );
    })();
    const seeded: SeededLedger = {
      uploads: totals.uploads,
      recorded,
      withdrawn: withdrawals.length,
      entries: totals.entries.length,
      uploadDays: totals.days.length,
      names: totals.names.length,
    };
    // What the counting held is not needed any more (a province's is gigabytes).
    totals = undefined!;
    numbers.clear();
    const withdrawalIndexes = indexes.filter((i) => WITHDRAWAL_INDEXES.includes(i.name));
    if (withdrawals.length > 0) {
      for (const { sql } of withdrawalIndexes) db.exec(sql);
      // File by file, each file's in the order given (a stable sort).
      withdrawals.sort((a, b) => a.fileNo - b.fileNo);
      const ledger = new EmbeddedLedger(db);
      for (let at = 0; at < withdrawals.length; at += WITHDRAWALS_AT_ONCE) {
        const some = withdrawals.slice(at, at + WITHDRAWALS_AT_ONCE);
        db.exec('BEGIN IMMEDIATE');
        let answers;
        try {
          answers = await ledger.reverseMany(some);
          db.exec('COMMIT');
        } catch (e) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw e;
        }
        const refused = answers.findIndex((a) => a !== 'reversed');
        if (refused >= 0)
          throw new Error(`seeding: withdrawing ${some[refused]!.actionKey} the ledger answered "${answers[refused]}"`);
        const done = at + some.length;
        if (done === withdrawals.length || Math.floor(done / 100_000) > Math.floor(at / 100_000))
          this.progress(`${done} of ${withdrawals.length} uploads withdrawn (${took()})`);
      }
    }
    for (const { name, sql } of indexes)
      if (withdrawals.length === 0 || !WITHDRAWAL_INDEXES.includes(name)) db.exec(sql);
    this.progress(`the ledger's indexes made (${took()})`);
    keepLedgerTotals(db);
    this.progress(`the per-file sums and the reports' indexes made (${took()})`);
    return seeded;
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
