import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { nextReply } from '../bench/scans/worker-reply.js';

/** A worker that answers each message with it doubled, and fails at a negative one. */
const doubling = () =>
  new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.on('message', (n) => { if (n < 0) throw new Error('negative: ' + n); parentPort.postMessage(n * 2); });`,
    { eval: true },
  );

describe("a benchmark's worker, asked page after page (bench/scans/ocr-speed.ts)", () => {
  it('answers each page and keeps no listener of the pages before: no warning after ten', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const worker = doubling();
    try {
      for (let page = 1; page <= 25; page++) {
        const reply = nextReply<number>(worker);
        worker.postMessage(page);
        assert.equal(await reply, page * 2);
        assert.deepEqual([worker.listenerCount('message'), worker.listenerCount('error')], [0, 0], `page ${page}`);
      }
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        warnings.filter((w) => w.name === 'MaxListenersExceededWarning'),
        [],
      );
    } finally {
      process.off('warning', onWarning);
      await worker.terminate();
    }
  });

  it("fails with the worker's error, and leaves no listener of it either", async () => {
    const worker = doubling();
    try {
      const reply = nextReply<number>(worker);
      worker.postMessage(-1);
      await assert.rejects(reply, /negative: -1/);
      assert.deepEqual([worker.listenerCount('message'), worker.listenerCount('error')], [0, 0]);
    } finally {
      await worker.terminate();
    }
  });
});
