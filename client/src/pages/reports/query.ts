import {
  COLLISION_SORTS,
  CROSS_UNIT_SORTS,
  defaultOrder,
  NEAR_DUPLICATE_SORTS,
  REPEAT_SORTS,
  SAVINGS_SORTS,
} from '../../../../shared/reports.js';
import type { ReportName } from '../../../../shared/reports.js';

/**
 * A report view's state lives in the location hash (see route.ts); this turns it into the
 * API's query for one table. The API's schemas are strict, so only a table's own parameters
 * are sent.
 */

export const PAGE_SIZES = [25, 50, 100, 200] as const;
export const DEFAULT_PAGE_SIZE = 50;
/** The API's largest page: the savings chart shows up to this many bars. */
export const CHART_LIMIT = 1000;

/** Filters every table takes; they are kept when switching tables. */
export const COMMON_FILTERS = ['from', 'to', 'city', 'county', 'town', 'q'] as const;
const OWN_PARAMS: Record<ReportName, readonly string[]> = {
  'repeat-uploaders': ['group', 'user', 'unitId', 'min', 'copies'],
  'cross-unit': ['min'],
  savings: ['group'],
  collisions: ['min'],
  'near-duplicates': ['method', 'status'],
};

export const REPEAT_GROUPS = ['entry', 'user', 'unit'] as const;
export type RepeatGroup = (typeof REPEAT_GROUPS)[number];
export const SAVINGS_GROUPS = ['unit', 'day', 'week', 'month'] as const;
export type SavingsGroup = (typeof SAVINGS_GROUPS)[number];

function oneOf<T extends string>(value: string | null, allowed: readonly T[]): T {
  return (allowed as readonly string[]).includes(value ?? '') ? (value as T) : allowed[0]!;
}

export const repeatGroup = (params: URLSearchParams): RepeatGroup => oneOf(params.get('group'), REPEAT_GROUPS);
export const savingsGroup = (params: URLSearchParams): SavingsGroup => oneOf(params.get('group'), SAVINGS_GROUPS);

/** The sort fields of a table as the server allows them; the first is the default. */
export function sortsOf(report: ReportName, params: URLSearchParams): readonly string[] {
  switch (report) {
    case 'repeat-uploaders':
      return REPEAT_SORTS[repeatGroup(params)];
    case 'cross-unit':
      return CROSS_UNIT_SORTS;
    case 'savings':
      return SAVINGS_SORTS[savingsGroup(params)];
    case 'collisions':
      return COLLISION_SORTS;
    case 'near-duplicates':
      return NEAR_DUPLICATE_SORTS;
  }
}

export type Order = 'asc' | 'desc';
export interface Sorting {
  sort: string;
  order: Order;
}

/** As the server orders by default: names and periods A→Z / oldest first, counts, sizes and times biggest / newest first. */
export { defaultOrder };

export function sortingOf(report: ReportName, params: URLSearchParams): Sorting {
  const sorts = sortsOf(report, params);
  const sort = oneOf(params.get('sort'), sorts);
  const given = params.get('order');
  return { sort, order: given === 'asc' || given === 'desc' ? given : defaultOrder(sort) };
}

/** Clicking a column header: the same column flips its order, another starts with its natural order. */
export function nextSorting(current: Sorting, sort: string): Sorting {
  if (current.sort === sort) return { sort, order: current.order === 'asc' ? 'desc' : 'asc' };
  return { sort, order: defaultOrder(sort) };
}

export interface Paging {
  limit: number;
  offset: number;
}

export function pagingOf(params: URLSearchParams): Paging {
  const limit = Number(params.get('limit'));
  const offset = Number(params.get('offset'));
  return {
    limit: (PAGE_SIZES as readonly number[]).includes(limit) ? limit : DEFAULT_PAGE_SIZE,
    offset: Number.isSafeInteger(offset) && offset > 0 ? offset : 0,
  };
}

/** The API query for a table: its filters from the hash, the sorting always explicit (so what is shown is what is asked). */
export function reportQuery(
  report: ReportName,
  params: URLSearchParams,
  overrides: Partial<Sorting & Paging> = {},
): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of [...COMMON_FILTERS, ...OWN_PARAMS[report]]) {
    const value = params.get(name)?.trim();
    if (value) query.set(name, value);
  }
  const { sort, order } = { ...sortingOf(report, params), ...overrides };
  const { limit, offset } = { ...pagingOf(params), ...overrides };
  query.set('sort', sort);
  query.set('order', order);
  query.set('limit', String(limit));
  query.set('offset', String(offset));
  return query;
}

/** The hash parameters carried to another table: the common filters only (sorting and `min` differ per table). */
export function carriedFilters(params: URLSearchParams): URLSearchParams {
  const carried = new URLSearchParams();
  for (const name of COMMON_FILTERS) {
    const value = params.get(name);
    if (value) carried.set(name, value);
  }
  return carried;
}
