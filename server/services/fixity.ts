import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { setImmediate } from 'node:timers/promises';
import { VERIFICATION_PROBLEMS_KEPT } from '../../shared/verification.js';
import type { VerificationProblem, VerificationResult } from '../../shared/verification.js';
import { ContentDamagedError } from '../errors.js';
import type { ArchiveStore } from '../store/archive-store.js';
import type { CatalogEntry } from '../store/catalog/port.js';
import type { DigestPool } from '../threads/digest.js';

export const FIXITY_JOB = 'fixity';
/**
 * A check's lease, renewed every third of it from a timer while the check runs (also inside one
 * long file), so a check whose process died is taken over after it, and never one still alive.
 */
const LEASE_MS = 60_000;
const SAVE_EVERY_MS = 5_000;
const PAGE = 200;
const INTERRUPTED = Symbol('interrupted');
const CHECKSUMMED = Symbol('checksummed');

interface CheckOptions {
  /** Called once the check holds its lease and is recorded as running (anyone reading sees it). */
  onStarted?: () => void;
  onProgress?: (r: VerificationResult) => void;
  signal?: AbortSignal;
}

export interface FixityOptions {
  store: Pick<ArchiveStore, 'catalog' | 'content' | 'jobs'>;
  digests: DigestPool;
  clock?: () => Date;
  /** The lease's length (tests shorten it). */
  leaseMs?: number;
}

/**
 * The fixity check of digital preservation: every stored file is read back and its MD5 and
 * SHA-256 recomputed against the catalog. One check runs at a time across all instances (a lease
 * in the store); its progress and last result are kept there for the administrators.
 */
export class FixityService {
  private readonly clock: () => Date;
  /** Set when the server stops: a check in progress ends between two files. */
  private stopped = false;
  private readonly running = new Set<Promise<unknown>>();
  private readonly leaseMs: number;

  constructor(private readonly deps: FixityOptions) {
    this.clock = deps.clock ?? (() => new Date());
    this.leaseMs = deps.leaseMs ?? LEASE_MS;
  }

  /** The last check (or the one running), if any ever ran. */
  async last(): Promise<VerificationResult | undefined> {
    const record = await this.deps.store.jobs.get(FIXITY_JOB);
    const result = record?.state as VerificationResult | null | undefined;
    if (!result) return undefined;
    const alive = record!.holder !== null && record!.leaseUntil !== null && record!.leaseUntil >= this.clock();
    return result.state === 'running' && !alive ? { ...result, state: 'interrupted' } : result;
  }

  /** Whether a scheduled check should start: none ran, the last was interrupted, or it began `intervalMs` ago. */
  async due(intervalMs: number): Promise<boolean> {
    const last = await this.last();
    if (!last || last.state === 'interrupted') return true;
    if (last.state === 'running') return false;
    return this.clock().getTime() - Date.parse(last.startedAt) >= intervalMs;
  }

  /**
   * Checks every catalogued file. Answers undefined when another check is running. `onProgress`
   * sees the result as it grows (the command prints it); `signal` stops it between two files,
   * recorded as interrupted (a stopping server).
   */
  async run(
    trigger: VerificationResult['trigger'],
    options: CheckOptions = {},
  ): Promise<VerificationResult | undefined> {
    const work = this.checkAll(trigger, options);
    this.running.add(work);
    const forget = () => this.running.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Stops checks in progress (recorded as interrupted) and waits for them: the server is stopping. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.running]);
  }

  private async checkAll(
    trigger: VerificationResult['trigger'],
    options: CheckOptions,
  ): Promise<VerificationResult | undefined> {
    const { jobs, catalog } = this.deps.store;
    const holder = `${os.hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
    if (!(await jobs.acquire(FIXITY_JOB, holder, this.clock(), this.leaseMs))) return undefined;
    const result: VerificationResult = {
      state: 'running',
      trigger,
      host: os.hostname(),
      startedAt: this.clock().toISOString(),
      finishedAt: null,
      totalFiles: await catalog.count(),
      files: 0,
      bytes: 0,
      missing: 0,
      corrupted: 0,
      checksummed: 0,
      problems: [],
    };
    const lease = { lost: false };
    const renew = async () => {
      // A renewal that finds the lease in other hands ends this check at its next step.
      if (!(await jobs.renew(FIXITY_JOB, holder, this.clock(), this.leaseMs, result))) lease.lost = true;
    };
    await renew();
    options.onStarted?.();
    // A store that fails a renewal once is tried again at the next tick; the lease has room for it.
    const renewing = setInterval(() => void renew().catch(() => {}), this.leaseMs / 3);
    renewing.unref();
    try {
      return await this.checkEach(result, holder, options, lease);
    } catch (err) {
      // The store failed us (not a file): the check ends interrupted and frees its lease at once,
      // rather than hold it for a minute and read as running.
      result.state = 'interrupted';
      await jobs.release(FIXITY_JOB, holder, result).catch(() => {});
      throw err;
    } finally {
      clearInterval(renewing);
    }
  }

  private async checkEach(
    result: VerificationResult,
    holder: string,
    options: CheckOptions,
    lease: { lost: boolean },
  ): Promise<VerificationResult> {
    const { jobs, catalog } = this.deps.store;
    const { onProgress, signal } = options;
    let savedAt = Date.now();
    let after: string | undefined;
    for (;;) {
      const page = await catalog.scan(after, PAGE);
      if (page.length === 0) break;
      for (const entry of page) {
        // A file whose read fails at once (missing) settles without any I/O callback: without a
        // turn of the event loop between files, a check of many such files starved every request.
        await setImmediate();
        const stop = () => signal?.aborted === true || this.stopped || lease.lost;
        const found = stop() ? INTERRUPTED : await this.check(entry, stop);
        if (found === INTERRUPTED) {
          result.state = 'interrupted';
          await jobs.release(FIXITY_JOB, holder, result);
          return result;
        }
        result.files += 1;
        result.bytes += entry.length;
        if (found === CHECKSUMMED) result.checksummed += 1;
        else if (found) {
          result[found.kind] += 1;
          if (result.problems.length < VERIFICATION_PROBLEMS_KEPT) result.problems.push(found);
        }
        if (Date.now() - savedAt >= SAVE_EVERY_MS) {
          savedAt = Date.now();
          onProgress?.(result);
          // The progress for the administrators; a lease found lost stops the check at the next file.
          if (!(await jobs.renew(FIXITY_JOB, holder, this.clock(), this.leaseMs, result))) lease.lost = true;
        }
      }
      after = page.at(-1)!.fileId;
    }
    result.state = result.missing + result.corrupted === 0 ? 'passed' : 'failed';
    result.finishedAt = this.clock().toISOString();
    onProgress?.(result);
    await jobs.release(FIXITY_JOB, holder, result);
    return result;
  }

  /**
   * One file read back whole: its bytes present, and their digests the catalogued ones. A file
   * stored before chunk checksums gets its sums here, once its digests proved the bytes right.
   */
  private async check(
    entry: CatalogEntry,
    stop: () => boolean,
  ): Promise<VerificationProblem | typeof INTERRUPTED | typeof CHECKSUMMED | undefined> {
    const { content } = this.deps.store;
    const about = { fileId: entry.fileId, fileName: entry.fileName, fileLength: entry.length };
    const adoption = await content.adoptChunkSums(entry);
    const digest = this.deps.digests.start();
    try {
      for await (const part of content.read(entry)) {
        // A large file takes a while: a stopping server does not wait for its end.
        if (stop()) {
          digest.abort();
          return INTERRUPTED;
        }
        adoption?.push(part as Uint8Array);
        await digest.update(part as Uint8Array);
      }
    } catch (err) {
      digest.abort();
      if (err instanceof ContentDamagedError)
        return { ...about, kind: err.kind, chunk: Math.floor(err.offset / entry.chunkSize), detail: err.detail };
      // A file the file system cannot read (EIO from a bad sector, EACCES, EISDIR) is this file's
      // problem; the check goes on with the others.
      const code = (err as NodeJS.ErrnoException).code;
      if (typeof code === 'string' && /^E[A-Z]+$/.test(code))
        return {
          ...about,
          kind: 'missing',
          chunk: null,
          detail: `its bytes cannot be read (${code}: ${(err as Error).message})`,
        };
      throw err;
    }
    const { md5, sha256 } = await digest.finish();
    if (md5 === entry.md5 && sha256 === entry.sha256) {
      if (!adoption) return undefined;
      await adoption.adopt();
      return CHECKSUMMED;
    }
    return {
      ...about,
      kind: 'corrupted',
      chunk: null,
      detail: `the stored bytes have MD5 ${md5} and SHA-256 ${sha256}, not the catalogued ${entry.md5} and ${entry.sha256}`,
    };
  }
}
