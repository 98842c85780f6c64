import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundedTop } from '../../server/store/embedded/bounded-top.js';

interface Candidate {
  id: number;
  /** At least its row's key. */
  bound: number;
  /** Its row's key, or none. */
  key: number | undefined;
}
interface Row {
  id: number;
  key: number;
}

/** Largest key first, then the smaller id. */
const order = (a: Row, b: Row) => b.key - a.key || a.id - b.id;

/** A ranking of `n` candidates drawn from `random`, largest bound first, each key at most its bound. */
function candidatesOf(n: number, random: () => number): Candidate[] {
  const candidates = Array.from({ length: n }, (_, id) => {
    const bound = Math.floor(random() * 40);
    const key = random() < 0.2 ? undefined : Math.floor(random() * (bound + 1));
    return { id, bound, key };
  });
  return candidates.sort((a, b) => b.bound - a.bound);
}

/** A small deterministic generator (mulberry32), so a failure repeats. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function walk(candidates: Candidate[], rows: number, budget = Infinity) {
  const ranked: number[] = [];
  const top = boundedTop(candidates, {
    bound: (c) => c.bound,
    cost: () => 1,
    rowOf: (c) => {
      ranked.push(c.id);
      return c.key === undefined ? undefined : { id: c.id, key: c.key };
    },
    key: (r) => r.key,
    order,
    rows,
    budget,
  });
  return { top, ranked };
}

const everyRow = (candidates: Candidate[]) =>
  candidates.flatMap((c) => (c.key === undefined ? [] : [{ id: c.id, key: c.key }])).sort(order);

describe('the first rows of a ranking, walked down an upper bound of each candidate’s key', () => {
  it('are the first rows of ranking every candidate, ties and all, for any number of rows', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const candidates = candidatesOf(300, seeded(seed));
      for (const rows of [1, 5, 50, 299, 400])
        assert.deepEqual(walk(candidates, rows).top, everyRow(candidates).slice(0, rows), `seed ${seed}, ${rows} rows`);
    }
  });

  it('stops at the first candidate whose bound is below the last row’s key', () => {
    const candidates = [
      { id: 1, bound: 10, key: 9 },
      { id: 2, bound: 9, key: 9 },
      { id: 3, bound: 9, key: 2 },
      { id: 4, bound: 8, key: 8 },
      { id: 5, bound: 8, key: 8 },
    ];
    // Two rows of key 9 found: a bound of 9 may still tie with them and rank first by its id, 8 cannot.
    const { top, ranked } = walk(candidates, 2);
    assert.deepEqual(top, [
      { id: 1, key: 9 },
      { id: 2, key: 9 },
    ]);
    assert.deepEqual(ranked, [1, 2, 3]);
  });

  it('ranks every candidate when fewer rows than asked exist, and skips candidates without a row', () => {
    const candidates = [
      { id: 1, bound: 5, key: undefined },
      { id: 2, bound: 4, key: 1 },
      { id: 3, bound: 3, key: undefined },
    ];
    const { top, ranked } = walk(candidates, 10);
    assert.deepEqual(top, [{ id: 2, key: 1 }]);
    assert.deepEqual(ranked, [1, 2, 3]);
    assert.deepEqual(walk([], 10).top, []);
    assert.deepEqual(walk(candidates, 0), { top: [], ranked: [] });
  });

  it('gives up, ranking no more, once the walk would spend more than its budget', () => {
    const candidates = candidatesOf(300, seeded(7));
    const needed = walk(candidates, 50).ranked.length;
    assert.ok(needed > 10 && needed < 300, `${needed} candidates ranked`);
    assert.deepEqual(walk(candidates, 50, needed).top, everyRow(candidates).slice(0, 50));
    const short = walk(candidates, 50, needed - 1);
    assert.equal(short.top, undefined);
    assert.equal(short.ranked.length, needed - 1);
  });
});
