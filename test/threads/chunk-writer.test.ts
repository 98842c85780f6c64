import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChunkPool, ChunkWriter } from '../../server/threads/chunk-writer.js';
import { DigestPool } from '../../server/threads/digest.js';
import { YoungCollections } from '../../server/threads/young-collections.js';
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

describe('the young generation while uploads arrive', () => {
  it('is collected after every 8 MiB pushed, counted over every writer of the process', async () => {
    let collected = 0;
    const collections = new YoungCollections(() => collected++, 8 * 1024 * 1024);
    const pool = new ChunkPool(256 * 1024);
    const content = { write: async () => {} };
    const piece = randomContent(64 * 1024); // a socket read
    const writers = ['a', 'b'].map(
      (stagingId) => new ChunkWriter({ content, pool, stagingId, offset: 0, collections }),
    );
    // 5 MiB to each writer, in turn: 10 MiB in all.
    for (let i = 0; i < 160; i++) await writers[i % 2]!.push(piece);
    assert.equal(collected, 1);
    for (let i = 0; i < 96; i++) await writers[i % 2]!.push(piece);
    assert.equal(collected, 2, 'at 16 MiB');
    for (const writer of writers) await writer.flush();
  });

  it('is left to V8 in a process without the collector (run without --expose-gc)', async () => {
    const collections = new YoungCollections(undefined, 1);
    const writer = new ChunkWriter({
      content: { write: async () => {} },
      pool: new ChunkPool(1024),
      stagingId: 'x',
      offset: 0,
      collections,
    });
    await writer.push(randomContent(4096));
    assert.equal(await writer.flush(), 4096);
  });
});
