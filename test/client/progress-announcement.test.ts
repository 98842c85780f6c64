import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ANNOUNCE_EVERY_MS,
  ProgressAnnouncer,
  type ProgressState,
} from '../../client/src/upload/progress-announcement.js';

const words = {
  start: (total: number) => `start ${total}`,
  progress: (finished: number, total: number) => `${finished}/${total}`,
  end: () => 'end',
};

/** Renders four times a second from `from` ms while `state(t)` moves; returns each change of text with its time. */
function render(
  announcer: ProgressAnnouncer,
  from: number,
  to: number,
  state: (t: number) => ProgressState,
): Array<[number, string]> {
  const changes: Array<[number, string]> = [];
  let last: string | undefined;
  for (let t = from; t <= to; t += 250) {
    const text = announcer.say(state(t), words, t);
    if (text !== last) changes.push([t, text]);
    last = text;
  }
  return changes;
}

describe('the upload page’s live region', () => {
  it('says nothing before files are chosen, then that work started, at once', () => {
    const announcer = new ProgressAnnouncer();
    assert.equal(announcer.say({ active: false, total: 0, finished: 0 }, words, 0), '');
    announcer.began();
    // The files are listed before their work starts: not yet an end.
    assert.equal(announcer.say({ active: false, total: 40, finished: 0 }, words, 100), 'start 40');
    assert.equal(announcer.say({ active: false, total: 40, finished: 0 }, words, 200), 'start 40');
    assert.equal(announcer.say({ active: true, total: 40, finished: 1 }, words, 300), 'start 40');
  });

  it('announces a new list chosen after an ended one, whatever the page redraws between', () => {
    const announcer = new ProgressAnnouncer();
    announcer.began();
    announcer.say({ active: false, total: 2, finished: 2 }, words, 0);
    announcer.began();
    assert.equal(announcer.say({ active: false, total: 0, finished: 0 }, words, 100), '', 'the ended list cleared');
    assert.equal(announcer.say({ active: true, total: 7, finished: 0 }, words, 200), 'start 7');
  });

  it('gives only the summary for a list over before the page first redraws', () => {
    const announcer = new ProgressAnnouncer();
    announcer.began();
    assert.equal(announcer.say({ active: false, total: 2, finished: 2 }, words, 0), 'end');
  });

  it('tells progress at most every five seconds, and only once another tenth of the list has finished', () => {
    const announcer = new ProgressAnnouncer();
    announcer.began();
    // 100 files, one finished every 300 ms: 30 s of redraws four times a second.
    const changes = render(announcer, 0, 29_750, (t) => ({ active: true, total: 100, finished: Math.floor(t / 300) }));
    assert.equal(changes[0]![1], 'start 100');
    const progress = changes.slice(1);
    assert.ok(progress.length >= 4 && progress.length <= 6, JSON.stringify(changes));
    let previous = changes[0]!;
    for (const change of progress) {
      assert.ok(
        change[0] - previous[0] >= ANNOUNCE_EVERY_MS,
        `${JSON.stringify(previous)} then ${JSON.stringify(change)}`,
      );
      const [done] = change[1].split('/').map(Number);
      const [before] = previous[1].startsWith('start') ? [0] : previous[1].split('/').map(Number);
      assert.ok(done! - before! >= 10, `at least a tenth more: ${previous[1]} then ${change[1]}`);
      previous = change;
    }
  });

  it('waits past five seconds for a list that finishes slowly, saying nothing in between', () => {
    const announcer = new ProgressAnnouncer();
    announcer.began();
    // One large file of ten: nothing finishes for a minute.
    const changes = render(announcer, 0, 60_000, (t) => ({ active: true, total: 10, finished: t < 59_000 ? 0 : 1 }));
    assert.deepEqual(changes, [
      [0, 'start 10'],
      [59_000, '1/10'],
    ]);
  });

  it('gives the summary as soon as the list ends, however recent the last announcement', () => {
    const announcer = new ProgressAnnouncer();
    announcer.began();
    announcer.say({ active: true, total: 2, finished: 0 }, words, 0);
    assert.equal(
      announcer.say({ active: true, total: 2, finished: 2 }, words, 400),
      'start 2',
      'not yet: still running',
    );
    assert.equal(announcer.say({ active: false, total: 2, finished: 2 }, words, 500), 'end');
    assert.equal(announcer.say({ active: false, total: 2, finished: 2 }, words, 60_000), 'end', 'said once, kept');
  });

  it('starts again for files retried or added after the end, and says nothing once the list is cleared', () => {
    const announcer = new ProgressAnnouncer();
    announcer.began();
    announcer.say({ active: true, total: 3, finished: 0 }, words, 0);
    announcer.say({ active: false, total: 3, finished: 3 }, words, 1_000);
    // A redraw after the end, with nothing asked for, changes nothing.
    assert.equal(announcer.say({ active: false, total: 3, finished: 3 }, words, 1_500), 'end');
    announcer.began();
    assert.equal(announcer.say({ active: true, total: 3, finished: 2 }, words, 2_000), 'start 3');
    assert.equal(announcer.say({ active: false, total: 3, finished: 3 }, words, 2_500), 'end');
    assert.equal(announcer.say({ active: false, total: 0, finished: 0 }, words, 3_000), '');
  });

  it('says no summary for a list that stopped with files still to be dropped again', () => {
    const announcer = new ProgressAnnouncer();
    announcer.began();
    announcer.say({ active: true, total: 5, finished: 0 }, words, 0);
    assert.equal(announcer.say({ active: false, total: 5, finished: 3 }, words, 1_000), 'start 5');
  });

  it('tells an outage once (not each second of its countdown), then that the archive answers again', () => {
    const outage = { ...words, waiting: () => 'outage', recovered: () => 'recovered' };
    const announcer = new ProgressAnnouncer();
    announcer.began();
    assert.equal(announcer.say({ active: true, total: 100, finished: 0 }, outage, 0), 'start 100');
    assert.equal(announcer.say({ active: true, total: 100, finished: 10, waiting: true }, outage, 250), 'outage');
    assert.equal(announcer.say({ active: true, total: 100, finished: 10, waiting: true }, outage, 60_000), 'outage');
    assert.equal(announcer.say({ active: true, total: 100, finished: 10 }, outage, 60_250), 'recovered');
    assert.equal(announcer.say({ active: true, total: 100, finished: 11 }, outage, 60_500), 'recovered');
    assert.equal(announcer.say({ active: false, total: 100, finished: 100 }, outage, 61_000), 'end');
  });
});
