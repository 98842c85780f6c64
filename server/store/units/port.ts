import type { UnitLevel } from '../../../shared/units.js';

/** A unit of the directory, as stored. */
export interface DirectoryUnit {
  /** A division's code, or `u` and 12 random characters for a custom unit. */
  id: string;
  code: string | null;
  name: string;
  level: UnitLevel;
  parentId: string | null;
  /** Names from the top down, this unit's last. */
  path: string[];
  /**
   * Ids from the top down, this unit's last, each followed by "/" (`130000/130900/130922/`):
   * a subtree is every unit whose lineage starts with its root's.
   */
  lineage: string;
}

export interface UnitQuery {
  /** Only units whose lineage starts with this (the caller's reach); undefined: the whole directory. */
  within?: string;
  /** Only the children of this unit (null: the top of the directory). */
  parentId?: string | null;
  /** A part of the name, or the start of the code. */
  q?: string;
  level?: UnitLevel;
  limit: number;
  offset: number;
}

export interface UnitStore {
  /** Adds the units whose ids are not there yet (loading a province again adds nothing); returns how many were added. */
  addMissing(units: DirectoryUnit[]): Promise<number>;
  /** Adds one unit; throws ConflictError when its parent already has a unit of that name. */
  add(unit: DirectoryUnit): Promise<void>;
  get(id: string): Promise<DirectoryUnit | undefined>;
  /** The units of these ids that exist, in no particular order. */
  getMany(ids: string[]): Promise<DirectoryUnit[]>;
  /** Units in code order (custom units after, by name). */
  find(query: UnitQuery): Promise<{ items: DirectoryUnit[]; total: number }>;
  /**
   * The ids of the units whose lineage starts with `within` (every unit without it) and, given
   * `part`, whose path, its names joined by "/", contains it or whose code starts with it (what an
   * accounts search names: a county's name takes its towns). Ids only, in no particular order: a
   * province's 2,567 units read whole at every search cost more than the search (issue 43).
   */
  ids(query: { within?: string; part?: string }): Promise<string[]>;
  /** Every unit of exactly this name. */
  named(name: string): Promise<DirectoryUnit[]>;
  /** How many divisions (units with a code; not those added here) have a lineage starting with `lineage`. */
  countDivisionsWithin(lineage: string): Promise<number>;
  /**
   * Renames a unit: its name, and its name in the path of every unit under it. Throws
   * ConflictError when a sibling has that name.
   */
  rename(id: string, name: string): Promise<void>;
}

/** The order units are listed in: divisions by code, custom units after them by name. */
export function sortKeyOf(unit: Pick<DirectoryUnit, 'code' | 'name'>): string {
  return unit.code ?? `~${unit.name}`;
}
