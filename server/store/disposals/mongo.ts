import type { Db, Filter } from 'mongodb';
import type { Unit } from '../../../shared/schemas.js';
import { isDuplicateKey } from '../mongo/documents.js';
import type { DisposalRecord, DisposalState, DisposalStore, Person, RegisterFilter, Uploader } from './port.js';

/** One entry of the disposal register (销毁清册), kept for ever; `FileID` unique: a file is disposed of once. */
export interface DisposalDoc {
  _id: string;
  FileID: string;
  FileName: string;
  FileLength: number;
  StoredAt: Date;
  Units: Unit[];
  Uploaders: Uploader[];
  FirstUploadAt: Date | null;
  LastUploadAt: Date | null;
  CountedUploads: number;
  WithdrawnUploads: number;
  Reason: string;
  ApprovalRef: string;
  By: Person;
  At: Date;
  State: DisposalState;
  /** Present while `disposing` and not cleared of holds; absent: cleared (and in entries made before). */
  Uncleared?: true;
  ChangedAt: Date;
}

export function disposalCollections(db: Db) {
  return { disposals: db.collection<DisposalDoc>('fileInfo.disposals') };
}

export type DisposalCollections = ReturnType<typeof disposalCollections>;

export async function createDisposalIndexes(c: DisposalCollections): Promise<void> {
  await Promise.all([
    c.disposals.createIndex({ FileID: 1 }, { name: 'disposed_file', unique: true }),
    c.disposals.createIndex({ At: -1, _id: 1 }, { name: 'register' }),
    c.disposals.createIndex({ 'Units.id': 1 }, { name: 'register_unit' }),
    c.disposals.createIndex({ 'Units.city': 1, 'Units.county': 1, 'Units.town': 1 }, { name: 'register_subtree' }),
    c.disposals.createIndex({ State: 1, ChangedAt: 1 }, { name: 'unfinished' }),
  ]);
}

const person = (p: Person): Person => ({ id: p.id, username: p.username });
const uploader = (u: Uploader): Uploader => ({ id: u.id, username: u.username, unitId: u.unitId });

const docOf = (r: DisposalRecord): DisposalDoc => ({
  _id: r.id,
  FileID: r.fileId,
  FileName: r.fileName,
  FileLength: r.fileLength,
  StoredAt: r.storedAt,
  Units: r.units,
  Uploaders: r.uploaders.map(uploader),
  FirstUploadAt: r.firstUploadAt,
  LastUploadAt: r.lastUploadAt,
  CountedUploads: r.countedUploads,
  WithdrawnUploads: r.withdrawnUploads,
  Reason: r.reason,
  ApprovalRef: r.approvalRef,
  By: person(r.disposedBy),
  At: r.disposedAt,
  State: r.state,
  ...(!r.cleared && { Uncleared: true as const }),
  ChangedAt: r.changedAt,
});

const recordOf = (d: DisposalDoc): DisposalRecord => ({
  id: d._id,
  fileId: d.FileID,
  fileName: d.FileName,
  fileLength: d.FileLength,
  storedAt: d.StoredAt,
  units: d.Units,
  uploaders: d.Uploaders.map(uploader),
  firstUploadAt: d.FirstUploadAt,
  lastUploadAt: d.LastUploadAt,
  countedUploads: d.CountedUploads,
  withdrawnUploads: d.WithdrawnUploads,
  reason: d.Reason,
  approvalRef: d.ApprovalRef,
  disposedBy: person(d.By),
  disposedAt: d.At,
  state: d.State,
  cleared: d.Uncleared === undefined,
  changedAt: d.ChangedAt,
});

function registerFilter(filter: RegisterFilter): Filter<DisposalDoc> {
  const at = { ...(filter.from && { $gte: filter.from }), ...(filter.to && { $lt: filter.to }) };
  const scope = filter.scope;
  let units: Filter<DisposalDoc> = {};
  if (scope && 'unitId' in scope) units = { 'Units.id': scope.unitId };
  else if (scope) {
    const { city, county, town } = scope.subtree;
    // One unit of the entry in the whole subtree, not its levels matched by different units.
    units = {
      Units: {
        $elemMatch: { city, ...(county !== undefined && { county }), ...(town !== undefined && { town }) },
      },
    };
  }
  return { ...units, ...(Object.keys(at).length > 0 && { At: at }) };
}

/** Every write is one document's: a disposal's steps are finished by the service from its state. */
export class MongoDisposalStore implements DisposalStore {
  constructor(private readonly c: DisposalCollections) {}

  async open(r: DisposalRecord): Promise<{ record: DisposalRecord; opened: boolean }> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.c.disposals.insertOne(docOf(r));
        return { record: r, opened: true };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const held = await this.c.disposals.findOne({ FileID: r.fileId });
      if (held) return { record: recordOf(held), opened: false };
      // Only an entry a hold stopped is ever removed: the file is free again.
      if (attempt >= 3) throw new Error(`file ${r.fileId}: its disposal ${r.id} clashed with no entry`);
    }
  }

  async clear(id: string): Promise<boolean> {
    // One document's update: a stop needs `Uncleared`, so of the two racing one applies.
    await this.c.disposals.updateOne({ _id: id, State: 'disposing', Uncleared: true }, { $unset: { Uncleared: '' } });
    return (
      (await this.c.disposals.countDocuments({ _id: id, State: 'disposing', Uncleared: { $exists: false } })) === 1
    );
  }

  async stop(id: string): Promise<boolean> {
    const { deletedCount } = await this.c.disposals.deleteOne({ _id: id, State: 'disposing', Uncleared: true });
    return deletedCount === 1;
  }

  async advance(id: string, from: DisposalState, to: DisposalState, at: Date): Promise<boolean> {
    const { modifiedCount } = await this.c.disposals.updateOne(
      { _id: id, State: from },
      { $set: { State: to, ChangedAt: at } },
    );
    return modifiedCount === 1;
  }

  async get(id: string): Promise<DisposalRecord | undefined> {
    const doc = await this.c.disposals.findOne({ _id: id });
    return doc ? recordOf(doc) : undefined;
  }

  async ofFiles(fileIds: readonly string[]): Promise<Map<string, DisposalRecord>> {
    const found = new Map<string, DisposalRecord>();
    const unique = [...new Set(fileIds)];
    for (let at = 0; at < unique.length; at += 1000) {
      const docs = await this.c.disposals.find({ FileID: { $in: unique.slice(at, at + 1000) } }).toArray();
      for (const doc of docs) found.set(doc.FileID, recordOf(doc));
    }
    return found;
  }

  async list(
    filter: RegisterFilter,
    page: { limit: number; offset: number },
  ): Promise<{ items: DisposalRecord[]; total: number }> {
    const where = registerFilter(filter);
    const [docs, total] = await Promise.all([
      this.c.disposals.find(where).sort({ At: -1, _id: 1 }).skip(page.offset).limit(page.limit).toArray(),
      this.c.disposals.countDocuments(where),
    ]);
    return { items: docs.map(recordOf), total };
  }

  async unfinished(
    before: Date,
    limit: number,
    after?: Pick<DisposalRecord, 'id' | 'changedAt'>,
  ): Promise<DisposalRecord[]> {
    const docs = await this.c.disposals
      .find({
        State: { $in: ['disposing', 'deleting'] },
        ChangedAt: { $lt: before },
        ...(after && {
          $or: [{ ChangedAt: { $gt: after.changedAt } }, { ChangedAt: after.changedAt, _id: { $gt: after.id } }],
        }),
      })
      .sort({ ChangedAt: 1, _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map(recordOf);
  }
}
