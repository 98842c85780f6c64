import type { LoginThrottlePolicy } from '../limits.js';
import { usernameKey, type LoginAttemptStore, type LoginRecord } from '../store/accounts/port.js';

/** Which counter made a try wait, or crossed its threshold with a failure. */
export type ThrottleScope = 'pair' | 'account' | 'address';

export interface ThrottleVerdict {
  /** How long the try must still wait; 0: its password is checked now. */
  ms: number;
  scope: ThrottleScope | undefined;
  /** The account logged in from this address within `knownForMs` (for an unknown username: never). */
  known: boolean;
}

/**
 * The login throttle. It never locks: after a counter's free failures each further try must wait
 * (1 s, 2 s, 4 s… up to `maxDelayMs`) after the last failure, and then the right password works.
 * Three counters, kept in the store so every instance throttles alike:
 * - per account and address: one person's typos or one attacker's guesses slow that pair only,
 *   never the same account from elsewhere, nor the office's other clerks behind the same NAT;
 * - per account, over all addresses: a distributed attack slows the account, except from
 *   addresses it has logged in from within `knownForMs` (its owner's office keeps working);
 * - per address, over all accounts: one address trying many accounts slows down, except for
 *   accounts that already log in there, and accounts with no wrong password of their own.
 * One address adds at most `freeFailures` to the two wide counters, so it cannot trip them alone.
 * Unknown usernames are counted exactly like existing ones, so the answers do not tell them apart.
 */
export class LoginThrottle {
  constructor(
    private readonly store: LoginAttemptStore,
    private readonly policy: LoginThrottlePolicy,
    private readonly clock: () => Date,
  ) {}

  /**
   * Milliseconds this try must still wait (0: go ahead), which counter says so, and whether the
   * account has logged in from this address lately (its password check goes first: password-hashing.ts).
   */
  async wait(username: string, address: string | null): Promise<ThrottleVerdict> {
    const now = this.clock();
    const keys = keysOf(username, address);
    const records = await this.store.get([keys.pair, keys.account, keys.address], now);
    const pair = records.get(keys.pair);
    const account = records.get(keys.account);
    const known = pair?.knownUntil != null && pair.knownUntil > now;
    const waits: Array<[ThrottleScope, number]> = [['pair', this.waitOf(pair, this.policy.freeFailures, now)]];
    if (!known) {
      waits.push(['account', this.waitOf(account, this.policy.accountFailures, now)]);
      // A busy address (an office NAT, where someone tried many names) does not hold up an
      // account with no wrong password of its own, here or anywhere: its password is checked. A
      // guesser gets one try per name that way; its failure counts, and the next try waits.
      if ((pair?.failures ?? 0) > 0 || (account?.failures ?? 0) > 0)
        waits.push(['address', this.waitOf(records.get(keys.address), this.policy.addressFailures, now)]);
    }
    const [scope, ms] = waits.reduce((a, b) => (b[1] > a[1] ? b : a));
    return { ms, scope: ms > 0 ? scope : undefined, known };
  }

  /** Counts a wrong password; returns the wide counters this failure took past their free failures. */
  async failed(username: string, address: string | null): Promise<ThrottleScope[]> {
    const now = this.clock();
    const until = new Date(now.getTime() + this.policy.rememberMs);
    const keys = keysOf(username, address);
    const pair = await this.store.fail(keys.pair, now, until);
    if (pair.failures > this.policy.freeFailures) return [];
    const [account, byAddress] = await Promise.all([
      this.store.fail(keys.account, now, until),
      this.store.fail(keys.address, now, until),
    ]);
    const crossed: ThrottleScope[] = [];
    if (account.failures === this.policy.accountFailures) crossed.push('account');
    if (byAddress.failures === this.policy.addressFailures) crossed.push('address');
    return crossed;
  }

  /** A right password: the pair's failures are forgotten and the address is known for the account. */
  async succeeded(username: string, address: string | null): Promise<void> {
    await this.store.succeed(keysOf(username, address).pair, new Date(this.clock().getTime() + this.policy.knownForMs));
  }

  /** The usernames (by key) whose wrong passwords now make tries wait, from one address or from all. */
  async throttledUsernames(): Promise<Set<string>> {
    const throttled = new Set<string>();
    for (const [key, record] of await this.store.all(this.clock())) {
      const [kind, name] = key.split('\n');
      const free =
        kind === 'pair' ? this.policy.freeFailures : kind === 'account' ? this.policy.accountFailures : undefined;
      if (free !== undefined && name !== undefined && record.failures >= free) throttled.add(name);
    }
    return throttled;
  }

  /** Forgets the wrong passwords of a username, from every address (an administrator's unblock). */
  async forget(username: string): Promise<void> {
    const { account } = keysOf(username, null);
    await this.store.forget([`pair\n${usernameKey(username)}\n`, account]);
  }

  private waitOf(record: LoginRecord | undefined, free: number, now: Date): number {
    if (!record || record.failures < free || !record.lastFailureAt) return 0;
    const delay = Math.min(1000 * 2 ** Math.min(record.failures - free, 30), this.policy.maxDelayMs);
    return Math.max(0, record.lastFailureAt.getTime() + delay - now.getTime());
  }
}

/**
 * The counters' keys. A username counts by its key (usernameKey), as logins find accounts:
 * another case or width of a name is the same account, and is throttled with it.
 */
function keysOf(username: string, address: string | null): { pair: string; account: string; address: string } {
  const from = address ?? '-';
  const name = usernameKey(username);
  return { pair: `pair\n${name}\n${from}`, account: `account\n${name}\n`, address: `address\n${from}` };
}
