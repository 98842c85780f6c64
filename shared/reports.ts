import { z } from 'zod';
import { calendarDay, exportLanguage, withUnitLevels, type Unit } from './schemas.js';

/**
 * The administrators' reports (`GET /api/reports/…`): their query parameters and their rows,
 * shared by the server and the browser client. Times are ISO 8601; days are calendar days
 * (YYYY-MM-DD) in the archive's report time zone (REPORT_TIME_ZONE).
 */

export const REPORTS = ['repeat-uploaders', 'cross-unit', 'savings', 'collisions', 'near-duplicates'] as const;
export type ReportName = (typeof REPORTS)[number];

const day = calendarDay;

/** Text columns read best A→Z and periods oldest first; counts and sizes biggest first. */
const ASCENDING_BY_DEFAULT: ReadonlySet<string> = new Set(['userName', 'fileName', 'unit', 'period', 'md5', 'hamming']);
export const defaultOrder = (sort: string): 'asc' | 'desc' => (ASCENDING_BY_DEFAULT.has(sort) ? 'asc' : 'desc');

/** Sort fields per table; the first is the default. */
export const REPEAT_SORTS = {
  entry: ['uploadCount', 'lastUploadTime', 'firstUploadTime', 'userName', 'fileName', 'fileLength'],
  user: ['repeatUploads', 'files', 'uploads', 'repeatBytes', 'lastUploadTime', 'firstUploadTime', 'userName'],
  unit: ['repeatUploads', 'files', 'users', 'uploads', 'repeatBytes', 'lastUploadTime', 'firstUploadTime'],
} as const;
export const CROSS_UNIT_SORTS = [
  'units',
  'uploads',
  'users',
  'fileLength',
  'lastUploadTime',
  'firstUploadTime',
  'fileName',
] as const;
export const SAVINGS_SORTS = {
  unit: ['savedBytes', 'savedUploads', 'uploads', 'unit'],
  day: ['period', 'savedBytes', 'savedUploads', 'uploads'],
  week: ['period', 'savedBytes', 'savedUploads', 'uploads'],
  month: ['period', 'savedBytes', 'savedUploads', 'uploads'],
} as const;
export const COLLISION_SORTS = ['md5', 'uploadDate', 'fileLength', 'fileName', 'uploads'] as const;
export const NEAR_DUPLICATE_SORTS = ['foundAt', 'jaccard', 'hamming'] as const;

/** Filters every report takes. */
const filterFields = {
  /** First and last day, both included. */
  from: day.optional(),
  to: day.optional(),
  /** A unit subtree: the city, or a county of it, or a town of that county. */
  city: z.string().min(1).max(100).optional(),
  county: z.string().min(1).max(100).optional(),
  town: z.string().min(1).max(100).optional(),
  /** Part of the file name. */
  q: z.string().min(1).max(200).optional(),
  order: z.enum(['asc', 'desc']).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  format: z.enum(['json', 'csv']).default('json'),
  lang: exportLanguage,
};

type FilterShape = { from?: string; to?: string; city?: string; county?: string; town?: string };

function withFilterRules<T extends z.ZodType<FilterShape & { sort?: string; group?: string }>>(
  schema: T,
  sorts: (group: string | undefined) => readonly string[],
) {
  return withUnitLevels(
    schema.refine((q) => !q.from || !q.to || q.from <= q.to, { message: 'from is after to', path: ['from'] }),
  ).refine((q) => !q.sort || sorts(q.group).includes(q.sort), {
    message: 'this table sorts by one of its columns (see README, "Reports")',
    path: ['sort'],
  });
}

export const repeatUploadersQuery = withFilterRules(
  z.strictObject({
    ...filterFields,
    /** One row per ledger entry (user, unit, file), per user, or per unit. */
    group: z.enum(['entry', 'user', 'unit']).default('entry'),
    /** Exact user name. */
    user: z.string().min(1).max(64).optional(),
    /** One unit (its id), not its subtree: a unit's own entries. */
    unitId: z.string().min(1).max(100).optional(),
    /** Entries uploaded at least this many times. */
    min: z.coerce.number().int().min(2).max(1_000_000).default(2),
    /**
     * Copies inside one upload (the same content twice or more in one folder upload, one
     * receipt): counted as uploads (`include`), or left out, so that only re-sends count
     * (`exclude`, 只看重复发送): each row's uploads, repeats and minimum without them.
     */
    copies: z.enum(['include', 'exclude']).default('include'),
    sort: z.string().max(40).optional(),
  }),
  (group) => REPEAT_SORTS[(group ?? 'entry') as keyof typeof REPEAT_SORTS],
);
export type RepeatUploadersQuery = z.infer<typeof repeatUploadersQuery>;

export const crossUnitQuery = withFilterRules(
  z.strictObject({
    ...filterFields,
    /** Files uploaded by at least this many units. */
    min: z.coerce.number().int().min(2).max(1_000_000).default(2),
    sort: z.string().max(40).optional(),
  }),
  () => CROSS_UNIT_SORTS,
);
export type CrossUnitQuery = z.infer<typeof crossUnitQuery>;

export const savingsQuery = withFilterRules(
  z.strictObject({
    ...filterFields,
    /** Rows per unit (one level below the unit filter) or per day / week (from Monday) / month. */
    group: z.enum(['unit', 'day', 'week', 'month']).default('unit'),
    sort: z.string().max(40).optional(),
  }),
  (group) => SAVINGS_SORTS[(group ?? 'unit') as keyof typeof SAVINGS_SORTS],
);
export type SavingsQuery = z.infer<typeof savingsQuery>;

export const collisionsQuery = withFilterRules(
  z.strictObject({
    ...filterFields,
    /** Files uploaded at least this many times (0: also a file whose upload was never counted). */
    min: z.coerce.number().int().min(0).max(1_000_000).default(0),
    sort: z.string().max(40).optional(),
  }),
  () => COLLISION_SORTS,
);
export type CollisionsQuery = z.infer<typeof collisionsQuery>;

export const nearDuplicatesQuery = withFilterRules(
  z.strictObject({
    ...filterFields,
    /** Only pairs found this way. */
    method: z.enum(['simhash', 'jaccard', 'containment', 'image']).optional(),
    /** Pairs still to look at (the default), those marked handled (已处理), or both. */
    status: z.enum(['open', 'reviewed', 'all']).default('open'),
    sort: z.string().max(40).optional(),
  }),
  () => NEAR_DUPLICATE_SORTS,
);
export type NearDuplicatesQuery = z.infer<typeof nearDuplicatesQuery>;

/** A unit as reports show it. */
export type ReportUnit = Pick<Unit, 'id' | 'geoType' | 'city' | 'county' | 'town' | 'street'>;

/** `group=entry`: one ledger entry (a user of a unit uploading one file) uploaded `min`+ times. */
export interface RepeatEntryRow {
  userId: string;
  /** The uploader's login. */
  userName: string;
  /** The uploader's account's display name now (null: none, or no such account). */
  userDisplayName: string | null;
  unit: ReportUnit;
  fileId: string;
  /** The name this uploader first gave the file. */
  fileName: string;
  fileLength: number;
  uploadCount: number;
  /** Of the uploads beyond the first, copies inside one upload (the same content again in one receipt). */
  copies: number;
  /** Of the uploads beyond the first, re-sends: sent again in a later upload (all the others). */
  resends: number;
  firstUploadTime: string;
  lastUploadTime: string;
}

/** Totals over a group's repeat entries (those uploaded `min`+ times). */
export interface RepeatTotals {
  /** Distinct files uploaded repeatedly. */
  files: number;
  /** All uploads of those entries. */
  uploads: number;
  /** Uploads beyond each entry's first. */
  repeatUploads: number;
  /** Of those, copies inside one upload (the same content again in one receipt). */
  copies: number;
  /** Of those, re-sends: the same content sent again in a later upload. */
  resends: number;
  /** Bytes sent again by those repeats. */
  repeatBytes: number;
  firstUploadTime: string;
  lastUploadTime: string;
}

/** `group=user`. */
export interface RepeatUserRow extends RepeatTotals {
  userId: string;
  userName: string;
  userDisplayName: string | null;
  unit: ReportUnit;
}

/** `group=unit`. */
export interface RepeatUnitRow extends RepeatTotals {
  unit: ReportUnit;
  /** Users of the unit with repeat entries. */
  users: number;
}

export type RepeatUploaderRow = RepeatEntryRow | RepeatUserRow | RepeatUnitRow;

export const UPLOADERS_PER_ROW = 20;

/** A file uploaded by `min`+ units. */
export interface CrossUnitRow {
  fileId: string;
  /** The name the file was first stored under. */
  fileName: string;
  fileLength: number;
  units: number;
  users: number;
  uploads: number;
  firstUploadTime: string;
  lastUploadTime: string;
  /**
   * The first UPLOADERS_PER_ROW units, with their uploads and dates, earliest first (`units`
   * counts them all; a unit filter shows the others): a city document forwarded to every town
   * would otherwise make each row hundreds of units long.
   */
  uploaders: Array<{
    unit: ReportUnit;
    /** The unit's uploaders' logins, A→Z. */
    userNames: string[];
    /** Their display names, in the same order (null: none). */
    userDisplayNames: Array<string | null>;
    uploads: number;
    firstUploadTime: string;
    lastUploadTime: string;
  }>;
}

/** Uploads, and the uploads and bytes deduplication kept from being stored again. */
export interface SavingsFigures {
  uploads: number;
  savedUploads: number;
  savedBytes: number;
}

/** `group=unit`: a unit subtree one level below the filter (county == null: the city's own units, and so on). */
export interface SavingsUnitRow extends SavingsFigures {
  city: string;
  county?: string | null;
  town?: string | null;
}

/** `group=day|week|month`: the period's first day (YYYY-MM-DD; YYYY-MM for months). */
export interface SavingsPeriodRow extends SavingsFigures {
  period: string;
}

export type SavingsRow = SavingsUnitRow | SavingsPeriodRow;

/** A stored file that shares its MD5 with another file of a different SHA-256. */
export interface CollisionRow {
  md5: string;
  fileId: string;
  sha256: string;
  fileLength: number;
  fileName: string;
  uploadDate: string;
  uploads: number;
  /** Files with this MD5 in the archive (2 or more). */
  filesWithMd5: number;
}

/** One side of a near-duplicate pair: the file, and the units that uploaded it. */
export interface NearDuplicateFile {
  fileId: string;
  fileName: string;
  fileLength: number;
  contentType: string;
  uploadDate: string;
  units: ReportUnit[];
  /** Where its text differs from the other's: an excerpt. */
  snippet: string;
}

/** Two documents found nearly the same. */
export interface NearDuplicateRow {
  a: NearDuplicateFile;
  b: NearDuplicateFile;
  /** How it was found: by the texts (simhash, jaccard, containment), or by a scanned page's image (image). */
  method: 'simhash' | 'jaccard' | 'containment' | 'image';
  /** Bits that differ: of the SimHashes (null where a text is short: no SimHash), or of the pages' images (image). */
  hamming: number | null;
  /** Of the texts' shingles: shared / all, and shared / the smaller text's. */
  jaccard: number;
  containment: number;
  foundAt: string;
  /** Marked handled (已处理): by whom, when, and the administrator's note; null while open. */
  review: { at: string; userName: string; note: string } | null;
  /**
   * Two scans, one of several pages, compared page by page: one row for the two documents, with
   * their page counts and the pages that match; null for other pairs.
   */
  pages: NearDuplicatePages | null;
}

/** Two scans' pages: how many A and B have, and which match (page numbers from 1, similarity 0–1). */
export interface NearDuplicatePages {
  a: number;
  b: number;
  matches: Array<{ a: number; b: number; method: NearDuplicateRow['method']; similarity: number }>;
}

/**
 * What the report calls a pair: scans sharing pages (pages), when two scans, one of several pages,
 * were compared page by page; the same page scanned again (同一页重复扫描) when both files are
 * scanned images or their pages' images matched; else two documents with nearly the same text.
 */
export function nearDuplicateKind(
  row: Pick<NearDuplicateRow, 'a' | 'b' | 'method'> & Partial<Pick<NearDuplicateRow, 'pages'>>,
): 'pages' | 'rescan' | 'text' {
  if (row.pages) return 'pages';
  const scanned = (file: Pick<NearDuplicateFile, 'contentType'>) => file.contentType.toLowerCase().startsWith('image/');
  return row.method === 'image' || (scanned(row.a) && scanned(row.b)) ? 'rescan' : 'text';
}

/** How alike two documents are, 0 to 1: the highest of the measures that found them (64-bit SimHash or page image fingerprint). */
export function similarityOf(row: Pick<NearDuplicateRow, 'hamming' | 'jaccard' | 'containment'>): number {
  return Math.max(row.jaccard, row.containment, row.hamming === null ? 0 : 1 - row.hamming / 64);
}

/** `PUT /api/reports/near-duplicates/review`: a pair marked handled, with a note. */
export const pairReviewRequest = z.strictObject({
  fileA: z.string().regex(/^[0-9a-f]{24}$/, 'a file id is 24 hexadecimal digits'),
  fileB: z.string().regex(/^[0-9a-f]{24}$/, 'a file id is 24 hexadecimal digits'),
  note: z.string().trim().max(500, 'a note has at most 500 characters').default(''),
});
export const pairReopenRequest = pairReviewRequest.omit({ note: true });

/** The fingerprinting behind the near-duplicate report: what is done, waiting, or failed. */
export interface NearDuplicateStatus {
  fingerprinted: number;
  /** Files with no text to compare (images, scans, damaged files): counted, not failed. */
  skipped: number;
  pairs: number;
  queued: number;
  running: number;
  failed: number;
  failures: Array<{ fileId: string; fileName: string | null; attempts: number; error: string; at: string }>;
}

export interface NearDuplicatesReport extends ReportPage<NearDuplicateRow> {
  status: NearDuplicateStatus;
}

export interface ReportPage<Row> {
  items: Row[];
  total: number;
  limit: number;
  offset: number;
}

export interface SavingsReport extends ReportPage<SavingsRow> {
  /** The whole selection, not only this page. */
  summary: SavingsFigures;
}
