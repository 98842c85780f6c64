import type { Readable } from 'node:stream';
import type { AuditAction, AuditEventFields, Role, Unit } from '../../shared/schemas.js';
import type {
  CollisionRow,
  CrossUnitRow,
  NearDuplicateRow,
  RepeatEntryRow,
  RepeatUnitRow,
  RepeatUserRow,
  SavingsFigures,
  SavingsPeriodRow,
  SavingsUnitRow,
} from '../../shared/reports.js';

/**
 * The storage port: everything the services need from a database, and nothing about
 * which database it is. Two adapters implement it (embedded SQLite, MongoDB) and both
 * pass test/store/conformance.ts.
 */

/** Content identity: MD5 alone never merges two files. */
export interface ContentKey {
  md5: string;
  sha256: string;
  length: number;
}

/** One entry per distinct content (`fileInfo.files`). */
export interface CatalogEntry {
  fileId: string;
  fileMD5: string;
  fileSHA256: string;
  fileLength: number;
  chunkSize: number;
  chunkCount: number;
  /** The name the content was first uploaded under. */
  fileName: string;
  contentType: string;
  uploadDate: Date;
  /** Another entry shares this MD5 with a different SHA-256. */
  md5Collision: boolean;
}

export interface NewCatalogEntry {
  key: ContentKey;
  fileName: string;
  contentType: string;
  uploadDate: Date;
}

export type CommitOutcome =
  | { status: 'stored'; entry: CatalogEntry }
  /** The catalog already held this content; the staged chunks were removed. */
  | { status: 'duplicate'; entry: CatalogEntry };

/** A byte range, `end` exclusive (as Blob.slice). */
export interface ByteRange {
  start: number;
  end: number;
}

/** Bytes, in fixed-size chunks (GridFS layout: chunk n holds bytes [n·size, (n+1)·size)). */
export interface ContentStore {
  /** The chunk size of staging areas opened from now on (each keeps the one it began with). */
  readonly chunkSize: number;
  /** Opens a staging area; its id becomes the file id if the commit stores it. */
  stage(now: Date): Promise<string>;
  /**
   * Writes contiguous bytes at `offset` of a staging area. `offset` need not fall on a chunk
   * edge (a resumed upload continues a partial chunk); bytes already there are replaced, and
   * bytes past the end of this write may still hold an earlier, interrupted write.
   */
  write(stagingId: string, offset: number, parts: readonly Uint8Array[]): Promise<void>;
  /** Streams bytes [0, length) of a staging area (re-hashing a resumed upload). */
  readStaged(stagingId: string, length: number): Readable;
  /**
   * Makes staged chunks a catalogued file, or, when the catalog already holds the same
   * content (a unique index decides, so concurrent commits are safe), removes them. A commit
   * that fails leaves the staging area as it was, for a retry; staged bytes that fall short of
   * the content's length fail it, rather than catalogue a short file. Bytes that may not have
   * reached the disk (a sync of them failed) are the exception: they are dropped, and the commit
   * fails with a StagedBytesLostError saying how many bytes the staging area keeps.
   */
  commit(stagingId: string, entry: NewCatalogEntry): Promise<CommitOutcome>;
  /**
   * Commits many staging areas, as `commit` does each, in order (a later item with the content of
   * an earlier one is its duplicate). The bytes of all are made durable first, together; the
   * embedded store then catalogues them in one transaction. A failure fails the call: items it
   * did not reach stay staged (on MongoDB, earlier items may be committed already; a retry of
   * the same items is safe, as for `commit`).
   */
  commitMany(items: ReadonlyArray<{ stagingId: string; entry: NewCatalogEntry }>): Promise<CommitOutcome[]>;
  /** Removes a staging area and its chunks; harmless if already gone, and never a committed file. */
  discard(stagingId: string): Promise<void>;
  /**
   * Streams a committed file's bytes, or a range of them. Bytes found missing (a chunk, the tail,
   * the whole file) or a chunk that does not match the checksum taken when it was written fail
   * the stream with a ContentDamagedError before any of that chunk is sent, never a short or
   * wrong stream. `unchecked` skips the checksums (and reads only the range's own bytes): for
   * the proof of possession, whose digests are compared with the clerk's bytes anyway.
   */
  read(entry: CatalogEntry, range?: ByteRange, options?: { unchecked?: boolean }): Readable;
  /** Whether some chunk of a committed file has no checksum (it was stored before checksums). */
  lacksChunkSums(entry: CatalogEntry): Promise<boolean>;
  /**
   * Records checksums for the chunks of a committed file that have none: the fixity check's,
   * once the file's MD5 and SHA-256 proved the bytes it summed right. Recorded sums stay.
   */
  adoptChunkSums(entry: CatalogEntry, sums: ReadonlyArray<readonly [n: number, crc: number]>): Promise<void>;
  /**
   * Removes staging areas opened before `before` that no resumable upload owns (abandoned: a
   * request interrupted by a crash), and any bytes that neither a catalog entry nor a staging
   * area owns. Never touches a committed file, a younger staging area or a live upload's.
   */
  collectGarbage(before: Date): Promise<GarbageReport>;
}

export interface GarbageReport {
  stagingAreas: number;
  orphans: number;
}

export interface CatalogListQuery {
  /** Only files this unit uploaded (a clerk's view); all files when absent (an admin's view). */
  unitId?: string;
  /** Whose uploads count as "mine". */
  accountId: string;
  nameContains?: string;
  limit: number;
  offset: number;
}

export interface CatalogListing {
  entry: CatalogEntry;
  /** The name shown: the unit's own upload name in a unit view, the first name otherwise. */
  displayName: string;
  /** The media type shown, chosen the same way. */
  displayType: string;
  uploadCount: number;
  myUploadCount: number;
  /** When the counted uploads began: the unit's first upload in a unit view (so a clerk does
   * not learn how long the archive has held it), the catalog date otherwise. */
  firstUploadTime: Date;
  lastUploadTime: Date;
}

export interface Catalog {
  get(fileId: string): Promise<CatalogEntry | undefined>;
  findByKey(key: ContentKey): Promise<CatalogEntry | undefined>;
  list(query: CatalogListQuery): Promise<{ items: CatalogListing[]; total: number }>;
  /** Every entry in file id order, a page at a time: the entries after `afterFileId`. */
  scan(afterFileId: string | undefined, limit: number): Promise<CatalogEntry[]>;
  count(): Promise<number>;
}

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
  /** This upload stored the bytes; every other upload of the file saved its size. */
  stored: boolean;
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

/** Whose uploads count as "in scope" for an instant upload: one unit, or one county of a city. */
export type UploaderScope = { unitId: string } | { city: string; county: string | null };

/**
 * One upload action (a tus upload, an instant upload, a batch's file, a multipart upload), to be
 * counted once under its key however often it is retried or interrupted: its audit event, its
 * ledger entry's UploadCount and its day's tally change together, once.
 */
export interface UploadAction {
  /** Stable from the action's first request on (see docs/decisions/counting-once.md). */
  key: string;
  record: UploadRecord;
  /** Its audit event (`upload` or `instant_upload`), for the same account and file. */
  event: AuditEvent;
  /** What the uploader is told: "duplicate" only where the uploader may know of the earlier upload. */
  status: 'stored' | 'duplicate';
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
  /**
   * Finishes actions recorded before `before` whose counting was interrupted (a crash between its
   * steps, on a store without transactions); returns how many. Run at start and by the sweep.
   */
  finishInterrupted(before: Date): Promise<number>;
  /** Whether any upload of the file has been counted. */
  hasUploads(fileId: string): Promise<boolean>;
  /** Whether anybody in the scope has uploaded the file. */
  hasUploadInScope(fileId: string, scope: UploaderScope): Promise<boolean>;
  /** The most recent upload of a file by a unit, if any (a unit's right to read it). */
  latestUnitUpload(unitId: string, fileId: string): Promise<LedgerEntry | undefined>;
  entriesForFile(fileId: string): Promise<LedgerEntry[]>;
}

export interface Account {
  id: string;
  username: string;
  passwordHash: string;
  role: Role;
  unit: Unit;
  createdAt: Date;
  mustChangePassword: boolean;
}

export type NewAccount = Account;

export interface AccountStore {
  /** Throws ConflictError when the username is taken. */
  create(account: NewAccount): Promise<void>;
  get(id: string): Promise<Account | undefined>;
  findByUsername(username: string): Promise<Account | undefined>;
  list(): Promise<Account[]>;
  count(): Promise<number>;
  setPassword(id: string, passwordHash: string, mustChangePassword: boolean): Promise<void>;
}

export interface SessionRecord {
  /** SHA-256 of the cookie value: a leaked table does not give away live sessions. */
  idHash: string;
  accountId: string;
  csrfToken: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface SessionStore {
  create(session: SessionRecord): Promise<void>;
  /** A session that has not expired at `now`. */
  get(idHash: string, now: Date): Promise<SessionRecord | undefined>;
  delete(idHash: string): Promise<void>;
  deleteForAccount(accountId: string): Promise<void>;
  purgeExpired(now: Date): Promise<void>;
}

export interface ApiTokenRecord {
  id: string;
  accountId: string;
  /** SHA-256 of the secret part; the secret itself is shown once and never stored. */
  secretHash: string;
  label: string;
  createdAt: Date;
}

export interface TokenStore {
  create(token: ApiTokenRecord): Promise<void>;
  get(id: string): Promise<ApiTokenRecord | undefined>;
  list(): Promise<ApiTokenRecord[]>;
  /** Returns false when no such token existed. */
  revoke(id: string): Promise<boolean>;
  /** Revokes every token of the account; returns how many there were. */
  revokeForAccount(accountId: string): Promise<number>;
}

/**
 * What the login throttle remembers of one key (an account and address pair, an account, an
 * address): failures since the last success, and until when a success there makes the pair
 * "known". A record is forgotten at `expiresAt`.
 */
export interface LoginRecord {
  failures: number;
  lastFailureAt: Date | null;
  knownUntil: Date | null;
  expiresAt: Date;
}

/** Login records shared by every instance on the store. */
export interface LoginAttemptStore {
  /** The keys' records that have not expired at `now` (absent keys are left out). */
  get(keys: string[], now: Date): Promise<Map<string, LoginRecord>>;
  /** Adds one failure at `at` atomically (an expired record starts again); the record is kept at least until `expiresAt`. */
  fail(key: string, at: Date, expiresAt: Date): Promise<LoginRecord>;
  /** A success: the failures are forgotten and the key is known until `knownUntil` (also its expiry). */
  succeed(key: string, knownUntil: Date): Promise<void>;
}

/** A pending instant-upload claim: the caller must show the MD5 of these ranges of the file. */
export interface ClaimRecord {
  id: string;
  accountId: string;
  fileId: string;
  fileName: string;
  contentType: string;
  ranges: ByteRange[];
  /** MD5 (hex) of each range, read from the stored file when the claim was made. */
  expected: string[];
  expiresAt: Date;
}

export interface ClaimStore {
  create(claim: ClaimRecord): Promise<void>;
  /** Removes and returns a claim in one atomic step, so a claim can be answered once only. */
  take(id: string): Promise<ClaimRecord | undefined>;
  purgeExpired(now: Date): Promise<void>;
  /** Claims of the account not answered and not expired at `now`. */
  countOutstanding(accountId: string, now: Date): Promise<number>;
}

/** What a finished resumable upload became. */
export interface UploadOutcome {
  status: 'stored' | 'duplicate';
  fileId: string;
  uploadCount: number;
}

/** Who holds a resumable upload's write lock, and until when if it stops renewing it. */
export interface UploadLock {
  /** Unique per request: `<instance>/<n>`. */
  holder: string;
  /** Host and process of the holder: a holder on this host whose process is gone can be replaced at once. */
  host: string;
  pid: number;
  until: Date;
}

/** A resumable (tus) upload: state persisted so any server instance can continue it. */
export interface UploadState {
  id: string;
  ownerId: string;
  /** The staging area its bytes go to. */
  stagingId: string;
  length: number;
  /** Bytes received and persisted (the tus Upload-Offset). */
  offset: number;
  /** The tus Upload-Metadata, decoded. */
  metadata: Record<string, string | null>;
  createdAt: Date;
  /** Last time bytes arrived (or the upload was created); an idle upload expires from here. */
  activeAt: Date;
  expiresAt: Date;
  lock: UploadLock | null;
  /**
   * The content's identity, recorded once every byte is in and hashed, before the commit: a
   * completion cut short (a crash) is finished from it, without the bytes or their hashes.
   */
  completing: ContentKey | null;
  /** Set once the upload is complete and committed (its offset is then its length). */
  outcome: UploadOutcome | null;
}

export type NewUpload = Omit<UploadState, 'offset' | 'lock' | 'completing' | 'outcome'>;

export type LockAttempt = { status: 'acquired'; upload: UploadState } | { status: 'busy'; lock: UploadLock } | { status: 'missing' };

export interface UploadStore {
  create(upload: NewUpload): Promise<void>;
  get(id: string): Promise<UploadState | undefined>;
  /**
   * Takes the write lock when it is free, expired at `now`, or held by `replacing` (a holder
   * known to be dead). Atomic: of two callers, one gets it.
   */
  acquire(id: string, lock: UploadLock, now: Date, replacing?: string): Promise<LockAttempt>;
  /**
   * Records progress while holding the lock: new offset and activity, lock renewed to
   * `lockUntil`. Returns false (and changes nothing) if `holder` no longer holds it.
   */
  advance(id: string, holder: string, progress: { offset: number; activeAt: Date; expiresAt: Date; lockUntil: Date }): Promise<boolean>;
  /** Extends the lease of a lock `holder` still holds. */
  renew(id: string, holder: string, until: Date): Promise<void>;
  /**
   * Takes an upload back to `offset` (at most; staged bytes past it were lost), forgetting a
   * completion under way, under the lock; a finished upload is left as it is.
   */
  rewind(id: string, holder: string, offset: number): Promise<boolean>;
  /** Records the content's identity before the commit, under the lock. */
  markCompleting(id: string, holder: string, key: ContentKey): Promise<boolean>;
  /** Marks the upload finished (offset = length, and its outcome), under the lock. */
  finish(id: string, holder: string, outcome: UploadOutcome): Promise<boolean>;
  /** Lets go of the lock if `holder` still holds it. */
  release(id: string, holder: string): Promise<void>;
  delete(id: string): Promise<void>;
  /** Uploads whose expiry is before `now`, at most `limit` of them. */
  listExpired(now: Date, limit: number): Promise<UploadState[]>;
}

/** One audit event: who (or which attempted user name), from which unit and address, did what. */
export interface AuditEvent extends AuditEventFields {
  at: Date;
}

export interface AuditSearch {
  from?: Date;
  /** Exclusive. */
  to?: Date;
  action?: AuditAction;
  userName?: string;
  /** A unit subtree: every event of a unit at or below this city / county / town. */
  unit?: { city?: string; county?: string; town?: string };
  /** Part of the file name or the detail. */
  text?: string;
  limit: number;
  offset: number;
}

/** Append-only: the port has no way to change or remove an event. */
export interface AuditLog {
  append(event: AuditEvent): Promise<void>;
  /** Appends events in order (the embedded store in one transaction). */
  appendMany(events: readonly AuditEvent[]): Promise<void>;
  /** Newest first. */
  search(query: AuditSearch): Promise<{ items: Array<AuditEvent & { id: string }>; total: number }>;
}

/** A unit subtree: a city, a county of it, or a town of that county. */
export interface UnitSubtree {
  city: string;
  county?: string;
  town?: string;
}

/** What every report is restricted to. */
export interface ReportFilter {
  /**
   * Ledger-based tables: entries with an upload in [from, to) (first upload before `to`, last at
   * or after `from`). Collisions: files first stored in [from, to).
   */
  from?: Date;
  to?: Date;
  /** Savings: upload days, both included (YYYY-MM-DD). */
  fromDay?: string;
  toDay?: string;
  /** Uploads by units in this subtree only. */
  unit?: UnitSubtree;
  /** Part of the file name (the uploader's name for repeat entries, the stored name otherwise). */
  fileName?: string;
}

export interface ReportPaging {
  /** One of the table's sort fields (shared/reports.ts); ties are broken by a stable key. */
  sort: string;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export type RepeatReportQuery = ReportFilter & ReportPaging & { group: 'entry' | 'user' | 'unit'; userName?: string; unitId?: string; min: number };
export type CrossUnitReportQuery = ReportFilter & ReportPaging & { min: number };
export type SavingsReportQuery = ReportFilter & ReportPaging & { group: 'unit' | 'day' | 'week' | 'month' };
export type CollisionReportQuery = ReportFilter & ReportPaging & { min: number };
/** `from`/`to` select pairs found in [from, to); the unit and name filters, pairs where either file matches. */
export type NearDuplicateReportQuery = ReportFilter & ReportPaging & { method?: NearDuplicatePair['method'] };

export interface Page<Row> {
  items: Row[];
  /** Rows matching the filters, over all pages. */
  total: number;
}

/** Read-only aggregations for the administrators, computed by the database (never the whole ledger in memory). */
export interface Reports {
  /** Rows of the shape `group` names. */
  repeatUploaders(q: RepeatReportQuery): Promise<Page<RepeatEntryRow | RepeatUserRow | RepeatUnitRow>>;
  crossUnit(q: CrossUnitReportQuery): Promise<Page<CrossUnitRow>>;
  savings(q: SavingsReportQuery): Promise<Page<SavingsUnitRow | SavingsPeriodRow> & { summary: SavingsFigures }>;
  collisions(q: CollisionReportQuery): Promise<Page<CollisionRow>>;
  nearDuplicates(q: NearDuplicateReportQuery): Promise<Page<NearDuplicateRow>>;
}

/**
 * Request counters per key and fixed time window (the per-account quotas), shared by every
 * instance on the store. A window's counts vanish after it ends.
 */
export interface RateCounts {
  /** Adds `by` (one by default) to the key's count in the window ending at `windowEnd`; returns the new count. */
  hit(key: string, windowEnd: Date, by?: number): Promise<number>;
  /** Takes one back (a request that should not count). */
  undo(key: string, windowEnd: Date): Promise<void>;
  reset(key: string): Promise<void>;
}

/** A background job's record: who runs it (a lease, so one instance at a time) and its state. */
export interface JobRecord {
  name: string;
  holder: string | null;
  leaseUntil: Date | null;
  /** The job's own JSON state: its progress while it runs, its result after. */
  state: unknown;
}

export interface JobStore {
  /** Takes the job's lease when nobody holds it or the holder's lease ran out; false otherwise. */
  acquire(name: string, holder: string, now: Date, leaseMs: number): Promise<boolean>;
  /** Extends a lease `holder` holds and saves the state; false when the lease was lost. */
  renew(name: string, holder: string, now: Date, leaseMs: number, state: unknown): Promise<boolean>;
  /** Saves the final state and gives the lease up (nothing when `holder` lost it). */
  release(name: string, holder: string, state: unknown): Promise<void>;
  get(name: string): Promise<JobRecord | undefined>;
}

/** A document's near-duplicate fingerprints as the index keeps them (`nearDuplicates.fingerprints`). */
export interface NearFingerprint {
  fileId: string;
  /** The text's format (txt, docx, pdf…), or null when there was no text to take. */
  format: string | null;
  /** Why there is no text (an image, a scan, a damaged file): such files are counted, never failed. */
  skipped: string | null;
  /** Units of the normalised text (CJK characters and words). */
  units: number;
  short: boolean;
  /** 16 hexadecimal digits; null for a short text (SimHash is weak there) or a skipped file. */
  simhash: string | null;
  /**
   * The lookup keys (integers below 2^53): the SimHash's four 16-bit blocks (the pigeonhole index)
   * and the MinHash signature's LSH bands. Fingerprints sharing a key are candidates.
   */
  keys: number[];
  at: Date;
}

/** Two documents found nearly the same (`nearDuplicates.pairs`); `fileA` < `fileB`. */
export interface NearDuplicatePair {
  fileA: string;
  fileB: string;
  /** What found it: close SimHashes, overlapping shingles (Jaccard), or a short text held by the other (containment). */
  method: 'simhash' | 'jaccard' | 'containment';
  /** Null where one of the texts is short (no SimHash). */
  hamming: number | null;
  jaccard: number;
  containment: number;
  /** Where the texts differ: an excerpt of each. */
  snippetA: string;
  snippetB: string;
  foundAt: Date;
}

/** The near-duplicate index: fingerprints with their lookup keys, and the pairs found. */
export interface NearDuplicateIndex {
  /** Records files' fingerprints, each replacing an earlier one and its keys (the embedded store in one transaction). */
  put(fingerprints: readonly NearFingerprint[]): Promise<void>;
  get(fileId: string): Promise<NearFingerprint | undefined>;
  /** Fingerprints sharing a lookup key with `keys`, other than `fileId`'s own, at most `limit`. */
  candidates(fileId: string, keys: readonly number[], limit: number): Promise<NearFingerprint[]>;
  /** Records pairs, replacing what was found of the same two files before. */
  addPairs(pairs: readonly NearDuplicatePair[]): Promise<void>;
  /** Forgets every fingerprint and pair (a rebuild starts from nothing). */
  clear(): Promise<void>;
  counts(): Promise<{ fingerprinted: number; skipped: number; pairs: number }>;
}

/** One file waiting to be fingerprinted, or whose fingerprinting failed. */
export interface FingerprintJob {
  fileId: string;
  state: 'queued' | 'running' | 'failed';
  attempts: number;
  /** When it may run (again). */
  dueAt: Date;
  error: string | null;
}

/**
 * The fingerprinting queue (`nearDuplicates.jobs`): files are queued as they are committed and
 * taken by any server instance under a lease, so uploads never wait for fingerprinting and a
 * crashed instance's jobs are taken again.
 */
export interface FingerprintQueue {
  /** Queues files not queued already (a failed one stays failed: `requeue` retries it). */
  enqueue(fileIds: readonly string[], now: Date): Promise<void>;
  /** Queues files afresh, whatever their state: a rebuild, or a retry of failures. */
  requeue(fileIds: readonly string[], now: Date): Promise<void>;
  /** Leases up to `limit` due jobs (queued, or running under a lease that ran out), oldest first. */
  take(holder: string, now: Date, leaseMs: number, limit: number): Promise<FingerprintJob[]>;
  /** Removes a finished job (nothing when `holder` lost its lease). */
  done(fileId: string, holder: string): Promise<void>;
  /** Records a failure: queued again at `retryAt`, or failed for good when null. */
  fail(fileId: string, holder: string, error: string, retryAt: Date | null): Promise<void>;
  counts(now: Date): Promise<{ queued: number; running: number; failed: number }>;
  /** Failed jobs, most recent first. */
  failures(limit: number): Promise<FingerprintJob[]>;
}

export interface ArchiveStore {
  readonly kind: 'embedded' | 'mongodb';
  readonly audit: AuditLog;
  readonly content: ContentStore;
  readonly catalog: Catalog;
  readonly ledger: Ledger;
  readonly reports: Reports;
  readonly accounts: AccountStore;
  readonly sessions: SessionStore;
  readonly tokens: TokenStore;
  readonly claims: ClaimStore;
  readonly uploads: UploadStore;
  readonly jobs: JobStore;
  readonly rateCounts: RateCounts;
  readonly loginAttempts: LoginAttemptStore;
  readonly nearDuplicates: NearDuplicateIndex;
  readonly fingerprintQueue: FingerprintQueue;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
