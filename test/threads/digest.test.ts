import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { DigestPool } from '../../server/threads/digest.js';
import { randomContent } from '../support/content.js';
import { until } from '../support/until.js';

const digestsOf = (data: Uint8Array) => ({
  md5: createHash('md5').update(data).digest('hex'),
  sha256: createHash('sha256').update(data).digest('hex'),
});

/** `data` as a batch's arena holds it: a piece of shared memory among other files' bytes. */
function inSharedMemory(data: Uint8Array): Uint8Array {
  const arena = Buffer.from(new SharedArrayBuffer(data.byteLength + 100));
  arena.fill(7);
  arena.set(data, 40);
  return arena.subarray(40, 40 + data.byteLength);
}

describe('digest pool: the files of a batch', () => {
  const pool = new DigestPool(2);
  after(() => pool.close());

  it('gives each file its own MD5 and SHA-256, in order, whatever its parts', async () => {
    const files = [randomContent(1), randomContent(0), randomContent(3 * 1024 * 1024 + 17), randomContent(70_001)];
    const given = [
      [inSharedMemory(files[0]!)],
      [],
      // Pieces of a request's body as they arrived (copied to the worker), and shared ones.
      [files[2]!.subarray(0, 1_000_000), inSharedMemory(files[2]!.subarray(1_000_000))],
      [files[3]!.subarray(0, 5), files[3]!.subarray(5)],
    ];
    assert.deepEqual(await pool.digestMany(given), files.map(digestsOf));
  });

  it('shares many files out among its workers and puts the answers back in place', async () => {
    const files = Array.from({ length: 101 }, (_, i) => randomContent(i * 997));
    assert.deepEqual(await pool.digestMany(files.map((f) => [inSharedMemory(f)])), files.map(digestsOf));
    assert.deepEqual(await pool.digestMany([]), []);
  });

  it('fails the batch when its worker dies, and hashes the next batch on a new one', async () => {
    const crashing = new DigestPool(1);
    try {
      const running = crashing.digestMany([[inSharedMemory(randomContent(64 * 1024 * 1024))]]);
      // The thread behind the pool ends under it, as a crash would.
      const [hashWorker] = (crashing as unknown as { workers: Array<{ worker: { terminate(): Promise<number> } }> })
        .workers;
      await hashWorker!.worker.terminate();
      await assert.rejects(running, /hash worker exited/);
      const data = randomContent(5000);
      assert.deepEqual(await crashing.digestMany([[data]]), [digestsOf(data)]);
    } finally {
      await crashing.close();
    }
  });

  it('ends its threads after a while without work (letting go of what they were sent), never during a stream', async () => {
    const pool = new DigestPool(2, 100);
    try {
      const data = randomContent(10_000);
      // A stream's digests hold both threads (a thread without work may end at any time after
      // 100 ms, which a loaded machine can take to start one).
      const stream = pool.start();
      await stream.update(data.subarray(0, 5000));
      assert.deepEqual(await pool.digestMany([[inSharedMemory(data)]]), [digestsOf(data)]);
      await delay(350);
      assert.equal(pool.running, 2, 'both hold a digest of the stream');
      await stream.update(data.subarray(5000));
      assert.deepEqual(await stream.finish(), digestsOf(data));
      // Ended within a few sweeps; a loaded machine takes a while to stop a thread.
      await until(() => pool.running === 0, 'the idle threads ended');
      assert.deepEqual(await pool.digestMany([[data]]), [digestsOf(data)], 'and start again when needed');
    } finally {
      await pool.close();
    }
  });
});
