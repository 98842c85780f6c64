import type { AuditService } from './audit.js';
import type { ReportCalendar } from './calendar.js';
import type { UploadResult } from '../../shared/schemas.js';
import { ChecksumMismatchError, PayloadTooLargeError } from '../errors.js';
import type { Account, ArchiveStore, ContentKey } from '../store/port.js';
import { ChunkWriter, type ChunkPool } from './chunk-writer.js';
import type { DigestPool } from './digest.js';
import type { DuplicateScope } from './scope.js';
import type { UploadMeter } from './upload-meter.js';

/** Bytes received and hashed into a staging area, not yet part of the archive. */
export interface StagedContent {
  stagingId: string;
  key: ContentKey;
}

export interface IngestOptions {
  store: Pick<ArchiveStore, 'content' | 'ledger'>;
  digests: DigestPool;
  pool: ChunkPool;
  scope: DuplicateScope;
  maxFileSize: number;
  audit: Pick<AuditService, 'record'>;
  calendar: ReportCalendar;
  meter: UploadMeter;
  clock?: () => Date;
}

/** How an upload reached the archive, for the audit log. */
export interface UploadSource {
  via: 'direct' | 'tus';
  /** The client's address (null when not known). */
  address: string | null;
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
    const stagingId = await content.stage(this.clock());
    const digest = this.deps.digests.start();
    const writer = new ChunkWriter({ content, pool: this.deps.pool, stagingId, digest, offset: 0 });
    try {
      for await (const data of source) {
        if (writer.end + data.byteLength > this.deps.maxFileSize) throw new PayloadTooLargeError(this.deps.maxFileSize);
        await writer.push(data);
      }
      const length = await writer.flush();
      const { md5, sha256 } = await digest.finish();
      return { stagingId, key: { md5, sha256, length } };
    } catch (err) {
      await writer.settle();
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
    upload: { uploader: Account; fileName: string; contentType: string; declaredMd5?: string | undefined; declaredSha256?: string | undefined },
    source: UploadSource,
  ): Promise<UploadResult> {
    const mismatch =
      upload.declaredMd5 !== undefined && upload.declaredMd5 !== staged.key.md5
        ? new ChecksumMismatchError('MD5', upload.declaredMd5, staged.key.md5)
        : upload.declaredSha256 !== undefined && upload.declaredSha256 !== staged.key.sha256
          ? new ChecksumMismatchError('SHA-256', upload.declaredSha256, staged.key.sha256)
          : undefined;
    if (mismatch) {
      await this.discard(staged);
      await this.deps.audit.record('upload_failed', upload.uploader, {
        address: source.address,
        fileName: upload.fileName,
        detail: `${source.via}: ${mismatch.message}`,
      });
      throw mismatch;
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
    // Recorded before it is counted: if the event cannot be stored the upload fails uncounted,
    // and the client's retry counts it once.
    await this.deps.audit.record('upload', upload.uploader, {
      address: source.address,
      fileId: outcome.entry.fileId,
      fileName: upload.fileName,
      // The truth for the administrators, also where the clerk was told "stored".
      detail: `${source.via}: ${outcome.status}`,
    });
    const { uploadCount } = await this.deps.store.ledger.record({
      account: upload.uploader,
      fileId: outcome.entry.fileId,
      fileName: upload.fileName,
      contentType: upload.contentType,
      at: now,
      day: this.deps.calendar.dayOf(now),
      fileLength: outcome.entry.fileLength,
      stored: outcome.status === 'stored',
    });
    this.deps.meter.counted({ via: source.via, outcome: outcome.status, bytes: outcome.entry.fileLength });
    return { status, fileId: outcome.entry.fileId, uploadCount };
  }
}
