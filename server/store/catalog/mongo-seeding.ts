import { Long, ObjectId } from 'mongodb';
import type { CatalogCollections, CatalogDoc } from '../mongo/catalog-documents.js';
import type { CatalogSeeding, SeededCatalogEntry } from './seeding.js';

/** Entries written at once. */
const BATCH = 10_000;

/**
 * The MongoDB catalog's seeding (seeding.ts): the documents the content's commit writes, inserted
 * a batch at a time, then every MD5 the seeded contents share with another content flagged.
 */
export class MongoCatalogSeeding implements CatalogSeeding {
  constructor(
    private readonly c: CatalogCollections,
    private readonly chunkSize: number,
  ) {}

  async seed(entries: Iterable<SeededCatalogEntry>): Promise<number> {
    let batch: CatalogDoc[] = [];
    let count = 0;
    const write = async () => {
      if (batch.length === 0) return;
      await this.c.catalog.insertMany(batch);
      await this.flagCollisions([...new Set(batch.map((d) => d.fileMD5))]);
      count += batch.length;
      batch = [];
    };
    for (const e of entries) {
      const { md5, sha256, length } = e.key;
      batch.push({
        _id: new ObjectId(e.fileId),
        fileMD5: md5,
        fileSHA256: sha256,
        fileLength: Long.fromNumber(length),
        chunkSize: this.chunkSize,
        chunkCount: Math.ceil(length / this.chunkSize),
        fileName: e.fileName,
        contentType: e.contentType,
        uploadDate: e.uploadDate,
        md5Collision: false,
      });
      if (batch.length === BATCH) await write();
    }
    await write();
    return count;
  }

  /** Flags the entries of each of these MD5s that more than one content has (as the commit's flagCollision). */
  private async flagCollisions(md5s: string[]): Promise<void> {
    const shared = await this.c.catalog
      .aggregate<{ _id: string }>([
        { $match: { fileMD5: { $in: md5s } } },
        { $group: { _id: '$fileMD5', contents: { $addToSet: '$fileSHA256' } } },
        { $match: { 'contents.1': { $exists: true } } },
        { $project: { _id: 1 } },
      ])
      .toArray();
    if (shared.length > 0)
      await this.c.catalog.updateMany(
        { fileMD5: { $in: shared.map((s) => s._id) }, md5Collision: false },
        { $set: { md5Collision: true } },
      );
  }
}
