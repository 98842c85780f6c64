import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { ContentDamagedError } from '../../errors.js';
import type { ByteRange, ChunkSumAdoption } from './port.js';
import type { CatalogEntry } from '../catalog/port.js';

/**
 * Checksums of stored chunks: CRC-32 of each chunk's bytes, taken as they are written and
 * checked as they are read, so a chunk changed on disk is never served as the file's bytes.
 * (CRC-32 finds accidental damage, which is what a disk does; the whole-file MD5 and SHA-256 of
 * the fixity check stay the proof of identity.)
 */
export type ChunkSums = ReadonlyMap<number, number>;

/** CRC-32 of `data`, continuing a running one (`before`) over earlier bytes of the same chunk. */
export function chunkSum(data: Uint8Array, before = 0): number {
  return crc32(data, before);
}

/**
 * The sums of the chunks contiguous bytes touch, from `offset` on: each over its chunk's bytes
 * from the chunk's start (`head`: a first chunk's bytes before `offset`) to where the bytes end.
 */
export class ChunkSummer {
  private n: number;
  private crc: number;
  private filled: number;
  private readonly sums: Array<[n: number, crc: number]> = [];

  constructor(
    private readonly chunkSize: number,
    offset: number,
    head: Uint8Array = new Uint8Array(0),
  ) {
    this.filled = offset % chunkSize;
    if (head.byteLength !== this.filled)
      throw new Error(`a write at ${offset} continues a chunk after ${this.filled} bytes, not ${head.byteLength}`);
    this.n = (offset - this.filled) / chunkSize;
    this.crc = chunkSum(head);
  }

  push(part: Uint8Array): void {
    let at = 0;
    while (at < part.byteLength) {
      const take = Math.min(this.chunkSize - this.filled, part.byteLength - at);
      this.crc = chunkSum(part.subarray(at, at + take), this.crc);
      this.filled += take;
      at += take;
      if (this.filled === this.chunkSize) {
        this.sums.push([this.n++, this.crc]);
        this.crc = 0;
        this.filled = 0;
      }
    }
  }

  /** Every chunk's [n, sum], the last one's as far as the bytes went. */
  finish(): Array<[n: number, crc: number]> {
    return this.filled > 0 ? [...this.sums, [this.n, this.crc]] : this.sums;
  }
}

/** The chunk-aligned span a read of `range` covers: from the first chunk's start to the last one's end. */
export function chunkSpan(
  entry: CatalogEntry,
  range: ByteRange,
): { first: number; last: number; start: number; end: number } {
  const first = Math.floor(range.start / entry.chunkSize);
  const last = Math.max(first, Math.ceil(range.end / entry.chunkSize) - 1);
  return { first, last, start: first * entry.chunkSize, end: Math.min((last + 1) * entry.chunkSize, entry.length) };
}

/**
 * A committed file's bytes [range.start, range.end) from a `source` that streams the file's chunks
 * whole, from the first chunk the range touches. Fails with a ContentDamagedError where bytes are
 * missing (file streams and cursors end a short read quietly) or a chunk does not match its
 * checksum; chunks without a recorded checksum (files stored before checksums) pass unchecked.
 */
export function checkedRead(
  source: AsyncIterable<Uint8Array>,
  entry: CatalogEntry,
  range: ByteRange,
  sums: ChunkSums,
  /** The store's own errors that mean missing bytes, given the offset reached. */
  missing: (err: unknown, offset: number) => ContentDamagedError | undefined,
): Readable {
  const span = chunkSpan(entry, range);
  const size = entry.chunkSize;
  async function* bytes(): AsyncGenerator<Uint8Array> {
    let n = span.first;
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    // A chunk is checked whole, then only the part of it the range asks for goes out.
    const complete = (chunk: Uint8Array): Uint8Array | undefined => {
      const at = n * size;
      const expected = sums.get(n);
      if (expected !== undefined && chunkSum(chunk) !== expected) {
        throw new ContentDamagedError(entry.fileId, at, 'corrupted', `chunk ${n} does not match its checksum`);
      }
      n += 1;
      const from = Math.max(range.start - at, 0);
      const to = Math.min(range.end - at, chunk.byteLength);
      return to > from ? chunk.subarray(from, to) : undefined;
    };
    try {
      for await (const part of source) {
        let at = 0;
        while (at < part.byteLength) {
          const chunkLength = Math.min(size, entry.length - n * size);
          const take = Math.min(chunkLength - pendingBytes, part.byteLength - at);
          if (take <= 0) throw new Error(`more bytes than the file holds from chunk ${n}`);
          const piece = part.subarray(at, at + take);
          at += take;
          if (pendingBytes === 0 && take === chunkLength) {
            const out = complete(piece);
            if (out) yield out;
            continue;
          }
          pending.push(piece);
          pendingBytes += take;
          if (pendingBytes === chunkLength) {
            const out = complete(Buffer.concat(pending, pendingBytes));
            pending = [];
            pendingBytes = 0;
            if (out) yield out;
          }
        }
      }
    } catch (err) {
      throw missing(err, n * size + pendingBytes) ?? err;
    }
    const reached = n * size + pendingBytes;
    if (reached < span.end)
      throw new ContentDamagedError(entry.fileId, n * size, 'missing', `its bytes from byte ${reached} on are missing`);
  }
  return Readable.from(bytes(), { objectMode: false });
}

/**
 * The bytes [range.start, range.end) exactly as a source streams them, unchecked against chunk
 * sums, but failing with a ContentDamagedError where they end early.
 */
export function uncheckedRead(
  source: AsyncIterable<Uint8Array>,
  fileId: string,
  range: ByteRange,
  missing: (err: unknown, offset: number) => ContentDamagedError | undefined,
): Readable {
  async function* bytes(): AsyncGenerator<Uint8Array> {
    let offset = range.start;
    try {
      for await (const part of source) {
        offset += part.byteLength;
        yield part;
      }
    } catch (err) {
      throw missing(err, offset) ?? err;
    }
    if (offset < range.end)
      throw new ContentDamagedError(fileId, offset, 'missing', `its bytes from byte ${offset} on are missing`);
  }
  return Readable.from(bytes(), { objectMode: false });
}

/** Sums a committed file's chunks as its bytes pass, and records them through `record` on `adopt()`. */
export function chunkSumAdoption(
  chunkSize: number,
  record: (sums: ReadonlyArray<readonly [n: number, crc: number]>) => Promise<void>,
): ChunkSumAdoption {
  const summer = new ChunkSummer(chunkSize, 0);
  return { push: (part) => summer.push(part), adopt: () => record(summer.finish()) };
}
