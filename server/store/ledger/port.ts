import type { Unit } from '../../../shared/schemas.js';
import type { Account } from '../accounts/port.js';
import type { AuditEvent } from '../audit/port.js';

/** Who uploaded what: one entry per (account, unit, file) in `userInfo.users`. */
export interface UploadRecord {
  account: Pick<Account, 'id' | 'username' | 'unit'>;
  fileId: string;
  fileName: string;
  /** The media type this uploader declared (a unit is shown its own, not the first uploader's). */
  contentType: string;
  at: Date;
  /** The calendar day of `at` in the report time zone (YYYY-MM-DD): reports count uploads per day. */
  day: string;
  fileLength: number;
  /**
   * The upload carried the file's bytes (an instant upload carries none). The first upload of a
   * file to be counted stored it, if it carried them; every other upload saved its size. The
   * ledger decides which inside the count, so two first uploads racing each other cannot both be
   * counted as storing the file.
   */
  carriedBytes: boolean;
}

export interface LedgerEntry {
  userId: string;
  userName: string;
  unit: Unit;
  fileId: string;
  uploadTime: Date;
  lastUploadTime: Date;
  uploadFileName: string;
  lastUploadFileName: string;
  lastContentType: string;
  uploadCount: number;
}

/** A unit subtree by the ledger's names: a city, a county of it, or a town of that county. */
export interface UnitSubtree {
  city: string;
  county?: string;
  town?: string;
}

/**
 * Whose uploads count as "in scope": one unit, or one county of a city (an instant upload's
 * scope; `county: null` is the city's own units), or a subtree (an administrator's reach).
 */
export type UploaderScope = { unitId: string } | { city: string; county: string | null } | { subtree: UnitSubtree };

/** Whose uploads a view of files shows: one unit's, or a subtree's (an administrator's reach). */
export type ViewScope = { unitId: string } | { subtree: UnitSubtree };

/** An account that uploaded in a view's scope, by the login it uploaded under. */
export interface Uploader {
  id: string;
  username: string;
}

/**
 * One upload action (a tus upload, an instant upload, a batch's file, a multipart upload), to be
 * counted once under its key however often it is retried or interrupted: its audit event, its
 * ledger entry's UploadCount and its day's tally change together, once.
 */
export interface UploadAction {
  /** Stable from the action's first request on (see docs/decisions/counting-once.md). */
  key: string;
  record: UploadRecord;
  /** Its audit event (`upload` or `instant_upload`), for the same account and file, once the count has decided whether it stored the file. */
  event(stored: boolean): AuditEvent;
  /**
   * What the uploader is told unless this action stored the file (then "stored"): "duplicate"
   * only where the uploader may know of the earlier upload.
   */
  statusUnlessStored: 'stored' | 'duplicate';
}

/** An action as counted, the first time or before. */
export interface CountedUpload {
  accountId: string;
  fileId: string;
  status: 'stored' | 'duplicate';
  /** The uploader's UploadCount once this action was counted (the same answer on every retry). */
  uploadCount: number;
  /** The action stored the bytes. */
  stored: boolean;
  /** Counted by an earlier request: this one changed nothing. */
  repeated: boolean;
}

/**
 * What `Ledger.reverse` did: `reversed` by this call; `repeated`, reversed by an earlier call under
 * the same reversal key (nothing changed now); `already reversed` under another key; `not counted`,
 * no action was counted under that key; `unrecorded`, counted by a version that did not record
 * what a reversal needs (embedded data directories, before 2026-11-28): it stays counted.
 */
export type Reversal = 'reversed' | 'repeated' | 'already reversed' | 'not counted' | 'unrecorded';

/**
 * What `Ledger.restore` did: `restored` by this call; `repeated`, restored by an earlier call under
 * the same restore key (nothing changed now); `not reversed`, the action counts now (never reversed,
 * or restored already under another key); `not counted`, no action was counted under that key;
 * `unrecorded`, as for `Reversal`.
 */
export type Restoral = 'restored' | 'repeated' | 'not reversed' | 'not counted' | 'unrecorded' | 'purged';

/**
 * What `Ledger.purge` did: `purged` by this call; `repeated`, by an earlier call under the same
 * key; `already purged` under another key; `not reversed`, the action counts (only a reversed one
 * is purged); `not counted`, `unrecorded` as for `Reversal`.
 */
export type Purge = 'purged' | 'repeated' | 'already purged' | 'not reversed' | 'not counted' | 'unrecorded';

export interface Ledger {
  /**
   * Counts an action once per key: a key counted before is answered as it was then, and one whose
   * counting was interrupted (a crash) is finished, whatever the retry's own record says.
   */
  count(action: UploadAction): Promise<CountedUpload>;
  /** Counts many actions, as `count` does each, in order (the embedded store in one transaction). */
  countMany(actions: readonly UploadAction[]): Promise<CountedUpload[]>;
  /** The action counted under `key` (finished first if it was interrupted), or undefined. */
  counted(key: string): Promise<CountedUpload | undefined>;
  /** `counted` of many keys at once (a receipt's); keys never counted are absent. */
  countedMany(keys: readonly string[]): Promise<Map<string, CountedUpload>>;
  /**
   * Finishes actions recorded before `before` whose counting was interrupted (a crash between its
   * steps, on a store without transactions); returns how many. Run by the garbage collector's sweep
   * (and `archive gc`); a retry of the action finishes it at once (`count`, `counted`).
   */
  finishInterrupted(before: Date): Promise<number>;
  /**
   * Reverses every effect of the action counted under `actionKey` on the ledger's totals (its
   * entry's UploadCount, the day's tally, the per-file sums, the names), once under `reversalKey`
   * however often it is retried or interrupted: the totals and reports are then as if the action
   * had never been counted (docs/decisions/counts.md). The action stays recorded (a retry of it
   * is answered as it was counted, never counted again); counting another action under a new key
   * counts anew. A reversal key belongs to its action (the same key may reverse another action).
   * Withdrawals call it (server/services/withdrawals.ts).
   */
  reverse(actionKey: string, reversalKey: string): Promise<Reversal>;
  /**
   * Counts the action under `actionKey` again in every total after a reversal, once under
   * `restoreKey` however often it is retried or interrupted: the totals and reports are then as if
   * it had never been reversed (docs/decisions/counts.md), who holds the file's bytes included. An
   * action goes counted, reversed, counted, reversed... each change once by its own key: any
   * change key used before for the action (a reversal's or a restore's) is answered `repeated`
   * and changes nothing, by `reverse` and `restore` alike. A change key belongs to its action.
   */
  restore(actionKey: string, restoreKey: string): Promise<Restoral>;
  /**
   * Records that a reversed action was purged (its withdrawal left the trash for good): it stays
   * reversed, changes no total, and can never be restored (`restore` answers `purged`). Once
   * under `purgeKey`, by one conditional write: of a purge and a restore racing, one wins.
   */
  purge(actionKey: string, purgeKey: string): Promise<Purge>;
  /**
   * How many actions of the file count now (their counting finished or not): an upload that holds
   * the file's content, for its purge to see (docs/decisions/purge.md).
   */
  countingUploads(fileId: string): Promise<number>;
  /** The keys of the file's actions that count now, as recorded (a disposal reverses each; unrecorded ones are not known by key). */
  countingKeys(fileId: string): Promise<string[]>;
  /**
   * `reverse` of many actions, each once under its own key exactly as `reverse` makes it (a key
   * used before is `repeated`, an action reversed already `already reversed`…), answered in the
   * order asked: a whole receipt's withdrawal. Changes of one action, or of one file's actions,
   * are made in the order given. The embedded store makes a few hundred in one transaction; MongoDB
   * makes the single-document steps of changes of different files side by side. Interrupted, it
   * leaves each change made or not (or, on MongoDB, finished by a retry or the sweep), as `reverse`.
   */
  reverseMany(changes: readonly LedgerChange[]): Promise<Reversal[]>;
  /** `restore` of many actions, as `reverseMany` is `reverse` of many. */
  restoreMany(changes: readonly LedgerChange[]): Promise<Restoral[]>;
  /**
   * Records that these actions (one account's, each counted) were sent in one folder upload, its
   * receipt (上传清单): each action once, its first receipt staying whatever a later call says.
   * An entry's uploads counted in one receipt are one upload and its copies: the entry's copies
   * (what the repeat-uploaders report tells apart from re-sends) are, over its receipts, its
   * counted uploads in each but one. Kept with the other totals: a reversal takes an upload out of
   * them, a restore puts it back. Actions never counted, or unrecorded, are passed over.
   */
  placeInReceipt(receiptId: string, actionKeys: readonly string[]): Promise<void>;
  /** Whether anybody in the scope has uploaded the file. */
  hasUploadInScope(fileId: string, scope: UploaderScope): Promise<boolean>;
  /**
   * Whether the account has an entry for the file in the unit: it sent the bytes, or proved it
   * held them, before (so a claim of it again asks for no ranges).
   */
  uploadedBy(fileId: string, accountId: string, unitId: string): Promise<boolean>;
  /**
   * The account's entry for the file in the unit, if it has one: when it last uploaded it there
   * and how often (a check tells a clerk "you sent this here before", never about anyone else).
   */
  uploadOf(fileId: string, accountId: string, unitId: string): Promise<LedgerEntry | undefined>;
  /** The most recent upload of a file by a unit, if any (a unit's right to read it). */
  latestUnitUpload(unitId: string, fileId: string): Promise<LedgerEntry | undefined>;
  /** The most recent upload of a file in a view's scope, if any: the name and type the view shows it under. */
  latestUploadInScope(fileId: string, scope: ViewScope): Promise<LedgerEntry | undefined>;
  entriesForFile(fileId: string): Promise<LedgerEntry[]>;
  /** Everybody who uploaded in the scope (the whole archive without one), by login. */
  uploaders(scope: ViewScope | undefined): Promise<Uploader[]>;
  /**
   * What the ledger recorded of each action counted under these keys (a withdrawal's: whose, which
   * unit, file, name, size and time) and whether it counts now (`counted: false` once reversed,
   * withdrawn, purged or disposed of): keys never counted, or counted before the ledger recorded
   * their details (they cannot be reversed: `unrecorded`), are absent. Read only.
   */
  recordedUploads(keys: readonly string[]): Promise<Map<string, FileUploadState>>;
  /**
   * The units with an upload of each file, counted or withdrawn (reversed: in the trash), by file
   * id; only units among `among` when it is given. Files without one are absent. What a unit's hold
   * covers, and the reach a file is held in (server/services/holds.ts). Read only.
   */
  unitsWithUploads(fileIds: readonly string[], among?: readonly string[]): Promise<Map<string, string[]>>;

  /**
   * Every upload action of the file the ledger recorded, whether it counts now or is reversed (a
   * disposal's: it reverses those that count and closes the withdrawals of the others), in time
   * order. Actions counted before the ledger recorded their details are absent. Read only.
   */
  uploadsOfFile(fileId: string): Promise<FileUploadState[]>;

  /**
   * A file's upload actions in a view's scope (by the unit each was counted in; every one without
   * a scope), newest first, reversed ones too (`counts: false`): who, where, when, under which key
   * (what a withdrawal names). Actions counted before the ledger recorded their details are not
   * listed. Read only.
   */
  fileUploads(
    fileId: string,
    scope: ViewScope | undefined,
    page: { limit: number; offset: number },
  ): Promise<{ items: FileUpload[]; total: number }>;
}

/** An upload action (`Ledger.uploadsOfFile`, `recordedUploads`): its details, and whether it counts now. */
export interface FileUploadState extends UploadDetails {
  counted: boolean;
}

/** One upload action of a file as `Ledger.fileUploads` lists it. */
export interface FileUpload extends UploadDetails {
  userName: string;
  /** The unit it was counted in, with its place names then. */
  unit: Unit;
  /** It counts now (not reversed). */
  counts: boolean;
}

/** One change of one action: its key and the change's (`Ledger.reverseMany`, `restoreMany`). */
export interface LedgerChange {
  actionKey: string;
  changeKey: string;
}

/** An upload action as the ledger recorded it (`Ledger.recordedUploads`). */
export interface UploadDetails {
  key: string;
  accountId: string;
  unitId: string;
  fileId: string;
  fileName: string;
  fileLength: number;
  at: Date;
}
