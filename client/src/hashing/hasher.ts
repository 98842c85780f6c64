import type { ContentDigest } from './content-hash.js';
import type { HashReply, HashRequest } from './hash.worker.js';

export type { ContentDigest };

interface Job {
  worker: Worker;
  resolve: (value: never) => void;
  reject: (error: Error) => void;
  onProgress?: (hashed: number, total: number) => void;
}

/**
 * The page's side of the hash workers. Files are hashed one at a time per worker, in the order
 * they were asked for (a batch of a thousand files must not start a thousand reads); proofs
 * skip the queue because they are small and an upload is waiting on them.
 */
export class Hasher {
  readonly #workers: Worker[] = [];
  readonly #idle: Worker[] = [];
  readonly #waiting: Array<(worker: Worker) => void> = [];
  readonly #jobs = new Map<number, Job>();
  #nextJobId = 1;

  /** Workers that died, and the ones started in their place. */
  readonly #replaced = new Map<Worker, Worker>();
  #disposed = false;

  /**
   * The workers start at the first file hashed, not here: the upload page, which makes the
   * hasher, is mounted on every page of the app, and four threads (each hash worker has an MD5
   * one) starting beside an administrator's accounts page delayed its first rows (issue 43).
   */
  constructor(private readonly workerCount = 1) {}

  #started(): void {
    if (this.#workers.length > 0 || this.#disposed) return;
    for (let i = 0; i < this.workerCount; i++) {
      const worker = this.#start();
      this.#workers.push(worker);
      this.#idle.push(worker);
    }
  }

  #start(): Worker {
    const worker = new Worker(new URL('./hash.worker.ts', import.meta.url), { type: 'module' });
    worker.onmessage = (event: MessageEvent<HashReply>) => this.#settle(event.data);
    // A worker that fails to load or crashes fails its jobs (the files can be retried) and is replaced.
    worker.onerror = (event) => {
      event.preventDefault();
      const error = new Error(`the hashing worker stopped: ${event.message || 'load error'}`);
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
    };
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
  proofs(file: Blob, ranges: { start: number; end: number }[]): Promise<string[]> {
    this.#started();
    return this.#run<string[]>(this.#workers[0]!, (jobId) => ({ type: 'proofs', jobId, file, ranges }), {});
  }

  dispose(): void {
    this.#disposed = true;
    for (const worker of this.#workers) worker.terminate();
  }

  #run<T>(
    worker: Worker,
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
  #acquire(): Promise<Worker> {
    this.#started();
    const idle = this.#idle.pop();
    if (idle) return Promise.resolve(idle);
    return new Promise<Worker>((resolve) => this.#waiting.push(resolve));
  }

  #release(worker: Worker): void {
    const current = this.#replaced.get(worker) ?? worker;
    this.#replaced.delete(worker);
    const next = this.#waiting.shift();
    if (next) next(current);
    else this.#idle.push(current);
  }
}
