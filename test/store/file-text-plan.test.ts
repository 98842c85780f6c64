import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REACH_WALK_MAX, searchPlan, walk } from '../../server/store/file-texts/plan.js';

describe('search by content: which set a search walks', () => {
  it("walks a unit's files only when fewer than the matches walking the matches would read", () => {
    const plan = (reach: number | undefined, matches: number, files = 1_000_000) =>
      searchPlan({ reach, matches, wanted: 21, files });
    // A town of 5,000 files in 1,000,000: a page found in some 4,200 matches, fewer than its files.
    assert.equal(plan(5000, 300_000), 'matches');
    // A unit of 200: 105,000 matches read for a page, or its 200 files.
    assert.equal(plan(200, 300_000), 'reach');
    assert.equal(plan(200, 150), 'matches', 'fewer matches than files: the matches, all of them');
    assert.equal(plan(200, 200), 'matches');
    assert.equal(plan(undefined, 1_000_000), 'matches', 'a subtree, the whole archive, or a unit too large');
    assert.equal(REACH_WALK_MAX, 50_000);
  });

  it('reads candidates in growing batches until enough pass, counting what it read', async () => {
    const candidates = Array.from({ length: 5000 }, (_, i) => i);
    const asked: number[] = [];
    const read = async (after: number | undefined, n: number) => {
      asked.push(n);
      const from = after === undefined ? 0 : after + 1;
      return candidates.slice(from, from + n);
    };
    const everyTenth = async (ids: number[]) => ids.filter((i) => i % 10 === 0);
    const { found, examined } = await walk(read, everyTenth, 21, 1000);
    assert.deepEqual(
      found,
      Array.from({ length: 21 }, (_, i) => i * 10),
    );
    assert.deepEqual(asked, [50, 100, 200], 'a page and more first, then twice as many each time');
    assert.equal(examined, 350);
    const all = await walk(read, everyTenth, 10_000, 1000);
    assert.equal(all.found.length, 500, 'the candidates ran out');
    assert.equal(all.examined, 5000);
  });
});
