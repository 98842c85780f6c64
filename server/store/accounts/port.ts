import type { TokenScope } from '../../../shared/accounts.js';
import type { Role, Unit } from '../../../shared/schemas.js';

export interface Account {
  id: string;
  username: string;
  /** The person's name (姓名), shown with the login; null: none given. */
  displayName: string | null;
  passwordHash: string;
  role: Role;
  unit: Unit;
  createdAt: Date;
  mustChangePassword: boolean;
  /** A disabled account cannot log in, its sessions are gone and its API tokens do not work. */
  disabled: boolean;
  lastLoginAt: Date | null;
}

export type NewAccount = Account;

/** What may change of an account (an administrator; the owner its display name); null removes the display name. */
export type AccountPatch = Partial<Pick<Account, 'role' | 'unit' | 'disabled' | 'displayName'>>;

/**
 * How usernames compare: as a person reads them, compatibility forms folded (NFKC: full-width
 * letters as ASCII) and case ignored. Two accounts never share a key, and a login finds its
 * account by it.
 */
export function usernameKey(username: string): string {
  return username.normalize('NFKC').toLowerCase();
}

/**
 * How a search compares names: compatibility forms folded (NFKC) and case ignored, as usernames
 * compare (usernameKey); display names and what is typed into the search are compared so too.
 */
export function searchForm(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/**
 * The pieces an account is found by (its search index): at every character of its username key
 * and of its display name (searchForm), the run of up to three characters starting there. A part
 * of one to three characters is in a name exactly when a piece starts with it; a longer part only
 * where all its three-character pieces are (the name is then checked whole).
 */
export function searchPieces(username: string, displayName: string | null): string[] {
  const pieces = new Set<string>();
  for (const text of [searchForm(username), displayName === null ? '' : searchForm(displayName)]) {
    const chars = [...text];
    for (let i = 0; i < chars.length; i++) pieces.add(chars.slice(i, i + 3).join(''));
  }
  return [...pieces];
}

/** What a search checks a part against: the username key and the display name (searchForm), on two lines. */
export function searchText(username: string, displayName: string | null): string {
  return `${searchForm(username)}\n${displayName === null ? '' : searchForm(displayName)}`;
}

/** The three-character pieces of a part longer than three characters, each once. */
export function partPieces(part: string): string[] {
  const chars = [...part];
  return [...new Set(chars.slice(0, -2).map((_, i) => chars.slice(i, i + 3).join('')))];
}

/**
 * How far the count of a filtered page goes: beyond it the page says "more than 1,000" (capped).
 * Counting every account a wide filter takes would read them all at every page, at 100,000
 * accounts (docs/decisions/account-search.md); the unfiltered count is exact, from the store's total.
 */
export const ACCOUNT_COUNT_LIMIT = 1_000;

/** One account of an import as its answer lists it, with the one-time password handed out. */
export interface ImportedAccount {
  username: string;
  displayName: string | null;
  role: Role;
  /** The unit's path, as the answer shows it ('' for the archive's own). */
  unitText: string;
  oneTimePassword: string;
}

/**
 * An account import's answer, kept for the administrator who ran it until handed over once or
 * expired: the only other copy of its one-time passwords is the answer, which a dropped
 * connection loses.
 */
export interface KeptImport {
  id: string;
  /** The administrator who ran the import: nobody else is given it. */
  accountId: string;
  createdAt: Date;
  expiresAt: Date;
  accounts: ImportedAccount[];
}

/** A kept import as listed: how many accounts, not who they are or their passwords. */
export type KeptImportSummary = Omit<KeptImport, 'accounts'> & { count: number };

/**
 * Which accounts a page takes; every part optional, all parts together. Units are named by id:
 * the directory (another capability) says which units a reach or a search covers.
 */
export interface AccountSelection {
  /** Only accounts of these units. */
  units?: readonly string[];
  role?: Role;
  /**
   * Accounts whose username key or display name contains `part` (searchForm of what was typed,
   * found by the accounts' search pieces), or whose unit is one of `units`.
   */
  text?: { part: string; units: readonly string[] };
  disabled?: boolean;
  mustChangePassword?: boolean;
  /** Only accounts whose username key is among these (`in`), or is not (`notIn`): throttled logins. */
  usernameKeys?: { in: readonly string[] } | { notIn: readonly string[] };
}

/** A page of accounts and how many the selection takes (see AccountStore.page). */
export interface AccountPage {
  items: Account[];
  total: number;
  /** The count stopped at its limit: the selection takes more than `total`. */
  capped: boolean;
}

/** Whose tokens a list takes: these accounts', or those of the accounts of these units. */
export type TokenOwners = { accounts: readonly string[] } | { units: readonly string[] };

export interface AccountStore {
  /** Throws UsernameTakenError when the username, or one with the same key, is taken. */
  create(account: NewAccount): Promise<void>;
  /**
   * Creates the accounts of one import and keeps its answer, all or none: when a username is
   * taken (one checked free may have been taken meanwhile), throws UsernameTakenError naming it,
   * and neither an account nor the answer is left.
   */
  createMany(accounts: readonly NewAccount[], kept: KeptImport): Promise<void>;
  /** Which of these usernames an account has (exactly or by key, see usernameKey), as given; one query. */
  takenUsernames(usernames: readonly string[]): Promise<Set<string>>;
  /** The account's kept imports that have not expired at `now`, oldest first. */
  keptImports(accountId: string, now: Date): Promise<KeptImportSummary[]>;
  /** Hands a kept import over once: returns and forgets it (undefined: not the account's, expired or taken). */
  takeKeptImport(id: string, accountId: string, now: Date): Promise<KeptImport | undefined>;
  /** Forgets the kept imports expired at `now` (their one-time passwords go with them); how many. */
  purgeExpiredImports(now: Date): Promise<number>;
  get(id: string): Promise<Account | undefined>;
  /** The account of exactly this username, else the one whose username has its key (see usernameKey). */
  findByUsername(username: string): Promise<Account | undefined>;
  /** The accounts of these ids (those that exist), in no particular order; one query. */
  getMany(ids: readonly string[]): Promise<Account[]>;
  /** Every account, by username: for tests and small archives; no request reads it (see page). */
  list(): Promise<Account[]>;
  /**
   * One page of the accounts a selection takes, by username key (then id), and how many it takes,
   * counted up to `countLimit` (ACCOUNT_COUNT_LIMIT): beyond, `total` is the limit and `capped`
   * says there are more (an empty selection is counted exactly, never capped). What the accounts page shows, at 100,000 accounts, from indexes: no
   * selection reads every account.
   */
  page(selection: AccountSelection, offset: number, limit: number, countLimit?: number): Promise<AccountPage>;
  count(): Promise<number>;
  setPassword(id: string, passwordHash: string, mustChangePassword: boolean): Promise<void>;
  update(id: string, patch: AccountPatch): Promise<void>;
  recordLogin(id: string, at: Date): Promise<void>;
  /**
   * The display names of the accounts with these exact usernames, by username; accounts without
   * one (and logins no account has) are left out. One query however many: a page of rows asks once.
   */
  displayNames(usernames: readonly string[]): Promise<Map<string, string>>;
}

export interface SessionRecord {
  /** SHA-256 of the cookie value: a leaked table does not give away live sessions. */
  idHash: string;
  accountId: string;
  csrfToken: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface SessionStore {
  create(session: SessionRecord): Promise<void>;
  /** A session that has not expired at `now`. */
  get(idHash: string, now: Date): Promise<SessionRecord | undefined>;
  delete(idHash: string): Promise<void>;
  deleteForAccount(accountId: string): Promise<void>;
  purgeExpired(now: Date): Promise<void>;
}

export interface ApiTokenRecord {
  id: string;
  accountId: string;
  /** SHA-256 of the secret part; the secret itself is shown once and never stored. */
  secretHash: string;
  label: string;
  createdAt: Date;
  /** null: never expires. */
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  /** What it may do beyond uploading, reading and reports; tokens of earlier versions have none. */
  scopes: TokenScope[];
}

export interface TokenStore {
  create(token: ApiTokenRecord): Promise<void>;
  get(id: string): Promise<ApiTokenRecord | undefined>;
  /** Every token, or those of some owners (by the owners' indexes), oldest first. */
  list(owners?: TokenOwners): Promise<ApiTokenRecord[]>;
  /** How many of the account's tokens work at `now` (not expired; revoked ones are gone). */
  countLive(accountId: string, now: Date): Promise<number>;
  /** The same for a page of accounts in one query, by account id (accounts with none left out). */
  liveCounts(accountIds: readonly string[], now: Date): Promise<Map<string, number>>;
  /** Returns false when no such token existed. */
  revoke(id: string): Promise<boolean>;
  /** Revokes every token of the account; returns how many there were. */
  revokeForAccount(accountId: string): Promise<number>;
  /** Notes that the token was used at `at`. */
  touch(id: string, at: Date): Promise<void>;
  /**
   * Forgets the tokens that expired at or before `before` (tokens that never expire stay); how
   * many. The garbage collector's sweep, EXPIRED_TOKENS_KEPT_MS after their expiry.
   */
  purgeExpired(before: Date): Promise<number>;
}

/**
 * What the login throttle remembers of one key (an account and address pair, an account, an
 * address): failures since the last success, and until when a success there makes the pair
 * "known". A record is forgotten at `expiresAt`.
 */
export interface LoginRecord {
  failures: number;
  lastFailureAt: Date | null;
  knownUntil: Date | null;
  expiresAt: Date;
}

/** Login records shared by every instance on the store. */
export interface LoginAttemptStore {
  /** The keys' records that have not expired at `now` (absent keys are left out). */
  get(keys: string[], now: Date): Promise<Map<string, LoginRecord>>;
  /** Adds one failure at `at` atomically (an expired record starts again); the record is kept at least until `expiresAt`. */
  fail(key: string, at: Date, expiresAt: Date): Promise<LoginRecord>;
  /** A success: the failures are forgotten and the key is known until `knownUntil` (also its expiry). */
  succeed(key: string, knownUntil: Date): Promise<void>;
  /** Every record that has not expired at `now`, by key. */
  all(now: Date): Promise<Map<string, LoginRecord>>;
  /** Forgets the records whose keys start with one of the prefixes. */
  forget(prefixes: string[]): Promise<void>;
  /** Forgets the records expired at `now` (the garbage collector's sweep); how many. */
  purgeExpired(now: Date): Promise<number>;
}

/**
 * Request counters per key and fixed time window (the per-account quotas), shared by every
 * instance on the store. A window's counts vanish after it ends.
 */
export interface RateCounts {
  /**
   * Adds `by` (one by default; negative takes back what a refused request added) to the key's
   * count in the window ending at `windowEnd`; returns the new count.
   */
  hit(key: string, windowEnd: Date, by?: number): Promise<number>;
  /** Takes one back (a request that should not count). */
  undo(key: string, windowEnd: Date): Promise<void>;
  reset(key: string): Promise<void>;
  /** Forgets the counts of windows that ended before `before` (the garbage collector's sweep); how many. */
  purgeEnded(before: Date): Promise<number>;
}
