import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createSHA256 } from 'hash-wasm';
import { DEFAULT_SLICE_SIZE, hashBlob, md5OfRange, type Sha256Lane } from '../../client/src/hashing/content-hash.js';

/**
 * The browser's hashing module, run in Node against node:crypto. The SHA-256 lane is the same
 * library the browser's second worker uses, and takes the slice the way a transfer to a worker
 * does (the sender's buffer is detached), so MD5 must be done with a slice before handing it on.
 */
async function transferringLane(): Promise<Sha256Lane & { slices: number; maxInFlight: number }> {
  const sha = await createSHA256();
  sha.init();
  let inFlight = 0;
  const lane = {
    slices: 0,
    maxInFlight: 0,
    async update(slice: ArrayBuffer) {
      const moved = structuredClone(slice, { transfer: [slice] });
      inFlight++;
      lane.maxInFlight = Math.max(lane.maxInFlight, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      sha.update(new Uint8Array(moved));
      lane.slices++;
      inFlight--;
    },
    async digest() {
      return sha.digest('hex');
    },
  };
  return lane;
}

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');
const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

async function check(data: Buffer, sliceSize: number) {
  const lane = await transferringLane();
  const progress: number[] = [];
  const digest = await hashBlob(new Blob([data]), { sha256: lane, sliceSize, onProgress: (hashed) => progress.push(hashed) });
  assert.deepEqual(digest, { md5: md5(data), sha256: sha256(data), size: data.length });
  assert.equal(lane.slices, Math.ceil(data.length / sliceSize), 'each byte is read once, slice by slice');
  if (data.length > 0) assert.equal(progress.at(-1), data.length);
  assert.deepEqual(progress, [...progress].sort((a, b) => a - b), 'progress only moves forward');
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
    const lane = await transferringLane();
    const hashing = hashBlob(new Blob([randomBytes(10 * slice)]), {
      sha256: lane,
      sliceSize: slice,
      signal: controller.signal,
      onProgress: (hashed) => hashed >= 2 * slice && controller.abort(),
    });
    await assert.rejects(hashing, { name: 'AbortError' });
    assert.ok(lane.slices <= 3, `read ${lane.slices} slices after the abort`);
  });

  it('refuses a slice size that is not a positive integer', async () => {
    await assert.rejects(hashBlob(new Blob([]), { sha256: await transferringLane(), sliceSize: 0 }), RangeError);
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
