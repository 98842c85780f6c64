import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { HashReply, HashRequest } from '../../client/src/hashing/hash-messages.js';
import { Hasher, HasherDisposedError, type HashWorker } from '../../client/src/hashing/hasher.js';

/**
 * A hash worker as the page sees one, in this process: it answers a proof at once, or, told to
 * wait, keeps the request until the test lets it go. It says whether it was ended.
 */
class PageWorker implements HashWorker {
  static started: PageWorker[] = [];
  static holdAnswers = false;
  #onReply: ((reply: HashReply) => void) | undefined;
  terminated = false;
  readonly held: Array<() => void> = [];

  constructor() {
    PageWorker.started.push(this);
  }

  postMessage(request: HashRequest): void {
    if (this.terminated) return; // a worker ended answers nothing, as the browser's
    const ranges = request.type === 'proofs' ? request.ranges : [];
    const answer = () =>
      this.#onReply?.({ type: 'proofs', jobId: request.jobId, digests: ranges.map(() => 'd41d8cd9') });
    if (PageWorker.holdAnswers) this.held.push(answer);
    else queueMicrotask(answer);
  }

  terminate(): void {
    this.terminated = true;
  }

  listen(onReply: (reply: HashReply) => void): void {
    this.#onReply = onReply;
  }
}

const file = new Blob([new Uint8Array(64)]);
const ranges = [{ start: 0, end: 8 }];

describe('the hasher, once its page has disposed of it', { timeout: 5000 }, () => {
  beforeEach(() => {
    PageWorker.started = [];
    PageWorker.holdAnswers = false;
  });
  const start = () => new PageWorker();

  it('answers proofs while it lasts', async () => {
    const hasher = new Hasher(1, start);
    assert.deepEqual(await hasher.proofs(file, ranges), ['d41d8cd9']);
    hasher.dispose();
    assert.equal(PageWorker.started[0]!.terminated, true);
  });

  it('refuses proofs and hashes asked after, saying so, whether its workers had started or not', async () => {
    const unstarted = new Hasher(1, start);
    unstarted.dispose();
    await assert.rejects(unstarted.proofs(file, ranges), HasherDisposedError);
    await assert.rejects(unstarted.hash(file), HasherDisposedError);
    await assert.rejects(unstarted.hashSmall([file]), HasherDisposedError);
    assert.equal(PageWorker.started.length, 0, 'no worker started for it');

    const started = new Hasher(1, start);
    await started.proofs(file, ranges);
    started.dispose();
    await assert.rejects(started.proofs(file, ranges), /the hasher was disposed/);
    await assert.rejects(started.hash(file), HasherDisposedError);
  });

  it('fails what was asked and not yet answered, and what waited for a worker, instead of leaving it waiting', async () => {
    const hasher = new Hasher(1, start);
    PageWorker.holdAnswers = true;
    const proving = hasher.proofs(file, ranges);
    const hashing = hasher.hash(file); // the one worker is busy with it
    const waiting = hasher.hash(file); // waits for the worker
    await new Promise((resolve) => setImmediate(resolve));
    hasher.dispose();
    await assert.rejects(proving, HasherDisposedError);
    await assert.rejects(hashing, HasherDisposedError);
    await assert.rejects(waiting, HasherDisposedError);
    // An answer arriving after (the worker had sent it) changes nothing.
    for (const answer of PageWorker.started[0]!.held) answer();
  });
});
