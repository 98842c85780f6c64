import type { Unit } from '../../../shared/schemas.js';
import { auditAppender } from '../audit/embedded.js';
import { addMissingColumns, hasColumn, rebuildTable, type Db, type EmbeddedSchema } from '../embedded/database.js';
import { fileNumberOf } from '../embedded/file-numbers.js';
import { scopeWhere } from '../embedded/scopes.js';
import { EmbeddedTotals, keepLedgerTotals, type RecordedUpload } from './embedded-totals.js';
import type {
  CountedUpload,
  FileUpload,
  FileUploadState,
  Ledger,
  LedgerChange,
  LedgerEntry,
  Purge,
  Restoral,
  Reversal,
  UploadAction,
  Uploader,
  UploaderScope,
  ViewScope,
} from './port.js';

/** The ledger's table, named `name`: an entry per account, unit and file (the file by its catalog number). */
const ledgerTable = (name: string) => `
CREATE TABLE IF NOT EXISTS ${name} (
  id                    INTEGER PRIMARY KEY,
  user_id               TEXT NOT NULL,
  user_name             TEXT NOT NULL,
  unit_id               TEXT NOT NULL,
  unit                  TEXT NOT NULL,
  file_no               INTEGER NOT NULL,
  upload_time           INTEGER NOT NULL,
  last_upload_time      INTEGER NOT NULL,
  upload_file_name      TEXT NOT NULL,
  last_upload_file_name TEXT NOT NULL,
  last_content_type     TEXT NOT NULL,
  upload_count          INTEGER NOT NULL,
  -- Of upload_count, copies inside one upload (EmbeddedTotals.recountCopies).
  copies                INTEGER NOT NULL DEFAULT 0,
  -- The unit's levels, for reports on a unit subtree (computed from unit, never stored twice).
  city   TEXT GENERATED ALWAYS AS (json_extract(unit, '$.city')) VIRTUAL,
  county TEXT GENERATED ALWAYS AS (json_extract(unit, '$.county')) VIRTUAL,
  town   TEXT GENERATED ALWAYS AS (json_extract(unit, '$.town')) VIRTUAL,
  UNIQUE (user_id, unit_id, file_no)
);`;

/**
 * Uploads per unit, file and calendar day (report time zone): when space was saved, and where.
 * saved_uploads counts the uploads that did not store bytes (all but the one that stored the file).
 */
const uploadDaysTable = (name: string) => `
CREATE TABLE IF NOT EXISTS ${name} (
  file_no       INTEGER NOT NULL,
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
  PRIMARY KEY (file_no, unit_id, day)
) WITHOUT ROWID;`;

/**
 * Every name a unit uploaded a file under (the ledger entry keeps only its first and last), with
 * the unit's levels for a reach's view and when the name was first used. Written in the count's
 * transaction, once per name (INSERT OR IGNORE).
 */
const ledgerNamesTable = (name: string) => `
CREATE TABLE IF NOT EXISTS ${name} (
  unit_id    TEXT NOT NULL,
  file_no    INTEGER NOT NULL,
  name       TEXT NOT NULL,
  first_used INTEGER NOT NULL,
  city       TEXT NOT NULL,
  county     TEXT,
  town       TEXT,
  PRIMARY KEY (unit_id, file_no, name)
) WITHOUT ROWID;`;

/** Indexes on file numbers: made after the tables of an earlier version were given them. */
const LEDGER_INDEXES = `
-- A file's entries, with what the cross-unit report filters them by and what each unit's line
-- shows (its uploaders' names, the unit: a page of widely shared files has 30,000 of them).
CREATE INDEX IF NOT EXISTS ledger_file ON ledger (file_no, unit_id, user_id, upload_count, upload_time, last_upload_time, city, county, town, user_name, unit);
-- A unit's entries by file, with what 本单位文件 sums and filters them by (the file list reads the
-- index, not the table: a unit of 100,000 files in index order, not 100,000 rows one by one).
CREATE INDEX IF NOT EXISTS ledger_unit_files ON ledger (unit_id, file_no, user_id, upload_count, upload_time, last_upload_time);
CREATE INDEX IF NOT EXISTS ledger_names_file ON ledger_names (file_no);
-- A unit's names in name order: 本单位文件's folders read the names under a path from it alone.
CREATE INDEX IF NOT EXISTS ledger_names_unit_paths ON ledger_names (unit_id, name, file_no);
DROP INDEX IF EXISTS ledger_unit;
`;

/**
 * What upload_keys records of an action beyond its answer, for reversing and restoring it (added
 * 2026-11-28: actions counted before have none of it, and cannot be reversed). state: 'counted' or
 * 'reversed'. holds: the upload is the one of its file the tallies count as holding the bytes (not
 * saved): at first whether it stored them, then as reversals and restores pass it on
 * (docs/decisions/counts.md); NULL read as `stored`.
 */
const UPLOAD_DETAIL_COLUMNS = {
  user_name: 'TEXT',
  unit: 'TEXT',
  unit_id: 'TEXT',
  file_no: 'INTEGER',
  file_name: 'TEXT',
  content_type: 'TEXT',
  day: 'TEXT',
  file_length: 'INTEGER',
  state: "TEXT NOT NULL DEFAULT 'counted'",
  holds: 'INTEGER',
  // The entry's id when the action was counted: a restore makes a gone entry again under it, so
  // the reports' tie-breaks (by entry id) are as if it had never been gone.
  entry_id: 'INTEGER',
  // The receipt (folder upload) it was sent in, once the receipt names it (Ledger.placeInReceipt).
  receipt_id: 'TEXT',
};
const UPLOAD_DETAILS = Object.entries(UPLOAD_DETAIL_COLUMNS)
  .map(([name, definition]) => `${name} ${definition}`)
  .join(',\n  ');

/** An entry's actions (its uploads still counted, when one is reversed), and a unit's of a file (its names). */
const UPLOAD_KEYS_INDEX =
  'CREATE INDEX IF NOT EXISTS upload_keys_entry ON upload_keys (file_no, unit_id, account_id) WHERE file_no IS NOT NULL';

export const ledgerSchema: EmbeddedSchema = {
  tables: `
${ledgerTable('ledger')}

-- The ledger's record of upload actions, one per key (its events): a retry of one is answered as
-- it was, never counted again; what it counted (entry, day, name, whether it stored the bytes)
-- and whether it still counts (state), so that its effects can be reversed. Written in the same
-- transaction as its ledger entry, day's tally and audit event.
CREATE TABLE IF NOT EXISTS upload_keys (
  key          TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL,
  file_id      TEXT NOT NULL,
  status       TEXT NOT NULL,
  stored       INTEGER NOT NULL,
  upload_count INTEGER NOT NULL,
  at           INTEGER NOT NULL,
  ${UPLOAD_DETAILS}
) WITHOUT ROWID;
-- Changes to counted actions, by the action's key and the change's (a reversal's): each made
-- once, however often it is asked for again.
CREATE TABLE IF NOT EXISTS upload_changes (
  upload_key TEXT NOT NULL,
  key        TEXT NOT NULL,
  kind       TEXT NOT NULL,
  at         INTEGER NOT NULL,
  PRIMARY KEY (upload_key, key)
) WITHOUT ROWID;
${uploadDaysTable('upload_days')}
${ledgerNamesTable('ledger_names')}
`,
  upgrade(db) {
    db.transaction(() => numberLedgerFiles(db)).immediate();
    addMissingColumns(db, 'upload_keys', UPLOAD_DETAIL_COLUMNS);
    addMissingColumns(db, 'ledger', { copies: 'INTEGER NOT NULL DEFAULT 0' });
    db.exec(UPLOAD_KEYS_INDEX);
    db.exec(LEDGER_INDEXES);
    rememberEarlierNames(db);
    keepLedgerTotals(db);
  },
};

/**
 * Tables made before file numbers (keyed by file id) keyed by file number instead, once the
 * catalog has them. A row whose file the catalog lacks fails the upgrade (file_no is NOT NULL)
 * rather than be dropped.
 */
function numberLedgerFiles(db: Db): void {
  // Each table: how it is made, and its columns with what fills them from the earlier one.
  const tables: Array<[table: string, make: (name: string) => string, columns: string, values: string]> = [
    [
      'ledger',
      ledgerTable,
      'id, user_id, user_name, unit_id, unit, file_no, upload_time, last_upload_time, upload_file_name, last_upload_file_name, last_content_type, upload_count',
      'ledger.id, user_id, user_name, unit_id, unit, c.file_no, upload_time, last_upload_time, upload_file_name, last_upload_file_name, last_content_type, upload_count',
    ],
    [
      'upload_days',
      uploadDaysTable,
      'file_no, unit_id, day, week, month, city, county, town, file_length, uploads, saved_uploads',
      'c.file_no, unit_id, day, week, month, city, county, town, file_length, uploads, saved_uploads',
    ],
    [
      'ledger_names',
      ledgerNamesTable,
      'unit_id, file_no, name, first_used, city, county, town',
      'unit_id, c.file_no, name, first_used, ledger_names.city, ledger_names.county, ledger_names.town',
    ],
  ];
  for (const [table, make, columns, values] of tables)
    if (!hasColumn(db, table, 'file_no'))
      rebuildTable(
        db,
        table,
        make(`${table}_next`),
        `INSERT INTO ${table}_next (${columns})
           SELECT ${values} FROM ${table} LEFT JOIN catalog c ON c.file_id = ${table}.file_id`,
      );
}

/**
 * A data directory made before ledger_names: the names its entries kept (first and last) are
 * remembered, once (the table is empty only then: every count since writes its name there).
 */
function rememberEarlierNames(db: Db): void {
  db.transaction(() => {
    if (db.prepare('SELECT 1 FROM ledger_names LIMIT 1').get()) return;
    db.exec(`
      INSERT OR IGNORE INTO ledger_names (unit_id, file_no, name, first_used, city, county, town)
        SELECT unit_id, file_no, upload_file_name, upload_time, city, county, town FROM ledger;
      INSERT OR IGNORE INTO ledger_names (unit_id, file_no, name, first_used, city, county, town)
        SELECT unit_id, file_no, last_upload_file_name, last_upload_time, city, county, town FROM ledger;`);
  }).immediate();
}

/**
 * Ledger entries (`l`), of one file: asked by its public id, found by its number (file-numbers.ts),
 * so the ledger never joins the catalog's table; the id is the caller's (withFileId).
 */
const ENTRIES = 'SELECT l.* FROM ledger l';

/** A file's number for a lookup: -1 (no entry has it) for a file not catalogued. */
const numberOf = (db: Db, fileId: string): number => fileNumberOf(db, fileId) ?? -1;

const withFileId = (row: Omit<LedgerRow, 'file_id'>, fileId: string): LedgerEntry =>
  ledgerEntryFromRow({ ...row, file_id: fileId });

export class EmbeddedLedger implements Ledger {
  private readonly keyed;
  private readonly countOne;
  private readonly countAll;
  private readonly reverseOne;
  private readonly restoreOne;
  private readonly purgeOne;
  private readonly reverseAll;
  private readonly restoreAll;
  private readonly latest;
  private readonly forFile;
  private readonly anyUpload;
  private readonly inUnit;
  private readonly inCounty;
  private readonly byAccount;
  private readonly accountEntry;
  private readonly placeAll;

  constructor(private readonly db: Db) {
    const totals = new EmbeddedTotals(db);
    this.keyed = db.prepare<[string], KeyRow>(
      'SELECT account_id, file_id, status, stored, upload_count FROM upload_keys WHERE key = ?',
    );
    const remember = db.prepare(
      `INSERT INTO upload_keys (key, account_id, file_id, status, stored, upload_count, at, user_name, unit, unit_id, file_no, file_name, content_type, day, file_length, holds, entry_id)
       VALUES (@key, @accountId, @fileId, @status, @stored, @uploadCount, @at, @userName, @unit, @unitId, @fileNo, @fileName, @contentType, @day, @fileLength, @stored, @entryId)`,
    );
    const appendEvent = auditAppender(db);
    // The key, the entry, its day's tally and the audit event change together or not at all: a
    // crash leaves the action wholly counted or not at all, so nothing is ever left to finish.
    const countOne = (a: UploadAction): CountedUpload => {
      const done = this.keyed.get(a.key);
      if (done) return countedFrom(done, true);
      const r = a.record;
      const fileNo = fileNumberOf(db, r.fileId);
      if (fileNo === undefined) throw new Error(`file ${r.fileId} is not in the catalog: its upload cannot be counted`);
      // Decided inside the transaction: of two first uploads racing, the first counted stored it.
      const alone = this.anyUpload.get(fileNo) === undefined;
      const stored = r.carriedBytes && alone;
      const event = {
        userId: r.account.id,
        userName: r.account.username,
        unit: r.account.unit,
        fileNo,
        fileName: r.fileName,
        contentType: r.contentType,
        at: r.at.getTime(),
        day: r.day,
        fileLength: r.fileLength,
        stored,
      };
      const { uploadCount, entryId } = totals.apply(event);
      appendEvent(a.event(stored));
      const row: KeyRow = {
        account_id: r.account.id,
        file_id: r.fileId,
        status: stored ? 'stored' : a.statusUnlessStored,
        stored: stored ? 1 : 0,
        upload_count: uploadCount,
      };
      remember.run({
        key: a.key,
        accountId: row.account_id,
        fileId: row.file_id,
        status: row.status,
        stored: row.stored,
        uploadCount,
        at: event.at,
        userName: event.userName,
        unit: JSON.stringify(event.unit),
        unitId: event.unit.id,
        fileNo,
        fileName: event.fileName,
        contentType: event.contentType,
        day: event.day,
        fileLength: event.fileLength,
        entryId,
      });
      // Counted into a file none of whose uploads counts (all withdrawn, the bytes kept for the
      // trash): if an upload of it ever stored the bytes, this one holds them now.
      if (alone && !stored) totals.settleHolders([fileNo]);
      return countedFrom(row, false);
    };
    this.countOne = db.transaction(countOne);
    this.countAll = db.transaction((actions: readonly UploadAction[]) => actions.map(countOne));
    const changed = db.prepare<[string, string], { found: number }>(
      'SELECT 1 AS found FROM upload_changes WHERE upload_key = ? AND key = ?',
    );
    const recorded = db.prepare<[string], RecordedRow>(
      `SELECT account_id, user_name, unit, file_no, file_name, content_type, day, file_length, at, state, entry_id
       FROM upload_keys WHERE key = ?`,
    );
    const setState = db.prepare('UPDATE upload_keys SET state = ? WHERE key = ?');
    const change = db.prepare('INSERT INTO upload_changes (upload_key, key, kind, at) VALUES (?, ?, ?, ?)');
    const purged = db.prepare<[string], { found: number }>(
      "SELECT 1 AS found FROM upload_changes WHERE upload_key = ? AND kind = 'purged'",
    );
    /**
     * The action's state changed to `to` once under `changeKey`, with its effect on the totals, in
     * one transaction: changed once, or not at all. Answers `done`, or why nothing changed; the
     * file of an action changed goes into `unsettled`, whose holders the transaction settles last.
     */
    const changeState =
      <A extends string>(to: 'counted' | 'reversed', done: A, unchanged: A) =>
      (actionKey: string, changeKey: string, unsettled: Set<number>): A | 'repeated' | 'not counted' | 'unrecorded' => {
        if (changed.get(actionKey, changeKey)) return 'repeated';
        const action = recorded.get(actionKey);
        if (!action) return 'not counted';
        const upload = recordedUpload(actionKey, action);
        if (!upload) return 'unrecorded';
        if (action.state === to) return unchanged;
        // A purged action stays reversed for good (purge, below).
        if (to === 'counted' && purged.get(actionKey)) return 'purged' as A;
        setState.run(to, actionKey);
        if (to === 'reversed') totals.reverse(upload);
        else totals.restore(upload);
        unsettled.add(upload.fileNo);
        change.run(actionKey, changeKey, done, Date.now());
        return done;
      };
    /** Changes made in one transaction, the files' holders settled once at its end. */
    const changeAll =
      <A>(changeOne: (actionKey: string, changeKey: string, unsettled: Set<number>) => A) =>
      (changes: readonly LedgerChange[]): A[] => {
        const unsettled = new Set<number>();
        const answers = changes.map((c) => changeOne(c.actionKey, c.changeKey, unsettled));
        totals.settleHolders(unsettled);
        return answers;
      };
    const reverseSome = changeAll(changeState<Reversal>('reversed', 'reversed', 'already reversed'));
    const restoreSome = changeAll(changeState<Restoral>('counted', 'restored', 'not reversed'));
    this.reverseOne = db.transaction(
      (actionKey: string, changeKey: string) => reverseSome([{ actionKey, changeKey }])[0]!,
    );
    this.restoreOne = db.transaction(
      (actionKey: string, changeKey: string) => restoreSome([{ actionKey, changeKey }])[0]!,
    );
    // Many changes in one transaction: one commit (and sync) for the lot, not one each.
    this.reverseAll = db.transaction(reverseSome);
    this.restoreAll = db.transaction(restoreSome);
    this.purgeOne = db.transaction((actionKey: string, purgeKey: string): Purge => {
      if (changed.get(actionKey, purgeKey)) return 'repeated';
      const action = recorded.get(actionKey);
      if (!action) return 'not counted';
      if (!recordedUpload(actionKey, action)) return 'unrecorded';
      if (action.state !== 'reversed') return 'not reversed';
      if (purged.get(actionKey)) return 'already purged';
      // The state stays 'reversed' (every total reads it so); the change of kind 'purged' is the record.
      change.run(actionKey, purgeKey, 'purged', Date.now());
      return 'purged';
    });
    // An action's receipt, once: its entry's copies follow if it counts (a reversed one counts
    // nowhere; a restore recounts them).
    const place = db.prepare<{ receiptId: string; key: string }, EntryOfAction>(
      `UPDATE upload_keys SET receipt_id = @receiptId WHERE key = @key AND receipt_id IS NULL AND file_no IS NOT NULL
       RETURNING account_id AS userId, unit_id AS unitId, file_no AS fileNo, state`,
    );
    this.placeAll = db.transaction((receiptId: string, keys: readonly string[]) => {
      const entries = new Map<string, EntryOfAction>();
      for (const key of keys) {
        const placed = place.get({ receiptId, key });
        if (placed?.state === 'counted') entries.set(`${placed.userId}\n${placed.unitId}\n${placed.fileNo}`, placed);
      }
      for (const entry of entries.values()) totals.recountCopies(entry);
    });
    this.latest = db.prepare<[string, number], Omit<LedgerRow, 'file_id'>>(
      `${ENTRIES} WHERE l.unit_id = ? AND l.file_no = ? ORDER BY l.last_upload_time DESC LIMIT 1`,
    );
    this.forFile = db.prepare<[number], Omit<LedgerRow, 'file_id'>>(
      `${ENTRIES} WHERE l.file_no = ? ORDER BY l.upload_time, l.id`,
    );
    this.anyUpload = db.prepare<[number], { found: number }>('SELECT 1 AS found FROM ledger WHERE file_no = ? LIMIT 1');
    this.inUnit = db.prepare<[string, number], { found: number }>(
      'SELECT 1 AS found FROM ledger l WHERE l.unit_id = ? AND l.file_no = ? LIMIT 1',
    );
    this.inCounty = db.prepare<[number, string, string | null], { found: number }>(
      "SELECT 1 AS found FROM ledger l WHERE l.file_no = ? AND json_extract(l.unit, '$.city') = ? AND json_extract(l.unit, '$.county') IS ? LIMIT 1",
    );
    this.byAccount = db.prepare<[number, string, string], { found: number }>(
      'SELECT 1 AS found FROM ledger l WHERE l.file_no = ? AND l.user_id = ? AND l.unit_id = ?',
    );
    this.accountEntry = db.prepare<[number, string, string], Omit<LedgerRow, 'file_id'>>(
      `${ENTRIES} WHERE l.file_no = ? AND l.user_id = ? AND l.unit_id = ?`,
    );
  }

  async count(action: UploadAction): Promise<CountedUpload> {
    return this.countOne(action);
  }

  async countMany(actions: readonly UploadAction[]): Promise<CountedUpload[]> {
    return this.countAll(actions);
  }

  async counted(key: string): Promise<CountedUpload | undefined> {
    const row = this.keyed.get(key);
    return row && countedFrom(row, true);
  }

  async countedMany(keys: readonly string[]): Promise<Map<string, CountedUpload>> {
    const found = new Map<string, CountedUpload>();
    for (const key of new Set(keys)) {
      const row = this.keyed.get(key);
      if (row) found.set(key, countedFrom(row, true));
    }
    return found;
  }

  async reverse(actionKey: string, reversalKey: string): Promise<Reversal> {
    return this.reverseOne.immediate(actionKey, reversalKey);
  }

  async restore(actionKey: string, restoreKey: string): Promise<Restoral> {
    return this.restoreOne.immediate(actionKey, restoreKey);
  }

  async purge(actionKey: string, purgeKey: string): Promise<Purge> {
    return this.purgeOne.immediate(actionKey, purgeKey);
  }

  async placeInReceipt(receiptId: string, actionKeys: readonly string[]): Promise<void> {
    this.placeAll.immediate(receiptId, actionKeys);
  }

  async countingKeys(fileId: string): Promise<string[]> {
    const fileNo = fileNumberOf(this.db, fileId);
    if (fileNo === undefined) return [];
    return this.db
      .prepare<[number], { key: string }>(
        "SELECT key FROM upload_keys WHERE file_no = ? AND state = 'counted' ORDER BY at, key",
      )
      .all(fileNo)
      .map((r) => r.key);
  }

  async countingUploads(fileId: string): Promise<number> {
    // Counted in one transaction: the entries hold every action that counts (and those counted
    // before actions were recorded).
    const fileNo = fileNumberOf(this.db, fileId);
    if (fileNo === undefined) return 0;
    return this.db
      .prepare<[number], { n: number }>('SELECT COALESCE(SUM(upload_count), 0) AS n FROM ledger WHERE file_no = ?')
      .get(fileNo)!.n;
  }

  async reverseMany(changes: readonly LedgerChange[]): Promise<Reversal[]> {
    return inBatches(changes, (some) => this.reverseAll.immediate(some));
  }

  async restoreMany(changes: readonly LedgerChange[]): Promise<Restoral[]> {
    return inBatches(changes, (some) => this.restoreAll.immediate(some));
  }

  /** Nothing to finish: an action is counted, reversed and restored in one transaction. */
  async finishInterrupted(): Promise<number> {
    return 0;
  }

  async hasUploadInScope(fileId: string, scope: UploaderScope): Promise<boolean> {
    if ('subtree' in scope) {
      const where = scopeWhere('l', scope);
      return (
        this.db
          .prepare(`SELECT 1 AS found FROM ledger l WHERE l.file_no = @fileNo AND ${where.sql} LIMIT 1`)
          .get({ fileNo: numberOf(this.db, fileId), ...where.params }) !== undefined
      );
    }
    const row =
      'unitId' in scope
        ? this.inUnit.get(scope.unitId, numberOf(this.db, fileId))
        : this.inCounty.get(numberOf(this.db, fileId), scope.city, scope.county);
    return row !== undefined;
  }

  async uploadedBy(fileId: string, accountId: string, unitId: string): Promise<boolean> {
    return this.byAccount.get(numberOf(this.db, fileId), accountId, unitId) !== undefined;
  }

  async uploadOf(fileId: string, accountId: string, unitId: string): Promise<LedgerEntry | undefined> {
    const row = this.accountEntry.get(numberOf(this.db, fileId), accountId, unitId);
    return row && withFileId(row, fileId);
  }

  async latestUnitUpload(unitId: string, fileId: string): Promise<LedgerEntry | undefined> {
    const row = this.latest.get(unitId, numberOf(this.db, fileId));
    return row && withFileId(row, fileId);
  }

  async latestUploadInScope(fileId: string, scope: ViewScope): Promise<LedgerEntry | undefined> {
    if ('unitId' in scope) return this.latestUnitUpload(scope.unitId, fileId);
    const where = scopeWhere('l', scope);
    // As the list of the view names a file: its entry uploaded last.
    const row = this.db
      .prepare<Record<string, unknown>, Omit<LedgerRow, 'file_id'>>(
        `${ENTRIES} WHERE l.file_no = @fileNo AND ${where.sql} ORDER BY l.last_upload_time DESC, l.id DESC LIMIT 1`,
      )
      .get({ fileNo: numberOf(this.db, fileId), ...where.params });
    return row && withFileId(row, fileId);
  }

  async entriesForFile(fileId: string): Promise<LedgerEntry[]> {
    return this.forFile.all(numberOf(this.db, fileId)).map((row) => withFileId(row, fileId));
  }

  async uploaders(scope: ViewScope | undefined): Promise<Uploader[]> {
    const where = scopeWhere('l', scope);
    return this.db
      .prepare<Record<string, unknown>, Uploader>(
        `SELECT l.user_id AS id, MAX(l.user_name) AS username FROM ledger l WHERE ${where.sql}
         GROUP BY l.user_id ORDER BY username, id`,
      )
      .all(where.params);
  }

  async recordedUploads(keys: readonly string[]): Promise<Map<string, FileUploadState>> {
    const found = new Map<string, FileUploadState>();
    const unique = [...new Set(keys)];
    for (let at = 0; at < unique.length; at += 500) {
      const some = unique.slice(at, at + 500);
      const rows = this.db
        .prepare<string[], UploadDetailsRow & { state: string }>(
          `SELECT key, account_id, unit_id, file_id, file_name, file_length, at, state FROM upload_keys
           WHERE key IN (${some.map(() => '?').join(', ')}) AND unit_id IS NOT NULL AND file_no IS NOT NULL`,
        )
        .all(...some);
      for (const r of rows)
        found.set(r.key, {
          key: r.key,
          accountId: r.account_id,
          unitId: r.unit_id,
          fileId: r.file_id,
          fileName: r.file_name,
          fileLength: r.file_length,
          at: new Date(r.at),
          counted: r.state === 'counted',
        });
    }
    return found;
  }

  async unitsWithUploads(fileIds: readonly string[], among?: readonly string[]): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>();
    const units = among && [...new Set(among)];
    if (units?.length === 0) return found;
    const idOf = new Map<number, string>();
    for (const fileId of new Set(fileIds)) {
      const fileNo = fileNumberOf(this.db, fileId);
      if (fileNo !== undefined) idOf.set(fileNo, fileId);
    }
    const numbers = [...idOf.keys()];
    const inUnits = units ? ` AND unit_id IN (${units.map(() => '?').join(', ')})` : '';
    for (let at = 0; at < numbers.length; at += 500) {
      const some = numbers.slice(at, at + 500);
      const list = some.map(() => '?').join(', ');
      // Recorded actions, counted or reversed (upload_keys_entry), and entries counted before the
      // ledger recorded its actions' details (ledger_file): both read by their indexes.
      const rows = this.db
        .prepare<unknown[], { file_no: number; unit_id: string }>(
          `SELECT file_no, unit_id FROM upload_keys WHERE file_no IN (${list})${inUnits}
           UNION SELECT file_no, unit_id FROM ledger WHERE file_no IN (${list})${inUnits}`,
        )
        .all(...some, ...(units ?? []), ...some, ...(units ?? []));
      for (const r of rows) {
        const fileId = idOf.get(r.file_no)!;
        const list = found.get(fileId);
        if (list) list.push(r.unit_id);
        else found.set(fileId, [r.unit_id]);
      }
    }
    return found;
  }

  async uploadsOfFile(fileId: string): Promise<FileUploadState[]> {
    const fileNo = fileNumberOf(this.db, fileId);
    if (fileNo === undefined) return [];
    return this.db
      .prepare<[number], UploadDetailsRow & { state: string }>(
        `SELECT key, account_id, unit_id, file_id, file_name, file_length, at, state FROM upload_keys
         INDEXED BY upload_keys_entry WHERE file_no = ? AND unit_id IS NOT NULL ORDER BY at, key`,
      )
      .all(fileNo)
      .map((r) => ({
        key: r.key,
        accountId: r.account_id,
        unitId: r.unit_id,
        fileId: r.file_id,
        fileName: r.file_name,
        fileLength: r.file_length,
        at: new Date(r.at),
        counted: r.state === 'counted',
      }));
  }

  async fileUploads(
    fileId: string,
    scope: ViewScope | undefined,
    page: { limit: number; offset: number },
  ): Promise<{ items: FileUpload[]; total: number }> {
    const fileNo = fileNumberOf(this.db, fileId);
    if (fileNo === undefined) return { items: [], total: 0 };
    // upload_keys keeps the unit as JSON: its place names are read from it (through the index on file_no).
    const where = scopeWhere('u', scope);
    const sql = `FROM (SELECT *, json_extract(unit, '$.city') AS city, json_extract(unit, '$.county') AS county,
                        json_extract(unit, '$.town') AS town FROM upload_keys
                      WHERE file_no = @fileNo AND unit_id IS NOT NULL AND unit IS NOT NULL) u
                 WHERE ${where.sql}`;
    const params = { fileNo, ...where.params };
    const { total } = this.db
      .prepare<Record<string, unknown>, { total: number }>(`SELECT COUNT(*) AS total ${sql}`)
      .get(params)!;
    const rows = this.db
      .prepare<Record<string, unknown>, UploadDetailsRow & { user_name: string | null; unit: string; state: string }>(
        `SELECT key, account_id, unit_id, file_id, file_name, file_length, at, user_name, unit, state ${sql}
         ORDER BY at DESC, key LIMIT @limit OFFSET @offset`,
      )
      .all({ ...params, limit: page.limit, offset: page.offset });
    return {
      total,
      items: rows.map((r) => ({
        key: r.key,
        accountId: r.account_id,
        userName: r.user_name ?? r.account_id,
        unitId: r.unit_id,
        unit: JSON.parse(r.unit) as Unit,
        fileId: r.file_id,
        fileName: r.file_name,
        fileLength: r.file_length,
        at: new Date(r.at),
        counts: r.state !== 'reversed',
      })),
    };
  }
}

/**
 * Changes made a transaction of CHANGES_PER_TRANSACTION at a time: a receipt's 10,000 in a few
 * commits, while no transaction holds the write lock long (each yields to the event loop and to
 * other writers between them).
 */
const CHANGES_PER_TRANSACTION = 500;

async function inBatches<T>(
  changes: readonly LedgerChange[],
  make: (some: readonly LedgerChange[]) => T[],
): Promise<T[]> {
  const answers: T[] = [];
  for (let at = 0; at < changes.length; at += CHANGES_PER_TRANSACTION) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    answers.push(...make(changes.slice(at, at + CHANGES_PER_TRANSACTION)));
  }
  return answers;
}

interface UploadDetailsRow {
  key: string;
  account_id: string;
  unit_id: string;
  file_id: string;
  file_name: string;
  file_length: number;
  at: number;
}

/** An action as upload_keys records it, for changing its state (the details are null for actions counted before they were recorded). */
/** The entry an action counts in. */
interface EntryOfAction {
  userId: string;
  unitId: string;
  fileNo: number;
  state: string;
}

interface RecordedRow {
  account_id: string;
  user_name: string | null;
  unit: string | null;
  file_no: number | null;
  file_name: string | null;
  content_type: string | null;
  day: string | null;
  file_length: number | null;
  at: number;
  state: string;
  entry_id: number | null;
}

/** The upload an action counted, as the totals change it; undefined if it was counted before its details were recorded. */
function recordedUpload(key: string, r: RecordedRow): RecordedUpload | undefined {
  if (
    r.user_name === null ||
    r.unit === null ||
    r.file_no === null ||
    r.file_name === null ||
    r.content_type === null ||
    r.day === null ||
    r.file_length === null
  )
    return undefined;
  return {
    key,
    userId: r.account_id,
    userName: r.user_name,
    unit: JSON.parse(r.unit) as Unit,
    fileNo: r.file_no,
    fileName: r.file_name,
    contentType: r.content_type,
    at: r.at,
    day: r.day,
    fileLength: r.file_length,
    entryId: r.entry_id,
  };
}

interface KeyRow {
  account_id: string;
  file_id: string;
  status: 'stored' | 'duplicate';
  stored: number;
  upload_count: number;
}

const countedFrom = (row: KeyRow, repeated: boolean): CountedUpload => ({
  accountId: row.account_id,
  fileId: row.file_id,
  status: row.status,
  uploadCount: row.upload_count,
  stored: row.stored === 1,
  repeated,
});

export interface LedgerRow {
  user_id: string;
  user_name: string;
  unit_id: string;
  unit: string;
  file_id: string;
  upload_time: number;
  last_upload_time: number;
  upload_file_name: string;
  last_upload_file_name: string;
  last_content_type: string;
  upload_count: number;
}

export function ledgerEntryFromRow(row: LedgerRow): LedgerEntry {
  return {
    userId: row.user_id,
    userName: row.user_name,
    unit: JSON.parse(row.unit) as Unit,
    fileId: row.file_id,
    uploadTime: new Date(row.upload_time),
    lastUploadTime: new Date(row.last_upload_time),
    uploadFileName: row.upload_file_name,
    lastUploadFileName: row.last_upload_file_name,
    lastContentType: row.last_content_type,
    uploadCount: row.upload_count,
  };
}
