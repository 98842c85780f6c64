import type { Unit } from '../../../shared/schemas.js';
import type { WithdrawalReason } from '../../../shared/withdrawals.js';
import type { ViewScope } from '../ledger/port.js';

/**
 * A withdrawal's steps: `withdrawing` (recorded, the ledger's reversal perhaps not yet made),
 * `withdrawn` (out of every count, in the trash), `restoring` (the ledger's restore perhaps not yet
 * made), `restored` (counted again; kept as the record of what happened), `disposed` (its file was
 * disposed of, 销毁, while it was not restored: out of the trash for good, kept as the record); or,
 * from `withdrawn`, `purging` (out of the trash for good, its content perhaps not yet deleted) and
 * `purged` (kept as the record; it can never be restored: docs/decisions/purge.md).
 */
export type WithdrawalState =
  'withdrawing' | 'withdrawn' | 'restoring' | 'restored' | 'disposed' | 'purging' | 'purged';

/** The states of a withdrawal in the trash (restorable, or on its way there or back). */
export const IN_TRASH: readonly WithdrawalState[] = ['withdrawing', 'withdrawn', 'restoring'];

export interface Person {
  id: string;
  username: string;
}

/** One withdrawal of one upload action, and its restore. */
export interface WithdrawalRecord {
  /** 32 hex characters; the ledger's change keys are made from it (withdrawalKeys). */
  id: string;
  /** The upload action's key in the ledger. */
  uploadKey: string;
  upload: {
    account: Person;
    unit: Unit;
    fileId: string;
    fileName: string;
    fileLength: number;
    at: Date;
  };
  withdrawnBy: Person;
  withdrawnAt: Date;
  reason: WithdrawalReason;
  note: string | null;
  state: WithdrawalState;
  /**
   * While `withdrawing`: whether holds (冻结) were asked about after it was recorded and none held
   * its file, so the ledger may reverse its upload. One not cleared may yet be stopped by a hold
   * (`stopMany`); a cleared one is finished, held or not (docs/decisions/holds.md). The same while
   * `purging` (set false by the move into it): only a cleared purge has the ledger purge its upload;
   * one not cleared may be stopped (`stopPurge`, back to `withdrawn`).
   */
  cleared: boolean;
  /** When the state last changed: a step begun and not finished after a while was interrupted. */
  changedAt: Date;
  restoredBy: Person | null;
  restoredAt: Date | null;
  /** Who purged it (the sweep: `system`) and when, from `purging` on. */
  purgedBy: Person | null;
  purgedAt: Date | null;
}

/** The ledger's change keys of a withdrawal: derived from its id, so a retry or the sweep makes the same change. */
export function withdrawalKeys(id: string): { reversal: string; restore: string } {
  return { reversal: `withdrawal:${id}`, restore: `restore:${id}` };
}

export interface WithdrawalStore {
  /**
   * Records a withdrawal (`withdrawing`), unless the upload has one not restored: then answers
   * that one (`opened: false`). At most one per upload is ever open, however many race.
   */
  open(record: WithdrawalRecord): Promise<{ record: WithdrawalRecord; opened: boolean }>;
  /**
   * Moves a withdrawal from one state to the next (`withdrawing` → `withdrawn`, `withdrawn` →
   * `restoring` with who and when, `restoring` → `restored`, `withdrawn` → `purging` with who and
   * when, `purging` → `purged`); true if this call moved it. A purged withdrawal stays the
   * upload's open one: the upload cannot be withdrawn again.
   */
  advance(id: string, from: WithdrawalState, to: WithdrawalState, at: Date, restoredBy?: Person): Promise<boolean>;
  /**
   * Closes a withdrawal not restored (any state but `restored`) because its file is disposed of:
   * `disposed`, out of the trash, its upload free. True if this call closed it.
   */
  close(id: string, at: Date): Promise<boolean>;
  /**
   * `open` of many withdrawals (a receipt's), answered in the order given: the embedded store in
   * one transaction per few hundred, MongoDB in one unordered insert per thousand.
   */
  openMany(records: readonly WithdrawalRecord[]): Promise<Array<{ record: WithdrawalRecord; opened: boolean }>>;
  /** `advance` of many withdrawals from one state to the next: the ids this call moved. */
  advanceMany(
    ids: readonly string[],
    from: WithdrawalState,
    to: WithdrawalState,
    at: Date,
    restoredBy?: Person,
  ): Promise<Set<string>>;
  /**
   * Marks withdrawals still `withdrawing` and not stopped as cleared of holds. Answers the ids among
   * these that are `withdrawing` and cleared now, by this call or before; not those `stopMany` took.
   */
  clearMany(ids: readonly string[]): Promise<Set<string>>;
  /**
   * Removes withdrawals still `withdrawing` and not cleared (a hold stops them, or their request
   * backs out): the ids this call removed. A cleared one is never removed: its reversal may be under way.
   */
  stopMany(ids: readonly string[]): Promise<Set<string>>;
  /**
   * Marks a withdrawal `purging` and not stopped as cleared of holds, by one conditional write.
   * True when it is `purging` and cleared now, by this call or before; false once `stopPurge` took it.
   */
  clearPurge(id: string): Promise<boolean>;
  /**
   * Moves a withdrawal `purging` and not cleared back to `withdrawn` (a hold stops the purge), who
   * purged it forgotten, by one conditional write; true if this call did. A cleared purge is never stopped.
   */
  stopPurge(id: string, at: Date): Promise<boolean>;
  /** `get` of many: those that exist, by id. */
  getMany(ids: readonly string[]): Promise<Map<string, WithdrawalRecord>>;
  /** Removes a withdrawal still `withdrawing` whose upload the ledger would not reverse. */
  drop(id: string): Promise<void>;
  get(id: string): Promise<WithdrawalRecord | undefined>;
  /** The withdrawals not restored of these uploads, by upload key. */
  openOf(uploadKeys: readonly string[]): Promise<Map<string, WithdrawalRecord>>;
  /** The trash: withdrawals neither restored nor purged in the scope (all without one), the latest first. */
  trash(
    scope: ViewScope | undefined,
    page: { limit: number; offset: number },
  ): Promise<{ items: WithdrawalRecord[]; total: number }>;
  /**
   * Withdrawals in one of `states` since before `before` (a step begun then and not finished was
   * interrupted), in the order of their last change, then id; a page starts after `after`, the last
   * of the page before. The withdrawal sweep asks for `withdrawing` and `restoring`, the purge's
   * for `purging`.
   */
  unfinished(
    states: readonly WithdrawalState[],
    before: Date,
    limit: number,
    after?: Pick<WithdrawalRecord, 'id' | 'changedAt'>,
  ): Promise<WithdrawalRecord[]>;
  /** Withdrawals `withdrawn` before `before` (their time in the trash is over), the oldest first. */
  expired(before: Date, limit: number): Promise<WithdrawalRecord[]>;
  /** A file's withdrawals neither restored nor purged (in the trash, or being purged). */
  ofFile(fileId: string): Promise<WithdrawalRecord[]>;
}
