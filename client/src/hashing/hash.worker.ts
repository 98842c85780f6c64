/// <reference lib="webworker" />
import { createSHA256 } from 'hash-wasm';
import SparkMD5 from 'spark-md5';
import { hashBlob, md5OfRange, type ContentDigest, type DigestLane } from './content-hash.js';
import type { Md5Reply } from './md5.worker.js';
import type { HashReply, HashRequest } from './hash-messages.js';

/**
 * Hashes files off the main thread. This worker reads the file and computes SHA-256 (hash-wasm);
 * each slice then goes, transferred, to a nested worker for MD5 (spark-md5, the slowest step).
 * Reading must not share a thread with spark-md5: a Blob read only progresses while its
 * thread is idle, so reading ahead there gained nothing (measured: 0.78x of spark-md5 alone).
 * One file at a time (the page queues them); proofs of possession may interleave, since they
 * read only a few small ranges.
 */
export type { HashReply, HashRequest };

declare const self: DedicatedWorkerGlobalScope;

/** Slices in flight to the MD5 lane: 4 × 4 MiB keeps it busy without piling up memory. */
const MAX_IN_FLIGHT = 4;

class WorkerMd5Lane implements DigestLane {
  readonly takesSlices = true;
  readonly #worker = new Worker(new URL('./md5.worker.ts', import.meta.url), { type: 'module' });
  #inFlight = 0;
  #room: (() => void) | undefined;
  #digest: { resolve: (hex: string) => void; reject: (e: Error) => void } | undefined;
  #failure: Error | undefined;

  #throwIfFailed(): void {
    if (this.#failure) throw this.#failure;
  }

  constructor() {
    this.#worker.onmessage = (event: MessageEvent<Md5Reply>) => {
      const reply = event.data;
      if (reply.type === 'ack') {
        this.#inFlight--;
        this.#wake();
      } else if (reply.type === 'digest') {
        this.#digest?.resolve(reply.hex);
        this.#digest = undefined;
      } else {
        this.#fail(new Error(`MD5 failed: ${reply.message}`));
      }
    };
    // A worker that cannot load (its script gone after a server upgrade) must fail the file, not hang it.
    this.#worker.onerror = (event) => {
      event.preventDefault();
      this.#fail(new Error(`the MD5 worker could not run: ${event.message || 'load error'}`));
    };
    this.#worker.onmessageerror = () => this.#fail(new Error('the MD5 worker could not read a slice'));
  }

  async update(slice: ArrayBuffer): Promise<void> {
    this.#throwIfFailed();
    this.#inFlight++;
    this.#worker.postMessage({ type: 'update', slice }, [slice]);
    if (this.#inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => (this.#room = resolve));
    // The worker may have failed while this waited.
    this.#throwIfFailed();
  }

  digest(): Promise<string> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#digest = { resolve, reject };
      this.#worker.postMessage({ type: 'digest' });
    });
  }

  /** Ends the lane after a failed file: whoever waits on it gets an error. */
  dispose(): void {
    this.#fail(new Error('cancelled'));
    this.#worker.terminate();
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#digest?.reject(this.#failure);
    this.#digest = undefined;
    this.#wake();
  }

  #wake(): void {
    this.#room?.();
    this.#room = undefined;
  }
}

/** SHA-256 in this thread: hash-wasm is about twice as fast as spark-md5, so it keeps up. */
const sha256 = createSHA256();

/** One hasher for the worker (files are hashed one at a time), reset for each file. */
async function sha256Lane(): Promise<DigestLane> {
  const sha = await sha256;
  sha.init();
  return { update: (slice) => void sha.update(new Uint8Array(slice)), digest: async () => sha.digest('hex') };
}

let md5Lane = new WorkerMd5Lane();

self.onmessage = async (event: MessageEvent<HashRequest>) => {
  const request = event.data;
  const reply = (message: HashReply) => self.postMessage(message);
  try {
    if (request.type === 'hash') {
      let lastReport = 0;
      const digest = await hashBlob(request.file, {
        md5: md5Lane,
        sha256: await sha256Lane(),
        sliceSize: request.sliceSize,
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
    } else if (request.type === 'hashSmall') {
      reply({ type: 'smallDigests', jobId: request.jobId, digests: await hashSmall(request.files) });
    } else {
      const digests: string[] = [];
      for (const range of request.ranges) digests.push(await md5OfRange(request.file, range.start, range.end));
      reply({ type: 'proofs', jobId: request.jobId, digests });
    }
  } catch (error) {
    if (request.type === 'hash') {
      md5Lane.dispose();
      md5Lane = new WorkerMd5Lane();
    }
    reply({ type: 'error', jobId: request.jobId, message: error instanceof Error ? error.message : String(error) });
  }
};

/**
 * Small files, many to a message, each read whole and hashed here: the MD5 lane's messages cost
 * more than hashing a scanned page, and a folder holds thousands of them. A file that cannot be
 * read fails alone.
 */
async function hashSmall(files: Blob[]): Promise<Array<ContentDigest | { error: string }>> {
  const sha = await sha256;
  const digests: Array<ContentDigest | { error: string }> = [];
  for (const file of files) {
    try {
      const bytes = await file.arrayBuffer();
      if (bytes.byteLength !== file.size) throw new Error('the file changed while it was being read');
      sha.init();
      sha.update(new Uint8Array(bytes));
      digests.push({ md5: SparkMD5.ArrayBuffer.hash(bytes), sha256: sha.digest('hex'), size: file.size });
    } catch (error) {
      digests.push({ error: error instanceof Error ? error.message : String(error) });
    }
  }
  return digests;
}
