import { createHash } from 'node:crypto';
import fs from 'node:fs';
import mime from 'mime-types';
import { BATCH_FILE_MAX_BYTES, BATCH_MAX_FILES } from '../../shared/schemas.js';
import type { OwnUpload, UploadCheckRequest, UploadCheckResult, UploadResult } from '../../shared/schemas.js';
import { ArchiveAnswerError, type ArchiveConnection, type BatchSend } from './archive-connection.js';
import { RequestBatcher } from '../../shared/request-batcher.js';
import { FingerprintFailure, type FileFingerprint, type FingerprintPool } from './fingerprints.js';
import { emptyReport, type DryRunFindings, type ImportProblem, type ImportReport } from './import-report.js';
import type { FinishedAs, ImportJournal } from './journal.js';
import type { ImportProgress } from './progress.js';
import type { ImportItem, ImportSource } from './sources.js';

export interface ImporterOptions {
  connection: ArchiveConnection;
  pool: FingerprintPool;
  /** Absent in a dry run, which records nothing. */
  journal: ImportJournal | undefined;
  /** Files checked, proved or sent at the same time. */
  uploads: number;
  dryRun: boolean;
  /**
   * Count again files this account uploaded into its unit before (an earlier import, another
   * journal, the browser): by default they are skipped and counted nowhere (--count-again).
   */
  countAgain?: boolean;
  /** Ctrl-C: no new file is started, uploads stop where they are (the journal knows where). */
  signal: AbortSignal;
  /** Each problem as it is found (the summary lists them all again). */
  onProblem?: (problem: ImportProblem) => void;
  /** Each file as it ends, with the archive's file id: the map from old paths and records to the archive. */
  onFile?: (result: FileResult) => void;
}

/** How one file of the source ended (a real import; a dry run reports none). */
export interface FileResult {
  path: string;
  recordId?: string;
  outcome: FinishedAs | 'alreadyImported' | 'skipped' | 'error';
  fileId?: string;
  md5?: string;
  size?: number;
  reason?: string;
}

/** The whole import stops: the token was refused, or the archive's disk is full. */
export class ImportStoppedError extends Error {
  override name = 'ImportStoppedError';
}

/** How one file ended. */
type Ending =
  | { as: FinishedAs; fileId: string }
  | { as: 'upload' | 'inArchive' }
  /** Uploaded into this unit by this account before (not in this run): not counted again. */
  | { as: 'skipped'; ownUpload: OwnUpload };

type Role = 'first' | 'copy';

/** What the journal keeps of a file to know it again (the same size, modification time and inode). */
const journalled = (file: ImportItem, fp: FileFingerprint) => ({
  key: file.key,
  size: fp.size,
  mtimeMs: fp.mtimeMs,
  ino: fp.ino,
  md5: fp.md5,
  sha256: fp.sha256,
});

/** A counting semaphore: lets at most `size` tasks run at once. */
class Semaphore {
  #free: number;
  readonly #waiting: Array<() => void> = [];
  constructor(size: number) {
    this.#free = size;
  }
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}

/** Room for small files under way (hashed, not yet answered): a number of them, and their bytes, held in memory. */
class SmallFileRoom {
  #count = 0;
  #bytes = 0;
  readonly #waiting: Array<() => void> = [];
  constructor(
    private readonly maxCount: number,
    private readonly maxBytes: number,
  ) {}

  /** Waits for room (a file always fits when nothing else is under way); resolves with its release. */
  async take(bytes: number): Promise<() => void> {
    while (this.#count > 0 && (this.#count >= this.maxCount || this.#bytes + bytes > this.maxBytes))
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#count++;
    this.#bytes += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#count--;
      this.#bytes -= bytes;
      for (const wake of this.#waiting.splice(0)) wake();
    };
  }
}

const SMALL_FILES_UNDER_WAY = 2000;
/** Three batch uploads' worth: two on their way, one filling. */
const SMALL_BYTES_UNDER_WAY = 96 * 1024 * 1024;

/**
 * Items per batch request, and bytes per batch upload (half the archive's limit). The archive's
 * work per file falls with the batch's size (one transaction's index pages serve more files):
 * the 10,000-file import bench took 0.75 ms of server CPU a file in batches of 8 MiB, 0.65 in
 * batches of 32.
 */
const BATCH_ITEMS = Math.min(500, BATCH_MAX_FILES);
const BATCH_UPLOAD_BYTES = 32 * 1024 * 1024;

/** A failure of a whole batch request (not a file's own answer): its files are sent one by one instead. */
function batchFailed(err: unknown): boolean {
  return err instanceof ArchiveAnswerError && !err.fatal && (err.code === 'network' || err.status >= 500);
}

/**
 * The import of one source: each file is hashed (in the pool's threads), then the archive is
 * asked whether it holds the content; if so the file is proved and recorded without its bytes,
 * otherwise sent with tus. Files with the same content as one in flight wait for it and are
 * then recorded as instant duplicates, so no content is sent twice. Hashing runs ahead of the
 * uploads, so the disk, the hashing threads and the network are busy at the same time.
 */
export class Importer {
  readonly report: ImportReport;
  readonly progress: ImportProgress = {
    filesTotal: 0,
    bytesTotal: 0,
    filesDone: 0,
    bytesDone: 0,
    bytesHashed: 0,
    bytesSent: 0,
    duplicates: 0,
    errors: 0,
  };
  readonly findings: DryRunFindings = { groups: [], inArchive: [] };
  /** The first file of each content, by content key: settles once it is recorded (or failed). */
  readonly #firsts = new Map<string, { done: Promise<Ending | undefined>; group?: DryRunFindings['groups'][number] }>();
  readonly #stop = new AbortController();
  #stopped: ImportStoppedError | undefined;
  /** Checks, proofs and small files go to the archive many to a request. */
  readonly #checks: RequestBatcher<UploadCheckRequest, UploadCheckResult>;
  readonly #proofs: RequestBatcher<{ claimId: string; digests: string[] }, UploadResult>;
  readonly #smallUploads: RequestBatcher<BatchSend, UploadResult>;
  readonly #smallRoom = new SmallFileRoom(SMALL_FILES_UNDER_WAY, SMALL_BYTES_UNDER_WAY);
  /** Contents this run counted: a copy of one is a duplicate within the tree, not an earlier upload. */
  readonly #countedHere = new Set<string>();

  /** Why the import stopped before its end on its own (the token refused, the archive's disk full). */
  get stopped(): ImportStoppedError | undefined {
    return this.#stopped;
  }

  constructor(private readonly options: ImporterOptions) {
    this.report = emptyReport(options.dryRun);
    const { connection } = options;
    this.#checks = new RequestBatcher({
      maxItems: BATCH_ITEMS,
      waitMs: 5,
      concurrency: 2,
      fillWhileBusy: true,
      send: (items) => connection.checkMany(items),
    });
    this.#proofs = new RequestBatcher<{ claimId: string; digests: string[] }, UploadResult>({
      maxItems: BATCH_ITEMS,
      waitMs: 5,
      concurrency: 2,
      fillWhileBusy: true,
      send: async (items) =>
        (await connection.proveMany(items)).map((r) =>
          r.status === 'rejected' ? new ArchiveAnswerError(403, r.error, r.message) : r,
        ),
    });
    this.#smallUploads = new RequestBatcher<BatchSend, UploadResult>({
      maxItems: BATCH_ITEMS,
      maxBytes: BATCH_UPLOAD_BYTES,
      sizeOf: (item) => item.bytes.byteLength,
      waitMs: 10,
      concurrency: 2,
      fillWhileBusy: true,
      send: async (items) =>
        (await connection.sendMany(items)).map((r) =>
          !(r instanceof ArchiveAnswerError) && r.status === 'failed'
            ? new ArchiveAnswerError(422, r.error, r.message)
            : r,
        ),
    });
    this.#stop.signal.addEventListener('abort', () => {
      const reason =
        this.#stop.signal.reason instanceof Error ? this.#stop.signal.reason : new Error('the import was stopped');
      for (const batcher of [this.#checks, this.#proofs, this.#smallUploads]) batcher.close(reason);
    });
    options.signal.addEventListener('abort', () => this.#stop.abort(options.signal.reason), { once: true });
    if (options.signal.aborted) this.#stop.abort(options.signal.reason);
  }

  get #signal(): AbortSignal {
    return this.#stop.signal;
  }

  async run(source: ImportSource): Promise<ImportReport> {
    const started = Date.now();
    const { report, progress } = this;
    report.seen = source.items.length + source.problems.length;
    report.legacyNames = source.legacyNames;
    for (const problem of source.problems)
      this.#problem({
        path: problem.label,
        ...(problem.recordId ? { recordId: problem.recordId } : {}),
        reason: problem.reason,
      });
    progress.filesTotal = source.items.length;
    progress.bytesTotal = source.items.reduce((sum, item) => sum + item.size, 0);

    const slots = new Semaphore(this.options.uploads);
    const copies: Promise<unknown>[] = [];
    let next = 0;
    // Enough lanes that every hashing thread and every upload slot has work, and that small files
    // wait for the hashing threads a few each (they go to a thread in groups: FingerprintPool).
    const lanes = this.options.pool.size * 4 + this.options.uploads + 1;
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        while (!this.#signal.aborted && next < source.items.length)
          await this.#processItem(source.items[next++]!, slots, copies);
      }),
    );
    await Promise.all(copies);
    report.interrupted = this.#signal.aborted && progress.filesDone < progress.filesTotal;
    report.seconds = (Date.now() - started) / 1000;
    return report;
  }

  /** One item of the source: skipped when the journal has it done, else fingerprinted and imported (or checked, in a dry run). */
  async #processItem(item: ImportItem, slots: Semaphore, copies: Promise<unknown>[]): Promise<void> {
    const earlier = this.options.journal?.find(item);
    if (earlier?.state === 'done') {
      this.report.alreadyImported++;
      this.#finished(item.size);
      this.options.onFile?.({
        ...whose(item),
        outcome: 'alreadyImported',
        fileId: earlier.fileId,
        md5: earlier.md5,
        size: earlier.size,
      });
      return;
    }
    const resumeUrl = earlier?.state === 'sending' ? earlier.url : undefined;
    // Small files (and every file of a dry run, which sends nothing) go in batches: many are under
    // way at once while the lane goes on hashing. A small file is kept in memory from its hashing
    // to its answer, so its room is taken before it is read.
    const small = !resumeUrl && (this.options.dryRun || item.size <= BATCH_FILE_MAX_BYTES);
    const room = small ? await this.#smallRoom.take(this.options.dryRun ? 0 : item.size) : () => {};
    let fingerprint: FileFingerprint | undefined;
    // Once the file is answered its bytes go, and its room with them.
    const release = () => {
      if (fingerprint) delete fingerprint.bytes;
      room();
    };
    try {
      // An upload an earlier run began keeps its hashes: the archive checks them at the end anyway.
      fingerprint = earlier ?? (await this.#fingerprint(item, small && !this.options.dryRun));
    } catch (err) {
      release();
      if (this.#signal.aborted) return;
      this.#failed(item, err);
      return;
    }
    if (fingerprint.size === 0) this.report.emptyFiles++;
    // What was hashed is what is sent (the listing may be older).
    const file = { ...item, size: fingerprint.size, mtimeMs: fingerprint.mtimeMs, ino: fingerprint.ino };
    const key = `${fingerprint.md5}:${fingerprint.sha256}:${fingerprint.size}`;
    // A file that grew past the batch limit since it was listed goes alone, as large files do.
    const batched = this.options.dryRun ? small : fingerprint.bytes !== undefined;
    const record = (role: Role) =>
      batched
        ? this.#record(file, fingerprint, role, undefined)
        : slots.run(() => this.#record(file, fingerprint, role, resumeUrl));
    const first = this.#firsts.get(key);
    if (first) {
      // Not waited for here: the lane goes on hashing while the first copy is sent.
      copies.push(
        first.done
          .then(async (firstEnding) => {
            if (this.#signal.aborted) return;
            if (this.options.dryRun) first.group?.labels.push(file.label);
            // If the first copy failed, this one is imported as if it were the first.
            await record(firstEnding ? 'copy' : 'first');
          })
          .finally(release),
      );
      return;
    }
    const entry: { done: Promise<Ending | undefined>; group?: DryRunFindings['groups'][number] } = {
      done: Promise.resolve(undefined),
    };
    if (this.options.dryRun) {
      entry.group = { md5: fingerprint.md5, size: fingerprint.size, inArchive: false, labels: [file.label] };
      this.findings.groups.push(entry.group);
    }
    entry.done = record('first');
    this.#firsts.set(key, entry);
    const done = entry.done.finally(release);
    if (batched) copies.push(done);
    else await done;
  }

  #fingerprint(item: ImportItem, keepBytes: boolean): Promise<FileFingerprint> {
    let counted = 0;
    const hashing = this.options.pool.fingerprint(
      item.fsPath,
      (hashed) => {
        this.progress.bytesHashed += hashed - counted;
        counted = hashed;
      },
      keepBytes ? BATCH_FILE_MAX_BYTES : -1,
    );
    return abortable(hashing, this.#signal).then((fingerprint) => {
      this.progress.bytesHashed += fingerprint.size - counted;
      return fingerprint;
    });
  }

  /** Records one file in the archive (or, in a dry run, finds out what would happen). */
  async #record(
    file: ImportItem,
    fp: FileFingerprint,
    role: Role,
    resumeUrl: string | undefined,
  ): Promise<Ending | undefined> {
    if (this.#signal.aborted) return undefined;
    try {
      const ending = this.options.dryRun
        ? await this.#checkOnly(file, fp, role)
        : await this.#import(file, fp, role, resumeUrl);
      if (ending.as === 'skipped') {
        // Not journalled: a later run with --count-again still counts it.
        this.report.skipped++;
        this.options.onFile?.({
          ...whose(file),
          outcome: 'skipped',
          fileId: ending.ownUpload.fileId,
          md5: fp.md5,
          size: fp.size,
          reason: skippedReason(ending.ownUpload),
        });
        this.#finished(fp.size);
        return ending;
      }
      if ('fileId' in ending) this.#countedHere.add(contentKey(fp));
      if (ending.as === 'uploaded' || ending.as === 'upload') this.report.uploaded++;
      else {
        this.report.bytesSaved += fp.size;
        this.progress.duplicates++;
        if (role === 'copy') this.report.duplicatesInTree++;
        else this.report.instant++;
      }
      if ('fileId' in ending) {
        this.options.journal?.write({ ...journalled(file, fp), state: 'done', as: ending.as, fileId: ending.fileId });
        this.options.onFile?.({
          ...whose(file),
          outcome: ending.as,
          fileId: ending.fileId,
          md5: fp.md5,
          size: fp.size,
        });
      }
      this.#finished(fp.size);
      return ending;
    } catch (err) {
      if (this.#signal.aborted && !(err instanceof ArchiveAnswerError && err.fatal)) return undefined;
      this.#failed(file, err);
      return undefined;
    }
  }

  /** A dry run's file: the archive is asked whether it holds it; nothing is sent or recorded. */
  async #checkOnly(file: ImportItem, fp: FileFingerprint, role: Role): Promise<Ending> {
    if (role === 'copy') {
      const group = this.#firsts.get(`${fp.md5}:${fp.sha256}:${fp.size}`)?.group;
      if (group?.inArchive) this.findings.inArchive.push(file.label);
      return { as: 'inArchive' };
    }
    const check = await this.#checks.add(this.#checkRequest(file, fp));
    if (check.status === 'upload') return { as: 'upload' };
    if (check.status === 'skip') return { as: 'skipped', ownUpload: check.ownUpload };
    const group = this.#firsts.get(`${fp.md5}:${fp.sha256}:${fp.size}`)?.group;
    if (group) group.inArchive = true;
    this.findings.inArchive.push(file.label);
    return { as: 'inArchive' };
  }

  async #import(file: ImportItem, fp: FileFingerprint, role: Role, resumeUrl: string | undefined): Promise<Ending> {
    if (!resumeUrl) {
      const check = await this.#checks.add(this.#checkRequest(file, fp));
      // Nothing is counted, and the archive made no claim for it.
      if (check.status === 'skip') return { as: 'skipped', ownUpload: check.ownUpload };
      if (check.status === 'prove') {
        const digests = fp.bytes
          ? check.ranges.map((r) => createHash('md5').update(fp.bytes!.subarray(r.start, r.end)).digest('hex'))
          : await rangeDigests(file.fsPath, check.ranges);
        try {
          const proved = await this.#proofs.add({ claimId: check.claimId, digests });
          return { as: role === 'copy' ? 'duplicateInTree' : 'instant', fileId: proved.fileId };
        } catch (err) {
          // A refused proof means the bytes differ from what the hashes promised: send them, the
          // archive re-hashes what it receives.
          if (!(err instanceof ArchiveAnswerError && err.code === 'claim_rejected')) throw err;
        }
      }
      if (fp.bytes) {
        try {
          const stored = await this.#smallUploads.add({
            bytes: fp.bytes,
            name: file.name,
            type: contentType(file.name),
            md5: fp.md5,
            sha256: fp.sha256,
          });
          this.report.bytesSent += fp.size;
          this.progress.bytesSent += fp.size;
          return { as: 'uploaded', fileId: stored.fileId };
        } catch (err) {
          // The batch as a whole failed (cut off, or the archive's error): this file goes alone, with tus's retries.
          if (!batchFailed(err) || this.#signal.aborted) throw err;
        }
      }
    }
    let sent = 0;
    const send = (uploadUrl: string | undefined) =>
      this.options.connection.send(file, {
        metadata: {
          filename: file.name,
          filetype: contentType(file.name),
          md5: fp.md5,
          sha256: fp.sha256,
          ...(file.recordId ? { recordId: file.recordId } : {}),
        },
        ...(uploadUrl ? { uploadUrl } : {}),
        signal: this.#signal,
        onUploadUrl: (url) => this.options.journal?.write({ ...journalled(file, fp), state: 'sending', url }),
        onBytesSent: (bytes) => {
          sent += bytes;
          this.report.bytesSent += bytes;
          this.progress.bytesSent += bytes;
          this.progress.bytesDone += bytes;
        },
      });
    let result;
    try {
      result = await send(resumeUrl);
    } catch (err) {
      // The archive forgot the earlier run's upload (expired, or collected): start a new one.
      if (!(
        resumeUrl &&
        err instanceof ArchiveAnswerError &&
        (err.code === 'not_found' || err.code === 'upload_expired')
      ))
        throw err;
      result = await send(undefined);
    } finally {
      this.progress.bytesDone -= sent;
    }
    return { as: 'uploaded', fileId: result.fileId };
  }

  /**
   * The check of a file: the archive answers `skip` for one this account uploaded into its unit
   * before, unless it is counted again (--count-again) or this run counted its content (a copy
   * within the source).
   */
  #checkRequest(file: ImportItem, fp: FileFingerprint): UploadCheckRequest {
    const skipOwnUpload = !this.options.countAgain && !this.#countedHere.has(contentKey(fp));
    return {
      md5: fp.md5,
      sha256: fp.sha256,
      size: fp.size,
      name: file.name,
      type: contentType(file.name),
      ...(skipOwnUpload ? { skipOwnUpload } : {}),
    };
  }

  #finished(size: number): void {
    this.progress.filesDone++;
    this.progress.bytesDone += size;
  }

  #failed(item: ImportItem, err: unknown): void {
    if (err instanceof ArchiveAnswerError && err.fatal && !this.#stopped) {
      // Nothing else would succeed: stop, and say why once.
      this.#stopped = new ImportStoppedError(`the archive refused the import: ${err.message}`);
      this.#stop.abort(this.#stopped);
    }
    const reason =
      err instanceof FingerprintFailure || err instanceof ArchiveAnswerError
        ? err.message
        : `unexpected error: ${(err as Error).message ?? err}`;
    this.#problem({ path: item.label, ...(item.recordId ? { recordId: item.recordId } : {}), reason });
    this.progress.filesDone++;
    this.progress.bytesDone += item.size;
  }

  #problem(problem: ImportProblem): void {
    this.report.errors.push(problem);
    this.progress.errors++;
    this.options.onProblem?.(problem);
    this.options.onFile?.({ ...problem, outcome: 'error' });
  }
}

function whose(item: ImportItem): Pick<FileResult, 'path' | 'recordId'> {
  return { path: item.label, ...(item.recordId ? { recordId: item.recordId } : {}) };
}

function contentKey(fp: FileFingerprint): string {
  return `${fp.md5}:${fp.sha256}:${fp.size}`;
}

function skippedReason(own: OwnUpload): string {
  return `uploaded into this unit by this account before (${own.uploadCount} time(s), last ${own.lastUploadTime}); --count-again counts it again`;
}

function contentType(name: string): string {
  return mime.lookup(name) || 'application/octet-stream';
}

/** The MD5 of each range the archive asked for: the proof that the importer holds the bytes. */
async function rangeDigests(fsPath: string | Buffer, ranges: Array<{ start: number; end: number }>): Promise<string[]> {
  // None asked (the archive knows this account sent the file before): the file is not opened.
  if (ranges.length === 0) return [];
  const handle = await fs.promises.open(fsPath, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const digests: string[] = [];
    for (const { start, end } of ranges) {
      const buffer = Buffer.alloc(end - start);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
      digests.push(createHash('md5').update(buffer.subarray(0, bytesRead)).digest('hex'));
    }
    return digests;
  } finally {
    await handle.close();
  }
}

/** Rejects as soon as the signal fires (the work itself is left to finish or be torn down). */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
