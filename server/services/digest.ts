import { createHash, type Hash } from 'node:crypto';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Md5WorkerReply, Md5WorkerRequest } from './md5-worker.js';

export interface Digests {
  md5: string;
  sha256: string;
}

/** Bytes a job may have queued at its worker before `update` makes the caller wait. */
const MAX_QUEUED_BYTES = 16 * 1024 * 1024;

interface JobHandlers {
  onAck(bytes: number): void;
  onDigest(md5: string): void;
  onError(err: Error): void;
}

class Md5Worker {
  readonly jobs = new Map<number, JobHandlers>();
  private readonly worker: Worker;

  constructor() {
    this.worker = new Worker(new URL('./md5-worker.js', import.meta.url));
    this.worker.unref();
    this.worker.on('message', (m: Md5WorkerReply) => {
      const job = this.jobs.get(m.job);
      if (!job) return;
      if (m.op === 'ack') job.onAck(m.bytes);
      else {
        this.jobs.delete(m.job);
        job.onDigest(m.md5);
      }
    });
    this.worker.on('error', (err) => this.failAll(err));
    this.worker.on('exit', (code) => this.failAll(new Error(`MD5 worker exited with code ${code}`)));
  }

  post(m: Md5WorkerRequest): void {
    this.worker.postMessage(m);
  }

  private failAll(err: Error): void {
    for (const job of this.jobs.values()) job.onError(err);
    this.jobs.clear();
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

/**
 * MD5 and SHA-256 of a byte stream in one pass. MD5 (the slower one) runs on a worker thread
 * while SHA-256 runs on the caller's thread, so ingest is bounded by the slower hash, not
 * their sum.
 */
export class DigestPool {
  private readonly workers: Md5Worker[] = [];
  private nextJob = 1;

  constructor(private readonly size = Math.max(1, os.availableParallelism() - 1)) {}

  start(): DigestJob {
    if (this.workers.length < this.size) this.workers.push(new Md5Worker());
    // The least busy worker takes the job.
    const worker = this.workers.reduce((a, b) => (b.jobs.size < a.jobs.size ? b : a));
    return new DigestJob(worker, this.nextJob++);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((w) => w.terminate()));
  }
}

export class DigestJob {
  private readonly sha256: Hash = createHash('sha256');
  private queued = 0;
  private failure: Error | undefined;
  private drained: (() => void) | undefined;
  private readonly md5: Promise<string>;

  constructor(
    private readonly worker: Md5Worker,
    private readonly id: number,
  ) {
    this.md5 = new Promise<string>((resolve, reject) => {
      worker.jobs.set(id, {
        onAck: (bytes) => {
          this.queued -= bytes;
          if (this.queued <= MAX_QUEUED_BYTES / 2) this.wake();
        },
        onDigest: resolve,
        onError: (err) => {
          this.failure = err;
          this.wake();
          reject(err);
        },
      });
    });
    this.md5.catch(() => {}); // surfaced by update() or finish()
  }

  /**
   * Feeds bytes to both hashes. The data must not change afterwards (the worker may read it
   * later). Resolves at once unless the worker is too far behind.
   */
  async update(data: Uint8Array): Promise<void> {
    if (this.failure) throw this.failure;
    this.sha256.update(data);
    this.queued += data.byteLength;
    this.worker.post({ op: 'update', job: this.id, data });
    if (this.queued > MAX_QUEUED_BYTES) {
      await new Promise<void>((resolve) => (this.drained = resolve));
      if (this.failure) throw this.failure;
    }
  }

  async finish(): Promise<Digests> {
    this.worker.post({ op: 'finish', job: this.id });
    const md5 = await this.md5;
    return { md5, sha256: this.sha256.digest('hex') };
  }

  abort(): void {
    this.worker.jobs.delete(this.id);
    this.worker.post({ op: 'abort', job: this.id });
    this.wake();
  }

  private wake(): void {
    const resolve = this.drained;
    this.drained = undefined;
    resolve?.();
  }
}
