import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Account, AccountStore, SessionRecord, SessionStore, TokenStore } from '../store/accounts/port.js';
import { CsrfError, NotFoundError, UnauthenticatedError } from '../errors.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const secret = () => randomBytes(32).toString('base64url');

/** Who is making a request, and how they proved it. */
export interface Principal {
  account: Account;
  via: 'session' | 'token';
  session?: SessionRecord;
}

/** Browser sessions: a random cookie value, stored only as its hash, with a CSRF token. */
export class SessionService {
  constructor(
    private readonly sessions: SessionStore,
    private readonly accounts: AccountStore,
    private readonly ttlMs: number,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async open(account: Account): Promise<{ cookieValue: string; session: SessionRecord }> {
    const now = this.clock();
    const cookieValue = secret();
    const session = {
      idHash: sha256(cookieValue),
      accountId: account.id,
      csrfToken: secret(),
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.ttlMs),
    };
    await this.sessions.purgeExpired(now);
    await this.sessions.create(session);
    return { cookieValue, session };
  }

  async resolve(cookieValue: string): Promise<Principal | undefined> {
    const session = await this.sessions.get(sha256(cookieValue), this.clock());
    const account = session && (await this.accounts.get(session.accountId));
    return account && session ? { account, via: 'session', session } : undefined;
  }

  async close(principal: Principal): Promise<void> {
    if (principal.session) await this.sessions.delete(principal.session.idHash);
  }

  /** Ends every session of an account (after a password change). */
  async closeAll(accountId: string): Promise<void> {
    await this.sessions.deleteForAccount(accountId);
  }

  /** State-changing requests with the session cookie must echo the session's CSRF token. */
  static checkCsrf(principal: Principal, presented: string | undefined): void {
    if (principal.via !== 'session') return;
    const expected = Buffer.from(principal.session!.csrfToken);
    const given = Buffer.from(presented ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new CsrfError();
  }
}

export const TOKEN_PREFIX = 'adt';

/** API tokens for scripts: `adt_<id>_<secret>`; only the secret's hash is stored. */
export class TokenService {
  constructor(
    private readonly tokens: TokenStore,
    private readonly accounts: AccountStore,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async create(account: Account, label = ''): Promise<{ id: string; token: string }> {
    const id = randomBytes(6).toString('hex');
    const tokenSecret = secret();
    await this.tokens.create({
      id,
      accountId: account.id,
      secretHash: sha256(tokenSecret),
      label,
      createdAt: this.clock(),
    });
    return { id, token: `${TOKEN_PREFIX}_${id}_${tokenSecret}` };
  }

  async resolve(bearer: string): Promise<Principal> {
    const match = /^adt_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/.exec(bearer);
    const record = match && (await this.tokens.get(match[1]!));
    const presented = match ? Buffer.from(sha256(match[2]!)) : Buffer.alloc(0);
    if (!record || !timingSafeEqual(presented, Buffer.from(record.secretHash))) {
      throw new UnauthenticatedError(
        'This API token is not valid (unknown, revoked or mistyped). Create a new one with "npm run archive -- token create <username>".',
      );
    }
    const account = await this.accounts.get(record.accountId);
    if (!account) throw new UnauthenticatedError('The account of this API token no longer exists.');
    return { account, via: 'token' };
  }

  list() {
    return this.tokens.list();
  }

  async revoke(id: string): Promise<void> {
    if (!(await this.tokens.revoke(id))) throw new NotFoundError(`No API token has the id "${id}".`);
  }
}
