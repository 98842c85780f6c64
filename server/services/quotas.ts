import { PayloadTooLargeError, RateLimitedError } from '../errors.js';
import type { QuotaPolicy } from '../limits.js';
import type { Account, RateCounts } from '../store/accounts/port.js';
import type { ClaimStore } from '../store/claims/port.js';
import { nextDay } from '../../shared/calendar.js';

/** The calendar whose days the daily quotas count in (the report time zone's). */
export interface QuotaDays {
  dayOf(at: Date): string;
  startOf(day: string): Date;
}

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
    private readonly days: QuotaDays,
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

  /**
   * Counts a receipt about to be kept against the account's daily quotas: one more receipt when
   * it is new, and the bytes it adds to what is kept (none when it shrinks). A refusal takes its
   * counts back, so a receipt refused now is not held against the ones that fit.
   */
  async keepReceipt(account: Account, receipt: { isNew: boolean; addsBytes: number }): Promise<void> {
    const now = this.clock();
    const day = this.dayAround(now);
    const wait = Math.max(1, Math.ceil((day.end.getTime() - now.getTime()) / 1000));
    const { receiptsPerDay, receiptBytesPerDay } = this.policy;
    if (receipt.addsBytes > receiptBytesPerDay)
      throw new PayloadTooLargeError(
        receiptBytesPerDay,
        `This receipt adds ${mb(receipt.addsBytes)}, more than an account may keep in a day (${mb(receiptBytesPerDay)}). The files themselves are uploaded; split the folder into smaller uploads to have receipts of them.`,
      );
    const countKey = `quota\nreceipts-day\n${account.id}`;
    const bytesKey = `quota\nreceipt-bytes-day\n${account.id}`;
    const refuse = (why: string) =>
      new RateLimitedError(
        wait,
        `${why} The files themselves are uploaded; only this receipt was not kept. The upload page sends it again when you open it after ${day.next} begins.`,
      );
    if (receipt.isNew && (await this.counts.hit(countKey, day.end)) > receiptsPerDay) {
      await this.counts.hit(countKey, day.end, -1);
      throw refuse(`This account has kept ${receiptsPerDay} receipts today, as many as it may keep in a day.`);
    }
    if (receipt.addsBytes > 0 && (await this.counts.hit(bytesKey, day.end, receipt.addsBytes)) > receiptBytesPerDay) {
      await this.counts.hit(bytesKey, day.end, -receipt.addsBytes);
      if (receipt.isNew) await this.counts.hit(countKey, day.end, -1);
      throw refuse(
        `Today's receipts of this account would take more than ${mb(receiptBytesPerDay)}, as much as it may keep in a day.`,
      );
    }
  }

  /** The day `at` falls in, in the report time zone: when it ends, and the next one's date. */
  private dayAround(at: Date): { end: Date; next: string } {
    const next = nextDay(this.days.dayOf(at));
    return { end: this.days.startOf(next), next };
  }
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
