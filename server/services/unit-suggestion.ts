import type { UnitSuggestion } from '../../shared/accounts.js';
import type { UnitLevel, UnitView } from '../../shared/units.js';
import type { Caller, UnitDirectory } from './unit-directory.js';

/** At most this many edits (a digit changed, left out, added, or two swapped) between a typed code and a suggestion. */
const MAX_EDITS = 2;
/** Candidates read per query: a city's towns, or a province's counties, fit. */
const CANDIDATES = 500;

/**
 * The unit a typed unit code or name most likely meant, among the units the caller reaches (never
 * one outside it): for digits, the nearest code of the same kind (a town's nine digits, a county's
 * six) sharing its county's, then its city's, digits; for a name, the one unit of exactly that
 * name. Undefined when nothing is near enough to offer.
 */
export async function nearestUnit(
  directory: Pick<UnitDirectory, 'list'>,
  caller: Caller,
  typed: string,
): Promise<UnitSuggestion | undefined> {
  const find = async (q: string, level?: UnitLevel) =>
    (await directory.list(caller, { q, ...(level && { level }), limit: CANDIDATES, offset: 0 })).items;
  if (!/^\d+$/.test(typed)) {
    const named = (await find(typed)).filter((u) => u.name === typed);
    return named.length === 1 ? suggestion(named[0]!) : undefined;
  }
  // Seven digits or more: a town's code with a digit more or less; fewer: a county's or a city's.
  const town = typed.length > 6;
  const attempts: Array<[number, UnitLevel[]]> = town
    ? [
        [6, ['town']],
        [4, ['town']],
      ]
    : [
        [4, ['county', 'city']],
        [2, ['county', 'city']],
      ];
  for (const [shared, levels] of attempts) {
    if (typed.length < shared) continue;
    let best: { unit: UnitView; edits: number; prefix: number } | undefined;
    for (const level of levels)
      for (const unit of await find(typed.slice(0, shared), level)) {
        if (unit.code === null) continue;
        const edits = editDistance(typed, unit.code);
        const prefix = commonPrefix(typed, unit.code);
        // Ties: the one agreeing longer from the start (a slip is likelier late), then code order.
        if (edits <= MAX_EDITS && (!best || edits < best.edits || (edits === best.edits && prefix > best.prefix)))
          best = { unit, edits, prefix };
      }
    if (best) return suggestion(best.unit);
  }
  return undefined;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return i;
}

const suggestion = (unit: UnitView): UnitSuggestion => ({ id: unit.id, name: unit.name, path: unit.path });

/** Edits from a to b: a character changed, left out or added, or two neighbours swapped (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  return d[a.length]![b.length]!;
}
