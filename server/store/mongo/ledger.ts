import { Long, ObjectId } from 'mongodb';
import { monthOf, weekOf } from '../../../shared/calendar.js';
import type { Ledger, LedgerEntry, UploaderScope, UploadRecord } from '../port.js';
import { isDuplicateKey, type Collections } from './collections.js';
import { ledgerEntryFromDoc, ledgerIdentity, objectIdOf } from './mapping.js';

export class MongoLedger implements Ledger {
  constructor(private readonly c: Collections) {}

  async record(r: UploadRecord): Promise<{ uploadCount: number }> {
    const { unit } = r.account;
    const UploadFileID = new ObjectId(r.fileId);
    const doc = await retryingDuplicateKey(() =>
      this.c.ledger.findOneAndUpdate(
        { UserID: r.account.id, 'UploadGeography.UploadGeoNameID': unit.id, UploadFileID },
        {
          $inc: { UploadCount: 1 },
          $max: { LastUploadTime: r.at },
          $set: { LastUploadFileName: r.fileName, LastUploadContentType: r.contentType },
          // A client-made _id (time, then a counter) orders entries as they were first recorded,
          // the reports' tie-break, on any server.
          $setOnInsert: { _id: new ObjectId(), ...ledgerIdentity(r.account), UploadTime: r.at, UploadFileName: r.fileName },
        },
        { upsert: true, returnDocument: 'after' },
      ),
    );
    // The day's tally, right after the entry (no transaction: a crash in between loses one upload
    // from the savings report, never from the ledger).
    await retryingDuplicateKey(() =>
      this.c.uploadDays.updateOne(
        { UploadFileID, UnitID: unit.id, Day: r.day },
        {
          $inc: { Uploads: 1, SavedUploads: r.stored ? 0 : 1 },
          $setOnInsert: {
            Week: weekOf(r.day),
            Month: monthOf(r.day),
            CityName: unit.city,
            CountyName: unit.county ?? null,
            TownName: unit.town ?? null,
            FileLength: Long.fromNumber(r.fileLength),
          },
        },
        { upsert: true },
      ),
    );
    return { uploadCount: doc!.UploadCount };
  }

  async recordMany(records: readonly UploadRecord[]): Promise<Array<{ uploadCount: number }>> {
    // One at a time, in order: without transactions a batch is no more atomic than its parts.
    const counts: Array<{ uploadCount: number }> = [];
    for (const r of records) counts.push(await this.record(r));
    return counts;
  }

  async hasUploadInScope(fileId: string, scope: UploaderScope): Promise<boolean> {
    const UploadFileID = objectIdOf(fileId);
    if (!UploadFileID) return false;
    const filter =
      'unitId' in scope
        ? { UploadFileID, 'UploadGeography.UploadGeoNameID': scope.unitId }
        : { UploadFileID, 'UploadGeoAddress.CityName': scope.city, 'UploadGeoAddress.CountyName': scope.county };
    return (await this.c.ledger.findOne(filter, { projection: { _id: 1 } })) !== null;
  }

  async latestUnitUpload(unitId: string, fileId: string): Promise<LedgerEntry | undefined> {
    const UploadFileID = objectIdOf(fileId);
    if (!UploadFileID) return undefined;
    const doc = await this.c.ledger.findOne({ 'UploadGeography.UploadGeoNameID': unitId, UploadFileID }, { sort: { LastUploadTime: -1 } });
    return doc ? ledgerEntryFromDoc(doc) : undefined;
  }

  async entriesForFile(fileId: string): Promise<LedgerEntry[]> {
    const UploadFileID = objectIdOf(fileId);
    if (!UploadFileID) return [];
    const docs = await this.c.ledger.find({ UploadFileID }).sort({ UploadTime: 1, _id: 1 }).toArray();
    return docs.map(ledgerEntryFromDoc);
  }
}

/**
 * Runs an upsert, again if it lost an insert race: two first uploads can both try to insert, the
 * unique index lets one win, and the other, retried, becomes an atomic $inc of the winner's document.
 */
async function retryingDuplicateKey<T>(upsert: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await upsert();
    } catch (err) {
      if (!isDuplicateKey(err) || attempt >= 3) throw err;
    }
  }
}
