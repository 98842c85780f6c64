import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createSHA256 } from 'hash-wasm';
import { DEFAULT_SLICE_SIZE, hashBlob, md5OfRange, sparkMd5Lane } from '../../client/src/hashing/content-hash.js';
import type { DigestLane } from '../../client/src/hashing/content-hash.js';

/**
 * The browser's hashing module, run in Node against node:crypto, with the browser's libraries:
 * SHA-256 by hash-wasm in the reading thread, MD5 by spark-md5 behind a lane that takes each
 * slice the way a transfer to a worker does (the sender's buffer is detached), so SHA-256 must
 * be done with a slice before MD5 takes it.
 */
async function sha256Lane(): Promise<DigestLane> {
  const sha = await createSHA256();
  sha.init();
  return { update: (slice) => void sha.update(new Uint8Array(slice)), digest: async () => sha.digest('hex') };
}

function transferringMd5Lane(): DigestLane & { slices: number } {
  const md5 = sparkMd5Lane();
  const lane = {
    takesSlices: true,
    slices: 0,
    async update(slice: ArrayBuffer) {
      const moved = structuredClone(slice, { transfer: [slice] });
      await new Promise((resolve) => setImmediate(resolve));
      await md5.update(moved);
      lane.slices++;
    },
    digest: () => md5.digest(),
  };
  return lane;
}

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');
const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

async function check(data: Buffer, sliceSize: number) {
  const lane = transferringMd5Lane();
  const progress: number[] = [];
  const digest = await hashBlob(new Blob([data]), {
    md5: lane,
    sha256: await sha256Lane(),
    sliceSize,
    onProgress: (hashed) => progress.push(hashed),
  });
  assert.deepEqual(digest, { md5: md5(data), sha256: sha256(data), size: data.length });
  assert.equal(lane.slices, Math.ceil(data.length / sliceSize), 'each byte is read once, slice by slice');
  if (data.length > 0) assert.equal(progress.at(-1), data.length);
  assert.deepEqual(
    progress,
    [...progress].sort((a, b) => a - b),
    'progress only moves forward',
  );
}

describe('hashing a file in the browser (content-hash module)', () => {
  const slice = 64 * 1024;
  for (const [label, size] of [
    ['an empty file', 0],
    ['one byte', 1],
    ['one byte less than a slice', slice - 1],
    ['exactly one slice', slice],
    ['one byte more than a slice', slice + 1],
  ] as const) {
    it(`gives Node's MD5 and SHA-256 for ${label}`, () => check(randomBytes(size), slice));
  }

  it("gives Node's MD5 and SHA-256 for a 100 MB random file, with the default slice size", async () => {
    assert.equal(DEFAULT_SLICE_SIZE, 4 * 1024 * 1024);
    await check(randomBytes(100 * 1000 * 1000), DEFAULT_SLICE_SIZE);
  });

  it('stops with the signal, before reading the rest', async () => {
    const controller = new AbortController();
    const lane = transferringMd5Lane();
    const hashing = hashBlob(new Blob([randomBytes(10 * slice)]), {
      md5: lane,
      sha256: await sha256Lane(),
      sliceSize: slice,
      signal: controller.signal,
      onProgress: (hashed) => hashed >= 2 * slice && controller.abort(),
    });
    await assert.rejects(hashing, { name: 'AbortError' });
    assert.ok(lane.slices <= 3, `read ${lane.slices} slices after the abort`);
  });

  it('refuses a slice size that is not a positive integer', async () => {
    await assert.rejects(
      hashBlob(new Blob([]), { md5: sparkMd5Lane(), sha256: await sha256Lane(), sliceSize: 0 }),
      RangeError,
    );
  });

  it('refuses two lanes that both take the slices (one would get a detached buffer)', async () => {
    await assert.rejects(
      hashBlob(new Blob(['x']), { md5: transferringMd5Lane(), sha256: { ...(await sha256Lane()), takesSlices: true } }),
      /only one lane/,
    );
  });

  it('answers a proof of possession: the MD5 of each byte range, across slice boundaries', async () => {
    const data = randomBytes(3 * slice + 17);
    const blob = new Blob([data]);
    for (const [start, end] of [
      [0, 1],
      [slice - 3, slice + 5],
      [10, 3 * slice + 17],
      [2 * slice, 2 * slice],
    ] as const) {
      assert.equal(await md5OfRange(blob, start, end, slice), md5(data.subarray(start, end)), `range ${start}-${end}`);
    }
  });
});
