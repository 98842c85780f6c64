/// <reference lib="webworker" />
import { hashBlob, md5OfRange, type ContentDigest, type Sha256Lane } from './content-hash.js';
import type { Sha256Reply } from './sha256.worker.js';

/**
 * Hashes files off the main thread: MD5 here, SHA-256 in a nested worker fed with the same
 * slices. One file at a time (hash requests are queued by the page); proofs of possession may
 * interleave, since they read only a few small ranges.
 */
export type HashRequest =
  | { type: 'hash'; jobId: number; file: Blob; sliceSize?: number }
  | { type: 'proofs'; jobId: number; file: Blob; ranges: { start: number; end: number }[] }
  | { type: 'abort'; jobId: number };

export type HashReply =
  | { type: 'progress'; jobId: number; hashed: number; total: number }
  | { type: 'digest'; jobId: number; digest: ContentDigest }
  | { type: 'proofs'; jobId: number; digests: string[] }
  | { type: 'error'; jobId: number; message: string; aborted: boolean };

declare const self: DedicatedWorkerGlobalScope;

/** Slices in flight to the SHA-256 lane: 4 × 4 MiB keeps it busy without piling up memory. */
const MAX_IN_FLIGHT = 4;

class WorkerSha256Lane implements Sha256Lane {
  readonly #worker = new Worker(new URL('./sha256.worker.ts', import.meta.url), { type: 'module' });
  #inFlight = 0;
  #room: (() => void) | undefined;
  #digest: { resolve: (hex: string) => void; reject: (e: Error) => void } | undefined;
  #failure: Error | undefined;

  constructor() {
    this.#worker.onmessage = (event: MessageEvent<Sha256Reply>) => {
      const reply = event.data;
      if (reply.type === 'ack') {
        this.#inFlight--;
        this.#room?.();
        this.#room = undefined;
      } else if (reply.type === 'digest') {
        this.#digest?.resolve(reply.hex);
        this.#digest = undefined;
      } else {
        this.#failure = new Error(`SHA-256 failed: ${reply.message}`);
        this.#digest?.reject(this.#failure);
        this.#room?.();
      }
    };
  }

  async update(slice: ArrayBuffer): Promise<void> {
    if (this.#failure) throw this.#failure;
    this.#inFlight++;
    this.#worker.postMessage({ type: 'update', slice }, [slice]);
    if (this.#inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => (this.#room = resolve));
  }

  digest(): Promise<string> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#digest = { resolve, reject };
      this.#worker.postMessage({ type: 'digest' });
    });
  }

  /** An aborted hash leaves state behind: start the next file on a fresh lane. */
  dispose(): void {
    this.#worker.terminate();
  }
}

let lane = new WorkerSha256Lane();
const aborts = new Map<number, AbortController>();

self.onmessage = async (event: MessageEvent<HashRequest>) => {
  const request = event.data;
  const reply = (message: HashReply) => self.postMessage(message);
  if (request.type === 'abort') {
    aborts.get(request.jobId)?.abort();
    return;
  }
  const controller = new AbortController();
  aborts.set(request.jobId, controller);
  try {
    if (request.type === 'hash') {
      let lastReport = 0;
      const digest = await hashBlob(request.file, {
        sha256: lane,
        sliceSize: request.sliceSize,
        signal: controller.signal,
        onProgress: (hashed, total) => {
          // A progress message per slice is plenty; fewer keep the page's event loop quiet.
          const now = performance.now();
          if (hashed === total || now - lastReport > 100) {
            lastReport = now;
            reply({ type: 'progress', jobId: request.jobId, hashed, total });
          }
        },
      });
      reply({ type: 'digest', jobId: request.jobId, digest });
    } else {
      const digests: string[] = [];
      for (const range of request.ranges) digests.push(await md5OfRange(request.file, range.start, range.end));
      reply({ type: 'proofs', jobId: request.jobId, digests });
    }
  } catch (error) {
    if (request.type === 'hash') {
      lane.dispose();
      lane = new WorkerSha256Lane();
    }
    const aborted = controller.signal.aborted;
    reply({ type: 'error', jobId: request.jobId, message: error instanceof Error ? error.message : String(error), aborted });
  } finally {
    aborts.delete(request.jobId);
  }
};
