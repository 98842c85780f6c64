import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type {
  Account,
  AccountStore,
  ApiTokenRecord,
  SessionRecord,
  SessionStore,
  TokenOwners,
  TokenStore,
} from '../store/accounts/port.js';
import type { TokenScope } from '../../shared/accounts.js';
import { DEFAULT_TOKENS_PER_ACCOUNT } from '../limits.js';
import {
  ConflictError,
  CsrfError,
  NotFoundError,
  TokenScopeError,
  UnauthenticatedError,
  ValidationError,
} from '../errors.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const secret = () => randomBytes(32).toString('base64url');

/** Who is making a request, and how they proved it. */
export interface Principal {
  account: Account;
  via: 'session' | 'token';
  session?: SessionRecord;
  /** The API token, when `via` is 'token': its scopes and expiry bound what it may do and make. */
  token?: ApiTokenRecord;
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

const DAY_MS = 86_400_000;

export interface NewToken {
  label?: string;
  /** null: never expires. */
  expiresInDays?: number | null;
  scopes?: readonly TokenScope[];
  /** The token the request came with, when a token makes a token: the new one may not outlive it or exceed its scopes. */
  parent?: ApiTokenRecord;
}

/** API tokens for scripts: `adt_<id>_<secret>`; only the secret's hash is stored. */
export class TokenService {
  constructor(
    private readonly tokens: TokenStore,
    private readonly accounts: AccountStore,
    private readonly clock: () => Date = () => new Date(),
    private readonly perAccount = DEFAULT_TOKENS_PER_ACCOUNT,
  ) {}

  /**
   * A new token; it expires after `expiresInDays` (null: never). The token itself is shown once.
   * An account holds at most `perAccount` working tokens; a token made over a token expires no
   * later than that token and has no scope it lacks; only administrators' tokens may administer accounts.
   */
  create(
    account: Account,
    { label = '', expiresInDays = null, scopes = [], parent }: NewToken = {},
  ): Promise<{ id: string; token: string; record: ApiTokenRecord }> {
    // One after another (per process), so two requests at once cannot both take the last place.
    const done = this.#creating.then(() => this.#create(account, label, expiresInDays, [...scopes], parent));
    this.#creating = done.catch(() => {});
    return done;
  }

  #creating: Promise<unknown> = Promise.resolve();

  async #create(
    account: Account,
    label: string,
    expiresInDays: number | null,
    scopes: TokenScope[],
    parent: ApiTokenRecord | undefined,
  ): Promise<{ id: string; token: string; record: ApiTokenRecord }> {
    const now = this.clock();
    const expiresAt = expiresInDays === null ? null : new Date(now.getTime() + expiresInDays * DAY_MS);
    if (scopes.includes('accounts') && account.role !== 'admin')
      throw new ValidationError('Only administrators’ tokens may have the "accounts" scope.', { field: 'scopes' });
    if (parent) checkWithin(parent, expiresAt, scopes, now);
    const live = await this.tokens.countLive(account.id, now);
    if (live >= this.perAccount)
      throw new ConflictError(
        `This account already has ${live} working API tokens (at most ${this.perAccount}). Revoke the ones no longer used (DELETE /api/tokens/<id>, or "My tokens"), then create this one.`,
        'too_many_tokens',
      );
    const id = randomBytes(6).toString('hex');
    const tokenSecret = secret();
    const record: ApiTokenRecord = {
      id,
      accountId: account.id,
      secretHash: sha256(tokenSecret),
      label,
      createdAt: now,
      expiresAt,
      lastUsedAt: null,
      scopes,
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
    return { account, via: 'token', token: record };
  }

  /** Every token, or those of some owners (TokenStore.list). */
  list(owners?: TokenOwners): Promise<ApiTokenRecord[]> {
    return this.tokens.list(owners);
  }

  /** How many live tokens each of these accounts has (those with none left out). */
  liveCounts(accountIds: readonly string[], now: Date): Promise<Map<string, number>> {
    return this.tokens.liveCounts(accountIds, now);
  }

  get(id: string): Promise<ApiTokenRecord | undefined> {
    return this.tokens.get(id);
  }

  async revoke(id: string): Promise<void> {
    if (!(await this.tokens.revoke(id))) throw new NotFoundError(`No API token has the id "${id}".`);
  }
}

/**
 * A token made over a token stays within it: no later expiry (so a token that ends tomorrow
 * cannot leave behind one that never does) and no scope it lacks.
 */
function checkWithin(parent: ApiTokenRecord, expiresAt: Date | null, scopes: TokenScope[], now: Date): void {
  const lacking = scopes.find((s) => !parent.scopes.includes(s));
  if (lacking)
    throw new TokenScopeError(
      lacking,
      `A token made with an API token gets no scope that token lacks, and yours lacks "${lacking}". Create this token from a browser session instead.`,
    );
  if (parent.expiresAt === null || (expiresAt !== null && expiresAt <= parent.expiresAt)) return;
  const days = Math.floor((parent.expiresAt.getTime() - now.getTime()) / DAY_MS);
  throw new ValidationError(
    `A token made with an API token cannot outlive it: yours expires at ${parent.expiresAt.toISOString()}, so ask for ${
      days >= 1 ? `at most ${days} day(s) ("expiresInDays": ${days})` : 'a token from a browser session instead'
    }.`,
    { field: 'expiresInDays' },
  );
}
