import type { ContentDigest } from './content-hash.js';
import type { HashReply, HashRequest } from './hash-messages.js';

export type { ContentDigest };

/**
 * A hash worker as the hasher uses it: the Web Worker of hash.worker.ts (`startHashWorker`, in
 * hash-workers.ts, where the bundler finds it), or a test's stand-in.
 */
export interface HashWorker {
  postMessage(request: HashRequest): void;
  terminate(): void;
  /** Its answers go to `onReply`; if it fails to load or crashes, `onFailure` is told why. */
  listen(onReply: (reply: HashReply) => void, onFailure: (why: string) => void): void;
}

interface Job {
  worker: HashWorker;
  resolve: (value: never) => void;
  reject: (error: Error) => void;
  onProgress?: (hashed: number, total: number) => void;
}

/** Asked of a hasher after `dispose()` (its page left): nothing is hashed, the call fails with this. */
export class HasherDisposedError extends Error {
  constructor() {
    super('the hasher was disposed (its page was left): no file is hashed by it any more');
    this.name = 'HasherDisposedError';
  }
}

/**
 * The page's side of the hash workers. Files are hashed one at a time per worker, in the order
 * they were asked for (a batch of a thousand files must not start a thousand reads); proofs
 * skip the queue because they are small and an upload is waiting on them.
 */
export class Hasher {
  readonly #workers: HashWorker[] = [];
  readonly #idle: HashWorker[] = [];
  readonly #waiting: Array<{ resolve: (worker: HashWorker) => void; reject: (error: Error) => void }> = [];
  readonly #jobs = new Map<number, Job>();
  #nextJobId = 1;

  /** Workers that died, and the ones started in their place. */
  readonly #replaced = new Map<HashWorker, HashWorker>();
  #disposed = false;

  /**
   * The workers start at the first file hashed, not here: the upload page, which makes the
   * hasher, is mounted on every page of the app, and four threads (each hash worker has an MD5
   * one) starting beside an administrator's accounts page delayed its first rows (issue 43).
   */
  constructor(
    private readonly workerCount: number,
    private readonly startWorker: () => HashWorker,
  ) {}

  /** The workers, started now if they are not yet; a hasher disposed of answers `HasherDisposedError`. */
  #started(): void {
    if (this.#disposed) throw new HasherDisposedError();
    if (this.#workers.length > 0) return;
    for (let i = 0; i < this.workerCount; i++) {
      const worker = this.#start();
      this.#workers.push(worker);
      this.#idle.push(worker);
    }
  }

  #start(): HashWorker {
    const worker = this.startWorker();
    // A worker that fails to load or crashes fails its jobs (the files can be retried) and is replaced.
    worker.listen(
      (reply) => this.#settle(reply),
      (why) => {
        const error = new Error(`the hashing worker stopped: ${why}`);
        for (const [jobId, job] of this.#jobs) {
          if (job.worker !== worker) continue;
          this.#jobs.delete(jobId);
          job.reject(error);
        }
        worker.terminate();
        const replacement = this.#start();
        this.#replaced.set(worker, replacement);
        this.#workers[this.#workers.indexOf(worker)] = replacement;
        const idle = this.#idle.indexOf(worker);
        if (idle >= 0) this.#idle[idle] = replacement;
      },
    );
    return worker;
  }

  /** MD5 + SHA-256 of a file, reading it once. */
  async hash(
    file: Blob,
    options: { onProgress?: (hashed: number, total: number) => void } = {},
  ): Promise<ContentDigest> {
    const worker = await this.#acquire();
    try {
      return await this.#run<ContentDigest>(worker, (jobId) => ({ type: 'hash', jobId, file }), options);
    } finally {
      this.#release(worker);
    }
  }

  /**
   * MD5 + SHA-256 of many small files in one message to one worker: each file's digest, or an
   * Error for a file that could not be read.
   */
  async hashSmall(files: Blob[]): Promise<Array<ContentDigest | Error>> {
    const worker = await this.#acquire();
    try {
      const digests = await this.#run<Array<ContentDigest | { error: string }>>(
        worker,
        (jobId) => ({ type: 'hashSmall', jobId, files }),
        {},
      );
      return digests.map((d) => ('error' in d ? new Error(d.error) : d));
    } finally {
      this.#release(worker);
    }
  }

  /** Workers hashing at once. */
  get size(): number {
    return this.workerCount;
  }

  /** The MD5 of each byte range, in order (the proof of possession). */
  async proofs(file: Blob, ranges: { start: number; end: number }[]): Promise<string[]> {
    this.#started();
    return this.#run<string[]>(this.#workers[0]!, (jobId) => ({ type: 'proofs', jobId, file, ranges }), {});
  }

  /**
   * Ends the workers. What was asked and not answered fails with `HasherDisposedError`, and so
   * does whatever is asked after: nothing waits for a worker that is gone.
   */
  dispose(): void {
    this.#disposed = true;
    for (const worker of this.#workers) worker.terminate();
    this.#workers.length = 0;
    this.#idle.length = 0;
    const error = new HasherDisposedError();
    for (const job of this.#jobs.values()) job.reject(error);
    this.#jobs.clear();
    for (const waiting of this.#waiting.splice(0)) waiting.reject(error);
  }

  #run<T>(
    worker: HashWorker,
    request: (jobId: number) => HashRequest,
    options: { onProgress?: Job['onProgress'] },
  ): Promise<T> {
    const jobId = this.#nextJobId++;
    return new Promise<T>((resolve, reject) => {
      this.#jobs.set(jobId, { worker, resolve: resolve, reject, onProgress: options.onProgress });
      worker.postMessage(request(jobId));
    });
  }

  #settle(reply: HashReply): void {
    const job = this.#jobs.get(reply.jobId);
    if (!job) return;
    if (reply.type === 'progress') return job.onProgress?.(reply.hashed, reply.total);
    this.#jobs.delete(reply.jobId);
    if (reply.type === 'error') job.reject(new Error(reply.message));
    else job.resolve((reply.type === 'digest' ? reply.digest : reply.digests) as never);
  }

  /** A free worker, or the next one released (first come, first served). */
  #acquire(): Promise<HashWorker> {
    this.#started();
    const idle = this.#idle.pop();
    if (idle) return Promise.resolve(idle);
    return new Promise<HashWorker>((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  #release(worker: HashWorker): void {
    const current = this.#replaced.get(worker) ?? worker;
    this.#replaced.delete(worker);
    if (this.#disposed) return;
    const next = this.#waiting.shift();
    if (next) next.resolve(current);
    else this.#idle.push(current);
  }
}
