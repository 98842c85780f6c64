import type { AuditNote } from '../../shared/audit-notes.js';
import type { RateCounts } from '../store/accounts/port.js';
import type { AuditActor, AuditService } from './audit.js';

/** Wrong passwords from one address recorded one by one each hour; past them, summed up. */
export const FAILED_LOGINS_RECORDED_PER_ADDRESS = 5;
/** Wrong passwords from all addresses together recorded (one by one or per address) each hour; past them, summed up. */
export const FAILED_LOGINS_RECORDED = 100;
/** Whoever a summary is about: any username. */
export const ANY_USERNAME = '*';

/** The counts a summary is written at: 10, 20, 50, 100, 200, 500, 1000… */
export function isSummaryCount(n: number): boolean {
  if (n < 10) return false;
  while (n % 10 === 0) n /= 10;
  return n === 1 || n === 2 || n === 5;
}

/**
 * The audit log's record of wrong passwords, bounded as refused proofs are (claims.ts): a few
 * each hour one by one, with the username tried, then summaries with the count so far. Guessers
 * from rotating addresses would otherwise leave an event per guess, forever. Counted in the store
 * (RateCounts), so every instance sums alike; the login throttle still counts each failure.
 *
 * Per hour: an address's first FAILED_LOGINS_RECORDED_PER_ADDRESS failures are recorded one by
 * one, then one summary of that address at each count of the 1-2-5 series; once
 * FAILED_LOGINS_RECORDED failures have come from all addresses together, only summaries of
 * the total are written, at the same counts. An hour leaves at most FAILED_LOGINS_RECORDED
 * events, and three summaries more for each tenfold of failures beyond.
 */
export class FailedLoginLog {
  constructor(
    private readonly audit: Pick<AuditService, 'record'>,
    private readonly counts: Pick<RateCounts, 'hit'>,
    private readonly clock: () => Date,
  ) {}

  async failed(actor: AuditActor, address: string | null, note: AuditNote): Promise<void> {
    const hourEnd = new Date((Math.floor(this.clock().getTime() / 3600_000) + 1) * 3600_000);
    const all = await this.counts.hit('audit\nlogin_failed', hourEnd);
    if (all > FAILED_LOGINS_RECORDED) {
      if (isSummaryCount(all))
        await this.audit.record(
          'login_failed',
          { attemptedUserName: ANY_USERNAME },
          {
            address: null,
            note: { code: 'wrong_passwords', count: all, from: 'all', recorded: FAILED_LOGINS_RECORDED },
          },
        );
      return;
    }
    const here = await this.counts.hit(`audit\nlogin_failed\n${address ?? '-'}`, hourEnd);
    if (here <= FAILED_LOGINS_RECORDED_PER_ADDRESS) await this.audit.record('login_failed', actor, { address, note });
    else if (isSummaryCount(here))
      await this.audit.record(
        'login_failed',
        { attemptedUserName: ANY_USERNAME },
        {
          address,
          note: { code: 'wrong_passwords', count: here, from: 'address', recorded: FAILED_LOGINS_RECORDED_PER_ADDRESS },
        },
      );
  }
}
