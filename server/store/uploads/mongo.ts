import { Long, ObjectId } from 'mongodb';
import type { ContentKey } from '../catalog/port.js';
import type { UploadCollections, UploadDoc } from '../mongo/upload-documents.js';
import type { LockAttempt, NewUpload, UploadLock, UploadOutcome, UploadState, UploadStore } from './port.js';

export async function createUploadIndexes(c: UploadCollections): Promise<void> {
  await Promise.all([
    c.uploads.createIndex({ expiresAt: 1 }, { name: 'expiry' }),
    c.uploads.createIndex({ stagingId: 1 }, { unique: true, name: 'staging' }),
  ]);
}

function uploadFromDoc(d: UploadDoc): UploadState {
  return {
    id: d._id,
    ownerId: d.ownerId,
    stagingId: d.stagingId.toHexString(),
    length: Number(d.length),
    offset: Number(d.offset),
    metadata: d.metadata,
    createdAt: d.createdAt,
    activeAt: d.activeAt,
    expiresAt: d.expiresAt,
    lock: d.lock,
    completing: d.completing
      ? { md5: d.completing.md5, sha256: d.completing.sha256, length: Number(d.completing.length) }
      : null,
    outcome: d.outcome,
  };
}

/**
 * Resumable uploads in `uploads.resumable`. The lock is a lease in the document, taken and
 * renewed with single-document conditional updates, so it holds across server instances
 * without transactions.
 */
export class MongoUploadStore implements UploadStore {
  constructor(private readonly c: UploadCollections) {}

  async create(u: NewUpload): Promise<void> {
    await this.c.uploads.insertOne({
      _id: u.id,
      ownerId: u.ownerId,
      stagingId: new ObjectId(u.stagingId),
      length: Long.fromNumber(u.length),
      offset: Long.fromNumber(0),
      metadata: u.metadata,
      createdAt: u.createdAt,
      activeAt: u.activeAt,
      expiresAt: u.expiresAt,
      lock: null,
      completing: null,
      outcome: null,
    });
  }

  async get(id: string): Promise<UploadState | undefined> {
    const doc = await this.c.uploads.findOne({ _id: id });
    return doc ? uploadFromDoc(doc) : undefined;
  }

  async acquire(id: string, lock: UploadLock, now: Date, replacing?: string): Promise<LockAttempt> {
    const free: object[] = [{ lock: null }, { 'lock.until': { $lt: now } }];
    if (replacing !== undefined) free.push({ 'lock.holder': replacing });
    const taken = await this.c.uploads.findOneAndUpdate(
      { _id: id, $or: free },
      { $set: { lock } },
      { returnDocument: 'after' },
    );
    if (taken) return { status: 'acquired', upload: uploadFromDoc(taken) };
    const current = await this.c.uploads.findOne({ _id: id });
    if (!current) return { status: 'missing' };
    // Released between the two reads: try once more rather than refuse a free upload.
    if (current.lock === null) return this.acquire(id, lock, now, replacing);
    return { status: 'busy', lock: current.lock };
  }

  async advance(
    id: string,
    holder: string,
    p: { offset: number; activeAt: Date; expiresAt: Date; lockUntil: Date },
  ): Promise<boolean> {
    const { matchedCount } = await this.c.uploads.updateOne(
      { _id: id, 'lock.holder': holder },
      {
        $set: {
          offset: Long.fromNumber(p.offset),
          activeAt: p.activeAt,
          expiresAt: p.expiresAt,
          'lock.until': p.lockUntil,
        },
      },
    );
    return matchedCount === 1;
  }

  async renew(id: string, holder: string, until: Date): Promise<void> {
    await this.c.uploads.updateOne({ _id: id, 'lock.holder': holder }, { $set: { 'lock.until': until } });
  }

  async rewind(id: string, holder: string, offset: number): Promise<boolean> {
    const { matchedCount } = await this.c.uploads.updateOne(
      { _id: id, 'lock.holder': holder, outcome: null },
      { $min: { offset: Long.fromNumber(offset) }, $set: { completing: null } },
    );
    return matchedCount === 1;
  }

  async markCompleting(id: string, holder: string, key: ContentKey): Promise<boolean> {
    const completing = { md5: key.md5, sha256: key.sha256, length: Long.fromNumber(key.length) };
    const { matchedCount } = await this.c.uploads.updateOne(
      { _id: id, 'lock.holder': holder },
      { $set: { completing } },
    );
    return matchedCount === 1;
  }

  async finish(id: string, holder: string, outcome: UploadOutcome): Promise<boolean> {
    const upload = await this.c.uploads.findOne({ _id: id }, { projection: { length: 1 } });
    if (!upload) return false;
    const { matchedCount } = await this.c.uploads.updateOne(
      { _id: id, 'lock.holder': holder },
      { $set: { outcome, offset: upload.length } },
    );
    return matchedCount === 1;
  }

  async release(id: string, holder: string): Promise<void> {
    await this.c.uploads.updateOne({ _id: id, 'lock.holder': holder }, { $set: { lock: null } });
  }

  async delete(id: string): Promise<void> {
    await this.c.uploads.deleteOne({ _id: id });
  }

  async listExpired(now: Date, limit: number): Promise<UploadState[]> {
    const docs = await this.c.uploads
      .find({ expiresAt: { $lt: now } })
      .sort({ expiresAt: 1 })
      .limit(limit)
      .toArray();
    return docs.map(uploadFromDoc);
  }
}
