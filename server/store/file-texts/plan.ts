/**
 * How a search finds a page of files in a view, on either store. Two sets meet: the files holding
 * every term (the matches) and the files of the view (the reach). Walking the matches and asking
 * the ledger about each reads, to find a page in a unit holding 1 file in 200, some 200 matches a
 * file found, and every match of the archive when the unit holds less than a page of them: a
 * clerk's word common in the archive but rare in the unit. Reading the unit's files from the
 * ledger first costs the unit's size, whatever the word. So a search in a unit counts its files,
 * and the matches as far as them, and walks the unit's files (`reach`) when they are fewer than
 * the matches the other way would read, else the matches. Then MongoDB looks the unit's files up by (term, file), a
 * batch at a time, and the embedded store walks its matches against the unit's files held in
 * memory (FTS5 reads matches in order for a fraction of a microsecond each but takes some 200 µs
 * to look one file up), no ledger read per match. A subtree's files are not read by subtree from
 * the ledger: its searches walk the matches.
 */

import type { SearchPlan } from './port.js';

/** A unit with more files than this is never walked: its files would be read, and checked, by the tens of thousands. */
export const REACH_WALK_MAX = 50_000;

/**
 * The plan for a search in a unit of `reach` files (undefined: not a unit, or more than
 * REACH_WALK_MAX) of `matches` files holding its terms (or its rarest term: an upper bound; it may
 * be cut at `reach` + 1), wanting `wanted` files of `files` in the archive. Walking the matches
 * reads about `wanted` × files ÷ reach of them (the unit's share), or all of them when fewer;
 * walking the reach reads its files: the smaller is walked.
 */
export function searchPlan(c: {
  reach: number | undefined;
  matches: number;
  wanted: number;
  files: number;
}): SearchPlan {
  if (c.reach === undefined) return 'matches';
  const matchesRead = Math.min(c.matches, (c.wanted * c.files) / Math.max(1, c.reach));
  return c.reach < matchesRead ? 'reach' : 'matches';
}

/** The first batch read: a page and a little more; each next batch twice as many, up to `maxBatch`. */
const FIRST_BATCH = 50;

/**
 * Reads candidates in the store's order, a batch at a time (`read(after, n)`: up to n after the
 * last one read), keeps those that pass `keep` (in order), and stops once `wanted` are kept or the
 * candidates run out. `examined` is how many candidates were read: what the search cost.
 */
export async function walk<Id>(
  read: (after: Id | undefined, n: number) => Promise<Id[]>,
  keep: (ids: Id[]) => Promise<Id[]>,
  wanted: number,
  maxBatch: number,
): Promise<{ found: Id[]; examined: number }> {
  const found: Id[] = [];
  let examined = 0;
  let after: Id | undefined;
  for (let n = Math.min(maxBatch, Math.max(FIRST_BATCH, 2 * wanted)); ; n = Math.min(maxBatch, 2 * n)) {
    const batch = await read(after, n);
    examined += batch.length;
    if (batch.length > 0) found.push(...(await keep(batch)));
    if (found.length >= wanted || batch.length < n) break;
    after = batch[batch.length - 1];
  }
  return { found: found.slice(0, wanted), examined };
}
