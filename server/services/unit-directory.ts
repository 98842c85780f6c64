import { randomBytes, randomUUID } from 'node:crypto';
import type { Unit } from '../../shared/schemas.js';
import {
  ARCHIVE_UNIT_ID,
  UNIT_NAME_RULE,
  type NewUnitRequest,
  type UnitList,
  type UnitListQuery,
  type UnitView,
} from '../../shared/units.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import type { Account, AccountSelection, AccountStore } from '../store/accounts/port.js';
import type { UnitSubtree } from '../store/ledger/port.js';
import type { JobStore } from '../store/jobs/port.js';
import type { DirectoryUnit, UnitStore } from '../store/units/port.js';
import { divisionsOf, divisionsSource } from './divisions.js';
import { checkedName } from './typed-names.js';

/**
 * What an account reaches: everything (the archive's top-level administrators), the subtree of
 * its unit, or nothing (a clerk whose unit is not in the directory).
 */
export type Reach = { kind: 'everything' } | { kind: 'subtree'; root: DirectoryUnit } | { kind: 'nothing' };

/** Whoever acts: what the directory needs to know of an account. */
export type Caller = Pick<Account, 'role' | 'unit'>;

export function reaches(reach: Reach, unit: Pick<DirectoryUnit, 'lineage'>): boolean {
  return reach.kind === 'everything' || (reach.kind === 'subtree' && unit.lineage.startsWith(reach.root.lineage));
}

export function unitView(unit: DirectoryUnit): UnitView {
  const { id, code, name, level, parentId, path } = unit;
  return { id, code, name, level, parentId, path: path.join(' / ') };
}

/** The archive's own unit, above every province: the unit of its top-level administrators. */
export const ARCHIVE_UNIT: Unit = { id: ARCHIVE_UNIT_ID, geoType: 'city', city: 'Archive' };

const SLOTS = ['city', 'county', 'town', 'street'] as const;

/** An official unit's level, read from its id (a division's code), or custom. */
function levelOfId(id: string): DirectoryUnit['level'] {
  if (/^\d{9}$/.test(id)) return 'town';
  if (/^\d{2}0000$/.test(id)) return 'province';
  if (/^\d{4}00$/.test(id)) return 'city';
  return /^\d{6}$/.test(id) ? 'county' : 'custom';
}

/**
 * The geography the ledger records for an account of this unit (UploadGeography,
 * UploadGeoAddress): its city, county, town and street, read from its path. A province stands in
 * the city's place until a city comes (a municipality's districts, 省直辖 counties); a custom
 * unit takes the place after the deepest one filled (a department of a county's bureau is
 * recorded as a town of that county), and below a street its name is added to the street's.
 */
export function geographyOf(unit: DirectoryUnit): Unit {
  const ids = unit.lineage.split('/').filter(Boolean);
  const slots: Partial<Record<(typeof SLOTS)[number], string>> = {};
  let deepest = -1;
  ids.forEach((id, i) => {
    const name = unit.path[i]!;
    const level = levelOfId(id);
    if (level === 'province' || level === 'city') [slots.city, deepest] = [name, 0];
    else if (level === 'county') [slots.county, deepest] = [name, 1];
    else if (level === 'town') [slots.town, deepest] = [name, 2];
    else if (deepest < SLOTS.length - 1) slots[SLOTS[++deepest]!] = name;
    else slots.street = `${slots.street} / ${name}`;
  });
  return { id: unit.id, geoType: SLOTS[deepest]!, city: slots.city!, ...pick(slots, 'county', 'town', 'street') };
}

function pick<T extends object, K extends keyof T>(o: T, ...keys: K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]])) as Partial<Pick<T, K>>;
}

/** A free-text unit of an earlier version (city, county, town, street), as names top down. */
export function legacyNames(unit: Unit): string[] {
  return [unit.city, unit.county, unit.town, unit.street].filter((n): n is string => !!n);
}

export interface UnitDirectoryDeps {
  units: UnitStore;
  accounts: Pick<AccountStore, 'page' | 'update'>;
  /** Where the directory records what a start need not do again (records, not jobs: see load, placeEarlierAccounts). */
  jobs: Pick<JobStore, 'acquire' | 'release' | 'get'>;
}

/**
 * Accounts read at once where the directory goes through all of them (at every start, and when a
 * unit is renamed): a province has 100,000, and reading them whole held about 120 MB of the
 * server's RSS from its start on (issue 43).
 */
const ACCOUNT_BATCH = 1_000;

/** The provinces loaded, and from which data: { source, provinces: { "13": { name, units } } }. */
const DIVISIONS_RECORD = 'unit-directory-divisions';
interface DivisionsRecord {
  source: string;
  provinces: Record<string, { name: string; units: number }>;
}

/**
 * The accounts of an earlier version placed once: { unplacedUnits } lists the (free-text) unit
 * ids of those left unplaced; null there when too many to list (every start reads every account).
 */
const PLACEMENT_RECORD = 'unit-directory-placement';
interface PlacementRecord {
  unplacedUnits: string[] | null;
}
/** Unit ids listed at most in the placement record (they are asked for in one query's list). */
const UNPLACED_UNITS_LISTED = 1_000;

/** How long one process may take writing a record before another may (a crashed one's lease runs out). */
const RECORD_LEASE_MS = 10 * 60_000;

export class UnitDirectory {
  constructor(private readonly deps: UnitDirectoryDeps) {}

  /**
   * Loads the divisions of the given provinces (two-digit codes), adding only what is missing:
   * a province loaded before from the same data costs one count (reading the data again took
   * half a second of every start, issue 43). Returns what each province holds now.
   */
  async load(regions: readonly string[]): Promise<Array<{ code: string; name: string; units: number; added: number }>> {
    if (regions.length === 0) return [];
    const source = divisionsSource();
    const recorded = (await this.deps.jobs.get(DIVISIONS_RECORD))?.state as DivisionsRecord | null | undefined;
    const known = recorded?.source === source ? recorded.provinces : {};
    const counted = [];
    for (const region of regions) {
      const province = known[region];
      if (!province || (await this.deps.units.countDivisionsWithin(`${region}0000/`)) < province.units) break;
      counted.push({ code: region, name: province.name, units: province.units, added: 0 });
    }
    if (counted.length === regions.length) return counted;

    const divisions = divisionsOf(regions);
    const result = [];
    for (const region of regions) {
      const province = divisions.find((u) => u.id === `${region}0000`)!;
      const units = divisions.filter((u) => u.lineage.startsWith(province.lineage));
      const present = await this.deps.units.countDivisionsWithin(province.lineage);
      const added = present >= units.length ? 0 : await this.deps.units.addMissing(units);
      result.push({ code: region, name: province.name, units: units.length, added });
    }
    const provinces = {
      ...known,
      ...Object.fromEntries(result.map((r) => [r.code, { name: r.name, units: r.units }])),
    };
    await this.record(DIVISIONS_RECORD, () => ({ source, provinces }) satisfies DivisionsRecord);
    return result;
  }

  /**
   * Writes one of the directory's records under its lease (two processes starting together
   * write one at a time); `state` makes it under the lease. Nothing when another holds it.
   */
  private async record<T>(name: string, state: (before: unknown) => T | Promise<T>): Promise<T | undefined> {
    const holder = `unit-directory/${randomUUID()}`;
    if (!(await this.deps.jobs.acquire(name, holder, new Date(), RECORD_LEASE_MS))) return undefined;
    const before = (await this.deps.jobs.get(name))?.state ?? null;
    let after: T;
    try {
      after = await state(before);
    } catch (err) {
      await this.deps.jobs.release(name, holder, before);
      throw err;
    }
    await this.deps.jobs.release(name, holder, after);
    return after;
  }

  /** What an account reaches (see Reach). */
  async reachOf(account: Caller): Promise<Reach> {
    if (account.unit.id === ARCHIVE_UNIT_ID) return { kind: 'everything' };
    const root = await this.deps.units.get(account.unit.id);
    if (root) return { kind: 'subtree', root };
    // An administrator of an earlier version whose unit is not in the directory yet keeps
    // seeing everything, as before, until a top-level administrator assigns it a unit.
    return account.role === 'admin' ? { kind: 'everything' } : { kind: 'nothing' };
  }

  /**
   * What a caller reaches, by the ledger's names (reports, the audit log and files filter by
   * them): undefined for everything, null for nothing.
   */
  async reachSubtree(caller: Caller): Promise<UnitSubtree | undefined | null> {
    const reach = await this.reachOf(caller);
    if (reach.kind === 'everything') return undefined;
    if (reach.kind === 'nothing') return null;
    const { city, county, town } = geographyOf(reach.root);
    return { city, ...(county !== undefined && { county }), ...(town !== undefined && { town }) };
  }

  /**
   * A query's unit filter (city, county, town), narrowed to the caller's reach: a filter within
   * it stays, a wider one (or none) becomes the reach, another subtree is "not found".
   */
  async narrowToReach<Q extends Partial<UnitSubtree>>(caller: Caller, query: Q): Promise<Q> {
    const reach = await this.reachSubtree(caller);
    if (reach === undefined) return query;
    const outside = () =>
      new NotFoundError(
        `No unit named ${[query.city, query.county, query.town].filter(Boolean).join(' / ')} is within your reach.`,
      );
    if (reach === null) throw outside();
    const narrowed: Q = { ...query };
    for (const level of ['city', 'county', 'town'] as const) {
      if (reach[level] === undefined) break;
      if (query[level] !== undefined && query[level] !== reach[level]) throw outside();
      narrowed[level] = reach[level];
    }
    return narrowed;
  }

  /**
   * Refuses a unit an administrator cannot be given: a province with cities (its reach could not
   * be told by the ledger's names, which start at the city: its administrators belong to the
   * archive), or a unit below a town's level.
   */
  async checkAdministratorUnit(unit: DirectoryUnit): Promise<void> {
    if (geographyOf(unit).street !== undefined)
      throw new ValidationError(
        'An administrator belongs to the archive, a city, a county, a town or a unit added above a town’s level; give this account the town’s unit, or make it a clerk.',
        { field: 'unitId' },
      );
    if (unit.level === 'province') {
      const cities = await this.deps.units.find({ parentId: unit.id, level: 'city', limit: 1, offset: 0 });
      if (cities.total > 0)
        throw new ValidationError(
          'An administrator of a whole province belongs to the archive itself (unit "archive"); a province’s cities, counties and towns take administrators of their own.',
          { field: 'unitId' },
        );
    }
  }

  /** A unit the caller reaches; anything else is "not found", so other counties' units stay unknown. */
  async unitInReach(caller: Caller, id: string): Promise<DirectoryUnit> {
    const unit = await this.deps.units.get(id);
    if (!unit || !reaches(await this.reachOf(caller), unit))
      throw new NotFoundError(`No unit with the id "${id}" is within your reach.`);
    return unit;
  }

  async get(id: string): Promise<DirectoryUnit | undefined> {
    return this.deps.units.get(id);
  }

  getMany(ids: string[]): Promise<DirectoryUnit[]> {
    return this.deps.units.getMany(ids);
  }

  /**
   * The ids of a reach's units, a subtree's or the whole directory's (a province has a few
   * thousand), and given `part`, only of those whose path contains it or whose code starts with
   * it (a search's units: see UnitStore.ids).
   */
  unitIdsIn(reach: Exclude<Reach, { kind: 'nothing' }>, part?: string): Promise<string[]> {
    return this.deps.units.ids({
      ...(reach.kind === 'subtree' && { within: reach.root.lineage }),
      ...(part !== undefined && { part }),
    });
  }

  /**
   * One parent's children (`parent`), or a search (`q`, at every depth), within the caller's
   * reach. Without either: the top of the caller's reach (the provinces and top-level custom
   * units for the whole archive; the caller's own unit otherwise).
   */
  async list(caller: Caller, query: UnitListQuery): Promise<UnitList> {
    const reach = await this.reachOf(caller);
    const page = { limit: query.limit, offset: query.offset };
    const none = { items: [], total: 0, ...page };
    if (reach.kind === 'nothing') return none;
    const within = reach.kind === 'subtree' ? reach.root.lineage : undefined;
    let parentId: string | null | undefined;
    if (query.parent !== undefined) parentId = (await this.unitInReach(caller, query.parent)).id;
    else if (!query.q && !query.level) {
      if (reach.kind === 'subtree') {
        const root = reach.root;
        return { items: page.offset === 0 ? [unitView(root)] : [], total: 1, ...page };
      }
      parentId = null;
    }
    const { items, total } = await this.deps.units.find({ within, parentId, q: query.q, level: query.level, ...page });
    return { items: items.map(unitView), total, ...page };
  }

  /** A custom unit under a unit the caller administers (or at the top, for top-level administrators). */
  async add(caller: Caller, request: NewUnitRequest): Promise<DirectoryUnit> {
    const reach = await this.reachOf(caller);
    let parent: DirectoryUnit | undefined;
    if (request.parentId === null) {
      if (reach.kind !== 'everything')
        throw new ForbiddenError('Only the archive’s top-level administrators add units at the top of the directory.');
    } else parent = await this.unitInReach(caller, request.parentId);
    return this.addUnder(parent, request.name);
  }

  private async addUnder(parent: DirectoryUnit | undefined, typed: string): Promise<DirectoryUnit> {
    // Checked here as well as by the request's schema: the archive command adds units too.
    const name = checkedName(typed, UNIT_NAME_RULE, 'name');
    const id = `u${randomBytes(8).readBigUInt64BE().toString(36).padStart(12, '0').slice(-12)}`;
    const unit: DirectoryUnit = {
      id,
      code: null,
      name,
      level: 'custom',
      parentId: parent?.id ?? null,
      path: [...(parent?.path ?? []), name],
      lineage: `${parent?.lineage ?? ''}${id}/`,
    };
    await this.deps.units.add(unit);
    return unit;
  }

  /**
   * Renames a custom unit (divisions keep their official names); the accounts of the unit and of
   * the units under it get the new name in their geography.
   */
  async rename(caller: Caller, id: string, typed: string): Promise<{ before: DirectoryUnit; after: DirectoryUnit }> {
    const name = checkedName(typed, UNIT_NAME_RULE, 'name');
    const unit = await this.unitInReach(caller, id);
    if (unit.level !== 'custom')
      throw new ValidationError('Divisions keep their official names; only units added here can be renamed.');
    const reach = await this.reachOf(caller);
    if (reach.kind === 'subtree' && reach.root.id === unit.id)
      throw new ForbiddenError('Your own unit is renamed by an administrator above it.');
    if (name !== unit.name) await this.deps.units.rename(id, name);
    await this.refreshAccountsUnder(unit.lineage);
    return { before: unit, after: (await this.deps.units.get(id))! };
  }

  private async refreshAccountsUnder(lineage: string): Promise<void> {
    const { items } = await this.deps.units.find({ within: lineage, limit: 100_000, offset: 0 });
    const byId = new Map(items.map((u) => [u.id, u]));
    // Only the accounts of these units; their order (by name) and the selection stay as they are updated.
    for await (const accounts of this.accountBatches({ units: [...byId.keys()] }))
      for (const account of accounts) {
        const unit = byId.get(account.unit.id);
        if (unit) await this.deps.accounts.update(account.id, { unit: geographyOf(unit) });
      }
  }

  /** The accounts a selection takes, ACCOUNT_BATCH at a time, so none holds them all. */
  private async *accountBatches(selection: AccountSelection): AsyncGenerator<Account[]> {
    for (let offset = 0; ; offset += ACCOUNT_BATCH) {
      const { items } = await this.deps.accounts.page(selection, offset, ACCOUNT_BATCH);
      if (items.length > 0) yield items;
      if (items.length < ACCOUNT_BATCH) return;
    }
  }

  /**
   * The directory unit a free-text unit of an earlier version names: the unit whose path ends
   * with the names (a province may come first), if exactly one does. `rest` holds the names
   * below the deepest unit found, when not all of them are in the directory.
   */
  async match(names: string[]): Promise<{ unit: DirectoryUnit | undefined; rest: string[]; ambiguous: boolean }> {
    for (let k = names.length; k > 0; k--) {
      const head = names.slice(0, k);
      const candidates = (await this.deps.units.named(head[k - 1]!)).filter((u) => {
        const extra = u.path.length - k;
        const underProvince = extra === 1 && levelOfId(u.lineage.split('/')[0]!) === 'province';
        return (extra === 0 || underProvince) && u.path.slice(-k).every((n, i) => n === head[i]);
      });
      if (candidates.length > 1) return { unit: undefined, rest: names, ambiguous: true };
      if (candidates.length === 1) return { unit: candidates[0], rest: names.slice(k), ambiguous: false };
    }
    return { unit: undefined, rest: names, ambiguous: false };
  }

  /**
   * The unit of `archive user add` with the flags of an earlier version (--city, --county…):
   * the directory unit they name, or custom units for the names it lacks, under the deepest
   * one it has. Ambiguous names are refused: the directory code (--unit <code>) says which.
   */
  async placeNames(names: string[]): Promise<DirectoryUnit> {
    const found = await this.match(names);
    if (found.ambiguous)
      throw new ValidationError(
        `More than one unit is named ${names.join(' / ')}; give its code instead: --unit <code> (npm run archive -- units find ${names.at(-1)}).`,
      );
    let unit = found.unit;
    for (const name of found.rest) {
      try {
        unit = await this.addUnder(unit, name);
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
        // Added a moment ago by another command: take that one.
        const [existing] = (await this.deps.units.named(name)).filter((u) => u.parentId === (unit?.id ?? null));
        unit = existing!;
      }
    }
    return unit!;
  }

  /**
   * Moves the accounts of an earlier version, whose units are free text, onto the directory
   * units their names match unambiguously; returns how many moved and the accounts left.
   * Reads every account: at a start, placeEarlierAccounts does it once.
   */
  async mapEarlierAccounts(): Promise<{ mapped: Account[]; unmapped: Account[] }> {
    return this.place(await this.unmapped());
  }

  /**
   * What each start does (and the archive command): mapEarlierAccounts, reading every account
   * only the first time (`onEveryAccount` is told before: at 100,000 accounts it takes seconds,
   * issue 43). Accounts made since have directory units (every way of making one gives them
   * one), so later starts look only at the accounts left unplaced, by their units as recorded:
   * a unit may have come for them (UNIT_REGIONS), or an administrator assigned them one.
   */
  async placeEarlierAccounts(
    onEveryAccount: () => void = () => {},
  ): Promise<{ mapped: Account[]; unmapped: Account[]; everyAccount: boolean }> {
    let placed: { mapped: Account[]; unmapped: Account[]; everyAccount: boolean } | undefined;
    const recorded = await this.record(PLACEMENT_RECORD, async (before): Promise<PlacementRecord> => {
      const unplacedUnits = (before as PlacementRecord | null)?.unplacedUnits;
      if (unplacedUnits) {
        const left: Account[] = [];
        if (unplacedUnits.length > 0)
          for await (const batch of this.accountBatches({ units: unplacedUnits })) left.push(...batch);
        placed = { ...(await this.place(await this.notInDirectory(left))), everyAccount: false };
      } else {
        onEveryAccount();
        placed = { ...(await this.mapEarlierAccounts()), everyAccount: true };
      }
      const units = [...new Set(placed.unmapped.map((a) => a.unit.id))];
      return { unplacedUnits: units.length <= UNPLACED_UNITS_LISTED ? units : null };
    });
    if (recorded && placed) return placed;
    // Another process is placing them at this moment: read them all as well, recording nothing.
    onEveryAccount();
    return { ...(await this.mapEarlierAccounts()), everyAccount: true };
  }

  private async place(accounts: Account[]): Promise<{ mapped: Account[]; unmapped: Account[] }> {
    const mapped: Account[] = [];
    const unmapped: Account[] = [];
    for (const account of accounts) {
      const found = await this.match(legacyNames(account.unit));
      if (found.unit && found.rest.length === 0) {
        await this.deps.accounts.update(account.id, { unit: geographyOf(found.unit) });
        mapped.push(account);
      } else unmapped.push(account);
    }
    return { mapped, unmapped };
  }

  /** Those of the accounts whose units are not in the directory (the archive's own is not a directory unit). */
  private async notInDirectory(accounts: Account[]): Promise<Account[]> {
    const candidates = accounts.filter((a) => a.unit.id !== ARCHIVE_UNIT_ID);
    const known = new Set((await this.getMany([...new Set(candidates.map((a) => a.unit.id))])).map((u) => u.id));
    return candidates.filter((a) => !known.has(a.unit.id));
  }

  /**
   * Accounts whose units are not in the directory (an earlier version's free text the mapping
   * could not place), by username; `page` takes some of them (all without it). Read by the units
   * the last start left unplaced, as its placement record lists them, through the accounts' unit
   * index: every account made since has a directory unit, so none of theirs is read (issue 43:
   * the Units page read all 100,000 at every visit). Every account only before a start recorded
   * them, or when too many units were left to list.
   */
  async unmapped(page: { offset: number; limit: number } = { offset: 0, limit: Infinity }): Promise<Account[]> {
    const recorded = (await this.deps.jobs.get(PLACEMENT_RECORD))?.state as PlacementRecord | null | undefined;
    const units = recorded?.unplacedUnits;
    if (units?.length === 0) return [];
    const unmapped: Account[] = [];
    const enough = page.offset + page.limit;
    for await (const batch of this.accountBatches(units ? { units } : {})) {
      unmapped.push(...(await this.notInDirectory(batch)));
      if (unmapped.length >= enough) break;
    }
    return unmapped.slice(page.offset, enough);
  }
}
