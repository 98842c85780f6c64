import { Long, ObjectId } from 'mongodb';
import { monthOf, weekOf } from '../../../shared/calendar.js';
import type { LedgerCollections, LedgerDoc, NameDoc, UploadDayDoc } from '../mongo/ledger-documents.js';
import { MongoLedger } from './mongo.js';
import { ledgerIdentity, nameDoc } from './mongo-totals.js';
import type { AuditCollections, AuditDoc } from '../mongo/audit-documents.js';
import { countInMemory, type LedgerSeeding, type SeededLedger, type SeededUpload } from './seeding.js';

/** Documents written at once. */
const BATCH = 10_000;

/**
 * The key recorded in `userInfo.firstUploads` for a seeded file: its first upload was counted (so
 * no later upload of it counts as storing it), under no action's key.
 */
const SEEDED = 'seeded';

/**
 * The MongoDB ledger's seeding (seeding.ts says what it is for): the uploads counted in memory,
 * then the documents `Ledger.count` would have made of them inserted a batch at a time: entries
 * (their `_id`s made in the order they were first counted, the reports' tie-break), day tallies,
 * names, and each file's first-upload record. Without the count's upload keys (`AppliedKeys`) and
 * audit events. The uploads to withdraw are then reversed by the ledger's `reverseMany`, in order.
 */
export class MongoLedgerSeeding implements LedgerSeeding {
  constructor(private readonly c: LedgerCollections & AuditCollections) {}

  async seed(uploads: Iterable<SeededUpload>): Promise<SeededLedger> {
    if (await this.c.ledger.findOne({}, { projection: { _id: 1 } }))
      throw new Error('a seeding fills an empty ledger: this one has entries');
    const totals = countInMemory(uploads);
    const entryIds = totals.entries.map(() => new ObjectId());
    await insertAll(
      this.c.ledger,
      totals.entries.map((e, i): LedgerDoc => {
        const { account, fileId } = e.first;
        const identity = ledgerIdentity(account);
        return {
          _id: entryIds[i]!,
          UserID: account.id,
          UserName: identity.UserName,
          UploadGeography: {
            GeoType: identity['UploadGeography.GeoType'],
            UploadGeoName: identity['UploadGeography.UploadGeoName'],
            UploadGeoNameID: account.unit.id,
          },
          UploadGeoAddress: identity.UploadGeoAddress,
          ...(identity.GeoPts ? { GeoPts: identity.GeoPts } : {}),
          UploadFileID: new ObjectId(fileId),
          UploadTime: e.first.at,
          LastUploadTime: e.lastUploadTime,
          UploadFileName: e.first.fileName,
          LastUploadFileName: e.lastUploadFileName,
          LastUploadContentType: e.lastContentType,
          UploadCount: e.uploadCount,
        };
      }),
    );
    await insertAll(
      this.c.uploadDays,
      totals.days.map((d): UploadDayDoc => ({
        UploadFileID: new ObjectId(d.fileId),
        UnitID: d.unit.id,
        Day: d.day,
        Week: weekOf(d.day),
        Month: monthOf(d.day),
        CityName: d.unit.city,
        CountyName: d.unit.county ?? null,
        TownName: d.unit.town ?? null,
        FileLength: Long.fromNumber(d.fileLength),
        Uploads: d.uploads,
        SavedUploads: d.savedUploads,
      })),
    );
    await insertAll(
      this.c.names,
      totals.names.map((n): NameDoc => nameDoc(n.unit, new ObjectId(n.fileId), n.name, n.firstUsed)),
    );
    // Each file's first upload counted took its record: under its key if it has one.
    await insertAll(
      this.c.firstUploads,
      [...totals.files].map(([fileId, { first }]) => ({ _id: new ObjectId(fileId), Key: first.key ?? SEEDED })),
    );
    // The actions' records: their upload events, as the count leaves them (done, with the answer).
    await insertAll(
      this.c.audit,
      totals.actions.map(({ upload: u, stored, uploadCount, entry }): AuditDoc => {
        const status = stored ? 'stored' : 'duplicate';
        return {
          _id: u.key,
          at: u.at,
          action: 'upload',
          userId: u.account.id,
          userName: u.account.username,
          unit: u.account.unit,
          address: null,
          fileId: u.fileId,
          fileName: u.fileName,
          detail: `seeded: ${status}`,
          note: null,
          upload: {
            contentType: u.contentType,
            day: u.day,
            fileLength: u.fileLength,
            stored,
            status,
            uploadCount,
            entryId: entryIds[entry]!,
          },
        };
      }),
    );
    // The uploads to withdraw, reversed by the ledger as a withdrawal reverses them.
    const withdrawals = totals.actions.flatMap(({ upload: u }) =>
      u.withdrawal === undefined ? [] : [{ actionKey: u.key, changeKey: u.withdrawal }],
    );
    const answers = await new MongoLedger(this.c).reverseMany(withdrawals);
    const refused = answers.findIndex((a) => a !== 'reversed');
    if (refused >= 0)
      throw new Error(
        `seeding: withdrawing ${withdrawals[refused]!.actionKey} the ledger answered "${answers[refused]}"`,
      );
    return {
      uploads: totals.uploads,
      recorded: totals.actions.length,
      withdrawn: withdrawals.length,
      entries: totals.entries.length,
      uploadDays: totals.days.length,
      names: totals.names.length,
    };
  }
}

/** Inserts documents a batch at a time, in order. */
async function insertAll<T extends object>(
  collection: { insertMany(docs: T[]): Promise<unknown> },
  docs: T[],
): Promise<void> {
  for (let at = 0; at < docs.length; at += BATCH) await collection.insertMany(docs.slice(at, at + BATCH));
}
