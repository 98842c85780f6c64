import { Worker } from 'node:worker_threads';
import type { Algorithm, FileDigests, HashWorkerReply, HashWorkerRequest } from './hash-worker.js';

export type Digests = FileDigests;

/** Bytes a stream may have waiting at a hash worker before `update` makes the caller wait. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

interface Subscriber {
  onHashed?(): void;
  onDigest?(hex: string): void;
  onDigests?(list: Digests[]): void;
  onError(err: Error): void;
}

class HashWorker {
  readonly jobs = new Map<number, Subscriber>();
  dead = false;
  /** When it last had work (performance.now()). */
  lastWork = performance.now();
  private readonly worker: Worker;

  constructor() {
    this.worker = new Worker(new URL('./hash-worker.js', import.meta.url));
    this.worker.unref();
    this.worker.on('message', (m: HashWorkerReply) => {
      this.lastWork = performance.now();
      const job = this.jobs.get(m.job);
      if (!job) return;
      if (m.op === 'hashed') return job.onHashed?.();
      this.jobs.delete(m.job);
      if (m.op === 'digest') job.onDigest?.(m.hex);
      else job.onDigests?.(m.list);
    });
    this.worker.on('error', (err: Error) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`hash worker exited with code ${code}`)));
  }

  post(m: HashWorkerRequest): void {
    this.lastWork = performance.now();
    this.worker.postMessage(m);
  }

  private fail(err: Error): void {
    this.dead = true;
    for (const job of this.jobs.values()) job.onError(err);
    this.jobs.clear();
  }

  terminate(): Promise<number> {
    this.dead = true;
    return this.worker.terminate();
  }
}

/**
 * MD5 and SHA-256 of byte streams in one pass. Each digest runs on a worker thread of its own,
 * so the thread that receives uploads only moves bytes, and a stream is hashed at the speed of
 * the slower digest (MD5), not of both in turn. Workers start on first use and end after
 * `idleMs` without work: what they were sent (batch arenas among it) is then let go at once, not
 * whenever an idle worker would next collect its garbage.
 */
export class DigestPool {
  private workers: HashWorker[] = [];
  private nextJob = 1;
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly size = 2,
    private readonly idleMs = 60_000,
  ) {}

  private live(): HashWorker[] {
    this.workers = this.workers.filter((w) => !w.dead);
    while (this.workers.length < this.size) this.workers.push(new HashWorker());
    this.sweeper ??= setInterval(() => this.endIdle(), this.idleMs / 2);
    this.sweeper.unref();
    return this.workers;
  }

  private endIdle(): void {
    const idleSince = performance.now() - this.idleMs;
    for (const worker of this.workers)
      if (worker.jobs.size === 0 && worker.lastWork <= idleSince) void worker.terminate();
    this.workers = this.workers.filter((w) => !w.dead);
    if (this.workers.length > 0) return;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Worker threads running now (for tests). */
  get running(): number {
    return this.workers.filter((w) => !w.dead).length;
  }

  start(): DigestJob {
    // The least busy workers take the stream's two digests.
    const [first, second] = [...this.live()].sort((a, b) => a.jobs.size - b.jobs.size);
    const id = this.nextJob;
    this.nextJob += 2;
    return new DigestJob(id, first!, second ?? first!);
  }

  /**
   * Both digests of each of many small files (a batch upload), each given as its parts. The files
   * are shared out among the workers by bytes, one message each, so the thread that receives
   * uploads goes on reading requests meanwhile. Parts in a SharedArrayBuffer (a batch's arena)
   * reach the workers without a copy, others are copied; none may change until this settles.
   */
  async digestMany(files: ReadonlyArray<readonly Uint8Array[]>): Promise<Digests[]> {
    const sizes = files.map((parts) => parts.reduce((sum, part) => sum + part.byteLength, 0));
    const total = sizes.reduce((sum, size) => sum + size, 0);
    const workers = this.live();
    // Consecutive files to each worker, about the same number of bytes each.
    const shares = workers.map(() => [] as number[]);
    let before = 0;
    for (const [index, size] of sizes.entries()) {
      shares[Math.min(workers.length - 1, Math.floor((before * workers.length) / Math.max(total, 1)))]!.push(index);
      before += size;
    }
    const digests = new Array<Digests>(files.length);
    await Promise.all(
      shares.map(async (share, w) => {
        if (share.length === 0) return;
        const worker = workers[w]!;
        const job = this.nextJob++;
        const list = await new Promise<Digests[]>((resolve, reject) => {
          worker.jobs.set(job, { onDigests: resolve, onError: reject });
          worker.post({ op: 'digest-many', job, files: share.map((index) => files[index]!) });
        });
        for (const [k, index] of share.entries()) digests[index] = list[k]!;
      }),
    );
    return digests;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    await Promise.all(this.workers.splice(0).map((w) => w.terminate()));
  }
}

/** One digest of one stream, on one worker. */
class Lane {
  queued = 0;
  readonly releases: Array<() => void> = [];
  readonly digest: Promise<string>;

  constructor(
    readonly worker: HashWorker,
    readonly job: number,
    readonly algorithm: Algorithm,
    onProgress: () => void,
    onError: (err: Error) => void,
  ) {
    this.digest = new Promise<string>((resolve, reject) => {
      worker.jobs.set(job, {
        onHashed: () => {
          this.releases.shift()!();
          onProgress();
        },
        onDigest: resolve,
        onError: (err) => {
          onError(err);
          reject(err);
        },
      });
    });
    this.digest.catch(() => {}); // surfaced by update() or finish()
  }
}

/** One stream's hashing. */
export class DigestJob {
  private failure: Error | undefined;

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }
  private wake: (() => void) | undefined;
  private readonly lanes: [Lane, Lane];

  constructor(id: number, md5Worker: HashWorker, sha256Worker: HashWorker) {
    const progress = () => {
      if (this.queued() <= MAX_QUEUED_BYTES / 2) this.resume();
    };
    const fail = (err: Error) => {
      this.failure = err;
      this.resume();
    };
    this.lanes = [
      new Lane(md5Worker, id, 'md5', progress, fail),
      new Lane(sha256Worker, id + 1, 'sha256', progress, fail),
    ];
  }

  private queued(): number {
    return Math.max(...this.lanes.map((l) => l.queued));
  }

  /**
   * Hashes `data`, which must stay unchanged until `release` is called (once both digests have
   * read it). Chunks in SharedArrayBuffers reach the workers without a copy. Resolves at once
   * unless a worker is too far behind.
   */
  async update(data: Uint8Array, release: () => void = () => {}): Promise<void> {
    this.throwIfFailed();
    let readers = this.lanes.length;
    const done = () => {
      if (--readers === 0) release();
    };
    for (const lane of this.lanes) {
      lane.queued += data.byteLength;
      lane.releases.push(() => {
        lane.queued -= data.byteLength;
        done();
      });
      lane.worker.post({ op: 'update', job: lane.job, algorithm: lane.algorithm, data });
    }
    if (this.queued() > MAX_QUEUED_BYTES) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      // A worker may have failed while this waited.
      this.throwIfFailed();
    }
  }

  async finish(): Promise<Digests> {
    for (const lane of this.lanes) lane.worker.post({ op: 'finish', job: lane.job, algorithm: lane.algorithm });
    const [md5, sha256] = await Promise.all(this.lanes.map((l) => l.digest));
    return { md5: md5!, sha256: sha256! };
  }

  abort(): void {
    for (const lane of this.lanes) {
      lane.worker.jobs.delete(lane.job);
      lane.worker.post({ op: 'abort', job: lane.job });
    }
    this.resume();
  }

  private resume(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
