import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../../errors.js';

export type Db = Database.Database;

/**
 * Near-duplicates: each file's fingerprint, and its lookup keys (the SimHash's 16-bit blocks, the
 * MinHash's LSH bands: fingerprints sharing a key are candidates) in two levels. A key table with
 * millions of random keys costs a page written per key inserted; new keys therefore go to the small
 * near_keys_recent, whose pages a round of fingerprints shares, and are merged in key order into
 * near_keys (one pass over its pages) once it has grown. A lookup reads both.
 */
const NEAR_INDEX = `
CREATE TABLE IF NOT EXISTS near_fingerprints (
  id      INTEGER PRIMARY KEY,
  file_id TEXT NOT NULL UNIQUE,
  format  TEXT,
  skipped TEXT,
  units   INTEGER NOT NULL,
  short   INTEGER NOT NULL,
  simhash TEXT,
  -- The lookup keys as 64-bit floats: what to remove when the file is fingerprinted again.
  keys    BLOB NOT NULL,
  at      INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS near_keys (
  key         INTEGER NOT NULL,
  fingerprint INTEGER NOT NULL,
  PRIMARY KEY (key, fingerprint)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS near_keys_recent (
  key         INTEGER NOT NULL,
  fingerprint INTEGER NOT NULL,
  PRIMARY KEY (key, fingerprint)
) WITHOUT ROWID;
`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS catalog (
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
CREATE INDEX IF NOT EXISTS catalog_md5 ON catalog (md5);
CREATE INDEX IF NOT EXISTS catalog_upload_date ON catalog (upload_date);

-- Content files being written that no catalog entry owns yet. chunk_size: the chunking the area
-- began with (kept when CHUNK_SIZE changes mid-upload). lost_from: a sync of its file failed, so
-- bytes from there on may not be on disk.
CREATE TABLE IF NOT EXISTS staging (
  staging_id TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  chunk_size INTEGER,
  lost_from  INTEGER
);

-- CRC-32 of each chunk of a content file (staged or committed), taken as it was written and
-- checked as it is read.
CREATE TABLE IF NOT EXISTS chunk_sums (
  file_id TEXT NOT NULL,
  n       INTEGER NOT NULL,
  crc     INTEGER NOT NULL,
  PRIMARY KEY (file_id, n)
) WITHOUT ROWID;

-- What the login throttle remembers per key (account and address, account, address).
-- (Databases made before it keep two unused columns in accounts: failed_logins, locked_until.)
CREATE TABLE IF NOT EXISTS login_attempts (
  key             TEXT PRIMARY KEY,
  failures        INTEGER NOT NULL,
  last_failure_at INTEGER,
  known_until     INTEGER,
  expires_at      INTEGER NOT NULL
) WITHOUT ROWID;

-- Request counters per key and fixed window (quotas), shared by every process on DATA_DIR.
CREATE TABLE IF NOT EXISTS rate_counts (
  key        TEXT NOT NULL,
  window_end INTEGER NOT NULL,
  hits       INTEGER NOT NULL,
  PRIMARY KEY (key, window_end)
) WITHOUT ROWID;

-- Background jobs (the fixity check): a lease keeps each to one process; state is JSON.
CREATE TABLE IF NOT EXISTS jobs (
  name        TEXT PRIMARY KEY,
  holder      TEXT,
  lease_until INTEGER,
  state       TEXT
);

-- Resumable (tus) uploads: their state, so any process on DATA_DIR can continue one.
CREATE TABLE IF NOT EXISTS uploads (
  id         TEXT PRIMARY KEY,
  owner_id   TEXT NOT NULL,
  staging_id TEXT NOT NULL UNIQUE,
  length     INTEGER NOT NULL,
  "offset"   INTEGER NOT NULL DEFAULT 0,
  metadata   TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  active_at  INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  lock_holder TEXT,
  lock_host   TEXT,
  lock_pid    INTEGER,
  lock_until  INTEGER,
  completing TEXT,
  outcome    TEXT
);
CREATE INDEX IF NOT EXISTS uploads_expiry ON uploads (expires_at);

CREATE TABLE IF NOT EXISTS ledger (
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
  -- The unit's levels, for reports on a unit subtree (computed from unit, never stored twice).
  city   TEXT GENERATED ALWAYS AS (json_extract(unit, '$.city')) VIRTUAL,
  county TEXT GENERATED ALWAYS AS (json_extract(unit, '$.county')) VIRTUAL,
  town   TEXT GENERATED ALWAYS AS (json_extract(unit, '$.town')) VIRTUAL,
  UNIQUE (user_id, unit_id, file_id)
);
CREATE INDEX IF NOT EXISTS ledger_file ON ledger (file_id);

-- Upload actions counted, by key: a retry of one is answered as it was, never counted again.
-- Written in the same transaction as its ledger entry, day's tally and audit event.
CREATE TABLE IF NOT EXISTS upload_keys (
  key          TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL,
  file_id      TEXT NOT NULL,
  status       TEXT NOT NULL,
  stored       INTEGER NOT NULL,
  upload_count INTEGER NOT NULL,
  at           INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ledger_unit ON ledger (unit_id, file_id);

-- Uploads per unit, file and calendar day (report time zone): when space was saved, and where.
-- saved_uploads counts the uploads that did not store bytes (all but the one that stored the file).
CREATE TABLE IF NOT EXISTS upload_days (
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

${NEAR_INDEX}
CREATE TABLE IF NOT EXISTS near_pairs (
  file_a      TEXT NOT NULL,
  file_b      TEXT NOT NULL,
  method      TEXT NOT NULL,
  hamming     INTEGER,
  jaccard     REAL NOT NULL,
  containment REAL NOT NULL,
  snippet_a   TEXT NOT NULL,
  snippet_b   TEXT NOT NULL,
  found_at    INTEGER NOT NULL,
  PRIMARY KEY (file_a, file_b)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS near_pairs_b ON near_pairs (file_b);
CREATE INDEX IF NOT EXISTS near_pairs_found ON near_pairs (found_at);
-- Files waiting to be fingerprinted (or failed), leased by one process at a time.
CREATE TABLE IF NOT EXISTS fingerprint_jobs (
  file_id     TEXT PRIMARY KEY,
  state       TEXT NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0,
  due_at      INTEGER NOT NULL,
  holder      TEXT,
  lease_until INTEGER,
  error       TEXT
);
CREATE INDEX IF NOT EXISTS fingerprint_jobs_due ON fingerprint_jobs (state, due_at);

CREATE TABLE IF NOT EXISTS accounts (
  id                   TEXT PRIMARY KEY,
  username             TEXT NOT NULL UNIQUE,
  password_hash        TEXT NOT NULL,
  role                 TEXT NOT NULL,
  unit                 TEXT NOT NULL,
  created_at           INTEGER NOT NULL,
  must_change_password INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS sessions (
  id_hash    TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  csrf_token TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_account ON sessions (account_id);

CREATE TABLE IF NOT EXISTS claims (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL,
  file_id      TEXT NOT NULL,
  file_name    TEXT NOT NULL,
  content_type TEXT NOT NULL,
  ranges       TEXT NOT NULL,
  expected     TEXT NOT NULL,
  expires_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS claims_expiry ON claims (expires_at);
CREATE INDEX IF NOT EXISTS claims_account ON claims (account_id, expires_at);

CREATE TABLE IF NOT EXISTS audit (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  at        INTEGER NOT NULL,
  action    TEXT NOT NULL,
  user_id   TEXT,
  user_name TEXT NOT NULL,
  unit      TEXT,
  city      TEXT,
  county    TEXT,
  town      TEXT,
  address   TEXT,
  file_id   TEXT,
  file_name TEXT,
  detail    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_at ON audit (at);
CREATE INDEX IF NOT EXISTS audit_action ON audit (action, at);
CREATE INDEX IF NOT EXISTS audit_user ON audit (user_name, at);
CREATE INDEX IF NOT EXISTS audit_unit ON audit (city, county, town, at);
-- Append-only, also for anything that opens the database file through this schema.
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

CREATE TABLE IF NOT EXISTS api_tokens (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  label       TEXT NOT NULL,
  created_at  INTEGER NOT NULL
);
`;

/** (Re)computes ledger_files for the files `where` picks, from their entries; a file without entries has no row. */
const sumFiles = (where: string) => `
  DELETE FROM ledger_files WHERE ${where};
  INSERT INTO ledger_files (file_id, units, users, uploads, first, last)
    SELECT file_id, COUNT(DISTINCT unit_id), COUNT(DISTINCT user_id), SUM(upload_count), MIN(upload_time), MAX(last_upload_time)
    FROM ledger WHERE ${where} GROUP BY file_id;`;

/**
 * Per file: its ledger entries' distinct units and users, uploads, first and last upload time;
 * what the cross-unit report lists unless a filter picks entries (summing a million entries per
 * file takes a second, reading this a few milliseconds). Triggers on the ledger keep it.
 */
const LEDGER_FILES = `
CREATE TABLE ledger_files (
  file_id TEXT PRIMARY KEY,
  units   INTEGER NOT NULL,
  users   INTEGER NOT NULL,
  uploads INTEGER NOT NULL,
  first   INTEGER NOT NULL,
  last    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER ledger_files_insert AFTER INSERT ON ledger BEGIN ${sumFiles('file_id = new.file_id')} END;
CREATE TRIGGER ledger_files_update AFTER UPDATE ON ledger BEGIN ${sumFiles('file_id IN (old.file_id, new.file_id)')} END;
CREATE TRIGGER ledger_files_delete AFTER DELETE ON ledger BEGIN ${sumFiles('file_id = old.file_id')} END;
`;

/**
 * Indexes the reports read through (after the migrations, which add the columns some use). Most
 * hold every column their report reads, so a report reads the index and not the table: a million
 * ledger rows are a few seconds of random reads, the same in index order a fraction of one.
 */
const REPORT_INDEXES = `
-- Cross-unit duplicates: the ledger per file, with what it is filtered by and what each unit's
-- line shows (its uploaders' names, the unit: a page of widely shared files has 30,000 of them).
CREATE INDEX IF NOT EXISTS ledger_file_uploads ON ledger (file_id, unit_id, user_id, upload_count, upload_time, last_upload_time, city, county, town, user_name, unit);
-- Repeat uploaders: entries uploaded twice or more (the report's least minimum), with what they
-- are filtered and grouped by; in file order, so the catalog is read in order too.
CREATE INDEX IF NOT EXISTS ledger_repeat_files ON ledger (file_id, unit_id, user_id, upload_count, upload_time, last_upload_time, user_name, city, county, town, upload_file_name, unit)
  WHERE upload_count >= 2;
-- Sizes and names of files for joins (and name searches) without reading the catalog's rows.
CREATE INDEX IF NOT EXISTS catalog_file_sizes ON catalog (file_id, length, file_name);
CREATE INDEX IF NOT EXISTS catalog_collisions ON catalog (md5) WHERE md5_collision = 1;
-- Space saved: per unit subtree and per day (with its week and month), each with the other's
-- columns, for filters on one and groups by the other.
CREATE INDEX IF NOT EXISTS upload_days_unit_sums ON upload_days (city, county, town, day, week, month, uploads, saved_uploads, file_length);
CREATE INDEX IF NOT EXISTS upload_days_day_sums ON upload_days (day, week, month, city, county, town, uploads, saved_uploads, file_length);
-- Cross-unit duplicates unfiltered by unit or time, in the default order (most units first).
CREATE INDEX IF NOT EXISTS ledger_files_units ON ledger_files (units DESC, file_id);
-- Superseded by the ones above.
DROP INDEX IF EXISTS ledger_repeats;
DROP INDEX IF EXISTS ledger_subtree;
DROP INDEX IF EXISTS ledger_file_units;
DROP INDEX IF EXISTS upload_days_day;
DROP INDEX IF EXISTS upload_days_unit;
`;

export function databaseFile(dataDir: string): string {
  return path.join(dataDir, 'archive.sqlite');
}

/** A connection with the archive's settings; every thread that opens the file uses this. */
export function connect(file: string): Db {
  const db = new Database(file);
  // Each SQL text is compiled once: compiling costs more than running most of our statements,
  // and the adapters use .get/.all/.run only, which a cached statement allows.
  const compile = db.prepare.bind(db);
  const compiled = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    let statement = compiled.get(sql);
    if (!statement) compiled.set(sql, (statement = compile(sql)));
    return statement;
  }) as Db['prepare'];
  // WAL: readers never block the writer, and a killed process loses at most uncommitted
  // transactions; a catalog entry and its chunks become visible together or not at all.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 10000');
  return db;
}

/** Opens (creating if needed) the archive database in `dataDir`. */
export function openDatabase(dataDir: string): Db {
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.accessSync(dataDir, fs.constants.W_OK);
  } catch (err) {
    throw new ConfigError(`DATA_DIR ${dataDir} is not a writable directory (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  const file = databaseFile(dataDir);
  const db = connect(file);
  db.exec(SCHEMA);
  // Data directories made before resumable uploads recorded their completion.
  const uploadColumns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('uploads')").all();
  if (!uploadColumns.some((c) => c.name === 'completing')) db.exec('ALTER TABLE uploads ADD COLUMN completing TEXT');
  // Data directories made before staging areas kept their chunk size and sync failures (their
  // areas read as chunked at the configured size, as they were then).
  const stagingColumns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('staging')").all();
  for (const column of ['chunk_size', 'lost_from']) {
    if (!stagingColumns.some((c) => c.name === column)) db.exec(`ALTER TABLE staging ADD COLUMN ${column} INTEGER`);
  }
  // Data directories made before the reports: the ledger's unit levels as virtual columns.
  const ledgerColumns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_xinfo('ledger')").all();
  for (const level of ['city', 'county', 'town']) {
    if (!ledgerColumns.some((c) => c.name === level)) {
      db.exec(`ALTER TABLE ledger ADD COLUMN ${level} TEXT GENERATED ALWAYS AS (json_extract(unit, '$.${level}')) VIRTUAL`);
    }
  }
  // ledger_files and its triggers, with the sums of the entries a data directory made before them
  // has: in one transaction, so no process sees them half made or writes an entry in between.
  db.transaction(() => {
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'ledger_files'").get()) return;
    db.exec(LEDGER_FILES);
    db.exec(sumFiles('true'));
  }).immediate();
  replaceTextKeyedNearIndex(db);
  db.exec(REPORT_INDEXES);
  return db;
}

/**
 * Data directories made when lookup keys were text (the first near-duplicate index): its tables are
 * made anew and every catalogued file is queued to be fingerprinted again; the pairs found stay.
 */
function replaceTextKeyedNearIndex(db: Db): void {
  db.transaction(() => {
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('near_fingerprints')").all();
    if (columns.some((c) => c.name === 'id')) return;
    db.exec('DROP TABLE IF EXISTS near_keys; DROP TABLE IF EXISTS near_fingerprints; DELETE FROM near_keys_recent;');
    db.exec(NEAR_INDEX);
    db.prepare(
      `INSERT INTO fingerprint_jobs (file_id, state, attempts, due_at) SELECT file_id, 'queued', 0, ? FROM catalog WHERE true
       ON CONFLICT (file_id) DO UPDATE SET state = 'queued', attempts = 0, due_at = excluded.due_at, holder = NULL, lease_until = NULL, error = NULL`,
    ).run(Date.now());
  }).immediate();
}
