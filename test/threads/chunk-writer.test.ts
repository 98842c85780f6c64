import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChunkPool, ChunkWriter } from '../../server/threads/chunk-writer.js';
import { DigestPool } from '../../server/threads/digest.js';
import { randomContent } from '../support/content.js';

/** A pool that counts the buffers out of it. */
class CountingPool extends ChunkPool {
  out = 0;
  override take(): Uint8Array {
    this.out++;
    return super.take();
  }
  override give(chunk: Uint8Array): void {
    this.out--;
    super.give(chunk);
  }
}

describe('chunk writer buffers', () => {
  it('returns every buffer to the pool when a writer ends, flushed or failed, so memory stays flat across uploads', async () => {
    const pool = new CountingPool(1024);
    const digests = new DigestPool(2);
    const written: number[] = [];
    const content = { write: async (_id: string, offset: number) => void written.push(offset) };
    try {
      for (const size of [0, 1, 1023, 1024, 1025, 5000, 8 * 1024 + 7]) {
        const digest = digests.start();
        const writer = new ChunkWriter({ content, pool, stagingId: 'x', digest, offset: 0 });
        await writer.push(randomContent(size));
        await writer.flush();
        await digest.finish();
        assert.equal(pool.out, 0, `after a writer of ${size} bytes`);
      }
      // A writer that fails half-way (its request broke) gives back what it holds too.
      const failing = new ChunkWriter({ content, pool, stagingId: 'y', offset: 0 });
      await failing.push(randomContent(1500));
      await failing.settle();
      assert.equal(pool.out, 0, 'after a failed writer');
    } finally {
      await digests.close();
    }
  });
});
