import { monthOf, weekOf } from '../../../shared/calendar.js';
import type { Unit } from '../../../shared/schemas.js';
import { hasColumn, type Db } from '../embedded/database.js';
import { keepDaySums } from './embedded-day-sums.js';
import { entryOf, type KnownUpload } from './entry-without.js';

/**
 * The ledger's derived totals on the embedded store, beyond each entry's upload_count and the day
 * tallies its count writes (docs/decisions/counts.md): the per-file sums (ledger_files), kept by
 * triggers on the ledger, and the indexes the reports read the ledger and its totals through. The
 * reports only read them. (Declared in reports/embedded.ts until 2026-11-28, under the same names,
 * so data directories of earlier versions keep their table, triggers and indexes as they are.)
 */

/**
 * (Re)computes ledger_files for the files `where` picks (a condition on a `file_no` column), from
 * their entries; a file without entries has no row.
 */
const sumFiles = (where: (fileNo: string) => string) => `
  DELETE FROM ledger_files WHERE ${where('file_no')};
  INSERT INTO ledger_files (file_no, file_id, units, users, uploads, first, last)
    SELECT l.file_no, c.file_id, COUNT(DISTINCT l.unit_id), COUNT(DISTINCT l.user_id), SUM(l.upload_count), MIN(l.upload_time), MAX(l.last_upload_time)
    FROM ledger l JOIN catalog c USING (file_no) WHERE ${where('l.file_no')} GROUP BY l.file_no;`;

/**
 * Per file: its ledger entries' distinct units and users, uploads, first and last upload time;
 * what the cross-unit report lists unless a filter picks entries (summing a million entries per
 * file takes a second, reading this a few milliseconds). Triggers on the ledger keep it.
 */
const LEDGER_FILES = `
CREATE TABLE ledger_files (
  file_no INTEGER PRIMARY KEY,
  -- The file's public id: the report's order breaks ties by it (ledger_files_shared).
  file_id TEXT NOT NULL,
  units   INTEGER NOT NULL,
  users   INTEGER NOT NULL,
  uploads INTEGER NOT NULL,
  first   INTEGER NOT NULL,
  last    INTEGER NOT NULL
);
CREATE TRIGGER ledger_files_delete AFTER DELETE ON ledger BEGIN ${sumFiles((no) => `${no} = old.file_no`)} END;
`;

/** An entry counted again: same file, unit and user, same first upload, a later or equal last one. */
const COUNTED_AGAIN = `old.file_no = new.file_no AND old.unit_id = new.unit_id AND old.user_id = new.user_id
  AND old.upload_time = new.upload_time AND new.last_upload_time >= old.last_upload_time`;

/**
 * How a new or updated entry changes its file's sums. A new entry (a file's first upload, or a new
 * holder's) and a repeat upload (the common update) add to them in place: re-summing every entry
 * of a file that thousands of units hold, on each new holder or upload, costs in proportion to
 * them. A new entry adds a unit or a user only if the file had no entry of it yet (ledger_file
 * finds both by the file's number). Any other update (an entry moved or relabelled) re-sums.
 * Replaced at every start, so data directories of earlier versions get them too.
 */
const LEDGER_FILES_UPDATES = `
DROP TRIGGER IF EXISTS ledger_files_insert;
CREATE TRIGGER ledger_files_insert AFTER INSERT ON ledger BEGIN
  INSERT INTO ledger_files (file_no, file_id, units, users, uploads, first, last)
    VALUES (new.file_no, (SELECT file_id FROM catalog WHERE file_no = new.file_no), 1, 1, new.upload_count,
      new.upload_time, new.last_upload_time)
  ON CONFLICT (file_no) DO UPDATE SET
    units = units + NOT EXISTS (SELECT 1 FROM ledger WHERE file_no = new.file_no AND unit_id = new.unit_id AND id <> new.id),
    users = users + NOT EXISTS (SELECT 1 FROM ledger WHERE file_no = new.file_no AND user_id = new.user_id AND id <> new.id),
    uploads = uploads + new.upload_count,
    first = MIN(first, new.upload_time),
    last = MAX(last, new.last_upload_time);
END;
DROP TRIGGER IF EXISTS ledger_files_update;
DROP TRIGGER IF EXISTS ledger_files_counted;
CREATE TRIGGER ledger_files_counted AFTER UPDATE ON ledger WHEN ${COUNTED_AGAIN} BEGIN
  UPDATE ledger_files SET uploads = uploads - old.upload_count + new.upload_count, last = MAX(last, new.last_upload_time)
  WHERE file_no = new.file_no;
END;
CREATE TRIGGER ledger_files_update AFTER UPDATE ON ledger WHEN NOT (${COUNTED_AGAIN}) BEGIN
  ${sumFiles((no) => `${no} IN (old.file_no, new.file_no)`)}
END;
`;

/**
 * (Re)sums the repeat uploaders' row of one account in one unit (`unitId`, `userId`: SQL
 * expressions, e.g. `old.unit_id`) from its repeat entries (uploaded twice or more); none, no row.
 */
const sumRepeatUser = (unitId: string, userId: string) => `
  DELETE FROM ledger_repeat_users WHERE unit_id = ${unitId} AND user_id = ${userId};
  INSERT INTO ledger_repeat_users (unit_id, user_id, user_name, unit, files, uploads, copies, repeat_bytes, first, last)
    SELECT l.unit_id, l.user_id, MAX(l.user_name), MAX(l.unit), COUNT(*), SUM(l.upload_count), SUM(l.copies),
      SUM((l.upload_count - 1) * c.length), MIN(l.upload_time), MAX(l.last_upload_time)
    FROM ledger l JOIN catalog c ON c.file_no = l.file_no
    WHERE l.user_id = ${userId} AND l.unit_id = ${unitId} AND l.upload_count >= 2 GROUP BY l.unit_id, l.user_id;`;

/**
 * The repeat uploaders' sums (issue 43): per account and unit, over its entries uploaded twice or
 * more (the report's least minimum), what the report's rows per user and per unit show; per unit,
 * the distinct files of those entries (not a sum of its users'). The report grouped by user or
 * unit reads these where they answer exactly (every repeat entry, copies counted: no filter, the
 * least minimum), instead of summing 1.7 million entries of a province on each page. Kept by the
 * triggers of REPEAT_UPDATES; an account's repeats are `uploads - files`, its re-sends
 * `uploads - files - copies`.
 */
const REPEAT_SUMS = `
CREATE TABLE ledger_repeat_users (
  unit_id      TEXT NOT NULL,
  user_id      TEXT NOT NULL,
  -- The greatest of its entries' (as the report grouped by user shows and sorts them).
  user_name    TEXT NOT NULL,
  unit         TEXT NOT NULL,
  -- Its repeat entries (each of another file: the ledger's key).
  files        INTEGER NOT NULL,
  uploads      INTEGER NOT NULL,
  copies       INTEGER NOT NULL,
  repeat_bytes INTEGER NOT NULL,
  first        INTEGER NOT NULL,
  last         INTEGER NOT NULL,
  PRIMARY KEY (unit_id, user_id)
) WITHOUT ROWID;
CREATE TABLE ledger_repeat_unit_files (
  unit_id TEXT PRIMARY KEY,
  files   INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** Both sums made from every repeat entry (a data directory made before them, or a seeding). */
const SUM_ALL_REPEATS = `
  INSERT INTO ledger_repeat_users (unit_id, user_id, user_name, unit, files, uploads, copies, repeat_bytes, first, last)
    SELECT l.unit_id, l.user_id, MAX(l.user_name), MAX(l.unit), COUNT(*), SUM(l.upload_count), SUM(l.copies),
      SUM((l.upload_count - 1) * c.length), MIN(l.upload_time), MAX(l.last_upload_time)
    FROM ledger l JOIN catalog c ON c.file_no = l.file_no WHERE l.upload_count >= 2 GROUP BY l.unit_id, l.user_id;
  INSERT INTO ledger_repeat_unit_files (unit_id, files)
    SELECT unit_id, COUNT(DISTINCT file_no) FROM ledger INDEXED BY ledger_unit_files WHERE upload_count >= 2 GROUP BY unit_id;`;

/** The same account, unit, file, name and unit label before and after an update of an entry. */
const SAME_ENTRY = `old.file_no = new.file_no AND old.unit_id = new.unit_id AND old.user_id = new.user_id
  AND old.user_name = new.user_name AND old.unit = new.unit`;
/** A repeat entry counted again (or its copies recounted, or an upload withdrawn that leaves its first and last as they were). */
const REPEATED_AGAIN = `${SAME_ENTRY} AND old.upload_count >= 2 AND new.upload_count >= 2
  AND old.upload_time = new.upload_time AND new.last_upload_time >= old.last_upload_time`;
/** An entry uploaded a second time: a repeat entry from now on. */
const BECAME_REPEAT = `${SAME_ENTRY} AND old.upload_count < 2 AND new.upload_count >= 2`;

/** A new repeat entry `new` added to its account's sums and its unit's files. */
const ADD_REPEAT = `
  INSERT INTO ledger_repeat_unit_files (unit_id, files) VALUES (new.unit_id, 1)
  ON CONFLICT (unit_id) DO UPDATE SET files = files + NOT EXISTS (
    SELECT 1 FROM ledger WHERE file_no = new.file_no AND unit_id = new.unit_id AND upload_count >= 2 AND id <> new.id);
  INSERT INTO ledger_repeat_users (unit_id, user_id, user_name, unit, files, uploads, copies, repeat_bytes, first, last)
    VALUES (new.unit_id, new.user_id, new.user_name, new.unit, 1, new.upload_count, new.copies,
      (new.upload_count - 1) * (SELECT length FROM catalog WHERE file_no = new.file_no), new.upload_time, new.last_upload_time)
  ON CONFLICT (unit_id, user_id) DO UPDATE SET
    user_name = MAX(user_name, excluded.user_name),
    unit = MAX(unit, excluded.unit),
    files = files + 1,
    uploads = uploads + excluded.uploads,
    copies = copies + excluded.copies,
    repeat_bytes = repeat_bytes + excluded.repeat_bytes,
    first = MIN(first, excluded.first),
    last = MAX(last, excluded.last);`;

/**
 * The repeat entries in the report's default order (most uploads first, then by id): its first
 * page, and any page of it, picks its entries from this (at 10 million entries, a page half-way
 * through the 1.7 million repeat entries walks 850,000 of these narrow rows, not a sort of them all).
 */
const REPEAT_INDEXES = `
CREATE INDEX IF NOT EXISTS ledger_repeat_counts ON ledger (upload_count DESC, id) WHERE upload_count >= 2;
`;

/**
 * The triggers that keep the repeat uploaders' sums. An upload's common cases add in place: a
 * repeat entry counted again (its uploads, copies, bytes and last upload), an entry uploaded a
 * second time (a new member: its unit gains a file unless another account's repeat entry there has
 * it). Any other change of a repeat entry (a withdrawal that changes its first or last upload or
 * leaves it uploaded once, a restore, a move, a deletion) sums its account's rows again from its
 * entries (the ledger's key finds them), before and after, and its unit's files change by whether
 * another repeat entry of the unit still has (had) the file. An entry uploaded once touches
 * nothing. Replaced at every start, as LEDGER_FILES_UPDATES.
 */
const REPEAT_UPDATES = `
DROP TRIGGER IF EXISTS ledger_repeats_insert;
CREATE TRIGGER ledger_repeats_insert AFTER INSERT ON ledger WHEN new.upload_count >= 2 BEGIN ${ADD_REPEAT} END;
DROP TRIGGER IF EXISTS ledger_repeats_counted;
CREATE TRIGGER ledger_repeats_counted AFTER UPDATE ON ledger WHEN ${REPEATED_AGAIN} BEGIN
  UPDATE ledger_repeat_users SET
    uploads = uploads - old.upload_count + new.upload_count,
    copies = copies - old.copies + new.copies,
    repeat_bytes = repeat_bytes + (new.upload_count - old.upload_count) * (SELECT length FROM catalog WHERE file_no = new.file_no),
    last = MAX(last, new.last_upload_time)
  WHERE unit_id = new.unit_id AND user_id = new.user_id;
END;
DROP TRIGGER IF EXISTS ledger_repeats_became;
CREATE TRIGGER ledger_repeats_became AFTER UPDATE ON ledger WHEN ${BECAME_REPEAT} BEGIN ${ADD_REPEAT} END;
DROP TRIGGER IF EXISTS ledger_repeats_update;
CREATE TRIGGER ledger_repeats_update AFTER UPDATE ON ledger
  WHEN (old.upload_count >= 2 OR new.upload_count >= 2) AND NOT (${REPEATED_AGAIN}) AND NOT (${BECAME_REPEAT}) BEGIN
  ${sumRepeatUser('old.unit_id', 'old.user_id')}
  ${sumRepeatUser('new.unit_id', 'new.user_id')}
  -- The old entry's file leaves its unit's if no repeat entry there has it now (the new one may).
  UPDATE ledger_repeat_unit_files SET files = files - 1 WHERE unit_id = old.unit_id AND old.upload_count >= 2
    AND NOT EXISTS (SELECT 1 FROM ledger WHERE file_no = old.file_no AND unit_id = old.unit_id AND upload_count >= 2);
  -- The new entry's file joins its unit's if no other repeat entry there had it before (the old one is counted above).
  INSERT INTO ledger_repeat_unit_files (unit_id, files) SELECT new.unit_id, 1
    WHERE new.upload_count >= 2 AND NOT (old.upload_count >= 2 AND old.file_no = new.file_no AND old.unit_id = new.unit_id)
      AND NOT EXISTS (SELECT 1 FROM ledger WHERE file_no = new.file_no AND unit_id = new.unit_id AND upload_count >= 2 AND id <> new.id)
  ON CONFLICT (unit_id) DO UPDATE SET files = files + 1;
  DELETE FROM ledger_repeat_unit_files WHERE unit_id = old.unit_id AND files = 0;
END;
DROP TRIGGER IF EXISTS ledger_repeats_delete;
CREATE TRIGGER ledger_repeats_delete AFTER DELETE ON ledger WHEN old.upload_count >= 2 BEGIN
  ${sumRepeatUser('old.unit_id', 'old.user_id')}
  UPDATE ledger_repeat_unit_files SET files = files - 1 WHERE unit_id = old.unit_id
    AND NOT EXISTS (SELECT 1 FROM ledger WHERE file_no = old.file_no AND unit_id = old.unit_id AND upload_count >= 2);
  DELETE FROM ledger_repeat_unit_files WHERE unit_id = old.unit_id AND files = 0;
END;
`;

/**
 * Indexes on the ledger's entries and totals that the reports read through (after the
 * migrations, which add the columns some use; the catalog's are in catalog/embedded.ts). Most
 * hold every column their report reads, so a report reads the index and not the table: a million
 * ledger rows are a few seconds of random reads, the same in index order a fraction of one.
 */
const TOTALS_INDEXES = `
-- Cross-unit duplicates read the ledger per file through its own index, ledger_file.
-- Repeat uploaders: entries uploaded twice or more (the report's least minimum), with what they
-- are filtered and grouped by; in file order, so the catalog is read in order too.
CREATE INDEX IF NOT EXISTS ledger_repeat_files ON ledger (file_no, unit_id, user_id, upload_count, upload_time, last_upload_time, user_name, city, county, town, upload_file_name, unit, copies)
  WHERE upload_count >= 2;
-- Space saved: per unit subtree and per day (with its week and month), each with the other's
-- columns, for filters on one and groups by the other.
CREATE INDEX IF NOT EXISTS upload_days_unit_sums ON upload_days (city, county, town, day, week, month, uploads, saved_uploads, file_length);
CREATE INDEX IF NOT EXISTS upload_days_day_sums ON upload_days (day, week, month, city, county, town, uploads, saved_uploads, file_length);
-- Cross-unit duplicates unfiltered by unit or time: the sums of files of two units or more (the
-- report's least minimum), in the default order (most units first), with every column the report
-- reads, so any order reads this and not the table. A new file's row (one unit) is not filed here
-- by its random public id.
CREATE INDEX IF NOT EXISTS ledger_files_shared ON ledger_files (units DESC, file_id, file_no, users, uploads, first, last) WHERE units >= 2;
DROP INDEX IF EXISTS ledger_files_units;
-- Superseded by the ones above (and ledger_file).
DROP INDEX IF EXISTS ledger_file_uploads;
DROP INDEX IF EXISTS ledger_repeats;
DROP INDEX IF EXISTS ledger_subtree;
DROP INDEX IF EXISTS ledger_file_units;
DROP INDEX IF EXISTS upload_days_day;
DROP INDEX IF EXISTS upload_days_unit;
`;

/**
 * Cross-unit duplicates within a unit subtree (a city, a county of it, a town): the subtree's
 * entries, in file order, with what the report sums and filters them by. City first, file next,
 * so a city's entries and a county's (within its city's, the county tested on the index) are
 * each one range, already grouped by file: at 10,000,000 entries a city's are about a tenth of
 * the ledger, and no sort. Without it the report read every entry of the ledger through
 * ledger_file (2 s at 10^7, whatever the subtree). The cost: one more index entry per ledger
 * entry (README, "Limits": its size and what it adds to an upload).
 */
const CROSS_UNIT_AREA_INDEX = `
CREATE INDEX IF NOT EXISTS ledger_area_files ON ledger (city, file_no, county, town, unit_id, user_id, upload_count, upload_time, last_upload_time);
`;

/**
 * Makes ledger_files and its triggers, with the sums of the entries a data directory made before
 * them has (in one transaction, so no process sees them half made or writes an entry in between;
 * made again where it was keyed by file id, before file numbers), and the indexes on the totals.
 * Run after the ledger's own upgrade: it needs file numbers.
 */
export function keepLedgerTotals(db: Db): void {
  db.transaction(() => {
    const made = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'ledger_files'").get() !== undefined;
    if (!made || !hasColumn(db, 'ledger_files', 'file_no')) {
      db.exec(
        'DROP TABLE IF EXISTS ledger_files; DROP TRIGGER IF EXISTS ledger_files_insert; DROP TRIGGER IF EXISTS ledger_files_delete;',
      );
      db.exec(LEDGER_FILES);
      db.exec(sumFiles(() => 'true'));
    }
    db.exec(LEDGER_FILES_UPDATES);
  }).immediate();
  // The repeat uploaders' index as made before it held copies: made again with them (once).
  const repeatIndex = db
    .prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'ledger_repeat_files'")
    .get();
  if (repeatIndex && !repeatIndex.sql.includes('copies')) db.exec('DROP INDEX ledger_repeat_files');
  db.exec(TOTALS_INDEXES);
  db.exec(CROSS_UNIT_AREA_INDEX);
  keepRepeatSums(db);
  // After the indexes: the day tallies' sums are summed through one of them.
  keepDaySums(db);
}

/**
 * Makes the repeat uploaders' sums and their triggers, summed from the entries where a data
 * directory has none (made before them, or by a seeding: in one transaction, as ledger_files),
 * after the indexes they are summed through.
 */
function keepRepeatSums(db: Db): void {
  db.transaction(() => {
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'ledger_repeat_users'").get() === undefined) {
      db.exec('DROP TABLE IF EXISTS ledger_repeat_unit_files');
      db.exec(REPEAT_SUMS);
      db.exec(SUM_ALL_REPEATS);
    }
    db.exec(REPEAT_UPDATES);
  }).immediate();
  db.exec(REPEAT_INDEXES);
}

/** An upload as the totals apply it: whose entry, which file, day and name, and whether it stored the bytes. */
export interface TotalsEvent {
  userId: string;
  userName: string;
  unit: Unit;
  fileNo: number;
  fileName: string;
  contentType: string;
  /** Milliseconds since the epoch. */
  at: number;
  day: string;
  fileLength: number;
  stored: boolean;
}

/** An upload the ledger recorded (its row in upload_keys), as its reversal or restore changes the totals. */
export type RecordedUpload = Omit<TotalsEvent, 'stored'> & {
  key: string;
  /** Its entry's id when it was counted (null if not recorded). */
  entryId: number | null;
};

interface EntryRow {
  upload_count: number;
  upload_time: number;
  upload_file_name: string;
  last_upload_time: number;
  last_upload_file_name: string;
  last_content_type: string;
}

/**
 * The only writer of the ledger's totals on the embedded store (docs/decisions/counts.md): each
 * entry's upload_count with its first and last upload, the day tallies, the names; the per-file
 * sums follow the entries through the triggers above. `apply` and `reverse` run inside the
 * ledger's transaction, which records the upload's key and state with them, so each runs once per
 * upload and state change.
 */
export class EmbeddedTotals {
  private readonly upsert;
  private readonly remake;
  private readonly tally;
  private readonly rememberName;
  private readonly entry;
  private readonly dropEntry;
  private readonly setEntry;
  private readonly entryUploadRows;
  private readonly untally;
  private readonly dropDay;
  private readonly nameUses;
  private readonly nameInEntries;
  private readonly firstUsed;
  private readonly forgetName;
  private readonly renameFirstUse;
  private readonly restoreName;
  private readonly holding;
  private readonly setHolds;
  private readonly counting;
  private readonly storedEver;
  private readonly resave;
  private readonly receiptOf;
  private readonly entryCopies;
  private readonly setCopies;

  constructor(db: Db) {
    // One statement: a new entry at 1, or UploadCount + 1; SQLite serialises writers, so no increment is lost.
    this.upsert = db.prepare<Record<string, unknown>, { upload_count: number; id: number }>(
      `INSERT INTO ledger (user_id, user_name, unit_id, unit, file_no, upload_time, last_upload_time, upload_file_name, last_upload_file_name, last_content_type, upload_count)
       VALUES (@userId, @userName, @unitId, @unit, @fileNo, @at, @at, @fileName, @fileName, @contentType, 1)
       ON CONFLICT (user_id, unit_id, file_no) DO UPDATE SET
         upload_count = upload_count + 1,
         last_upload_time = MAX(last_upload_time, excluded.last_upload_time),
         last_upload_file_name = excluded.last_upload_file_name,
         last_content_type = excluded.last_content_type
       RETURNING upload_count, id`,
    );
    this.remake = db.prepare(
      `INSERT INTO ledger (id, user_id, user_name, unit_id, unit, file_no, upload_time, last_upload_time, upload_file_name, last_upload_file_name, last_content_type, upload_count)
       VALUES ((SELECT @id WHERE NOT EXISTS (SELECT 1 FROM ledger WHERE id = @id)), @userId, @userName, @unitId, @unit, @fileNo, @at, @at, @fileName, @fileName, @contentType, 1)`,
    );
    this.tally = db.prepare(
      `INSERT INTO upload_days (file_no, unit_id, day, week, month, city, county, town, file_length, uploads, saved_uploads)
       VALUES (@fileNo, @unitId, @day, @week, @month, @city, @county, @town, @fileLength, 1, @saved)
       ON CONFLICT (file_no, unit_id, day) DO UPDATE SET uploads = uploads + 1, saved_uploads = saved_uploads + excluded.saved_uploads`,
    );
    this.rememberName = db.prepare(
      `INSERT OR IGNORE INTO ledger_names (unit_id, file_no, name, first_used, city, county, town)
       VALUES (@unitId, @fileNo, @fileName, @at, @city, @county, @town)`,
    );
    const entryKey = 'user_id = @userId AND unit_id = @unitId AND file_no = @fileNo';
    this.entry = db.prepare<Record<string, unknown>, EntryRow>(
      `SELECT upload_count, upload_time, upload_file_name, last_upload_time, last_upload_file_name, last_content_type
       FROM ledger WHERE ${entryKey}`,
    );
    this.dropEntry = db.prepare(`DELETE FROM ledger WHERE ${entryKey}`);
    this.setEntry = db.prepare(
      `UPDATE ledger SET upload_count = @uploadCount, upload_time = @firstTime, upload_file_name = @firstName,
         last_upload_time = @lastTime, last_upload_file_name = @lastName, last_content_type = @lastType
       WHERE ${entryKey}`,
    );
    // The entry's uploads still counted (the one being reversed is no longer), put in count order
    // by entryUploads. No aggregate, ORDER BY or GROUP BY with a bound parameter in these
    // statements run for each upload: SQLite then costs about as much as compiling the statement
    // again on each run (docs/decisions/withdrawal-speed.md); the few rows are ordered here.
    this.entryUploadRows = db.prepare<Record<string, unknown>, KnownUpload & { key: string }>(
      `SELECT at, file_name AS fileName, content_type AS contentType, key FROM upload_keys INDEXED BY upload_keys_entry
       WHERE file_no = @fileNo AND unit_id = @unitId AND account_id = @userId AND state = 'counted'`,
    );
    const dayKey = 'file_no = @fileNo AND unit_id = @unitId AND day = @day';
    this.untally = db.prepare(
      `UPDATE upload_days SET uploads = uploads - 1, saved_uploads = saved_uploads - @saved WHERE ${dayKey}`,
    );
    // The day's last upload of the file gone: its tally goes (one write, not an update then a delete).
    this.dropDay = db.prepare(`DELETE FROM upload_days WHERE ${dayKey} AND uploads <= 1`);
    // Where a unit's name of a file is still used: its uploads still counted, and (for uploads
    // counted before upload_keys recorded names) its entries' first and last names.
    this.nameUses = db
      .prepare<Record<string, unknown>, number>(
        `SELECT at FROM upload_keys INDEXED BY upload_keys_entry
         WHERE file_no = @fileNo AND unit_id = @unitId AND state = 'counted' AND file_name = @fileName`,
      )
      .pluck();
    this.nameInEntries = db
      .prepare<Record<string, unknown>, number>(
        `SELECT CASE WHEN upload_file_name = @fileName THEN upload_time ELSE last_upload_time END
         FROM ledger WHERE file_no = @fileNo AND unit_id = @unitId
           AND (upload_file_name = @fileName OR last_upload_file_name = @fileName)`,
      )
      .pluck();
    const nameKey = 'unit_id = @unitId AND file_no = @fileNo AND name = @fileName';
    this.firstUsed = db.prepare<Record<string, unknown>, { first_used: number }>(
      `SELECT first_used FROM ledger_names WHERE ${nameKey}`,
    );
    this.forgetName = db.prepare(`DELETE FROM ledger_names WHERE ${nameKey}`);
    this.renameFirstUse = db.prepare(`UPDATE ledger_names SET first_used = @first WHERE ${nameKey}`);
    this.restoreName = db.prepare(
      `INSERT INTO ledger_names (unit_id, file_no, name, first_used, city, county, town)
       VALUES (@unitId, @fileNo, @fileName, @at, @city, @county, @town)
       ON CONFLICT (unit_id, file_no, name) DO UPDATE SET first_used = MIN(first_used, excluded.first_used)`,
    );
    // Who holds a file's bytes in the tallies (docs/decisions/counts.md, "Who holds the bytes").
    this.holding = db.prepare<[string], { holds: number }>(
      'SELECT COALESCE(holds, stored) AS holds FROM upload_keys WHERE key = ?',
    );
    this.setHolds = db.prepare('UPDATE upload_keys SET holds = ? WHERE key = ?');
    const fileActions = 'upload_keys INDEXED BY upload_keys_entry WHERE file_no = ?';
    // The file's uploads that count, for its holders and its heir (ordered here, see entryUploadRows).
    this.counting = db.prepare<[number], CountingRow>(
      `SELECT key, unit_id AS unitId, day, stored, at, COALESCE(holds, stored) AS holds FROM ${fileActions} AND state = 'counted'`,
    );
    this.storedEver = db.prepare<[number], { found: number }>(
      `SELECT 1 AS found FROM ${fileActions} AND stored = 1 LIMIT 1`,
    );
    this.receiptOf = db.prepare<[string], { receipt_id: string | null }>(
      'SELECT receipt_id FROM upload_keys WHERE key = ?',
    );
    // An entry's copies: of its uploads that count, in each receipt all but one.
    this.entryCopies = db.prepare<Record<string, unknown>, { copies: number }>(
      `SELECT COUNT(receipt_id) - COUNT(DISTINCT receipt_id) AS copies FROM upload_keys INDEXED BY upload_keys_entry
       WHERE file_no = @fileNo AND unit_id = @unitId AND account_id = @userId AND state = 'counted'`,
    );
    this.setCopies = db.prepare(`UPDATE ledger SET copies = @copies WHERE ${entryKey} AND copies <> @copies`);
    this.resave = db.prepare(
      'UPDATE upload_days SET saved_uploads = saved_uploads + @saved WHERE file_no = @fileNo AND unit_id = @unitId AND day = @day',
    );
  }

  /** The entry's uploads that count, in count order (by time, then key). */
  private entryUploads(key: { userId: string; unitId: string; fileNo: number }): KnownUpload[] {
    return this.entryUploadRows
      .all(key)
      .sort((a, b) => a.at - b.at || byBytes(a.key, b.key))
      .map(({ at, fileName, contentType }) => ({ at, fileName, contentType }));
  }

  /** Counts an upload in every total; answers its entry's UploadCount and id. */
  apply(e: TotalsEvent): { uploadCount: number; entryId: number } {
    const { unit } = e;
    const levels = { city: unit.city, county: unit.county ?? null, town: unit.town ?? null };
    const entry = this.upsert.get({
      userId: e.userId,
      userName: e.userName,
      unitId: unit.id,
      unit: JSON.stringify(unit),
      fileNo: e.fileNo,
      at: e.at,
      fileName: e.fileName,
      contentType: e.contentType,
    })!;
    this.tally.run({
      fileNo: e.fileNo,
      unitId: unit.id,
      day: e.day,
      week: weekOf(e.day),
      month: monthOf(e.day),
      ...levels,
      fileLength: e.fileLength,
      saved: e.stored ? 0 : 1,
    });
    this.rememberName.run({ unitId: unit.id, fileNo: e.fileNo, fileName: e.fileName, at: e.at, ...levels });
    return { uploadCount: entry.upload_count, entryId: entry.id };
  }

  /**
   * Takes an upload out of every total, as if it had never been counted: its entry counts one
   * upload fewer (and is gone at none), its first and last upload are those of the uploads left,
   * its day's tally one fewer (gone at none), its name gone unless another upload of the unit
   * used it; if it held the file's bytes, the file's holder passes on (`settleHolders`, which the
   * caller runs once for the files of all the uploads it changed). Run after the upload's state
   * says it no longer counts.
   */
  reverse(e: RecordedUpload): void {
    const held = this.holding.get(e.key)?.holds === 1;
    this.setHolds.run(0, e.key);
    const key = { userId: e.userId, unitId: e.unit.id, fileNo: e.fileNo };
    const entry = this.entry.get(key);
    if (entry) {
      if (entry.upload_count <= 1) this.dropEntry.run(key);
      else
        this.setEntry.run({
          ...key,
          ...entryOf(entry.upload_count - 1, entryUploadsOf(entry), this.entryUploads(key)),
        });
    }
    if (entry && entry.upload_count > 1 && this.receiptOf.get(e.key)?.receipt_id) this.recountCopies(key);
    const day = { fileNo: e.fileNo, unitId: e.unit.id, day: e.day };
    if (this.dropDay.run(day).changes === 0) this.untally.run({ ...day, saved: held ? 0 : 1 });
    const name = { unitId: e.unit.id, fileNo: e.fileNo, fileName: e.fileName };
    const uses = [...this.nameUses.all(name), ...this.nameInEntries.all(name)].filter(
      (t): t is number => t !== null && t !== undefined,
    );
    if (uses.length === 0) this.forgetName.run(name);
    else if (this.firstUsed.get(name)?.first_used === e.at)
      this.renameFirstUse.run({ ...name, first: uses.reduce((a, b) => Math.min(a, b)) });
  }

  /**
   * Counts a reversed upload again in every total, as if it had never been reversed: its entry
   * (made again if it was gone) one upload more, with the first and last upload of those that
   * count, its day's tally, its name (first used no later than this upload); the file's holder as
   * `settleHolders` says (the upload that stored the file takes it back; run by the caller, as
   * after `reverse`). Run after the upload's state says it counts again.
   */
  restore(e: RecordedUpload): void {
    const { unit } = e;
    const levels = { city: unit.city, county: unit.county ?? null, town: unit.town ?? null };
    const key = { userId: e.userId, unitId: unit.id, fileNo: e.fileNo };
    const entry = this.entry.get(key);
    if (entry)
      this.setEntry.run({
        ...key,
        ...entryOf(entry.upload_count + 1, entryUploadsOf(entry), this.entryUploads(key)),
      });
    else
      // Under its id when the upload was counted, unless another entry has it since.
      this.remake.run({
        ...key,
        id: e.entryId,
        userName: e.userName,
        unit: JSON.stringify(unit),
        at: e.at,
        fileName: e.fileName,
        contentType: e.contentType,
      });
    if (this.receiptOf.get(e.key)?.receipt_id) this.recountCopies(key);
    // Counted as saved; settleHolders makes it the holder if it is the one.
    this.setHolds.run(0, e.key);
    this.tally.run({
      fileNo: e.fileNo,
      unitId: unit.id,
      day: e.day,
      week: weekOf(e.day),
      month: monthOf(e.day),
      ...levels,
      fileLength: e.fileLength,
      saved: 1,
    });
    this.restoreName.run({ unitId: unit.id, fileNo: e.fileNo, fileName: e.fileName, at: e.at, ...levels });
  }

  /**
   * Settles the holder of each of these files' bytes, after reversals and restores of their
   * uploads: once per file for a batch, not once per upload (a receipt of many uploads of one file
   * reads its uploads once). Each step before keeps every day's tally true to the holds it
   * records (a reversed holder takes no saved upload away, a restored upload counts as saved), so
   * the holder the rule names from the uploads that count at the end is the one it would name
   * after each step.
   */
  settleHolders(fileNos: Iterable<number>): void {
    for (const fileNo of new Set(fileNos)) this.settleHolder(fileNo);
  }

  /**
   * Sets an entry's copies (the repeat-uploaders report's copies inside one upload) from its
   * uploads that count: in each receipt, all but one of them. Run when an upload of the entry
   * gets its receipt (Ledger.placeInReceipt), and when one with a receipt is reversed or restored.
   */
  recountCopies(entry: { userId: string; unitId: string; fileNo: number }): void {
    const key = { userId: entry.userId, unitId: entry.unitId, fileNo: entry.fileNo };
    this.setCopies.run({ ...key, copies: this.entryCopies.get(key)!.copies });
  }

  /**
   * Makes the file's holder of its bytes the one the rule names (docs/decisions/counts.md): of its
   * uploads that count, the earliest counted as storing it; if none of those counts but one
   * stored it, the earliest that counts (the archive stores the bytes once for them all); none if
   * no upload stored it. The holder's day counts it as not saved, every other upload as saved.
   */
  private settleHolder(fileNo: number): void {
    const counting = this.counting.all(fileNo);
    // The earliest counted as storing it (stored first, then by time, then by key, as SQLite orders them).
    const heir = this.storedEver.get(fileNo)
      ? counting.reduce<CountingRow | undefined>(
          (best, u) =>
            !best ||
            u.stored > best.stored ||
            (u.stored === best.stored && (u.at < best.at || (u.at === best.at && byBytes(u.key, best.key) < 0)))
              ? u
              : best,
          undefined,
        )
      : undefined;
    for (const holder of counting) {
      if (holder.holds !== 1 || holder.key === heir?.key) continue;
      this.setHolds.run(0, holder.key);
      this.resave.run({ fileNo, unitId: holder.unitId, day: holder.day, saved: 1 });
    }
    if (heir && heir.holds !== 1) {
      this.setHolds.run(1, heir.key);
      this.resave.run({ fileNo, unitId: heir.unitId, day: heir.day, saved: -1 });
    }
  }
}

/** A counted upload of a file, as the holder's rule reads it. */
interface CountingRow {
  key: string;
  unitId: string;
  day: string;
  stored: number;
  at: number;
  /** 1 if the tallies count it as holding the bytes. */
  holds: number;
}

/** SQLite's order of text (BINARY: its UTF-8 bytes), which JavaScript's differs from past U+FFFF. */
const byBytes = (a: string, b: string): number => (a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b)));

const entryUploadsOf = (entry: EntryRow) => ({
  uploadCount: entry.upload_count,
  firstTime: entry.upload_time,
  firstName: entry.upload_file_name,
  lastTime: entry.last_upload_time,
  lastName: entry.last_upload_file_name,
  lastType: entry.last_content_type,
});
