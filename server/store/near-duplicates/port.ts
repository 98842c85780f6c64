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
  /** An image's pages in order, each with its perceptual fingerprint; none for a text document. */
  pages: PageFingerprint[];
  at: Date;
}

/**
 * One scanned page: its image's fingerprint (64 bits as 16 hexadecimal digits; null for a blank
 * page) and the units of text recognised on it.
 */
export interface PageFingerprint {
  hash: string | null;
  units: number;
  /**
   * Where the page's ink lies: the box holding it, its left, top, right and bottom edges in
   * thousandths of the page's width and height; null for a blank page, and for pages recorded
   * before the box was kept.
   */
  box: InkBox | null;
}

export type InkBox = [left: number, top: number, right: number, bottom: number];

/** Two documents found nearly the same (`nearDuplicates.pairs`); `fileA` < `fileB`. */
export interface NearDuplicatePair {
  fileA: string;
  fileB: string;
  /**
   * What found it: close SimHashes, overlapping shingles (Jaccard), a short text held by the other
   * (containment), or, for scanned pages with little text, their images' fingerprints (image).
   */
  method: 'simhash' | 'jaccard' | 'containment' | 'image';
  /** Bits that differ: of the SimHashes, or of the pages' image fingerprints (image); null where a text is short. */
  hamming: number | null;
  jaccard: number;
  containment: number;
  /** Where the texts differ: an excerpt of each. */
  snippetA: string;
  snippetB: string;
  foundAt: Date;
  /**
   * Two scans, one of several pages (a multi-page TIFF, a scanned PDF): their pages compared one by
   * one. Absent for other pairs. Where only pages matched (not the whole texts), `method` and the
   * measures are those of the most alike matching page, and the snippets are where it differs.
   */
  pages?: PairPages;
}

/** Two scans' pages: how many each has, and which of them match. */
export interface PairPages {
  /** Pages of fileA, of fileB. */
  a: number;
  b: number;
  /** Pages matched one to one (a page of A with at most one of B), in A's page order. */
  matches: PageMatch[];
}

/** A page of fileA and a page of fileB found the same: numbers from 1, how alike (0–1), and what found it. */
export interface PageMatch {
  a: number;
  b: number;
  method: 'simhash' | 'jaccard' | 'containment' | 'image';
  similarity: number;
}

/**
 * An administrator's word on a pair: handled (已处理), with a note. Kept apart from the pairs, so a
 * rebuild of the index (which finds the pairs again) keeps it.
 */
export interface PairReview {
  fileA: string;
  fileB: string;
  at: Date;
  userId: string;
  userName: string;
  note: string;
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
  /** Forgets every fingerprint and pair (a rebuild starts from nothing); reviews stay. */
  clear(): Promise<void>;
  /** Forgets one file: its fingerprint and lookup keys, the pairs it is in and their reviews (its content was purged). */
  forget(fileId: string): Promise<void>;
  /** The pair, if it was found (`fileA` < `fileB`). */
  pair(fileA: string, fileB: string): Promise<NearDuplicatePair | undefined>;
  /** Marks a pair handled, replacing an earlier review of it. */
  review(review: PairReview): Promise<void>;
  /** Takes a pair's review back (it is open again); false when it had none. */
  reopen(fileA: string, fileB: string): Promise<boolean>;
  getReview(fileA: string, fileB: string): Promise<PairReview | undefined>;
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
  /** Removes a file's job, whatever its state (its content was purged). */
  forget(fileId: string): Promise<void>;
  /** Leases up to `limit` due jobs (queued, or running under a lease that ran out), oldest first (by due time, then file id). */
  take(holder: string, now: Date, leaseMs: number, limit: number): Promise<FingerprintJob[]>;
  /** Removes a finished job (nothing when `holder` lost its lease). */
  done(fileId: string, holder: string): Promise<void>;
  /** Records a failure: queued again at `retryAt`, or failed for good when null. */
  fail(fileId: string, holder: string, error: string, retryAt: Date | null): Promise<void>;
  counts(now: Date): Promise<{ queued: number; running: number; failed: number }>;
  /** Failed jobs, most recent first (of one time, the greater file id first). */
  failures(limit: number): Promise<FingerprintJob[]>;
}
