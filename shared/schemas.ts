import { z } from 'zod';
import { ROLES, type Role } from './accounts.js';
import { AUDIT_ACTIONS, AUDIT_GROUP_NAMES, type AuditAction, type AuditNote } from './audit-notes.js';
import { FILE_KINDS } from './file-types.js';

// Owned by the accounts and the audit log, kept importable from here with the other shapes.
export { ROLES, type Role, AUDIT_ACTIONS, type AuditAction };

/** One schema per request, shared by the browser client and the server. */

export const md5Hex = z
  .string()
  .regex(/^[0-9a-fA-F]{32}$/, 'an MD5 is 32 hexadecimal characters')
  .transform((s) => s.toLowerCase());
export const sha256Hex = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, 'a SHA-256 is 64 hexadecimal characters')
  .transform((s) => s.toLowerCase());
export const fileIdSchema = z.string().regex(/^[0-9a-f]{24}$/, 'a file id is 24 lowercase hexadecimal characters');

export const loginRequest = z.strictObject({
  username: z.string().min(1).max(64),
  password: z.string().min(1).max(1024),
});
export type LoginRequest = z.infer<typeof loginRequest>;

export const MIN_PASSWORD_LENGTH = 10;
export const passwordChangeRequest = z.strictObject({
  currentPassword: z.string().min(1).max(1024),
  // The policy (length, not the username, not a common password) is the server's, with a code per rule.
  newPassword: z.string().min(1).max(1024),
  /** Also revoke the account's API tokens (other sessions always end). */
  revokeTokens: z.boolean().optional(),
});
export type PasswordChangeRequest = z.infer<typeof passwordChangeRequest>;

/** Non-file fields of `POST /api/files`. */
export const uploadFields = z.strictObject({
  md5: md5Hex.optional(),
});

/** `POST /api/uploads/check`: does the archive hold this content already? */
export const uploadCheckRequest = z.strictObject({
  md5: md5Hex,
  sha256: sha256Hex,
  size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  name: z.string().min(1).max(1000),
  type: z.string().max(255).optional(),
  /**
   * A script that skips files it uploaded into its unit before (the importer by default): for
   * such a file the answer is `skip` with its `ownUpload`, and no claim is made.
   */
  skipOwnUpload: z.boolean().optional(),
});
export type UploadCheckRequest = z.infer<typeof uploadCheckRequest>;

/**
 * A client's key for one upload action, repeated on its retries so that it is counted once
 * (the Idempotency-Key header, or the tus metadata `idempotencyKey`): a random UUID serves.
 */
export const idempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,128}$/, 'must be 1 to 128 visible ASCII characters (a UUID serves)');
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** A batch of checks, proofs or small files holds at most this many. */
export const BATCH_MAX_FILES = 1000;
/** `POST /api/uploads/batch` takes files up to this size; larger ones go one by one (tus). */
export const BATCH_FILE_MAX_BYTES = 4 * 1024 * 1024;
/** ... and a request of at most this many bytes (its files are held in memory). */
export const BATCH_MAX_BYTES = 64 * 1024 * 1024;

/** `POST /api/uploads/checks`: many checks in one request, answered in the same order. */
export const uploadChecksRequest = z.strictObject({
  files: z.array(uploadCheckRequest).min(1).max(BATCH_MAX_FILES),
});
export type UploadChecksRequest = z.infer<typeof uploadChecksRequest>;

/**
 * The `manifest` field of `POST /api/uploads/batch`: each file's digests, in the order of the file
 * parts, and optionally its name and media type (instead of the part's, so any name survives
 * the multipart headers as it is).
 */
export const uploadBatchManifest = z
  .array(
    z.strictObject({
      md5: md5Hex,
      sha256: sha256Hex,
      name: z.string().min(1).max(1000).optional(),
      type: z.string().max(255).optional(),
      /**
       * This file's own key for its upload, the same in whatever batch it is sent again (after a
       * reload): it is counted once under it. Without one, under the batch's key and its place.
       */
      key: idempotencyKey.optional(),
    }),
  )
  .min(1)
  .max(BATCH_MAX_FILES);

/**
 * `POST /api/uploads/prove`: the MD5 of each requested range, in the order given (none when the
 * check asked for none: the caller's own upload of the file).
 */
export const uploadProveRequest = z.strictObject({
  claimId: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/, 'a claim id is the one returned by /api/uploads/check'),
  digests: z.array(md5Hex).max(16),
});
export type UploadProveRequest = z.infer<typeof uploadProveRequest>;

/** `POST /api/uploads/proofs`: many proofs in one request, answered in the same order. */
export const uploadProofsRequest = z.strictObject({
  proofs: z.array(uploadProveRequest).min(1).max(BATCH_MAX_FILES),
});
export type UploadProofsRequest = z.infer<typeof uploadProofsRequest>;

/**
 * The tus `Upload-Metadata` the archive reads: `filename` and `filetype` (or Uppy's `name` and
 * `type`), and the client's own `md5` / `sha256` of the file, verified at completion. Other
 * keys are kept and ignored.
 */

export const tusMetadata = z.looseObject({
  filename: z.string().max(1000).nullish(),
  name: z.string().max(1000).nullish(),
  filetype: z.string().max(255).nullish(),
  type: z.string().max(255).nullish(),
  md5: md5Hex.optional(),
  sha256: sha256Hex.optional(),
  idempotencyKey: idempotencyKey.optional(),
});
export type TusMetadata = z.infer<typeof tusMetadata>;

/** Where the tus endpoint lives (uploads are created by POST here). */
export const TUS_ENDPOINT = '/api/tus';

/** Response headers of a finished tus upload (exposed to browsers through CORS). */
export const ARCHIVE_FILE_ID_HEADER = 'Archive-File-Id';
export const ARCHIVE_STATUS_HEADER = 'Archive-Status';
export const ARCHIVE_UPLOAD_COUNT_HEADER = 'Archive-Upload-Count';

/** A byte range, `end` exclusive, as in `Blob.slice(start, end)`. */
export interface ByteRangeView {
  start: number;
  end: number;
}

/**
 * The caller's own earlier upload of a content into its unit (its ledger entry there): a folder
 * dropped again is asked about before it counts again. Never about another account's or unit's.
 */
export interface OwnUpload {
  fileId: string;
  /** ISO 8601: when this account last uploaded it into its unit. */
  lastUploadTime: string;
  /** This account's uploads of it into its unit so far. */
  uploadCount: number;
}

/**
 * A check's answer: send the file (`upload`), or prove holding it (`prove`); `ownUpload` when
 * the caller uploaded this content into its unit before. Not proving counts nothing: a page
 * skips such a file by letting its claim expire; a check that asked to `skipOwnUpload` is
 * answered `skip`, with no claim.
 */
export type UploadCheckResult =
  | { status: 'upload' }
  | { status: 'prove'; claimId: string; ranges: ByteRangeView[]; ownUpload?: OwnUpload }
  | { status: 'skip'; ownUpload: OwnUpload };

export const INSTANT_UPLOAD_SCOPES = ['archive', 'county', 'unit'] as const;
export type InstantUploadScope = (typeof INSTANT_UPLOAD_SCOPES)[number];

/** A calendar day, YYYY-MM-DD, in the archive's report time zone (REPORT_TIME_ZONE). */
export const calendarDay = z.iso
  .date({ message: 'a day is written YYYY-MM-DD, e.g. 2026-01-31' })
  .refine((d) => d >= '1970-01-01', { message: 'a day is 1970-01-01 or later' });

/** What the file list sorts by: the columns of 本单位文件. */
export const FILE_SORTS = ['name', 'size', 'firstUpload', 'lastUpload', 'unitCount', 'myCount'] as const;
export type FileSort = (typeof FILE_SORTS)[number];
/** Names read best A→Z; sizes, times and counts biggest / newest first. */
export const defaultFileOrder = (sort: FileSort): 'asc' | 'desc' => (sort === 'name' ? 'asc' : 'desc');

/** `GET /api/files`: the caller's files (its unit's, its reach's), searched, filtered, sorted, a page at a time. */
export const fileListQuery = z
  .strictObject({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
    /** Part of any name the caller's unit (reach) uploaded the file under, folders included. */
    q: z.string().trim().max(200).optional(),
    /** Only files this account uploaded (its id or login): a colleague, or oneself. */
    uploader: z.string().trim().min(1).max(64).optional(),
    /** First upload (by the unit, for a clerk) on or after this day… */
    from: calendarDay.optional(),
    /** …and on or before this one (至: the day included). */
    to: calendarDay.optional(),
    type: z.enum(FILE_KINDS, { message: `a type is one of ${FILE_KINDS.join(', ')}` }).optional(),
    /** Default: the most recent upload first (the whole archive: the first upload, newest first). */
    sort: z.enum(FILE_SORTS, { message: `sort by one of ${FILE_SORTS.join(', ')}` }).optional(),
    order: z.enum(['asc', 'desc'], { message: 'order is asc or desc' }).optional(),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, {
    message: 'from is after to: the first day is later than the last; swap them',
    path: ['from'],
  });
export type FileListQuery = z.infer<typeof fileListQuery>;

/** `GET /api/files/search`: the caller's files (its unit's, its reach's) whose text holds every word of `q`. */
export const fileTextSearchQuery = z.strictObject({
  /** Words of the text (Chinese is segmented into words: 档案数字化 finds 档案 and 数字化). */
  q: z.string().trim().min(1, 'type a word to search for').max(200),
  limit: z.coerce.number().int().min(1).max(50).default(20),
  offset: z.coerce.number().int().min(0).max(10_000).default(0),
});
export type FileTextSearchQuery = z.infer<typeof fileTextSearchQuery>;

/** A folder of 本单位文件 by its path (`2026年/案卷007`; '' or absent: the top), without '/' at either end. */
const folderPath = z
  .string()
  .max(1000, 'a folder path has at most 1,000 characters')
  .transform((path) => path.replace(/^\/+|\/+$/g, ''));

/** `GET /api/files/folders`: one folder of the caller's files, as a 网盘 shows it, a page at a time. */
export const folderListQuery = z.strictObject({
  path: folderPath.default(''),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
});
export type FolderListQuery = z.infer<typeof folderListQuery>;

/** A file of a folder: the listing's summary, and its name in the folder (its path's last part). */
export interface FolderFileSummary extends FileSummary {
  path: string;
}

export interface FolderList {
  path: string;
  /** The page's sub-folders (first), each with how many file names lie under it at any depth… */
  folders: Array<{ name: string; files: number }>;
  /** …then its files, each by name. */
  files: FolderFileSummary[];
  folderTotal: number;
  fileTotal: number;
  limit: number;
  offset: number;
}

/** At most this many uploads are named for one 撤回 from 本单位文件 (the client sends them 1,000 a request). */
export const WITHDRAWABLE_MAX = 10_000;

/** `GET /api/files/withdrawable`: the uploads 撤回 would take back for some files (`file`, repeated) or a folder. */
export const withdrawableQuery = z
  .strictObject({
    folder: folderPath.optional(),
    file: z.union([fileIdSchema, z.array(fileIdSchema).max(200, 'at most 200 files at once')]).optional(),
  })
  .refine((q) => (q.folder === undefined) !== (q.file === undefined), {
    message: 'name the files (file=…) or one folder (folder=…), one of the two',
    path: ['file'],
  });
export type WithdrawableQuery = z.infer<typeof withdrawableQuery>;

export interface WithdrawableUploads {
  /** The caller's to withdraw: a clerk's own within WITHDRAW_DAYS, an administrator's any in reach. */
  uploads: Array<{ uploadId: string; fileId: string; fileName: string; uploadedAt: string }>;
  /** Uploads there a clerk may not withdraw: a colleague's… */
  othersUploads: number;
  /** …or the clerk's own, made more than WITHDRAW_DAYS ago. */
  tooOld: number;
}

export const GEO_TYPES = ['city', 'county', 'town', 'street'] as const;
export type GeoType = (typeof GEO_TYPES)[number];

/** An administrative unit an account belongs to; its deepest named level is its GeoType. */
export interface Unit {
  id: string;
  geoType: GeoType;
  city: string;
  county?: string;
  town?: string;
  street?: string;
  /** Optional location as [longitude, latitude]. */
  coordinates?: [number, number];
}

export interface AccountView {
  id: string;
  username: string;
  /** The person's name (姓名); null: none given. */
  displayName: string | null;
  role: Role;
  unit: Unit;
}

export interface SessionView {
  account: AccountView;
  /** Send back as `X-CSRF-Token` on state-changing requests made with the session cookie. */
  csrfToken: string | null;
  mustChangePassword: boolean;
  /**
   * What the account reaches, by the reports' unit names: null for the whole archive (its
   * top-level administrators); for everyone else the subtree its unit heads.
   */
  reach: { city: string; county?: string; town?: string } | null;
  /** The largest file the archive takes, in bytes (MAX_FILE_SIZE). */
  maxFileSize: number;
  /** The archive's time zone (REPORT_TIME_ZONE): pages show times in it, as the exports do. */
  timeZone: string;
  /** WITHDRAW_DAYS and TRASH_DAYS: what the withdrawal dialog and the trash promise. */
  withdrawDays: number;
  trashDays: number;
}

/** The answer to `PUT /api/session/password`: the new session, and how many API tokens were revoked. */
export interface PasswordChangeView extends SessionView {
  tokensRevoked: number;
}

export interface UploadResult {
  status: 'stored' | 'duplicate';
  fileId: string;
  /** The caller's own upload count for this file, for the caller's unit. */
  uploadCount: number;
}

/** One file of a batch upload: stored or counted, or refused on its own (its bytes did not match its digests). */
export type BatchFileResult =
  UploadResult | { status: 'failed'; error: 'checksum_mismatch' | 'idempotency_key_reused'; message: string };

/** One proof of a batch: counted, or refused on its own (the claim is used up either way). */
export type ProofResult = UploadResult | { status: 'rejected'; error: 'claim_rejected'; message: string };

export interface FileSummary {
  fileId: string;
  fileName: string;
  contentType: string;
  fileLength: number;
  fileMD5: string;
  /** First upload: by the caller's unit for a clerk, by anyone for an admin. */
  uploadDate: string;
  /** Uploads the caller can see: the unit's for a clerk, everybody's for an admin. */
  uploadCount: number;
  /** The caller's own uploads of this file. */
  myUploadCount: number;
  lastUploadTime: string;
  /**
   * Every name (a path in the uploader's folder) the caller's unit, or reach, uploaded this
   * content under, in the order first used, at most FILE_NAMES_SHOWN; `nameCount` counts them all.
   */
  names: string[];
  nameCount: number;
  /** Who uploaded it there (logins), at most FILE_UPLOADERS_SHOWN; `uploaderCount` counts them all. */
  uploaders: string[];
  /** The uploaders' display names, in the same order (null: none). */
  uploaderDisplayNames: Array<string | null>;
  uploaderCount: number;
}

export const FILE_NAMES_SHOWN = 20;
export const FILE_UPLOADERS_SHOWN = 20;

/** An excerpt of a file's text around the words searched for; `marks` are [start, end) of each word in `text`. */
export interface TextSnippet {
  text: string;
  marks: Array<[number, number]>;
}

/** A file found by its text, as the caller's view names it. */
export interface FileTextHit {
  fileId: string;
  fileName: string;
  contentType: string;
  fileLength: number;
  snippet: TextSnippet;
}

export interface FileTextSearch {
  items: FileTextHit[];
  /** More files match beyond this page. */
  more: boolean;
  limit: number;
  offset: number;
  /** The search's words as the text index knows them (segmented, normalised). */
  terms: string[];
}

export interface FileList {
  items: FileSummary[];
  total: number;
  limit: number;
  offset: number;
  /** The order the items are in (the default when none was asked for). */
  sort: FileSort;
  order: 'asc' | 'desc';
}

/** `GET /api/files/uploaders`: who uploaded the caller's files, for the uploader filter. */
export interface FileUploaders {
  items: Array<{ id: string; username: string; displayName: string | null }>;
}

/** `GET /api/files/:id`: `disposition=inline` shows a PDF or an image in the browser (a preview). */
export const fileReadQuery = z.strictObject({
  disposition: z.enum(['attachment', 'inline'], { message: 'disposition is attachment or inline' }).optional(),
});

/** GET /api/files/:id/pages/:page: a page, counted from 1. */
export const filePageParams = z.strictObject({
  page: z.coerce
    .number({ message: 'a page is a whole number from 1' })
    .int({ message: 'a page is a whole number from 1' })
    .min(1, { message: 'a page is a whole number from 1' })
    .max(100_000, { message: 'a page is at most 100000' }),
});
/** How wide the page is drawn, in pixels (a thumbnail to a high-density screen's viewer). */
export const filePageQuery = z.strictObject({
  width: z.coerce
    .number({ message: 'width is a whole number of pixels, 100 to 1600' })
    .int({ message: 'width is a whole number of pixels, 100 to 1600' })
    .min(100, { message: 'width is a whole number of pixels, 100 to 1600' })
    .max(1600, { message: 'width is a whole number of pixels, 100 to 1600' })
    .default(1200),
});

const isoDate = z.iso
  .datetime({ offset: true, message: 'a time is ISO 8601, e.g. 2026-01-31T00:00:00Z' })
  .transform((s) => new Date(s));

/**
 * A unit filter's rule: names repeat across the province (城关镇 is everywhere), so a level needs the
 * one above it. (The reports' and the audit log's filters.)
 */
export function withUnitLevels<T extends z.ZodType<{ city?: string; county?: string; town?: string }>>(schema: T) {
  return schema
    .refine((q) => !q.county || q.city, {
      message: 'county needs city (county names repeat across cities)',
      path: ['county'],
    })
    .refine((q) => !q.town || q.county, {
      message: 'town needs county (town names repeat across counties)',
      path: ['town'],
    });
}

/**
 * A CSV export's language: headers, sizes, times and codes for people to read. Without it an
 * export is for scripts: column ids, bytes, ISO 8601 times, codes.
 */
export const exportLanguage = z.enum(['zh-CN', 'en']).optional();

/** `GET /api/audit`: newest first, every filter optional. */
export const auditQuery = withUnitLevels(
  z.strictObject({
    from: isoDate.optional(),
    to: isoDate.optional(),
    action: z.enum(AUDIT_ACTIONS).optional(),
    /** A preset: one of a group of actions (with `action` too, both apply). */
    group: z.enum(AUDIT_GROUP_NAMES).optional(),
    user: z.string().min(1).max(64).optional(),
    city: z.string().min(1).max(100).optional(),
    county: z.string().min(1).max(100).optional(),
    town: z.string().min(1).max(100).optional(),
    q: z.string().min(1).max(200).optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
    format: z.enum(['json', 'csv']).default('json'),
    lang: exportLanguage,
  }),
);
export type AuditQuery = z.infer<typeof auditQuery>;

/** What an audit event says, apart from its time and id (which the store and the API write differently). */
export interface AuditEventFields {
  action: AuditAction;
  userId: string | null;
  userName: string;
  unit: Unit | null;
  address: string | null;
  fileId: string | null;
  fileName: string | null;
  /** What happened, in English (and the whole record for events older than notes). */
  detail: string;
  /** The same as data, for each language's words (shared/audit-notes.ts); null on older events. */
  note: AuditNote | null;
}

export interface AuditEventView extends AuditEventFields {
  id: string;
  /** The display name the account has now (`userName` is the login the event recorded); null: none. */
  userDisplayName: string | null;
  /** ISO 8601. */
  at: string;
}

export interface AuditList {
  items: AuditEventView[];
  total: number;
  limit: number;
  offset: number;
}
