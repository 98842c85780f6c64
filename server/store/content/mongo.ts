import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Binary, Long, ObjectId, type Collection, type Db, type OptionalUnlessRequiredId } from 'mongodb';
import { ContentDamagedError } from '../../errors.js';
import { catalogEntries, type MongoCatalogEntries } from '../catalog/mongo.js';
import { catalogEntryFromDoc, type CatalogCollections } from '../mongo/catalog-documents.js';
import { storeByStaging } from './staged-batch.js';
import type { CatalogEntry, NewCatalogEntry } from '../catalog/port.js';
import { isDuplicateKey } from '../mongo/documents.js';
import type { UploadCollections } from '../mongo/upload-documents.js';
import { checkedRead, chunkSpan, chunkSum, chunkSumAdoption, uncheckedRead } from './chunk-sums.js';
import type {
  ByteRange,
  ChunkSumAdoption,
  CommitOutcome,
  CompactionReport,
  ContentStore,
  GarbageReport,
  StoredParts,
} from './port.js';

/** A standard GridFS files document, so any GridFS reader can read the bytes. */
export interface GridFileDoc {
  _id: ObjectId;
  length: Long | number;
  chunkSize: number;
  uploadDate: Date;
  filename: string;
  metadata: { contentType: string; md5: string; sha256: string };
}

export interface ChunkDoc {
  _id?: ObjectId;
  files_id: ObjectId;
  n: number;
  data: Binary | Uint8Array;
  /** CRC-32 of `data`, taken when written (absent on chunks written before checksums). */
  crc32?: number;
}

export interface StagingDoc {
  _id: ObjectId;
  createdAt: Date;
  /** The chunk size the area began with (absent on areas made before it was kept: the configured one). */
  chunkSize?: number;
}

export const BUCKET = 'fileContent';

export function contentCollections(db: Db) {
  return {
    gridFiles: db.collection<GridFileDoc>(`${BUCKET}.files`),
    chunks: db.collection<ChunkDoc>(`${BUCKET}.chunks`),
    staging: db.collection<StagingDoc>(`${BUCKET}.staging`),
  };
}

export type ContentCollections = ReturnType<typeof contentCollections>;

export async function createContentIndexes(c: ContentCollections): Promise<void> {
  await Promise.all([
    c.chunks.createIndex({ files_id: 1, n: 1 }, { unique: true }),
    c.gridFiles.createIndex({ filename: 1, uploadDate: 1 }),
  ]);
}

/**
 * Bytes in the GridFS bucket `fileContent`. No multi-document transactions: every step is
 * idempotent and ordered so that a crash leaves only staged chunks that GC can find, and the
 * unique content index on the catalog decides races.
 */
export class MongoContentStore implements ContentStore {
  private readonly catalogEntries: MongoCatalogEntries;

  constructor(
    private readonly c: CatalogCollections & ContentCollections & UploadCollections,
    readonly chunkSize: number,
  ) {
    this.catalogEntries = catalogEntries(c);
  }

  async stage(now: Date): Promise<string> {
    // Random, not time-based: an ObjectId's timestamp would tell a clerk answered "stored" for a
    // duplicate outside the reveal scope when the content was first uploaded.
    const _id = new ObjectId(randomBytes(12));
    // The chunk size is the area's from its first byte: a restart with another CHUNK_SIZE
    // continues an upload in the chunks it began with.
    await this.c.staging.insertOne({ _id, createdAt: now, chunkSize: this.chunkSize });
    return _id.toHexString();
  }

  /** The chunk size a staging area began with (the configured one for areas made before it was kept). */
  private async chunkSizeOf(_id: ObjectId): Promise<number> {
    return (await this.c.staging.findOne({ _id }, { projection: { chunkSize: 1 } }))?.chunkSize ?? this.chunkSize;
  }

  async write(stagingId: string, offset: number, parts: readonly Uint8Array[]): Promise<void> {
    if (parts.length === 0) return;
    const files_id = new ObjectId(stagingId);
    const chunkSize = await this.chunkSizeOf(files_id);
    const firstN = Math.floor(offset / chunkSize);
    const into = offset - firstN * chunkSize;
    let head: Uint8Array[] = [];
    if (into > 0) {
      // A chunk document is one value: continuing a partial chunk rewrites it with the bytes
      // it already holds (at most one chunk per request; bytes past `offset` are stale).
      const existing = await this.c.chunks.findOne({ files_id, n: firstN });
      const bytes = existing ? binaryBytes(existing.data) : new Uint8Array(0);
      if (bytes.byteLength < into)
        throw new Error(`staging area ${stagingId} has ${firstN * chunkSize + bytes.byteLength} bytes, not ${offset}`);
      head = [bytes.subarray(0, into)];
    }
    const chunks = rechunk([...head, ...parts], chunkSize);
    // Upserts keyed by (files_id, n): a retried or rewritten chunk replaces the old one.
    await this.c.chunks.bulkWrite(
      chunks.map((data, i) => ({
        replaceOne: {
          filter: { files_id, n: firstN + i },
          // crc32: the chunk's checksum, checked on every read (GridFS readers ignore the field).
          replacement: {
            files_id,
            n: firstN + i,
            data: Buffer.from(data.buffer, data.byteOffset, data.byteLength),
            crc32: chunkSum(data),
          },
          upsert: true,
        },
      })),
      { ordered: true },
    );
  }

  readStaged(stagingId: string, length: number): Readable {
    const files_id = new ObjectId(stagingId);
    const chunksOf = async () =>
      this.c.chunks
        .find({ files_id, n: { $lt: Math.ceil(length / (await this.chunkSizeOf(files_id))) } })
        .sort({ n: 1 });
    return Readable.from(
      (async function* () {
        const chunks = await chunksOf();
        let expected = 0;
        let sent = 0;
        for await (const chunk of chunks) {
          if (chunk.n !== expected++) throw new Error(`staging area ${stagingId} lacks chunk ${expected - 1}`);
          const bytes = binaryBytes(chunk.data).subarray(0, length - sent);
          sent += bytes.byteLength;
          yield bytes;
        }
        if (sent !== length) throw new Error(`staging area ${stagingId} holds ${sent} bytes, not ${length}`);
      })(),
    );
  }

  async commitMany(items: ReadonlyArray<{ stagingId: string; entry: NewCatalogEntry }>): Promise<CommitOutcome[]> {
    // One at a time, in order (the unique index decides each, as for one commit): chunks written
    // with a majority write concern are durable already, so there is no sync to share.
    const outcomes: CommitOutcome[] = [];
    for (const item of items) outcomes.push(await this.commit(item.stagingId, item.entry));
    return outcomes;
  }

  async storeMany(items: ReadonlyArray<StoredParts>): Promise<CommitOutcome[]> {
    // GridFS chunks are what MongoDB stores anyway: staged and committed as any upload.
    return storeByStaging(this, items, items[0]?.entry.uploadDate ?? new Date());
  }

  async commit(stagingId: string, entry: NewCatalogEntry): Promise<CommitOutcome> {
    const _id = new ObjectId(stagingId);
    const { md5, sha256, length } = entry.key;
    // Chunked as its staging area began, whatever CHUNK_SIZE says now.
    const chunkSize = await this.chunkSizeOf(_id);
    const doc = {
      _id,
      fileMD5: md5,
      fileSHA256: sha256,
      fileLength: Long.fromNumber(length),
      chunkSize,
      chunkCount: Math.ceil(length / chunkSize),
      fileName: entry.fileName,
      contentType: entry.contentType,
      uploadDate: entry.uploadDate,
      md5Collision: false,
    };
    // Bytes lost from a staging area (its chunks removed) must fail the commit, never become a
    // catalogued short file: the last chunk must be there, whole. (A chunk lost in between is
    // found by every read.)
    if (length > 0) {
      const last = await this.c.chunks.findOne({ files_id: _id, n: doc.chunkCount - 1 });
      const tail = length - (doc.chunkCount - 1) * chunkSize;
      if (!last || binaryBytes(last.data).byteLength < tail) {
        // A duplicate needs no bytes (a retried commit of one finds its staging area gone).
        const held = await this.catalogEntries.held(entry.key);
        if (held) return { status: held._id.equals(_id) ? 'stored' : 'duplicate', entry: catalogEntryFromDoc(held) };
        throw new Error(`staging area ${stagingId} holds not all of the ${length} bytes to commit (its last chunk)`);
      }
    }
    try {
      // 1. The GridFS files document makes the chunks a readable GridFS file.
      await this.insertIgnoringRetry(this.c.gridFiles, {
        _id,
        length: Long.fromNumber(length),
        chunkSize,
        uploadDate: entry.uploadDate,
        filename: entry.fileName,
        metadata: { contentType: entry.contentType, md5, sha256 },
      });
      // 2. The catalog entry, written last, is what makes the file part of the archive.
      await this.catalogEntries.insert(doc);
    } catch (err) {
      if (isDuplicateKey(err)) {
        const existing = await this.catalogEntries.held(entry.key, { onPrimary: true });
        if (!existing)
          throw new Error(`duplicate key on commit of ${stagingId}, but no catalog entry holds its content`, {
            cause: err,
          });
        // This very staging area, committed by an earlier attempt that did not get to say so (nor,
        // perhaps, to flag an MD5 collision).
        if (existing._id.equals(_id)) {
          if (await this.catalogEntries.flagCollision(md5, sha256)) existing.md5Collision = true;
          await this.c.staging.deleteOne({ _id });
          return { status: 'stored', entry: catalogEntryFromDoc(existing) };
        }
        await this.discard(stagingId);
        return { status: 'duplicate', entry: catalogEntryFromDoc(existing) };
      }
      // The staged bytes stay: a resumable upload retries the commit with them (a direct
      // upload's caller discards them), and a commit whose last write's outcome is unknown (a
      // network error) may have made them the archive's.
      throw err;
    }
    if (await this.catalogEntries.flagCollision(md5, sha256)) doc.md5Collision = true;
    await this.c.staging.deleteOne({ _id });
    return { status: 'stored', entry: catalogEntryFromDoc(doc) };
  }

  /** Inserts a document; a duplicate key means a retried commit already inserted it. */
  private async insertIgnoringRetry<T extends { _id: ObjectId }>(
    collection: Collection<T>,
    document: OptionalUnlessRequiredId<T>,
  ): Promise<void> {
    try {
      await collection.insertOne(document);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }

  async remove(entry: CatalogEntry): Promise<void> {
    const _id = new ObjectId(entry.fileId);
    if (await this.c.catalog.findOne({ _id, deletingAt: { $exists: false } }, { projection: { _id: 1 } }))
      throw new Error(`file ${entry.fileId} is live: its bytes are not removed`);
    // The files document first, so a GridFS reader never sees a file with missing chunks.
    await this.c.gridFiles.deleteOne({ _id });
    await this.c.chunks.deleteMany({ files_id: _id });
  }

  async discard(stagingId: string): Promise<void> {
    const _id = new ObjectId(stagingId);
    // A committed file is never removed, whatever path asks for it.
    if (await this.c.catalog.findOne({ _id }, { projection: { _id: 1 } })) {
      await this.c.staging.deleteOne({ _id });
      return;
    }
    // The files document goes first, so a GridFS reader never sees a file with missing chunks.
    await this.c.gridFiles.deleteOne({ _id });
    await this.c.chunks.deleteMany({ files_id: _id });
    await this.c.staging.deleteOne({ _id });
  }

  async lacksChunkSums(entry: CatalogEntry): Promise<boolean> {
    return (
      (await this.c.chunks.findOne(
        { files_id: new ObjectId(entry.fileId), crc32: { $exists: false } },
        { projection: { _id: 1 } },
      )) !== null
    );
  }

  async adoptChunkSums(entry: CatalogEntry): Promise<ChunkSumAdoption | undefined> {
    return (await this.lacksChunkSums(entry))
      ? chunkSumAdoption(entry.chunkSize, (sums) => this.recordChunkSums(entry, sums))
      : undefined;
  }

  private async recordChunkSums(entry: CatalogEntry, sums: ReadonlyArray<readonly [number, number]>): Promise<void> {
    const files_id = new ObjectId(entry.fileId);
    for (let i = 0; i < sums.length; i += 1000) {
      await this.c.chunks.bulkWrite(
        sums.slice(i, i + 1000).map(([n, crc32]) => ({
          updateOne: { filter: { files_id, n, crc32: { $exists: false } }, update: { $set: { crc32 } } },
        })),
        { ordered: false },
      );
    }
  }

  async collectGarbage(before: Date): Promise<GarbageReport> {
    const candidates = await this.c.staging.find({ createdAt: { $lt: before } }).toArray();
    const stale: typeof candidates = [];
    for (const area of candidates) {
      // A resumable upload's staging area lives as long as the upload (its expiry is the upload's).
      if (!(await this.c.uploads.findOne({ stagingId: area._id }, { projection: { _id: 1 } }))) stale.push(area);
    }
    for (const { _id } of stale) {
      // A crash between the catalog insert and this record's removal leaves a committed file: keep it.
      if (await this.c.catalog.findOne({ _id }, { projection: { _id: 1 } })) await this.c.staging.deleteOne({ _id });
      else await this.discard(_id.toHexString());
    }
    // Bytes nobody owns: chunks or GridFS files documents whose id is neither catalogued nor
    // staged. Staging records are written before the first chunk, so a live upload is never
    // among them. Found by the database, streamed: the archive may hold millions of files.
    const unowned = (from: 'chunks' | 'gridFiles', idField: string) =>
      this.c[from].aggregate<{ _id: ObjectId }>(
        [
          { $group: { _id: `$${idField}` } },
          { $lookup: { from: 'fileInfo.files', localField: '_id', foreignField: '_id', as: 'catalogued' } },
          { $match: { catalogued: { $size: 0 } } },
          { $lookup: { from: `${BUCKET}.staging`, localField: '_id', foreignField: '_id', as: 'staged' } },
          { $match: { staged: { $size: 0 } } },
          { $project: { _id: 1 } },
        ],
        { allowDiskUse: true },
      );
    const orphanIds = new Set<string>();
    for await (const { _id } of unowned('chunks', 'files_id')) orphanIds.add(_id.toHexString());
    for await (const { _id } of unowned('gridFiles', '_id')) orphanIds.add(_id.toHexString());
    for (const id of orphanIds) await this.discard(id);
    const orphans = orphanIds.size;
    return { stagingAreas: stale.length, orphans };
  }

  /**
   * Nothing to do, truly: GridFS keeps each file's chunks as documents of their own, never bytes
   * of several files in one, so no dead bytes share storage with live ones; chunks no entry owns
   * are collectGarbage's.
   */
  async compact(): Promise<CompactionReport> {
    return { packs: 0, reclaimedBytes: 0 };
  }

  async readRanges(entry: CatalogEntry, ranges: readonly ByteRange[]): Promise<Uint8Array[]> {
    return Promise.all(
      ranges.map(async (range) => {
        const parts: Uint8Array[] = [];
        for await (const part of this.read(entry, range, { unchecked: true })) parts.push(part as Uint8Array);
        return Buffer.concat(parts);
      }),
    );
  }

  read(
    entry: CatalogEntry,
    range: ByteRange = { start: 0, end: entry.length },
    options: { unchecked?: boolean } = {},
  ): Readable {
    const files_id = new ObjectId(entry.fileId);
    const span = chunkSpan(entry, range);
    // Our own cursor, not a GridFS download stream: it sees each chunk document whole (with its
    // checksum) and says which chunk is missing. A few chunks per batch keep memory flat.
    const chunks = this.c.chunks.find(
      { files_id, n: { $gte: span.first, $lte: span.last } },
      { sort: { n: 1 }, batchSize: 8 },
    );
    async function* docs(): AsyncGenerator<ChunkDoc> {
      let n = span.first;
      for await (const doc of chunks) {
        if (doc.n !== n)
          throw new ContentDamagedError(entry.fileId, n * entry.chunkSize, 'missing', `chunk ${n} is missing`);
        // A chunk of the wrong size would shift every later byte (chunks without a checksum
        // have nothing else to catch it): damage, as a GridFS reader judges it.
        const size = Math.min(entry.chunkSize, entry.length - n * entry.chunkSize);
        const held = binaryBytes(doc.data).byteLength;
        if (held !== size)
          throw new ContentDamagedError(
            entry.fileId,
            n * entry.chunkSize,
            held < size ? 'missing' : 'corrupted',
            `chunk ${n} holds ${held} bytes, not ${size}`,
          );
        n += 1;
        yield doc;
      }
    }
    if (options.unchecked) {
      const from = span.start;
      const source = (async function* () {
        let at = from;
        for await (const doc of docs()) {
          const bytes = binaryBytes(doc.data);
          const slice = bytes.subarray(Math.max(range.start - at, 0), Math.min(range.end - at, bytes.byteLength));
          at += bytes.byteLength;
          if (slice.byteLength > 0) yield slice;
        }
      })();
      return uncheckedRead(source, entry.fileId, range, () => undefined);
    }
    const sums = new Map<number, number>();
    const source = (async function* () {
      for await (const doc of docs()) {
        if (typeof doc.crc32 === 'number') sums.set(doc.n, doc.crc32);
        yield binaryBytes(doc.data);
      }
    })();
    return checkedRead(source, entry, range, sums, () => undefined);
  }
}

function binaryBytes(data: Binary | Uint8Array): Uint8Array {
  return data instanceof Binary ? data.buffer.subarray(0, data.position) : data;
}

/** Regroups contiguous byte parts into chunk-sized pieces (the last may be short); copies only where a chunk spans parts. */
function rechunk(parts: readonly Uint8Array[], size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const emit = () => {
    chunks.push(pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes));
    pending = [];
    pendingBytes = 0;
  };
  for (const part of parts) {
    let at = 0;
    while (at < part.byteLength) {
      const take = Math.min(size - pendingBytes, part.byteLength - at);
      pending.push(part.subarray(at, at + take));
      pendingBytes += take;
      at += take;
      if (pendingBytes === size) emit();
    }
  }
  if (pendingBytes > 0) emit();
  return chunks;
}
