import SparkMD5 from 'spark-md5';

/**
 * The content identity the archive deduplicates on, computed in one pass over a Blob:
 * slices are read ahead while the current one is hashed, MD5 (spark-md5) runs here and each
 * slice is then handed to a SHA-256 lane, which in the browser is a second worker so both
 * digests proceed in parallel. Runs the same in a browser worker and in Node (for tests).
 */

export interface ContentDigest {
  md5: string;
  sha256: string;
  size: number;
}

/**
 * Receives every slice once, in order. `update` may take ownership of the buffer (transfer it
 * to a worker), so it is called after MD5 is done with the slice; a returned promise holds
 * reading back until the lane has room (memory stays bounded when SHA-256 is the slower one).
 */
export interface Sha256Lane {
  update(slice: ArrayBuffer): void | Promise<void>;
  digest(): Promise<string>;
}

export interface HashOptions {
  sha256: Sha256Lane;
  sliceSize?: number;
  /** Bytes hashed so far, after each slice. */
  onProgress?: (hashed: number, total: number) => void;
  signal?: AbortSignal;
}

/** 4 MiB: large enough that per-slice overheads vanish, small enough for a smooth progress bar. */
export const DEFAULT_SLICE_SIZE = 4 * 1024 * 1024;

export async function hashBlob(blob: Blob, options: HashOptions): Promise<ContentDigest> {
  const sliceSize = options.sliceSize ?? DEFAULT_SLICE_SIZE;
  if (!Number.isInteger(sliceSize) || sliceSize <= 0) throw new RangeError('sliceSize must be a positive integer');
  const size = blob.size;
  const md5 = new SparkMD5.ArrayBuffer();
  const read = (start: number) => blob.slice(start, Math.min(start + sliceSize, size)).arrayBuffer();

  let offset = 0;
  let pending = size > 0 ? read(0) : undefined;
  while (pending) {
    const slice = await pending;
    options.signal?.throwIfAborted();
    if (slice.byteLength === 0) throw new Error('the file changed or became unreadable while it was being hashed');
    offset += slice.byteLength;
    // Read the next slice while this one is hashed.
    pending = offset < size ? read(offset) : undefined;
    md5.append(slice);
    await options.sha256.update(slice);
    options.onProgress?.(offset, size);
  }
  return { md5: md5.end(), sha256: await options.sha256.digest(), size };
}

/** MD5 of one range of a Blob (the proof of possession answers several of these). */
export async function md5OfRange(blob: Blob, start: number, end: number, sliceSize = DEFAULT_SLICE_SIZE): Promise<string> {
  const md5 = new SparkMD5.ArrayBuffer();
  for (let at = start; at < end; at += sliceSize) {
    md5.append(await blob.slice(at, Math.min(at + sliceSize, end)).arrayBuffer());
  }
  return md5.end();
}
