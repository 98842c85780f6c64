import { RateLimitedError } from '../errors.js';
import type { Account, RateCounts } from '../store/accounts/port.js';
import type { ClaimStore } from '../store/claims/port.js';

/** What one account may ask of the archive; sized so that no real clerk's folder or import meets them. */
export interface QuotaPolicy {
  /** Files checked per minute (POST /api/uploads/check and /checks); also files listed on receipts (PUT /api/receipts/:id). */
  checksPerMinute: number;
  /** Files proved per minute (POST /api/uploads/prove and /proofs). */
  proofsPerMinute: number;
  /** Files sent per minute in batches (POST /api/uploads/batch). */
  batchFilesPerMinute: number;
  /** Claims asked for and not yet answered (each expires after CLAIM_TTL_SECONDS) past which checks wait. */
  claimsOutstanding: number;
}

export const DEFAULT_QUOTAS: QuotaPolicy = {
  checksPerMinute: 60_000,
  proofsPerMinute: 60_000,
  batchFilesPerMinute: 60_000,
  claimsOutstanding: 10_000,
};

export type QuotaKind = 'checks' | 'proofs' | 'batch' | 'receipts';

const WINDOW_MS = 60_000;

/**
 * Per-account quotas, counted in the store so every instance counts alike (fixed one-minute
 * windows on the clock). A request over a quota is refused whole, before any of its work, with
 * `429 rate_limited` and how long to wait; a client that waits as told (the importer does) goes on.
 */
export class Quotas {
  constructor(
    private readonly counts: RateCounts,
    private readonly claims: Pick<ClaimStore, 'countOutstanding'>,
    private readonly policy: QuotaPolicy,
    private readonly clock: () => Date,
  ) {}

  /** Counts `files` against the account's quota of this kind; throws RateLimitedError when over it. */
  async take(account: Account, kind: QuotaKind, files: number): Promise<void> {
    const now = this.clock().getTime();
    const windowEnd = new Date((Math.floor(now / WINDOW_MS) + 1) * WINDOW_MS);
    // A receipt lists files of a folder, each of which was checked: the same number a minute.
    const limit =
      kind === 'checks' || kind === 'receipts'
        ? this.policy.checksPerMinute
        : kind === 'proofs'
          ? this.policy.proofsPerMinute
          : this.policy.batchFilesPerMinute;
    const used = await this.counts.hit(`quota\n${kind}\n${account.id}`, windowEnd, files);
    if (used > limit) {
      throw new RateLimitedError(
        Math.max(1, Math.ceil((windowEnd.getTime() - now) / 1000)),
        `This account sent more than ${limit} files to ${kind === 'batch' ? 'batch uploads' : kind} in a minute.`,
      );
    }
    if (kind === 'checks') {
      const outstanding = await this.claims.countOutstanding(account.id, new Date(now));
      // Checked before the request adds its own (at most one batch more than the quota).
      if (outstanding >= this.policy.claimsOutstanding) {
        throw new RateLimitedError(
          60,
          `This account holds ${outstanding} instant-upload claims not yet proved (at most ${this.policy.claimsOutstanding}): prove or let them expire first.`,
        );
      }
    }
  }
}
