import { Long, type Db, type Filter, type ObjectId } from 'mongodb';
import { escapeRegex, objectIdOf, toNumber } from '../mongo/documents.js';
import { subtreeMatch, type LedgerCollections, type LedgerDoc } from '../ledger/mongo.js';
import type { Catalog, CatalogEntry, CatalogListing, CatalogListQuery, ContentKey } from './port.js';

/** A catalog entry in `fileInfo.files`, with the seed design's field names. */
export type CatalogDoc = Omit<CatalogEntry, 'fileId' | 'md5' | 'sha256' | 'length'> & {
  _id: ObjectId;
  fileMD5: string;
  fileSHA256: string;
  fileLength: Long | number;
};

export function catalogCollections(db: Db) {
  return {
    catalog: db.collection<CatalogDoc>('fileInfo.files'),
    /**
     * The catalog read as the primary holds it now. After a duplicate-key error the winner is on
     * the primary but perhaps not yet majority-committed: a majority read could miss it.
     */
    catalogOnPrimary: db.collection<CatalogDoc>('fileInfo.files', {
      readConcern: { level: 'local' },
      readPreference: 'primary',
    }),
  };
}

export type CatalogCollections = ReturnType<typeof catalogCollections>;

export async function createCatalogIndexes(c: CatalogCollections): Promise<void> {
  await Promise.all([
    c.catalog.createIndex({ fileSHA256: 1, fileMD5: 1, fileLength: 1 }, { unique: true, name: 'content_identity' }),
    c.catalog.createIndex({ fileMD5: 1 }, { name: 'md5' }),
    c.catalog.createIndex({ uploadDate: -1 }, { name: 'upload_date' }),
  ]);
}

export function catalogEntryFromDoc(doc: CatalogDoc): CatalogEntry {
  return {
    fileId: doc._id.toHexString(),
    md5: doc.fileMD5,
    sha256: doc.fileSHA256,
    length: toNumber(doc.fileLength),
    chunkSize: doc.chunkSize,
    chunkCount: doc.chunkCount,
    fileName: doc.fileName,
    contentType: doc.contentType,
    uploadDate: doc.uploadDate,
    md5Collision: doc.md5Collision,
  };
}

export class MongoCatalog implements Catalog {
  constructor(private readonly c: CatalogCollections & LedgerCollections) {}

  async get(fileId: string): Promise<CatalogEntry | undefined> {
    const _id = objectIdOf(fileId);
    const doc = _id && (await this.c.catalog.findOne({ _id }));
    return doc ? catalogEntryFromDoc(doc) : undefined;
  }

  async findByKey(key: ContentKey): Promise<CatalogEntry | undefined> {
    const doc = await this.c.catalog.findOne({
      fileSHA256: key.sha256,
      fileMD5: key.md5,
      fileLength: Long.fromNumber(key.length),
    });
    return doc ? catalogEntryFromDoc(doc) : undefined;
  }

  async scan(afterFileId: string | undefined, limit: number): Promise<CatalogEntry[]> {
    const after = afterFileId === undefined ? undefined : objectIdOf(afterFileId);
    const docs = await this.c.catalog
      .find(after ? { _id: { $gt: after } } : {})
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map(catalogEntryFromDoc);
  }

  async count(): Promise<number> {
    return this.c.catalog.estimatedDocumentCount();
  }

  async list(query: CatalogListQuery): Promise<{ items: CatalogListing[]; total: number }> {
    if (query.unitId !== undefined)
      return this.listForUnits(query, { 'UploadGeography.UploadGeoNameID': query.unitId });
    if (query.subtree !== undefined) return this.listForUnits(query, subtreeMatch(query.subtree));
    return this.listAll(query);
  }

  /** A unit's view (or a subtree's), grouped from its ledger entries by the database. */
  private async listForUnits(q: CatalogListQuery, units: Filter<LedgerDoc>) {
    const match: Filter<LedgerDoc> = { ...units };
    if (q.nameContains) {
      const re = new RegExp(escapeRegex(q.nameContains), 'i');
      match.$or = [{ UploadFileName: re }, { LastUploadFileName: re }];
    }
    const [countRow] = await this.c.ledger
      .aggregate<{ total: number }>([
        { $match: match },
        { $group: { _id: '$UploadFileID' } },
        { $group: { _id: null, total: { $sum: 1 } } },
      ])
      .toArray();
    const rows = await this.c.ledger
      .aggregate<{
        _id: unknown;
        first: Date;
        last: Date;
        displayName: string;
        displayType: string;
        uploads: number;
        mine: number;
        entry: CatalogDoc[];
      }>([
        { $match: match },
        { $sort: { LastUploadTime: -1 } },
        {
          $group: {
            _id: '$UploadFileID',
            first: { $min: '$UploadTime' },
            last: { $max: '$LastUploadTime' },
            displayName: { $first: '$LastUploadFileName' },
            displayType: { $first: '$LastUploadContentType' },
            uploads: { $sum: '$UploadCount' },
            mine: { $sum: { $cond: [{ $eq: ['$UserID', q.accountId] }, '$UploadCount', 0] } },
          },
        },
        { $sort: { last: -1, _id: 1 } },
        { $skip: q.offset },
        { $limit: q.limit },
        { $lookup: { from: 'fileInfo.files', localField: '_id', foreignField: '_id', as: 'entry' } },
      ])
      .toArray();
    const items = rows
      .filter((r) => r.entry.length > 0)
      .map((r) => ({
        entry: catalogEntryFromDoc(r.entry[0]!),
        displayName: r.displayName,
        displayType: r.displayType,
        uploadCount: r.uploads,
        myUploadCount: r.mine,
        firstUploadTime: r.first,
        lastUploadTime: r.last,
      }));
    return { items, total: countRow?.total ?? 0 };
  }

  /** The whole archive, newest content first; ledger totals are computed for the page only. */
  private async listAll(q: CatalogListQuery) {
    const filter: Filter<CatalogDoc> = q.nameContains ? { fileName: new RegExp(escapeRegex(q.nameContains), 'i') } : {};
    const [total, docs] = await Promise.all([
      this.c.catalog.countDocuments(filter),
      this.c.catalog.find(filter).sort({ uploadDate: -1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
    ]);
    const sums = await this.c.ledger
      .aggregate<{ _id: { toHexString(): string }; last: Date; uploads: number; mine: number }>([
        { $match: { UploadFileID: { $in: docs.map((d) => d._id) } } },
        {
          $group: {
            _id: '$UploadFileID',
            last: { $max: '$LastUploadTime' },
            uploads: { $sum: '$UploadCount' },
            mine: { $sum: { $cond: [{ $eq: ['$UserID', q.accountId] }, '$UploadCount', 0] } },
          },
        },
      ])
      .toArray();
    const byId = new Map(sums.map((s) => [s._id.toHexString(), s]));
    const items = docs.map((doc) => {
      const s = byId.get(doc._id.toHexString());
      return {
        entry: catalogEntryFromDoc(doc),
        displayName: doc.fileName,
        displayType: doc.contentType,
        uploadCount: s?.uploads ?? 0,
        myUploadCount: s?.mine ?? 0,
        firstUploadTime: doc.uploadDate,
        lastUploadTime: s?.last ?? doc.uploadDate,
      };
    });
    return { items, total };
  }
}
