/**
 * The first `rows` rows of a ranking (largest key first, ties by `order`), found without ranking
 * every candidate: candidates come largest `bound` first, where a candidate's bound is at least the
 * key of its row, so once `rows` rows are found and the next candidate's bound is below the last
 * one's key, no candidate left can rank among them. A candidate may have no row (`rowOf` gives
 * undefined). Undefined when the walk would spend more than `budget` (each candidate's `cost`)
 * before it can stop: ranking every candidate at once is then the cheaper way.
 */
export function boundedTop<C, R>(
  candidates: Iterable<C>,
  walk: {
    bound: (candidate: C) => number;
    cost: (candidate: C) => number;
    rowOf: (candidate: C) => R | undefined;
    key: (row: R) => number;
    /** Negative where `a` ranks first; it ranks larger keys first. */
    order: (a: R, b: R) => number;
    rows: number;
    budget: number;
  },
): R[] | undefined {
  const top: R[] = [];
  let spent = 0;
  if (walk.rows <= 0) return top;
  for (const candidate of candidates) {
    if (top.length === walk.rows && walk.bound(candidate) < walk.key(top[walk.rows - 1]!)) break;
    spent += walk.cost(candidate);
    if (spent > walk.budget) return undefined;
    const row = walk.rowOf(candidate);
    if (row === undefined) continue;
    // Binary search for the row's place among those found.
    let low = 0;
    let high = top.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (walk.order(top[mid]!, row) <= 0) low = mid + 1;
      else high = mid;
    }
    if (low >= walk.rows) continue;
    top.splice(low, 0, row);
    if (top.length > walk.rows) top.pop();
  }
  return top;
}
