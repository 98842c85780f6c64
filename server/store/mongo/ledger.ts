import { ObjectId } from 'mongodb';
import type { Ledger, LedgerEntry, UploaderScope, UploadRecord } from '../port.js';
import { isDuplicateKey, type Collections } from './collections.js';
import { ledgerEntryFromDoc, ledgerIdentity, objectIdOf } from './mapping.js';

export class MongoLedger implements Ledger {
  constructor(private readonly c: Collections) {}

  async record(r: UploadRecord): Promise<{ uploadCount: number }> {
    const filter = { UserID: r.account.id, 'UploadGeography.UploadGeoNameID': r.account.unit.id, UploadFileID: new ObjectId(r.fileId) };
    const update = {
      $inc: { UploadCount: 1 },
      $max: { LastUploadTime: r.at },
      $set: { LastUploadFileName: r.fileName, LastUploadContentType: r.contentType },
      $setOnInsert: { ...ledgerIdentity(r.account), UploadTime: r.at, UploadFileName: r.fileName },
    };
    // Two first uploads racing can both try to insert; the unique index lets one win and the
    // other, retried, becomes an atomic $inc of the winner's entry.
    for (let attempt = 0; ; attempt++) {
      try {
        const doc = await this.c.ledger.findOneAndUpdate(filter, update, { upsert: true, returnDocument: 'after' });
        return { uploadCount: doc!.UploadCount };
      } catch (err) {
        if (!isDuplicateKey(err) || attempt >= 3) throw err;
      }
    }
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
