import { Readable } from 'node:stream';
import { ContentDamagedError } from '../errors.js';

/**
 * A committed file's bytes as the store read them, failing with a ContentDamagedError where bytes
 * are missing: file streams and GridFS both end a short read quietly (a truncated content file,
 * lost last chunks), which would serve a short file as if whole.
 */
export function intactRead(
  source: Readable,
  expected: { fileId: string; start: number; end: number },
  /** The store's own errors that mean missing bytes, given the offset reached. */
  damage: (err: unknown, offset: number) => ContentDamagedError | undefined,
): Readable {
  async function* bytes(): AsyncGenerator<Uint8Array> {
    let offset = expected.start;
    try {
      for await (const part of source as AsyncIterable<Uint8Array>) {
        offset += part.byteLength;
        yield part;
      }
    } catch (err) {
      throw damage(err, offset) ?? err;
    }
    if (offset < expected.end) {
      throw new ContentDamagedError(expected.fileId, offset, `its bytes from byte ${offset} on are missing`);
    }
  }
  return Readable.from(bytes(), { objectMode: false });
}
