import type { ByteRange, CatalogEntry } from './port.js';

/** Which chunks hold a byte range, and where the range starts and ends inside them. */
export interface ChunkSpan {
  firstChunk: number;
  lastChunk: number;
  /** Bytes to skip at the start of the first chunk. */
  skipFirst: number;
  /** End offset (exclusive) inside the last chunk. */
  endInLast: number;
}

export function chunkSpan(entry: Pick<CatalogEntry, 'fileLength' | 'chunkSize'>, range?: ByteRange): ChunkSpan {
  const start = range?.start ?? 0;
  const end = range?.end ?? entry.fileLength;
  if (end <= start) return { firstChunk: 0, lastChunk: -1, skipFirst: 0, endInLast: 0 };
  const size = entry.chunkSize;
  const lastChunk = Math.floor((end - 1) / size);
  return { firstChunk: Math.floor(start / size), lastChunk, skipFirst: start % size, endInLast: end - lastChunk * size };
}
