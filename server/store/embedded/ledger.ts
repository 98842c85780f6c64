import { monthOf, weekOf } from '../../../shared/calendar.js';
import type { CountedUpload, Ledger, LedgerEntry, UploadAction, UploaderScope, UploadRecord } from '../port.js';
import { auditAppender } from './audit.js';
import type { Db } from './database.js';
import { ledgerEntryFromRow, type LedgerRow } from './rows.js';

export class EmbeddedLedger implements Ledger {
  private readonly upsert;
  private readonly tally;
  private readonly keyed;
  private readonly remember;
  private readonly countOne;
  private readonly countAll;
  private readonly latest;
  private readonly forFile;
  private readonly anyUpload;
  private readonly inUnit;
  private readonly inCounty;

  constructor(db: Db) {
    // One statement: a new entry at 1, or UploadCount + 1; SQLite serialises writers, so no increment is lost.
    this.upsert = db.prepare<Record<string, unknown>, { upload_count: number }>(
      `INSERT INTO ledger (user_id, user_name, unit_id, unit, file_id, upload_time, last_upload_time, upload_file_name, last_upload_file_name, last_content_type, upload_count)
       VALUES (@userId, @userName, @unitId, @unit, @fileId, @at, @at, @fileName, @fileName, @contentType, 1)
       ON CONFLICT (user_id, unit_id, file_id) DO UPDATE SET
         upload_count = upload_count + 1,
         last_upload_time = MAX(last_upload_time, excluded.last_upload_time),
         last_upload_file_name = excluded.last_upload_file_name,
         last_content_type = excluded.last_content_type
       RETURNING upload_count`,
    );
    this.tally = db.prepare(
      `INSERT INTO upload_days (file_id, unit_id, day, week, month, city, county, town, file_length, uploads, saved_uploads)
       VALUES (@fileId, @unitId, @day, @week, @month, @city, @county, @town, @fileLength, 1, @saved)
       ON CONFLICT (file_id, unit_id, day) DO UPDATE SET uploads = uploads + 1, saved_uploads = saved_uploads + excluded.saved_uploads`,
    );
    this.keyed = db.prepare<[string], KeyRow>('SELECT account_id, file_id, status, stored, upload_count FROM upload_keys WHERE key = ?');
    this.remember = db.prepare(
      'INSERT INTO upload_keys (key, account_id, file_id, status, stored, upload_count, at) VALUES (@key, @accountId, @fileId, @status, @stored, @uploadCount, @at)',
    );
    const appendEvent = auditAppender(db);
    // The key, the entry, its day's tally and the audit event change together or not at all: a
    // crash leaves the action wholly counted or not at all, so nothing is ever left to finish.
    const countOne = (a: UploadAction): CountedUpload => {
      const done = this.keyed.get(a.key);
      if (done) return countedFrom(done, true);
      const [entry, day] = ledgerRows(a.record);
      const uploadCount = this.upsert.get(entry)!.upload_count;
      this.tally.run(day);
      appendEvent(a.event);
      const row: KeyRow = { account_id: a.record.account.id, file_id: a.record.fileId, status: a.status, stored: a.record.stored ? 1 : 0, upload_count: uploadCount };
      this.remember.run({ key: a.key, accountId: row.account_id, fileId: row.file_id, status: row.status, stored: row.stored, uploadCount, at: a.record.at.getTime() });
      return countedFrom(row, false);
    };
    this.countOne = db.transaction(countOne);
    this.countAll = db.transaction((actions: readonly UploadAction[]) => actions.map(countOne));
    this.latest = db.prepare<[string, string], LedgerRow>(
      'SELECT * FROM ledger WHERE unit_id = ? AND file_id = ? ORDER BY last_upload_time DESC LIMIT 1',
    );
    this.forFile = db.prepare<[string], LedgerRow>('SELECT * FROM ledger WHERE file_id = ? ORDER BY upload_time, id');
    this.anyUpload = db.prepare<[string], { found: number }>('SELECT 1 AS found FROM ledger WHERE file_id = ? LIMIT 1');
    this.inUnit = db.prepare<[string, string], { found: number }>('SELECT 1 AS found FROM ledger WHERE unit_id = ? AND file_id = ? LIMIT 1');
    this.inCounty = db.prepare<[string, string, string | null], { found: number }>(
      "SELECT 1 AS found FROM ledger WHERE file_id = ? AND json_extract(unit, '$.city') = ? AND json_extract(unit, '$.county') IS ? LIMIT 1",
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

  /** Nothing to finish: an action is counted in one transaction. */
  async finishInterrupted(): Promise<number> {
    return 0;
  }

  async hasUploads(fileId: string): Promise<boolean> {
    return this.anyUpload.get(fileId) !== undefined;
  }

  async hasUploadInScope(fileId: string, scope: UploaderScope): Promise<boolean> {
    const row = 'unitId' in scope ? this.inUnit.get(scope.unitId, fileId) : this.inCounty.get(fileId, scope.city, scope.county);
    return row !== undefined;
  }

  async latestUnitUpload(unitId: string, fileId: string): Promise<LedgerEntry | undefined> {
    const row = this.latest.get(unitId, fileId);
    return row && ledgerEntryFromRow(row);
  }

  async entriesForFile(fileId: string): Promise<LedgerEntry[]> {
    return this.forFile.all(fileId).map(ledgerEntryFromRow);
  }
}

/** The parameters of a ledger entry's upsert and of its day's tally. */
function ledgerRows(r: UploadRecord): [entry: Record<string, unknown>, day: Record<string, unknown>] {
  const { unit } = r.account;
  return [
    {
      userId: r.account.id,
      userName: r.account.username,
      unitId: unit.id,
      unit: JSON.stringify(unit),
      fileId: r.fileId,
      at: r.at.getTime(),
      fileName: r.fileName,
      contentType: r.contentType,
    },
    {
      fileId: r.fileId,
      unitId: unit.id,
      day: r.day,
      week: weekOf(r.day),
      month: monthOf(r.day),
      city: unit.city,
      county: unit.county ?? null,
      town: unit.town ?? null,
      fileLength: r.fileLength,
      saved: r.stored ? 0 : 1,
    },
  ];
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
