import { Worker } from 'node:worker_threads';
import type { FileFingerprint, FingerprintReply, FingerprintRequest } from './fingerprint-worker.js';

export type { FileFingerprint };

/** A file that could not be fingerprinted, with the reason to show. */
export class FingerprintFailure extends Error {
  override name = 'FingerprintFailure';
}

interface Job {
  request: FingerprintRequest;
  resolve: (fingerprint: FileFingerprint) => void;
  reject: (error: Error) => void;
  onProgress: ((hashed: number) => void) | undefined;
}

/** At most this many small files go to a worker in one message. */
const GROUP = 8;

/**
 * Worker threads that hash files, one file per worker at a time, so several files are read and
 * hashed in parallel while memory stays at one read buffer per worker. Small files waiting their
 * turn go to a worker a few at a time: a message each way per group, not per file.
 */
export class FingerprintPool {
  readonly #idle: Worker[] = [];
  readonly #busy = new Map<Worker, Job[]>();
  readonly #queue: Job[] = [];
  #nextJob = 1;
  #closed = false;

  constructor(readonly size: number) {
    for (let i = 0; i < size; i++) this.#idle.push(this.#start());
  }

  #start(): Worker {
    const worker = new Worker(new URL('./fingerprint-worker.js', import.meta.url));
    worker.on('message', (replies: FingerprintReply[]) => {
      const jobs = this.#busy.get(worker);
      if (!jobs) return;
      for (const reply of replies) {
        const at = jobs.findIndex((job) => job.request.job === reply.job);
        if (at < 0) continue;
        const job = jobs[at]!;
        if (reply.type === 'progress') {
          job.onProgress?.(reply.hashed);
          continue;
        }
        jobs.splice(at, 1);
        if (reply.type === 'done') job.resolve(reply.fingerprint);
        else job.reject(new FingerprintFailure(reply.reason));
      }
      if (jobs.length > 0) return;
      this.#busy.delete(worker);
      this.#next(worker);
    });
    // A worker that dies fails its file and is replaced.
    worker.on('error', (err: Error) => this.#lost(worker, err));
    worker.on('exit', (code) => this.#lost(worker, new Error(`the hashing thread stopped (exit code ${code})`)));
    return worker;
  }

  #lost(worker: Worker, err: Error): void {
    const jobs = this.#busy.get(worker);
    const idle = this.#idle.indexOf(worker);
    if (!jobs && idle < 0) return;
    this.#busy.delete(worker);
    if (idle >= 0) this.#idle.splice(idle, 1);
    for (const job of jobs ?? []) job.reject(err);
    if (!this.#closed) this.#next(this.#start());
  }

  #next(worker: Worker): void {
    const first = this.#queue.shift();
    if (!first) {
      this.#idle.push(worker);
      return;
    }
    const jobs = [first];
    // Small files (kept whole) that wait go along, the workers sharing the queue evenly; a large
    // one goes alone, so its progress and the files after it are not held up by one another.
    const share = Math.min(GROUP, Math.ceil((this.#queue.length + 1) / this.size));
    const small = (job: Job | undefined) => job !== undefined && job.request.keepUpTo > 0;
    while (small(first) && jobs.length < share && small(this.#queue[0])) jobs.push(this.#queue.shift()!);
    this.#busy.set(worker, jobs);
    worker.postMessage(jobs.map((job) => job.request));
  }

  /**
   * MD5 and SHA-256 of the file, read once; rejects with FingerprintFailure for a file that cannot
   * be read. A file of at most `keepUpTo` bytes comes with its bytes.
   */
  fingerprint(fsPath: string | Buffer, onProgress?: (hashed: number) => void, keepUpTo = -1): Promise<FileFingerprint> {
    return new Promise((resolve, reject) => {
      if (this.#closed) return reject(new Error('the hashing threads are closed'));
      // A name of its own: a Buffer's view of Node's shared pool would be copied whole to the thread.
      const name = typeof fsPath === 'string' ? fsPath : new Uint8Array(fsPath);
      this.#queue.push({ request: { job: this.#nextJob++, fsPath: name, keepUpTo }, resolve, reject, onProgress });
      const idle = this.#idle.pop();
      if (idle) this.#next(idle);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#idle, ...this.#busy.keys()];
    for (const job of [...[...this.#busy.values()].flat(), ...this.#queue.splice(0)])
      job.reject(new Error('the import stopped'));
    this.#busy.clear();
    this.#idle.length = 0;
    await Promise.all(all.map((w) => w.terminate()));
  }
}
