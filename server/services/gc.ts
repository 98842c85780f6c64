import type { CompactionReport, ContentStore, GarbageReport } from '../store/content/port.js';
import type { Ledger } from '../store/ledger/port.js';
import type { ReceiptStore } from '../store/receipts/port.js';
import type { ResumableUploadService } from './resumable-uploads.js';
import type { PurgeService } from './purge.js';
import type { WithdrawalService } from './withdrawals.js';
import type { DisposalService } from './disposals.js';
import type { ShortLivedRecords } from './short-lived-records.js';

/**
 * Garbage collection of bytes the archive does not own: resumable uploads idle past their
 * expiry, staging areas idle longer than the time to live (their request died with a crash)
 * and bytes no record owns at all. Committed files and live uploads are never touched. It also
 * finishes counting uploads whose counting a crash interrupted (MongoDB: counting takes several
 * writes) and whose client never came back to retry (and clears a receipt's write a crash
 * interrupted), and purges the trash past TRASH_DAYS. Last,
 * it compacts the bytes it may: the embedded store's pack files with many dead bytes, or bytes of
 * removed contents, are rewritten without them (docs/decisions/compaction.md). It also forgets
 * the short-lived records past their time (ShortLivedRecords).
 */
export class GarbageCollector {
  constructor(
    private readonly content: Pick<ContentStore, 'collectGarbage' | 'compact'>,
    private readonly uploads: Pick<ResumableUploadService, 'expire'>,
    private readonly stagingTtlMs: number,
    private readonly ledger: Pick<Ledger, 'finishInterrupted'>,
    private readonly clock: () => Date = () => new Date(),
    private readonly withdrawals?: Pick<WithdrawalService, 'finishInterrupted'>,
    private readonly disposals?: Pick<DisposalService, 'finishInterrupted'>,
    private readonly purge?: Pick<PurgeService, 'finishInterrupted' | 'purgeExpired'>,
    private readonly shortLived?: Pick<ShortLivedRecords, 'sweep'>,
    private readonly receipts?: Pick<ReceiptStore, 'finishInterrupted'>,
  ) {}

  async run(): Promise<
    GarbageReport & {
      expiredUploads: number;
      /** Short-lived records forgotten (login throttle, quota counts, kept imports; claims and sessions uncounted). */
      expiredRecords: number;
      finishedCounts: number;
      purgedUploads: number;
      compacted: CompactionReport;
    }
  > {
    const now = this.clock().getTime();
    // A counting in progress for a minute was interrupted; finishing one still running is harmless.
    const finishedCounts =
      (await this.ledger.finishInterrupted(new Date(now - 60_000))) +
      ((await this.withdrawals?.finishInterrupted(new Date(now - 60_000))) ?? 0) +
      ((await this.disposals?.finishInterrupted(new Date(now - 60_000))) ?? 0) +
      ((await this.purge?.finishInterrupted(new Date(now - 60_000))) ?? 0) +
      ((await this.receipts?.finishInterrupted(new Date(now - 60_000))) ?? 0);
    // Withdrawals whose TRASH_DAYS are over leave the trash, and the contents nobody holds go.
    const purgedUploads = (await this.purge?.purgeExpired()) ?? 0;
    const expiredUploads = await this.uploads.expire();
    // Claims, sessions, the login throttle's and the quotas' records, kept imports past their time.
    const expiredRecords = (await this.shortLived?.sweep()) ?? 0;
    const report = await this.content.collectGarbage(new Date(now - this.stagingTtlMs));
    // After the collection: packs it removed whole need no compaction. Packs written to within
    // the staging TTL are left alone (a process may still append to one idle for less).
    const compacted = await this.content.compact(new Date(now - this.stagingTtlMs));
    return { expiredUploads, expiredRecords, finishedCounts, purgedUploads, ...report, compacted };
  }
}
