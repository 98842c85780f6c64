import type { Binary, Db, Long, ObjectId } from 'mongodb';
import type { GeoType, Role, Unit } from '../../../shared/schemas.js';
import type { AuditEvent } from '../port.js';

/** Document shapes of the MongoDB adapter. Collection names are fixed by the product. */

export interface CatalogDoc {
  _id: ObjectId;
  fileMD5: string;
  fileSHA256: string;
  fileLength: Long | number;
  chunkSize: number;
  chunkCount: number;
  fileName: string;
  contentType: string;
  uploadDate: Date;
  md5Collision: boolean;
}

/** A standard GridFS files document, so any GridFS reader can read the bytes. */
export interface GridFileDoc {
  _id: ObjectId;
  length: Long | number;
  chunkSize: number;
  uploadDate: Date;
  filename: string;
  metadata: { contentType: string; md5: string; sha256: string };
}

export interface ChunkDoc {
  _id?: ObjectId;
  files_id: ObjectId;
  n: number;
  data: Binary | Uint8Array;
  /** CRC-32 of `data`, taken when written (absent on chunks written before checksums). */
  crc32?: number;
}

export interface StagingDoc {
  _id: ObjectId;
  createdAt: Date;
  /** The chunk size the area began with (absent on areas made before it was kept: the configured one). */
  chunkSize?: number;
}

/** An uploader entry in `userInfo.users`, with the seed design's field names. */
export interface LedgerDoc {
  _id?: ObjectId;
  UserID: string;
  UserName: string;
  UploadGeography: { GeoType: GeoType; UploadGeoName: string; UploadGeoNameID: string };
  UploadGeoAddress: { CityName: string; CountyName: string | null; TownName: string | null; StreetName: string | null };
  GeoPts?: { Type: 'Point'; GeoCoordinates: [number, number] };
  UploadFileID: ObjectId;
  UploadTime: Date;
  LastUploadTime: Date;
  UploadFileName: string;
  LastUploadFileName: string;
  LastUploadContentType: string;
  UploadCount: number;
  /** Keys of the last upload actions counted here (bounded): counting one again changes nothing. */
  AppliedKeys?: string[];
}

/**
 * `userInfo.uploadDays`: uploads per (file, unit, calendar day in the report time zone), for the
 * savings report. SavedUploads counts the uploads that did not store the bytes.
 */
export interface UploadDayDoc {
  _id?: ObjectId;
  UploadFileID: ObjectId;
  UnitID: string;
  /** YYYY-MM-DD; Week is its Monday, Month is YYYY-MM. */
  Day: string;
  Week: string;
  Month: string;
  CityName: string;
  CountyName: string | null;
  TownName: string | null;
  FileLength: Long | number;
  Uploads: number;
  SavedUploads: number;
  /** As in the ledger: keys of the last upload actions counted here. */
  AppliedKeys?: string[];
}

export interface AccountDoc {
  _id: string;
  username: string;
  passwordHash: string;
  role: Role;
  unit: Unit;

  createdAt: Date;
  mustChangePassword: boolean;
}

export interface SessionDoc {
  _id: string;
  accountId: string;
  csrfToken: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface TokenDoc {
  _id: string;
  accountId: string;
  secretHash: string;
  label: string;
  createdAt: Date;
}

export interface ClaimDoc {
  _id: string;
  accountId: string;
  fileId: string;
  fileName: string;
  contentType: string;
  ranges: Array<{ start: number; end: number }>;
  expected: string[];
  expiresAt: Date;
}

/** A resumable (tus) upload's state; `_id` is the upload id. */
export interface UploadDoc {
  _id: string;
  ownerId: string;
  stagingId: ObjectId;
  length: Long | number;
  offset: Long | number;
  metadata: Record<string, string | null>;
  createdAt: Date;
  activeAt: Date;
  expiresAt: Date;
  lock: { holder: string; host: string; pid: number; until: Date } | null;
  completing?: { md5: string; sha256: string; length: Long | number } | null;
  outcome: { status: 'stored' | 'duplicate'; fileId: string; uploadCount: number } | null;
}

/**
 * An audit event in `audit.events`. What it says is never changed. An upload action's event has
 * the action's key as `_id` and is its record of counting (server/store/mongo/ledger.ts): written
 * first with `pending`, which is removed, with the answer set, once the ledger and the day's tally
 * have counted it.
 */
export interface AuditDoc extends AuditEvent {
  _id: ObjectId | string;
  upload?: UploadActionDoc;
  pending?: true;
}

/** What an upload action's event holds to count it (again after a crash) and to answer retries. */
export interface UploadActionDoc {
  contentType: string;
  day: string;
  fileLength: number;
  stored: boolean;
  status: 'stored' | 'duplicate';
  /** Set when the action was counted. */
  uploadCount?: number;
}

/** A background job (`jobs`): `_id` is its name; the holder's lease keeps it to one instance. */
export interface JobDoc {
  _id: string;
  holder: string | null;
  leaseUntil: Date | null;
  state: unknown;
}

/** A login throttle record (`loginAttempts`): `_id` is its key; removed by a TTL index at `expiresAt`. */
export interface LoginAttemptDoc {
  _id: string;
  failures: number;
  lastFailureAt: Date | null;
  knownUntil: Date | null;
  expiresAt: Date;
}

/** A request counter (`rateCounts`): `_id` is key and window; removed by a TTL index after the window. */
export interface RateCountDoc {
  _id: string;
  hits: number;
  windowEnd: Date;
}

/** A file's near-duplicate fingerprints (`nearDuplicates.fingerprints`); `keys` holds its lookup keys (multikey index). */
export interface NearFingerprintDoc {
  _id: ObjectId;
  format: string | null;
  skipped: string | null;
  units: number;
  short: boolean;
  simhash: string | null;
  /** Lookup keys, integers below 2^53 (multikey index `keys`). */
  keys: number[];
  at: Date;
}

/** Two files found nearly the same (`nearDuplicates.pairs`); `_id` is "<fileA>:<fileB>". */
export interface NearPairDoc {
  _id: string;
  fileA: ObjectId;
  fileB: ObjectId;
  method: 'simhash' | 'jaccard' | 'containment';
  hamming: number | null;
  jaccard: number;
  containment: number;
  snippetA: string;
  snippetB: string;
  foundAt: Date;
}

/** A file waiting to be fingerprinted, or whose fingerprinting failed (`nearDuplicates.jobs`); `_id` is the file id. */
export interface FingerprintJobDoc {
  _id: string;
  state: 'queued' | 'running' | 'failed';
  attempts: number;
  dueAt: Date;
  holder: string | null;
  leaseUntil: Date | null;
  error: string | null;
}

export const BUCKET = 'fileContent';

export function collections(db: Db) {
  return {
    catalog: db.collection<CatalogDoc>('fileInfo.files'),
    /**
     * The catalog read as the primary holds it now. After a duplicate-key error the winner is on
     * the primary but perhaps not yet majority-committed: a majority read could miss it.
     */
    catalogOnPrimary: db.collection<CatalogDoc>('fileInfo.files', { readConcern: { level: 'local' }, readPreference: 'primary' }),
    ledger: db.collection<LedgerDoc>('userInfo.users'),
    uploadDays: db.collection<UploadDayDoc>('userInfo.uploadDays'),
    gridFiles: db.collection<GridFileDoc>(`${BUCKET}.files`),
    chunks: db.collection<ChunkDoc>(`${BUCKET}.chunks`),
    staging: db.collection<StagingDoc>(`${BUCKET}.staging`),
    accounts: db.collection<AccountDoc>('accounts'),
    sessions: db.collection<SessionDoc>('sessions'),
    tokens: db.collection<TokenDoc>('apiTokens'),
    claims: db.collection<ClaimDoc>('uploads.claims'),
    uploads: db.collection<UploadDoc>('uploads.resumable'),
    audit: db.collection<AuditDoc>('audit.events'),
    jobs: db.collection<JobDoc>('jobs'),
    rateCounts: db.collection<RateCountDoc>('rateCounts'),
    loginAttempts: db.collection<LoginAttemptDoc>('loginAttempts'),
    nearFingerprints: db.collection<NearFingerprintDoc>('nearDuplicates.fingerprints'),
    nearPairs: db.collection<NearPairDoc>('nearDuplicates.pairs'),
    fingerprintJobs: db.collection<FingerprintJobDoc>('nearDuplicates.jobs'),
  };
}

export type Collections = ReturnType<typeof collections>;

/** Indexes are created explicitly at start-up, never lazily on first use. */
export async function createIndexes(c: Collections): Promise<void> {
  await Promise.all([
    c.catalog.createIndex({ fileSHA256: 1, fileMD5: 1, fileLength: 1 }, { unique: true, name: 'content_identity' }),
    c.catalog.createIndex({ fileMD5: 1 }, { name: 'md5' }),
    c.catalog.createIndex({ uploadDate: -1 }, { name: 'upload_date' }),
    c.chunks.createIndex({ files_id: 1, n: 1 }, { unique: true }),
    c.gridFiles.createIndex({ filename: 1, uploadDate: 1 }),
    c.ledger.createIndex({ UserID: 1, 'UploadGeography.UploadGeoNameID': 1, UploadFileID: 1 }, { unique: true, name: 'uploader_unit_file' }),
    c.ledger.createIndex({ UploadFileID: 1 }, { name: 'file' }),
    c.ledger.createIndex({ 'UploadGeography.UploadGeoNameID': 1, LastUploadTime: -1 }, { name: 'unit_recent' }),
    c.accounts.createIndex({ username: 1 }, { unique: true }),
    c.sessions.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
    c.sessions.createIndex({ accountId: 1 }),
    c.claims.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
    c.claims.createIndex({ accountId: 1, expiresAt: 1 }, { name: 'account_expiry' }),
    c.uploads.createIndex({ expiresAt: 1 }, { name: 'expiry' }),
    c.uploads.createIndex({ stagingId: 1 }, { unique: true, name: 'staging' }),
    c.ledger.createIndex({ UploadFileID: 1, 'UploadGeoAddress.CityName': 1, 'UploadGeoAddress.CountyName': 1 }, { name: 'file_county' }),
    // The reports (server/store/mongo/reports.ts).
    c.ledger.createIndex({ UploadCount: 1 }, { name: 'repeats' }),
    c.ledger.createIndex({ 'UploadGeoAddress.CityName': 1, 'UploadGeoAddress.CountyName': 1, 'UploadGeoAddress.TownName': 1 }, { name: 'subtree' }),
    c.ledger.createIndex({ UploadFileID: 1, 'UploadGeography.UploadGeoNameID': 1 }, { name: 'file_unit' }),
    c.catalog.createIndex({ md5Collision: 1, uploadDate: 1 }, { name: 'collisions', partialFilterExpression: { md5Collision: true } }),
    c.uploadDays.createIndex({ UploadFileID: 1, UnitID: 1, Day: 1 }, { unique: true, name: 'file_unit_day' }),
    c.uploadDays.createIndex({ Day: 1 }, { name: 'day' }),
    c.uploadDays.createIndex({ CityName: 1, CountyName: 1, TownName: 1, Day: 1 }, { name: 'subtree_day' }),
    c.rateCounts.createIndex({ windowEnd: 1 }, { expireAfterSeconds: 0, name: 'expiry' }),
    c.loginAttempts.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0, name: 'expiry' }),
    c.tokens.createIndex({ accountId: 1 }, { name: 'account' }),
    c.audit.createIndex({ at: -1 }, { name: 'at' }),
    c.audit.createIndex({ action: 1, at: -1 }, { name: 'action_at' }),
    c.audit.createIndex({ userName: 1, at: -1 }, { name: 'user_at' }),
    c.audit.createIndex({ 'unit.city': 1, 'unit.county': 1, 'unit.town': 1, at: -1 }, { name: 'unit_at' }),
    // Upload actions whose counting a crash interrupted (the field exists only until it is done).
    c.audit.createIndex({ pending: 1, at: 1 }, { sparse: true, name: 'pending' }),
    // Near-duplicates: the lookup keys (the pigeonhole blocks and LSH bands) of every fingerprint.
    c.nearFingerprints.createIndex({ keys: 1 }, { name: 'keys' }),
    c.nearPairs.createIndex({ foundAt: -1 }, { name: 'found' }),
    c.nearPairs.createIndex({ fileB: 1 }, { name: 'file_b' }),
    c.fingerprintJobs.createIndex({ state: 1, dueAt: 1 }, { name: 'due' }),
  ]);
}

export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
