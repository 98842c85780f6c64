import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ByteRange, CatalogEntry, CommitOutcome, ContentStore, NewCatalogEntry } from '../port.js';
import { chunkSpan } from '../chunk-span.js';
import type { Db } from './database.js';
import { catalogEntryFromRow, type CatalogRow } from './rows.js';

/** A 24-hex id, the same shape as a MongoDB ObjectId, so file ids look alike on both stores. */
export function newFileId(): string {
  return randomBytes(12).toString('hex');
}

export class EmbeddedContentStore implements ContentStore {
  private readonly insertStaging;
  private readonly putChunk;
  private readonly deleteChunks;
  private readonly deleteStaging;
  private readonly getChunk;
  private readonly commitTx;
  private readonly writeTx;

  constructor(
    private readonly db: Db,
    readonly chunkSize: number,
  ) {
    this.insertStaging = db.prepare('INSERT INTO staging (staging_id, created_at) VALUES (?, ?)');
    this.putChunk = db.prepare('INSERT OR REPLACE INTO chunks (files_id, n, data) VALUES (?, ?, ?)');
    this.deleteChunks = db.prepare('DELETE FROM chunks WHERE files_id = ?');
    this.deleteStaging = db.prepare('DELETE FROM staging WHERE staging_id = ?');
    this.getChunk = db.prepare<[string, number], { data: Buffer }>('SELECT data FROM chunks WHERE files_id = ? AND n = ?');
    const insertEntry = db.prepare(
      `INSERT INTO catalog (file_id, md5, sha256, length, chunk_size, chunk_count, file_name, content_type, upload_date, md5_collision)
       VALUES (@fileId, @md5, @sha256, @length, @chunkSize, @chunkCount, @fileName, @contentType, @uploadDate, @md5Collision)
       ON CONFLICT (sha256, md5, length) DO NOTHING`,
    );
    const findByKey = db.prepare<[string, string, number], CatalogRow>('SELECT * FROM catalog WHERE sha256 = ? AND md5 = ? AND length = ?');
    const findCollision = db.prepare<[string, string], { file_id: string }>('SELECT file_id FROM catalog WHERE md5 = ? AND sha256 <> ? LIMIT 1');
    const flagCollisions = db.prepare('UPDATE catalog SET md5_collision = 1 WHERE md5 = ? AND md5_collision = 0');
    const getEntry = db.prepare<[string], CatalogRow>('SELECT * FROM catalog WHERE file_id = ?');

    this.writeTx = db.transaction((stagingId: string, firstN: number, chunks: readonly Uint8Array[]) => {
      chunks.forEach((chunk, i) => this.putChunk.run(stagingId, firstN + i, chunk));
    });

    // One transaction: the entry and its chunks become visible together, or not at all.
    this.commitTx = db.transaction((stagingId: string, entry: NewCatalogEntry): CommitOutcome => {
      const { md5, sha256, length } = entry.key;
      const collision = findCollision.get(md5, sha256) !== undefined;
      const inserted = insertEntry.run({
        fileId: stagingId,
        md5,
        sha256,
        length,
        chunkSize: this.chunkSize,
        chunkCount: Math.ceil(length / this.chunkSize),
        fileName: entry.fileName,
        contentType: entry.contentType,
        uploadDate: entry.uploadDate.getTime(),
        md5Collision: collision ? 1 : 0,
      });
      this.deleteStaging.run(stagingId);
      if (inserted.changes === 0) {
        this.deleteChunks.run(stagingId);
        return { status: 'duplicate', entry: catalogEntryFromRow(findByKey.get(sha256, md5, length)!) };
      }
      if (collision) flagCollisions.run(md5);
      return { status: 'stored', entry: catalogEntryFromRow(getEntry.get(stagingId)!) };
    });
  }

  async stage(now: Date): Promise<string> {
    const id = newFileId();
    this.insertStaging.run(id, now.getTime());
    return id;
  }

  async writeChunks(stagingId: string, firstN: number, chunks: readonly Uint8Array[]): Promise<void> {
    this.writeTx(stagingId, firstN, chunks);
  }

  async commit(stagingId: string, entry: NewCatalogEntry): Promise<CommitOutcome> {
    // IMMEDIATE takes the write lock up front, so two processes committing at once queue
    // instead of failing with SQLITE_BUSY on lock upgrade.
    return this.commitTx.immediate(stagingId, entry);
  }

  async discard(stagingId: string): Promise<void> {
    this.db.transaction(() => {
      this.deleteChunks.run(stagingId);
      this.deleteStaging.run(stagingId);
    })();
  }

  read(entry: CatalogEntry, range?: ByteRange): Readable {
    const { getChunk } = this;
    const span = chunkSpan(entry, range);
    function* chunks(): Generator<Buffer> {
      for (let n = span.firstChunk; n <= span.lastChunk; n++) {
        const row = getChunk.get(entry.fileId, n);
        if (!row) throw new Error(`chunk ${n} of file ${entry.fileId} is missing`);
        const from = n === span.firstChunk ? span.skipFirst : 0;
        const to = n === span.lastChunk ? span.endInLast : row.data.length;
        yield row.data.subarray(from, to);
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }
}
