import type { HoldState } from '../../../shared/holds.js';

export interface Person {
  id: string;
  username: string;
}

/** A file a hold names, with the name it was held under (as the administrator saw it). */
export interface HeldFile {
  id: string;
  name: string;
}

/** The unit a hold covers: every file any upload of it holds, now and later while the hold lasts. */
export interface HeldUnit {
  id: string;
  name: string;
  /** Its names from the top down, as the directory had them when it was held. */
  path: string;
}

/** One hold (冻结), active until lifted; kept after as the record of what was held, by whom and why. */
export interface HoldRecord {
  /** 32 hex characters. */
  id: string;
  /** Either files named or a unit: exactly one is set. */
  files: HeldFile[] | null;
  unit: HeldUnit | null;
  /**
   * The lineage of the units it belongs to, for who sees and lifts it: a unit's own (a unit hold),
   * the placing administrator's reach (a file hold); '' for the whole archive.
   */
  area: string;
  reason: string;
  placedBy: Person;
  placedAt: Date;
  liftedBy: Person | null;
  liftedAt: Date | null;
}

export interface HoldStore {
  /**
   * Records a new hold: true. False, changing nothing, when a hold of that id is recorded already
   * (the id made from a retried request's key: the hold it placed before).
   */
  place(hold: HoldRecord): Promise<boolean>;
  /** Lifts a hold still active: true if this call lifted it (of two racing, one does). */
  lift(id: string, by: Person, at: Date): Promise<boolean>;
  get(id: string): Promise<HoldRecord | undefined>;
  /**
   * The holds whose area lies within `area` (a lineage prefix; undefined: all), active, lifted or
   * both, the latest placed first.
   */
  list(
    area: string | undefined,
    state: HoldState,
    page: { limit: number; offset: number },
  ): Promise<{ items: HoldRecord[]; total: number }>;
  /** The active holds that name any of these files, or cover any of these units. */
  covering(fileIds: readonly string[], unitIds: readonly string[]): Promise<HoldRecord[]>;
  /** The units an active hold covers (few: a hold per unit at most in practice). */
  heldUnits(): Promise<string[]>;
}
