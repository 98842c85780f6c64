import SparkMD5 from 'spark-md5';

/**
 * The content identity the archive deduplicates on, computed in one pass over a Blob: slices
 * are read ahead while the current one is hashed, and each slice goes to an MD5 lane and a
 * SHA-256 lane. In the browser the MD5 lane (spark-md5, the slower) is a worker of its own and
 * SHA-256 runs in the reading worker, so reads, MD5 and SHA-256 proceed in parallel. Runs the
 * same in a browser worker and in Node (for tests).
 */

export interface ContentDigest {
  md5: string;
  sha256: string;
  size: number;
}

/**
 * One digest over every slice, in order. A lane that `takesSlices` may take ownership of the
 * buffer (transfer it to a worker), so it is fed after the other lane is done with the slice; a
 * returned promise holds reading back until the lane has room, so memory stays bounded.
 */
export interface DigestLane {
  readonly takesSlices?: boolean;
  update(slice: ArrayBuffer): void | Promise<void>;
  digest(): Promise<string>;
}

export interface HashOptions {
  md5: DigestLane;
  sha256: DigestLane;
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
  if (options.md5.takesSlices && options.sha256.takesSlices) throw new Error('only one lane may take the slices');
  const [first, last] = options.md5.takesSlices ? [options.sha256, options.md5] : [options.md5, options.sha256];
  const size = blob.size;
  const read = (start: number) => blob.slice(start, Math.min(start + sliceSize, size)).arrayBuffer();

  let offset = 0;
  let pending = size > 0 ? read(0) : undefined;
  try {
    while (pending) {
      const slice = await pending;
      options.signal?.throwIfAborted();
      if (slice.byteLength === 0) throw new Error('the file changed or became unreadable while it was being hashed');
      offset += slice.byteLength;
      // Read the next slice while this one is hashed.
      pending = offset < size ? read(offset) : undefined;
      await first.update(slice);
      await last.update(slice);
      options.onProgress?.(offset, size);
    }
  } catch (error) {
    // The slice read ahead is no longer wanted; its failure must not surface as unhandled.
    pending?.catch(() => undefined);
    throw error;
  }
  const [md5, sha256] = await Promise.all([options.md5.digest(), options.sha256.digest()]);
  return { md5, sha256, size };
}

/** spark-md5 in this thread. */
export function sparkMd5Lane(): DigestLane {
  const md5 = new SparkMD5.ArrayBuffer();
  return {
    update: (slice) => void md5.append(slice),
    digest: async () => md5.end(),
  };
}

/** MD5 of one range of a Blob (the proof of possession answers several of these). */
export async function md5OfRange(
  blob: Blob,
  start: number,
  end: number,
  sliceSize = DEFAULT_SLICE_SIZE,
): Promise<string> {
  const md5 = new SparkMD5.ArrayBuffer();
  for (let at = start; at < end; at += sliceSize) {
    md5.append(await blob.slice(at, Math.min(at + sliceSize, end)).arrayBuffer());
  }
  return md5.end();
}
