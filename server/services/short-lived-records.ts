import type { ArchiveStore } from '../store/archive-store.js';

/** Ended quota windows are kept this much longer: an instance whose clock is behind may still count in one. */
export const ENDED_WINDOWS_KEPT_MS = 3600_000;

/**
 * An expired API token is kept this long after its expiry, listed as expired (its owner and the
 * administrators see which one stopped working, and when), then forgotten: without it, the tokens
 * a scanner is given every few months would pile up for ever.
 */
export const EXPIRED_TOKENS_KEPT_MS = 30 * 24 * 3600_000;

/**
 * The records that exist only for a short while (an instant-upload claim, a session, the login
 * throttle's memory, the quotas' counts, an account import's one-time passwords, an API token
 * past its expiry), each forgotten
 * once its own time is over. Their readers already ignore expired ones; this keeps the tables
 * from growing with them on both stores (MongoDB's TTL indexes are not relied on: not every
 * server the archive runs on has them). Upload actions, receipts and the audit are the archive's
 * and never expire here (README, "What the database keeps").
 */
export class ShortLivedRecords {
  constructor(
    private readonly store: Pick<
      ArchiveStore,
      'claims' | 'sessions' | 'loginAttempts' | 'rateCounts' | 'accounts' | 'tokens'
    >,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Removes every short-lived record expired now; how many went, where the store tells. */
  async sweep(): Promise<number> {
    const now = this.clock();
    await this.store.claims.purgeExpired(now);
    await this.store.sessions.purgeExpired(now);
    return (
      (await this.store.loginAttempts.purgeExpired(now)) +
      (await this.store.rateCounts.purgeEnded(new Date(now.getTime() - ENDED_WINDOWS_KEPT_MS))) +
      (await this.store.accounts.purgeExpiredImports(now)) +
      (await this.store.tokens.purgeExpired(new Date(now.getTime() - EXPIRED_TOKENS_KEPT_MS)))
    );
  }
}
