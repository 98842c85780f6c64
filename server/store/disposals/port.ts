import type { Unit } from '../../../shared/schemas.js';
import type { ViewScope } from '../ledger/port.js';

/**
 * A disposal's steps: `disposing` (recorded; the ledger's reversals of the file's uploads and the
 * closing of its withdrawals perhaps not yet made), `deleting` (out of every count; its bytes
 * perhaps not yet deleted), `disposed` (bytes gone). Each step is safe to run again, so a retry or
 * the sweep finishes one a crash interrupted (docs/decisions/disposal.md).
 */
export type DisposalState = 'disposing' | 'deleting' | 'disposed';

export interface Person {
  id: string;
  username: string;
}

/** An account that uploaded the file, in one unit (an account that moved appears once per unit). */
export interface Uploader extends Person {
  unitId: string;
}

/**
 * One entry of the disposal register (销毁清册): one file disposed of, with what the register
 * shows of it, read from the ledger and the catalog before anything was deleted. Kept for ever:
 * the port removes only an entry a hold stopped before anything of it was done (`stop`).
 */
export interface DisposalRecord {
  /** 32 hex characters; the ledger's reversal key is made from it (disposalKey). */
  id: string;
  /** The file's system number (its public file id). */
  fileId: string;
  /** The name the file was first catalogued under. */
  fileName: string;
  fileLength: number;
  /** When the archive first stored the content. */
  storedAt: Date;
  /** Units that held an upload of the file (counted or in the trash), and who uploaded it there. */
  units: Unit[];
  uploaders: Uploader[];
  firstUploadAt: Date | null;
  lastUploadAt: Date | null;
  /** Its uploads that counted when it was disposed of (the counts it left), and those in the trash. */
  countedUploads: number;
  withdrawnUploads: number;
  reason: string;
  /** 审批文号: the approval the disposal was made under. */
  approvalRef: string;
  disposedBy: Person;
  disposedAt: Date;
  state: DisposalState;
  /**
   * While `disposing`: whether holds (冻结) were asked about after the entry was recorded and none
   * held the file, so its uploads may be reversed and its bytes deleted. One not cleared may yet be
   * stopped by a hold (`stop`, the entry removed: nothing of it was done); a cleared one is finished,
   * held or not (docs/decisions/holds.md).
   */
  cleared: boolean;
  /** When the state last changed: a step begun and not finished after a while was interrupted. */
  changedAt: Date;
}

/** The ledger's reversal key of a file's uploads in a disposal: derived from its id, so a retry or the sweep makes the same change once. */
export function disposalKey(id: string): string {
  return `disposal:${id}`;
}

/** Which entries of the register a listing shows. */
export interface RegisterFilter {
  /** Entries with an upload in the scope (a unit, or a subtree: an administrator's reach); all without one. */
  scope?: ViewScope;
  /** Disposed of at or after `from`, before `to`. */
  from?: Date;
  to?: Date;
}

export interface DisposalStore {
  /**
   * Adds an entry (`disposing`), unless the file has one already: then answers that one
   * (`opened: false`). At most one entry per file, however many race.
   */
  open(record: DisposalRecord): Promise<{ record: DisposalRecord; opened: boolean }>;
  /**
   * Marks an entry `disposing` and not stopped as cleared of holds, by one conditional write. True
   * when it is `disposing` and cleared now, by this call or before; false once `stop` took it.
   */
  clear(id: string): Promise<boolean>;
  /**
   * Removes an entry `disposing` and not cleared (a hold stops it before anything of it was done),
   * by one conditional write; true if this call did. A cleared entry is never removed.
   */
  stop(id: string): Promise<boolean>;
  /** Moves an entry from one state to the next; true if this call moved it. */
  advance(id: string, from: DisposalState, to: DisposalState, at: Date): Promise<boolean>;
  get(id: string): Promise<DisposalRecord | undefined>;
  /** The entries of these files, by file id. */
  ofFiles(fileIds: readonly string[]): Promise<Map<string, DisposalRecord>>;
  /** The register, the latest disposal first (ties by id). */
  list(
    filter: RegisterFilter,
    page: { limit: number; offset: number },
  ): Promise<{ items: DisposalRecord[]; total: number }>;
  /**
   * Entries `disposing` or `deleting` since before `before` (interrupted, for the sweep to finish;
   * or under way, for a new hold to settle), in the order of their last change, then id; a page
   * starts after `after`, the last of the page before.
   */
  unfinished(before: Date, limit: number, after?: Pick<DisposalRecord, 'id' | 'changedAt'>): Promise<DisposalRecord[]>;
}
