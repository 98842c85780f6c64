import type { AuditNote } from '../../shared/audit-notes.js';
import type { AuditService } from './audit.js';
import type { ReportCalendar } from './calendar.js';
import type { BatchFileResult, UploadResult } from '../../shared/schemas.js';
import { ChecksumMismatchError, IdempotencyKeyReusedError, PayloadTooLargeError } from '../errors.js';
import type { Account } from '../store/accounts/port.js';
import type { ArchiveStore } from '../store/archive-store.js';
import type { CommitOutcome } from '../store/content/port.js';
import type { ContentKey } from '../store/catalog/port.js';
import type { CountedUpload, UploadAction } from '../store/ledger/port.js';
import { ChunkWriter, type ChunkPool } from '../threads/chunk-writer.js';
import type { DigestPool } from '../threads/digest.js';
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
  audit: Pick<AuditService, 'record' | 'recordMany' | 'eventOf'>;
  calendar: ReportCalendar;
  meter: UploadMeter;
  clock?: () => Date;
  /** Told of new content once it is counted (near-duplicate detection queues it); never fails the upload. */
  onStored?: (fileIds: string[]) => Promise<void>;
}

/** A small file received whole (a batch upload), with the digests its sender computed. */
export interface BatchFile {
  /** The file's own name (the catalog's). */
  fileName: string;
  /** Where it was in the clerk's folder (cleanUploadPath): the name its upload is recorded under. */
  path: string;
  /** The key it is counted under, when its sender gave it one (see UploadSource.key). */
  key?: string;
  contentType: string;
  /** The file's bytes as they arrived (pieces of the request's body): hashed and stored without joining them. */
  parts: readonly Uint8Array[];
  md5: string;
  sha256: string;
}

/** How an upload reached the archive, for the audit log. */
export interface UploadSource {
  via: 'direct' | 'tus' | 'batch';
  /** The client's address (null when not known). */
  address: string | null;
  /**
   * The upload action's key, the same on every retry: it is counted once under it. A batch's
   * files are counted under their own keys, or else under `<key>:<index>`.
   */
  key: string;
}

/** A refused upload's audit note: which checksum did not match, and how. */
const mismatchNote = (via: UploadSource['via'], { algorithm, declared, actual }: ChecksumMismatchError): AuditNote => ({
  code: 'checksum_mismatch',
  via,
  algorithm,
  declared,
  actual,
});

/**
 * Ingest: stream bytes into fixed-size chunks while hashing them (one pass, memory flat in
 * file size), then commit: the catalog decides whether the content is new, and the ledger
 * counts the upload either way. A batch's small files are hashed where they lie and stored,
 * committed and counted together (storeMany).
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
    upload: {
      uploader: Account;
      fileName: string;
      /** The name the upload is recorded under: its path in the clerk's folder (cleanUploadPath). */
      path: string;
      contentType: string;
      declaredMd5?: string | undefined;
      declaredSha256?: string | undefined;
    },
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
        fileName: upload.path,
        note: mismatchNote(source.via, mismatch),
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
    const shown = outcome.status === 'duplicate' && (await this.deps.scope.reveals(outcome.entry, upload.uploader));
    // The audit event, the ledger and the day's tally change together, once per key: a retry
    // (the answer was lost, the server crashed) is answered as the first attempt was.
    const counted = await this.deps.store.ledger.count(
      this.action(source.key, upload.uploader, upload, outcome, shown ? 'duplicate' : 'stored', now, source),
    );
    const result = this.answer(counted, outcome, upload.uploader, source);
    // Also on a retry: the attempt that stored the bytes may have crashed before queueing them.
    if (counted.stored) await this.deps.onStored?.([counted.fileId]);
    return result;
  }

  /** An upload to count: its ledger record and its audit event ("stored" or "duplicate" in the detail, the truth for administrators). */
  private action(
    key: string,
    uploader: Account,
    file: { path: string; contentType: string },
    outcome: CommitOutcome,
    statusUnlessStored: 'stored' | 'duplicate',
    at: Date,
    source: UploadSource,
  ): UploadAction {
    const { fileId, length: fileLength } = outcome.entry;
    return {
      key,
      statusUnlessStored,
      record: {
        account: uploader,
        fileId,
        fileName: file.path,
        contentType: file.contentType,
        at,
        day: this.deps.calendar.dayOf(at),
        fileLength,
        carriedBytes: true,
      },
      event: (stored) =>
        this.deps.audit.eventOf(
          'upload',
          uploader,
          {
            address: source.address,
            fileId,
            fileName: file.path,
            note: { code: 'upload', via: source.via, stored },
          },
          at,
        ),
    };
  }

  /**
   * The answer for a counted upload. A key counted before for another file (or another account)
   * was reused for a new upload: refused, as counting it would lose that upload.
   */
  private answer(
    counted: CountedUpload,
    outcome: CommitOutcome,
    uploader: Account,
    source: UploadSource,
  ): UploadResult {
    if (counted.repeated && (counted.fileId !== outcome.entry.fileId || counted.accountId !== uploader.id))
      throw new IdempotencyKeyReusedError();
    if (!counted.repeated)
      this.deps.meter.counted({
        via: source.via,
        outcome: counted.stored ? 'stored' : 'duplicate',
        bytes: outcome.entry.length,
      });
    return { status: counted.status, fileId: counted.fileId, uploadCount: counted.uploadCount };
  }

  /**
   * Stores many small files for one uploader: each is hashed where it lies in memory, and all
   * are committed, audited and counted together (one sync round and one transaction for the
   * lot on the embedded store), which is what makes thousands of small files fast. A file whose
   * bytes do not match its declared digests is refused on its own; a failure of the store
   * fails the whole batch with nothing counted.
   */
  async storeMany(files: readonly BatchFile[], uploader: Account, source: UploadSource): Promise<BatchFileResult[]> {
    const results = new Array<BatchFileResult>(files.length);
    const refused: Array<{ path: string; error: ChecksumMismatchError }> = [];
    const accepted: Array<{ index: number; file: BatchFile; key: ContentKey }> = [];
    // Up to 64 MiB: hashed on the digest workers, while this thread goes on reading requests.
    const digests = await this.deps.digests.digestMany(files.map((file) => file.parts));
    for (const [index, file] of files.entries()) {
      const { md5, sha256 } = digests[index]!;
      const length = file.parts.reduce((sum, part) => sum + part.byteLength, 0);
      const error =
        md5 !== file.md5
          ? new ChecksumMismatchError('MD5', file.md5, md5)
          : sha256 !== file.sha256
            ? new ChecksumMismatchError('SHA-256', file.sha256, sha256)
            : undefined;
      if (error) {
        results[index] = { status: 'failed', error: 'checksum_mismatch', message: error.message };
        refused.push({ path: file.path, error });
      } else accepted.push({ index, file, key: { md5, sha256, length } });
    }
    if (refused.length > 0) {
      await this.deps.audit.recordMany(
        uploader,
        refused.map(({ path, error }) => ({
          action: 'upload_failed',
          details: { address: source.address, fileName: path, note: mismatchNote(source.via, error) },
        })),
      );
    }
    if (accepted.length === 0) return results;

    const { content, ledger } = this.deps.store;
    const now = this.clock();
    const outcomes = await content.storeMany(
      accepted.map(({ file, key }) => ({
        parts: file.parts,
        entry: { key, fileName: file.fileName, contentType: file.contentType, uploadDate: now },
      })),
    );
    // Asked before these uploads are counted, as for one upload.
    const shown = await Promise.all(
      outcomes.map(async (o) => o.status === 'duplicate' && (await this.deps.scope.reveals(o.entry, uploader))),
    );
    const counted = await ledger.countMany(
      accepted.map(({ index, file }, k) =>
        this.action(
          file.key ?? `${source.key}:${index}`,
          uploader,
          file,
          outcomes[k]!,
          shown[k] ? 'duplicate' : 'stored',
          now,
          source,
        ),
      ),
    );
    for (const [k, { index }] of accepted.entries()) {
      try {
        results[index] = this.answer(counted[k]!, outcomes[k]!, uploader, source);
      } catch (err) {
        if (!(err instanceof IdempotencyKeyReusedError)) throw err;
        results[index] = { status: 'failed', error: 'idempotency_key_reused', message: err.message };
      }
    }
    const storedIds = counted.filter((c) => c.stored).map((c) => c.fileId);
    if (storedIds.length > 0) await this.deps.onStored?.(storedIds);
    return results;
  }
}
