import type { UploadResult } from '../../shared/schemas.js';
import { ChecksumMismatchError, PayloadTooLargeError } from '../errors.js';
import type { Account, ArchiveStore, ContentKey } from '../store/port.js';
import type { DigestPool } from './digest.js';
import type { DuplicateScope } from './scope.js';

/** Bytes received and hashed into a staging area, not yet part of the archive. */
export interface StagedContent {
  stagingId: string;
  key: ContentKey;
}

export interface IngestOptions {
  store: Pick<ArchiveStore, 'content' | 'ledger'>;
  digests: DigestPool;
  scope: DuplicateScope;
  maxFileSize: number;
  clock?: () => Date;
}

/** Chunks are written to the store in batches (about 4 MiB at the default chunk size). */
const BATCH_CHUNKS = 8;

/**
 * Reused chunk buffers, so memory stays flat however large the file. They are
 * SharedArrayBuffers, so the hash workers read them without a copy.
 */
class ChunkPool {
  private readonly free: Uint8Array[] = [];

  constructor(private readonly size: number) {}

  take(): Uint8Array {
    return this.free.pop() ?? new Uint8Array(new SharedArrayBuffer(this.size));
  }

  /** A callback that returns `chunk` to the pool once it has been called `users` times. */
  releaser(chunk: Uint8Array, users: number): () => void {
    return () => {
      if (--users === 0) this.free.push(chunk);
    };
  }
}

/**
 * Ingest: stream bytes into fixed-size chunks while hashing them (one pass, memory flat in
 * file size), then commit: the catalog decides whether the content is new, and the ledger
 * counts the upload either way.
 */
export class IngestService {
  private readonly clock: () => Date;

  constructor(private readonly deps: IngestOptions) {
    this.clock = deps.clock ?? (() => new Date());
  }

  async stage(source: AsyncIterable<Uint8Array>): Promise<StagedContent> {
    const { content } = this.deps.store;
    const chunkSize = content.chunkSize;
    const stagingId = await content.stage(this.clock());
    const digest = this.deps.digests.start();
    const pool = new ChunkPool(chunkSize);
    let chunk = pool.take();
    let filled = 0;
    let length = 0;
    let batch: Uint8Array[] = [];
    let written: Array<() => void> = [];
    let batchFirstN = 0;

    // One batch may be on its way to the store while the next one fills.
    let previousWrite: Promise<void> = Promise.resolve();
    const writeBatch = async () => {
      if (batch.length === 0) return;
      const releases = written;
      const write = content.writeChunks(stagingId, batchFirstN, batch).then(() => releases.forEach((release) => release()));
      write.catch(() => {}); // awaited below or on the next batch
      batchFirstN += batch.length;
      batch = [];
      written = [];
      // Tracked before waiting, so a failure path always waits for the newest write.
      const prior = previousWrite;
      previousWrite = write;
      await prior;
    };
    const closeChunk = async () => {
      const full = chunk.subarray(0, filled);
      // The buffer is reused once both the store and the hashing are done with it.
      const release = pool.releaser(chunk, 2);
      batch.push(full);
      written.push(release);
      chunk = pool.take();
      filled = 0;
      await digest.update(full, release);
      if (batch.length >= BATCH_CHUNKS) await writeBatch();
    };

    try {
      for await (const data of source) {
        length += data.byteLength;
        if (length > this.deps.maxFileSize) throw new PayloadTooLargeError(this.deps.maxFileSize);
        let offset = 0;
        while (offset < data.byteLength) {
          const take = Math.min(chunkSize - filled, data.byteLength - offset);
          chunk.set(data.subarray(offset, offset + take), filled);
          filled += take;
          offset += take;
          if (filled === chunkSize) await closeChunk();
        }
      }
      if (filled > 0) await closeChunk();
      await writeBatch();
      await previousWrite;
      const { md5, sha256 } = await digest.finish();
      return { stagingId, key: { md5, sha256, length } };
    } catch (err) {
      await previousWrite.catch(() => {});
      digest.abort();
      await content.discard(stagingId);
      throw err;
    }
  }

  /** Removes staged bytes that will not be committed. */
  discard(staged: StagedContent): Promise<void> {
    return this.deps.store.content.discard(staged.stagingId);
  }

  /**
   * Makes staged bytes part of the archive for `uploader`. A declared MD5 that does not match
   * the received bytes refuses the upload and removes them.
   */
  async commit(
    staged: StagedContent,
    upload: { uploader: Account; fileName: string; contentType: string; declaredMd5?: string | undefined },
  ): Promise<UploadResult> {
    if (upload.declaredMd5 !== undefined && upload.declaredMd5 !== staged.key.md5) {
      await this.discard(staged);
      throw new ChecksumMismatchError(upload.declaredMd5, staged.key.md5);
    }
    const now = this.clock();
    const outcome = await this.deps.store.content.commit(staged.stagingId, {
      key: staged.key,
      fileName: upload.fileName,
      contentType: upload.contentType,
      uploadDate: now,
    });
    // Asked before this upload is counted: a duplicate outside the caller's scope reads as new.
    const status = outcome.status === 'duplicate' && !(await this.deps.scope.reveals(outcome.entry, upload.uploader)) ? 'stored' : outcome.status;
    const { uploadCount } = await this.deps.store.ledger.record({
      account: upload.uploader,
      fileId: outcome.entry.fileId,
      fileName: upload.fileName,
      contentType: upload.contentType,
      at: now,
    });
    return { status, fileId: outcome.entry.fileId, uploadCount };
  }
}
