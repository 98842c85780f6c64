import type { ContentStore } from '../store/content/port.js';
import type { DigestJob } from './digest.js';
import { youngCollections, type YoungCollections } from './young-collections.js';

/** Chunks are written to the store in batches (about 2 MiB at the default chunk size). */
const BATCH_CHUNKS = 8;

/** Free buffers a pool keeps (16 MiB at the default chunk size); more are made while many requests run. */
const MAX_FREE_CHUNKS = 64;

/**
 * Chunk buffers reused across requests, so memory stays flat however large the file and however
 * many requests it comes in. They are SharedArrayBuffers, so the hash workers read them without
 * a copy (and, being shared, they are freed only when every thread lets go: making them per
 * request would pile them up).
 */
export class ChunkPool {
  private readonly free: Uint8Array[] = [];

  constructor(readonly size: number) {}

  take(): Uint8Array {
    return this.free.pop() ?? new Uint8Array(new SharedArrayBuffer(this.size));
  }

  /** Returns a buffer nobody uses. */
  give(chunk: Uint8Array): void {
    if (this.free.length < MAX_FREE_CHUNKS) this.free.push(chunk);
  }

  /** A callback that returns `chunk` to the pool once it has been called `users` times. */
  releaser(chunk: Uint8Array, users: number): () => void {
    return () => {
      if (--users === 0) this.give(chunk);
    };
  }
}

export interface ChunkWriterOptions {
  content: Pick<ContentStore, 'write'>;
  /** Buffers of the store's chunk size. */
  pool: ChunkPool;
  stagingId: string;
  /** Hashes the bytes on the way; absent when the bytes before `offset` were not hashed here. */
  digest?: DigestJob | undefined;
  /** Where the bytes start in the staging area (a resumed upload starts mid-file). */
  offset: number;
  /** Called in order after each batch is written, with the end of the bytes written so far. */
  onPersisted?: (offset: number) => Promise<void>;
  /** Told of every byte pushed, once copied (the process's unless a test gives its own). */
  collections?: YoungCollections;
}

/**
 * Moves a byte stream into a staging area: cut into chunks on the store's chunk edges, written
 * in batches (one batch on its way to the store while the next fills) and hashed on the way, so
 * each byte is read once and memory stays flat. A writer serves one request.
 */
export class ChunkWriter {
  private readonly chunkSize: number;
  private readonly pool: ChunkPool;
  /** The buffer being filled; taken when bytes arrive, so a writer that ends holds none. */
  private chunk: Uint8Array | undefined;
  private filled = 0;
  /** Absolute offset of the first byte of the current chunk buffer. */
  private chunkStart: number;
  /** Room in the current chunk buffer: a first chunk that continues a partial one is shorter. */
  private room: number;
  private batch: Uint8Array[] = [];
  private batchReleases: Array<() => void> = [];
  private batchStart: number;
  private batchBytes = 0;
  /** Resolves once the newest batch is written and every earlier one persisted. */
  private persisted: Promise<void> = Promise.resolve();

  constructor(private readonly options: ChunkWriterOptions) {
    this.chunkSize = options.pool.size;
    this.pool = options.pool;
    this.chunkStart = options.offset;
    this.batchStart = options.offset;
    this.room = this.chunkSize - (options.offset % this.chunkSize);
  }

  /** Bytes pushed so far, counted from the start of the staging area. */
  get end(): number {
    return this.chunkStart + this.filled;
  }

  async push(data: Uint8Array): Promise<void> {
    let at = 0;
    while (at < data.byteLength) {
      const take = Math.min(this.room - this.filled, data.byteLength - at);
      this.chunk ??= this.pool.take();
      this.chunk.set(data.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      if (this.filled === this.room) await this.closeChunk();
    }
    // `data` is garbage now, unless the caller keeps it.
    (this.options.collections ?? youngCollections).receivedBytes(data.byteLength);
  }

  /** Writes everything pushed, a partial last chunk included, and waits until it is persisted. */
  async flush(): Promise<number> {
    if (this.filled > 0) await this.closeChunk();
    await this.writeBatch();
    await this.persisted;
    return this.end;
  }

  /** Waits for writes in flight, ignoring their outcome (the caller is failing anyway). */
  async settle(): Promise<void> {
    // Bytes pushed but not yet written are dropped: their buffers go back (the store's share of a
    // batch's; a failed hash keeps its own, and those go to the garbage collector).
    if (this.chunk) this.pool.give(this.chunk);
    this.chunk = undefined;
    this.filled = 0;
    for (const release of this.batchReleases) release();
    this.batch = [];
    this.batchReleases = [];
    this.batchBytes = 0;
    await this.persisted.catch(() => {});
  }

  private async closeChunk(): Promise<void> {
    const chunk = this.chunk!;
    const full = chunk.subarray(0, this.filled);
    // The buffer is reused once both the store and the hashing are done with it.
    const release = this.pool.releaser(chunk, this.options.digest ? 2 : 1);
    this.batch.push(full);
    this.batchReleases.push(release);
    this.batchBytes += full.byteLength;
    this.chunkStart += this.filled;
    this.chunk = undefined;
    this.filled = 0;
    this.room = this.chunkSize;
    await this.options.digest?.update(full, release);
    if (this.batch.length >= BATCH_CHUNKS) await this.writeBatch();
  }

  private async writeBatch(): Promise<void> {
    if (this.batch.length === 0) return;
    const { batch, batchReleases: releases, batchStart: start } = this;
    const end = start + this.batchBytes;
    this.batch = [];
    this.batchReleases = [];
    this.batchStart = end;
    this.batchBytes = 0;
    const write = this.options.content
      .write(this.options.stagingId, start, batch)
      .then(() => releases.forEach((release) => release()));
    // Progress is recorded in order: never an offset whose earlier bytes are not yet written.
    const previous = this.persisted;
    const persisted = Promise.all([write, previous]).then(() => this.options.onPersisted?.(end));
    persisted.catch(() => {}); // awaited by the next batch, flush() or settle()
    this.persisted = persisted;
    // One batch may be on its way while the next one fills: wait for the one before.
    await previous;
  }
}
