import type { ByteRange } from '../content/port.js';

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
  /** Many claims at once (a bulk check's): one transaction on the embedded store, one request on MongoDB. */
  createMany(claims: readonly ClaimRecord[]): Promise<void>;
  /** Removes and returns a claim in one atomic step, so a claim can be answered once only. */
  take(id: string): Promise<ClaimRecord | undefined>;
  /** Takes many claims (a bulk proof's), each as `take` does; those not found are not in the map. */
  takeMany(ids: readonly string[]): Promise<Map<string, ClaimRecord>>;
  purgeExpired(now: Date): Promise<void>;
  /** Claims of the account not answered and not expired at `now`. */
  countOutstanding(accountId: string, now: Date): Promise<number>;
}
