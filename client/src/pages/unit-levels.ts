import type { SessionView } from '../../../shared/schemas.js';
import type { UnitList, UnitView } from '../../../shared/units.js';
import type { ArchiveApi } from '../api.js';

/** The unit filter's levels, as the ledger names a unit's place (and the reports filter by): 市, 县（市、区）, 乡（镇、街道）. */
export const FILTER_LEVELS = ['city', 'county', 'town'] as const;
export type FilterLevel = (typeof FILTER_LEVELS)[number];

/** The directory's largest page. */
const PAGE = 500;

/**
 * Which units under a chosen one take the county's or the town's place in the ledger's names (see
 * geographyOf on the server): a province's cities and a city's towns (a city without counties,
 * 东莞市) do not.
 */
const TAKES_PLACE: Record<Exclude<FilterLevel, 'city'>, ReadonlyArray<UnitView['level']>> = {
  county: ['county', 'custom'],
  town: ['town', 'custom'],
};

/**
 * The unit directory as the unit filter reads it: the choices at each level within the
 * administrator's reach, asked for one level at a time (the whole of 河北省 has 2,365 towns; one
 * county at most 39) and kept while the page is open, so a filter form made anew for each view
 * asks again for nothing.
 *
 * The levels the reach fixes (a county administrator's city and county) are not choices.
 */
export class UnitLevels {
  /** The names the reach fixes, top down: none for the whole archive. */
  readonly fixed: readonly string[];
  readonly #asked = new Map<string, Promise<UnitView[]>>();

  constructor(
    private readonly api: Pick<ArchiveApi, 'units'>,
    reach: SessionView['reach'],
  ) {
    this.fixed = reach ? [reach.city, reach.county, reach.town].filter((n): n is string => !!n) : [];
  }

  /**
   * The choices at `depth` (0 the city): under `parent`, the unit chosen a level up, or, at the
   * first level the reach leaves open, under the reach's own unit (the archive's cities for the
   * whole archive).
   */
  async choices(depth: number, parent: UnitView | null): Promise<UnitView[]> {
    if (depth === 0) return this.#cities();
    const under = parent ?? (await this.#all({}))[0];
    if (!under) return [];
    const takes = TAKES_PLACE[depth === 1 ? 'county' : 'town'];
    return (await this.#all({ parent: under.id })).filter((u) => takes.includes(u.level));
  }

  /**
   * The archive's cities as the ledger names them: each province's cities, and the province
   * itself where units hang under it directly (a municipality's districts, 省直辖 counties, units
   * added there), which the ledger records in the city's place; units added at the top.
   */
  async #cities(): Promise<UnitView[]> {
    const top = await this.#all({});
    const below = await Promise.all(
      top.map((u) => (u.level === 'province' ? this.#all({ parent: u.id }) : Promise.resolve([]))),
    );
    return top.flatMap((unit, i) => {
      if (unit.level !== 'province') return [unit];
      const cities = below[i]!.filter((u) => u.level === 'city');
      return below[i]!.some((u) => u.level !== 'city') || cities.length === 0 ? [...cities, unit] : cities;
    });
  }

  /** Every unit a directory list has, page after page (asked once per page's life). */
  #all(query: { parent?: string }): Promise<UnitView[]> {
    const key = query.parent ?? '';
    let asked = this.#asked.get(key);
    if (!asked) {
      asked = this.#pages(query);
      // A failure is not kept: the next form asks again.
      asked.catch(() => this.#asked.delete(key));
      this.#asked.set(key, asked);
    }
    return asked;
  }

  async #pages(query: { parent?: string }): Promise<UnitView[]> {
    const items: UnitView[] = [];
    for (;;) {
      const page: UnitList = await this.api.units({ ...query, limit: PAGE, offset: items.length });
      items.push(...page.items);
      if (page.items.length === 0 || items.length >= page.total) return items;
    }
  }
}
