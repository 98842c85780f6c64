import type Database from 'better-sqlite3';

/**
 * The tables that were keyed by file id before the embedded store numbered its files (as
 * 2c323dd made them), with their indexes and triggers: what a data directory of that version
 * holds, for the upgrade's tests.
 */
const BEFORE_FILE_NUMBERS = `
CREATE TABLE catalog (
  file_id       TEXT PRIMARY KEY,
  md5           TEXT NOT NULL,
  sha256        TEXT NOT NULL,
  length        INTEGER NOT NULL,
  chunk_size    INTEGER NOT NULL,
  chunk_count   INTEGER NOT NULL,
  file_name     TEXT NOT NULL,
  content_type  TEXT NOT NULL,
  upload_date   INTEGER NOT NULL,
  md5_collision INTEGER NOT NULL DEFAULT 0,
  UNIQUE (sha256, md5, length)
);
CREATE INDEX catalog_md5 ON catalog (md5);
CREATE INDEX catalog_upload_date ON catalog (upload_date);
CREATE INDEX catalog_file_sizes ON catalog (file_id, length, file_name);
CREATE INDEX catalog_collisions ON catalog (md5) WHERE md5_collision = 1;
CREATE TABLE ledger (
  id                    INTEGER PRIMARY KEY,
  user_id               TEXT NOT NULL,
  user_name             TEXT NOT NULL,
  unit_id               TEXT NOT NULL,
  unit                  TEXT NOT NULL,
  file_id               TEXT NOT NULL,
  upload_time           INTEGER NOT NULL,
  last_upload_time      INTEGER NOT NULL,
  upload_file_name      TEXT NOT NULL,
  last_upload_file_name TEXT NOT NULL,
  last_content_type     TEXT NOT NULL,
  upload_count          INTEGER NOT NULL,
  city   TEXT GENERATED ALWAYS AS (json_extract(unit, '$.city')) VIRTUAL,
  county TEXT GENERATED ALWAYS AS (json_extract(unit, '$.county')) VIRTUAL,
  town   TEXT GENERATED ALWAYS AS (json_extract(unit, '$.town')) VIRTUAL,
  UNIQUE (user_id, unit_id, file_id)
);
CREATE INDEX ledger_file ON ledger (file_id);
CREATE INDEX ledger_unit_files ON ledger (unit_id, file_id, user_id, upload_count, upload_time, last_upload_time);
CREATE INDEX ledger_file_uploads ON ledger (file_id, unit_id, user_id, upload_count, upload_time, last_upload_time, city, county, town, user_name, unit);
CREATE INDEX ledger_repeat_files ON ledger (file_id, unit_id, user_id, upload_count, upload_time, last_upload_time, user_name, city, county, town, upload_file_name, unit)
  WHERE upload_count >= 2;
CREATE TABLE upload_days (
  file_id       TEXT NOT NULL,
  unit_id       TEXT NOT NULL,
  day           TEXT NOT NULL,
  week          TEXT NOT NULL,
  month         TEXT NOT NULL,
  city          TEXT NOT NULL,
  county        TEXT,
  town          TEXT,
  file_length   INTEGER NOT NULL,
  uploads       INTEGER NOT NULL,
  saved_uploads INTEGER NOT NULL,
  PRIMARY KEY (file_id, unit_id, day)
) WITHOUT ROWID;
CREATE INDEX upload_days_unit_sums ON upload_days (city, county, town, day, week, month, uploads, saved_uploads, file_length);
CREATE INDEX upload_days_day_sums ON upload_days (day, week, month, city, county, town, uploads, saved_uploads, file_length);
CREATE TABLE ledger_names (
  unit_id    TEXT NOT NULL,
  file_id    TEXT NOT NULL,
  name       TEXT NOT NULL,
  first_used INTEGER NOT NULL,
  city       TEXT NOT NULL,
  county     TEXT,
  town       TEXT,
  PRIMARY KEY (unit_id, file_id, name)
) WITHOUT ROWID;
CREATE INDEX ledger_names_file ON ledger_names (file_id);
CREATE TABLE ledger_files (
  file_id TEXT PRIMARY KEY,
  units   INTEGER NOT NULL,
  users   INTEGER NOT NULL,
  uploads INTEGER NOT NULL,
  first   INTEGER NOT NULL,
  last    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX ledger_files_units ON ledger_files (units DESC, file_id);
CREATE TABLE packed (
  file_id     TEXT PRIMARY KEY,
  pack_id     TEXT NOT NULL,
  pack_offset INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX packed_by_pack ON packed (pack_id);
CREATE TABLE chunk_sums (
  file_id TEXT NOT NULL,
  n       INTEGER NOT NULL,
  crc     INTEGER NOT NULL,
  PRIMARY KEY (file_id, n)
) WITHOUT ROWID;
CREATE TRIGGER ledger_files_insert AFTER INSERT ON ledger BEGIN
  DELETE FROM ledger_files WHERE file_id = new.file_id;
  INSERT INTO ledger_files (file_id, units, users, uploads, first, last)
    SELECT file_id, COUNT(DISTINCT unit_id), COUNT(DISTINCT user_id), SUM(upload_count), MIN(upload_time), MAX(last_upload_time)
    FROM ledger WHERE file_id = new.file_id GROUP BY file_id;
END;
`;

/**
 * Turns an embedded database of this version back into one of the version before file numbers,
 * rows and all (catalog rows in a shuffled order: the upgrade numbers files by upload date).
 */
export function downgradeToFileIds(db: Database.Database): void {
  db.transaction(() => {
    for (const table of ['catalog', 'ledger', 'upload_days', 'ledger_names', 'ledger_files', 'packed', 'chunk_sums'])
      db.exec(`ALTER TABLE ${table} RENAME TO ${table}_now`);
    // Their indexes keep their names: dropped first, so the earlier ones can be made.
    for (const { type, name } of db
      .prepare<[], { type: string; name: string }>(
        "SELECT type, name FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name LIKE '%_now' AND sql IS NOT NULL",
      )
      .all())
      db.exec(`DROP ${type.toUpperCase()} ${name}`);
    db.exec(BEFORE_FILE_NUMBERS);
    db.exec(`
      INSERT INTO catalog SELECT file_id, md5, sha256, length, chunk_size, chunk_count, file_name, content_type, upload_date, md5_collision
        FROM catalog_now ORDER BY random();
      INSERT INTO upload_days SELECT c.file_id, unit_id, day, week, month, city, county, town, file_length, uploads, saved_uploads
        FROM upload_days_now d JOIN catalog_now c USING (file_no);
      INSERT INTO ledger_names SELECT unit_id, c.file_id, name, first_used, city, county, town
        FROM ledger_names_now n JOIN catalog_now c USING (file_no);
      INSERT INTO ledger (id, user_id, user_name, unit_id, unit, file_id, upload_time, last_upload_time, upload_file_name, last_upload_file_name, last_content_type, upload_count)
        SELECT id, user_id, user_name, unit_id, unit, c.file_id, upload_time, last_upload_time, upload_file_name, last_upload_file_name, last_content_type, upload_count
        FROM ledger_now l JOIN catalog_now c USING (file_no);
      INSERT INTO packed SELECT c.file_id, pack_id, pack_offset FROM packed_now p JOIN catalog_now c USING (file_no);
      INSERT INTO chunk_sums SELECT c.file_id, n, crc FROM chunk_sums_now s JOIN catalog_now c USING (file_no);
      INSERT INTO chunk_sums SELECT staging_id, n, crc FROM staged_sums;
      DROP TABLE IF EXISTS upload_day_sums;
      DROP TABLE staged_sums; DROP TABLE chunk_sums_now; DROP TABLE packed_now; DROP TABLE ledger_now; DROP TABLE upload_days_now; DROP TABLE ledger_names_now; DROP TABLE ledger_files_now; DROP TABLE catalog_now;`);
  })();
}
