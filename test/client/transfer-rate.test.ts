import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  RateMeter,
  roughDuration,
  secondsLeft,
  transferBytes,
  type TransferFile,
} from '../../client/src/upload/transfer-rate.js';

const MB = 1024 * 1024;

describe('the upload page’s speed and time left', () => {
  it('tells the speed over the last ten seconds, once the samples span two', () => {
    const meter = new RateMeter();
    meter.add(0, 0);
    meter.add(1000, 2 * MB);
    assert.equal(meter.rate(1000), undefined, 'one second is too short to tell');
    for (let t = 1250; t <= 4000; t += 250) meter.add(t, (t / 1000) * 2 * MB);
    assert.equal(meter.rate(4000), 2 * MB);
    // The line got faster: after ten seconds more, only the new speed counts.
    for (let t = 4250; t <= 14_000; t += 250) meter.add(t, 8 * MB + ((t - 4000) / 1000) * 5 * MB);
    assert.ok(Math.abs(meter.rate(14_000)! - 5 * MB) < 0.03 * 5 * MB, `${meter.rate(14_000)! / MB} MB/s`);
  });

  it('slows down to nothing when nothing more is sent (an outage), and starts over for a new list', () => {
    const meter = new RateMeter();
    for (let t = 0; t <= 5000; t += 250) meter.add(t, t * 1000);
    assert.equal(meter.rate(5000), 1_000_000);
    for (let t = 5250; t <= 16_000; t += 250) meter.add(t, 5_000_000);
    assert.equal(meter.rate(16_000), 0);
    assert.equal(secondsLeft(MB, meter.rate(16_000)), undefined, 'no time left is guessed at a standstill');
    meter.add(16_250, 0);
    assert.equal(meter.rate(16_250), undefined, 'fewer bytes than before: a new list');
  });

  it('gives the time left as a person says it', () => {
    assert.equal(secondsLeft(38 * MB, 0.5 * MB), 76);
    assert.equal(secondsLeft(0, undefined), 0);
    assert.deepEqual(roughDuration(76), { unit: 'minutes', value: 1 });
    assert.deepEqual(roughDuration(3), { unit: 'seconds', value: 10 });
    assert.deepEqual(roughDuration(41), { unit: 'seconds', value: 50 });
    assert.deepEqual(roughDuration(56), { unit: 'minutes', value: 1 });
    assert.deepEqual(roughDuration(44 * 60), { unit: 'minutes', value: 44 });
    assert.deepEqual(roughDuration(90 * 60), { unit: 'hours', value: 1.5 });
  });

  it('counts as sent the files sent in full and a large file’s bytes so far; as left, what has not ended and has its bytes', () => {
    const file = {};
    const items: TransferFile[] = [
      { size: 10, progress: 0, phase: 'done', outcome: { kind: 'stored' }, file },
      { size: 20, progress: 0, phase: 'done', outcome: { kind: 'duplicate' }, file },
      { size: 40, progress: 0, phase: 'done', outcome: { kind: 'instant' }, file },
      { size: 80, progress: 0, phase: 'failed', outcome: { kind: 'failed' }, file },
      { size: 1000, progress: 300, phase: 'sending', file },
      { size: 500, progress: 400, phase: 'hashing', file },
      { size: 7000, progress: 0, phase: 'waiting' },
    ];
    assert.deepEqual(transferBytes(items), { sent: 10 + 20 + 300, remaining: 700 + 500 });
  });
});
