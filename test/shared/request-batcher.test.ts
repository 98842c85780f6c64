import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { RequestBatcher } from '../../shared/request-batcher.js';

/** A batcher whose requests wait until the test lets them answer; it records each batch sent. */
function heldBatcher(options: { concurrency: number; waitMs: number; maxItems?: number; fillWhileBusy?: boolean }) {
  const sent: number[][] = [];
  const answers: Array<() => void> = [];
  const batcher = new RequestBatcher<number, string>({
    maxItems: options.maxItems ?? 100,
    waitMs: options.waitMs,
    concurrency: options.concurrency,
    fillWhileBusy: options.fillWhileBusy ?? false,
    send: async (items) => {
      sent.push(items);
      await new Promise<void>((resolve) => answers.push(resolve));
      return items.map((n) => `answer ${n}`);
    },
  });
  return { batcher, sent, answerNext: () => answers.shift()!() };
}

describe('request batcher', () => {
  it('sends a lone item once it has waited, and answers each caller with its own answer', async () => {
    const { batcher, sent, answerNext } = heldBatcher({ concurrency: 2, waitMs: 5 });
    const answered = Promise.all([batcher.add(1), batcher.add(2)]);
    await delay(30);
    assert.deepEqual(sent, [[1, 2]]);
    answerNext();
    assert.deepEqual(await answered, ['answer 1', 'answer 2']);
  });

  it('sends a full batch at once, without waiting', async () => {
    const { batcher, sent, answerNext } = heldBatcher({ concurrency: 2, waitMs: 60_000, maxItems: 3 });
    const answered = Promise.all([1, 2, 3].map((n) => batcher.add(n)));
    await delay(0);
    assert.deepEqual(sent, [[1, 2, 3]]);
    answerNext();
    await answered;
  });

  it('keeps filling while every request is on its way when asked to, so batches grow as the archive slows down', async () => {
    const { batcher, sent, answerNext } = heldBatcher({ concurrency: 1, waitMs: 5, fillWhileBusy: true });
    const answers = [batcher.add(1)];
    await delay(20);
    assert.deepEqual(sent, [[1]]);
    // Items arriving one by one, each long after the wait, while the first request is unanswered.
    for (const n of [2, 3, 4, 5]) {
      answers.push(batcher.add(n));
      await delay(20);
    }
    assert.deepEqual(sent, [[1]], 'nothing more goes while the only slot is taken');
    answerNext();
    await delay(0);
    assert.deepEqual(sent, [[1], [2, 3, 4, 5]], 'what waited goes in one request, not four');
    answerNext();
    assert.deepEqual(
      await Promise.all(answers),
      [1, 2, 3, 4, 5].map((n) => `answer ${n}`),
    );
  });

  it('otherwise seals a batch once it has waited, and sends it when its turn comes', async () => {
    const { batcher, sent, answerNext } = heldBatcher({ concurrency: 1, waitMs: 5 });
    const answers = [batcher.add(1)];
    await delay(20);
    for (const n of [2, 3]) {
      answers.push(batcher.add(n));
      await delay(20);
    }
    answerNext();
    await delay(0);
    assert.deepEqual(sent, [[1], [2]], 'the batch of 2 went as it was sealed, 3 waits its turn');
    answerNext();
    await delay(0);
    assert.deepEqual(sent, [[1], [2], [3]]);
    answerNext();
    assert.deepEqual(
      await Promise.all(answers),
      [1, 2, 3].map((n) => `answer ${n}`),
    );
  });

  it('fails the items not yet sent when closed, and lets those on their way finish', async () => {
    const { batcher, sent, answerNext } = heldBatcher({ concurrency: 1, waitMs: 5 });
    const onItsWay = batcher.add(1);
    await delay(20);
    const waiting = batcher.add(2);
    batcher.close(new Error('the import was stopped'));
    await assert.rejects(waiting, /the import was stopped/);
    await assert.rejects(batcher.add(3), /the import was stopped/);
    answerNext();
    assert.equal(await onItsWay, 'answer 1');
    assert.deepEqual(sent, [[1]]);
  });
});
