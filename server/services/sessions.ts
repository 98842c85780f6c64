import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type {
  Account,
  AccountStore,
  ApiTokenRecord,
  SessionRecord,
  SessionStore,
  TokenStore,
} from '../store/accounts/port.js';
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
    // Disabling ends an account's sessions; this also covers a session opened in that moment.
    return account && session && !account.disabled ? { account, via: 'session', session } : undefined;
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

/** A use of a token is written down at most this often, so a busy script does not write on every request. */
const TOKEN_USE_RESOLUTION_MS = 60_000;

/** API tokens for scripts: `adt_<id>_<secret>`; only the secret's hash is stored. */
export class TokenService {
  constructor(
    private readonly tokens: TokenStore,
    private readonly accounts: AccountStore,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** A new token; it expires after `expiresInDays` (null: never). The token itself is shown once. */
  async create(
    account: Account,
    label = '',
    expiresInDays: number | null = null,
  ): Promise<{ id: string; token: string; record: ApiTokenRecord }> {
    const id = randomBytes(6).toString('hex');
    const tokenSecret = secret();
    const now = this.clock();
    const record: ApiTokenRecord = {
      id,
      accountId: account.id,
      secretHash: sha256(tokenSecret),
      label,
      createdAt: now,
      expiresAt: expiresInDays === null ? null : new Date(now.getTime() + expiresInDays * 86_400_000),
      lastUsedAt: null,
    };
    await this.tokens.create(record);
    return { id, token: `${TOKEN_PREFIX}_${id}_${tokenSecret}`, record };
  }

  async resolve(bearer: string): Promise<Principal> {
    const match = /^adt_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/.exec(bearer);
    const record = match && (await this.tokens.get(match[1]!));
    const presented = match ? Buffer.from(sha256(match[2]!)) : Buffer.alloc(0);
    if (!record || !timingSafeEqual(presented, Buffer.from(record.secretHash))) {
      throw new UnauthenticatedError(
        'This API token is not valid (unknown, revoked or mistyped). Create a new one under "My tokens" (POST /api/tokens).',
      );
    }
    const now = this.clock();
    if (record.expiresAt && record.expiresAt <= now)
      throw new UnauthenticatedError(
        `This API token expired on ${record.expiresAt.toISOString()}. Create a new one under "My tokens" (POST /api/tokens).`,
      );
    const account = await this.accounts.get(record.accountId);
    if (!account) throw new UnauthenticatedError('The account of this API token no longer exists.');
    if (account.disabled)
      throw new UnauthenticatedError('The account of this API token is disabled; its administrator can enable it.');
    if (!record.lastUsedAt || now.getTime() - record.lastUsedAt.getTime() >= TOKEN_USE_RESOLUTION_MS)
      await this.tokens.touch(record.id, now);
    return { account, via: 'token' };
  }

  list(): Promise<ApiTokenRecord[]> {
    return this.tokens.list();
  }

  get(id: string): Promise<ApiTokenRecord | undefined> {
    return this.tokens.get(id);
  }

  async revoke(id: string): Promise<void> {
    if (!(await this.tokens.revoke(id))) throw new NotFoundError(`No API token has the id "${id}".`);
  }
}
