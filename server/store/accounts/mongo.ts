import type { Db, Filter } from 'mongodb';
import type { TokenScope } from '../../../shared/accounts.js';
import { UsernameTakenError } from '../../errors.js';
import { escapeRegex, isDuplicateKey, recordFromDoc } from '../mongo/documents.js';
import {
  ACCOUNT_COUNT_LIMIT,
  partPieces,
  searchPieces,
  searchText,
  usernameKey,
  type Account,
  type AccountPage,
  type AccountPatch,
  type AccountSelection,
  type AccountStore,
  type NewAccount,
  type TokenOwners,
} from './port.js';
import type { ImportedAccount, KeptImport, KeptImportSummary } from './port.js';
import type { ApiTokenRecord, SessionRecord, SessionStore, TokenStore } from './port.js';
import type { LoginAttemptStore, LoginRecord, RateCounts } from './port.js';

/** An account; accounts written before the login throttle may still carry failedLogins and lockedUntil. */
export type AccountDoc = Omit<Account, 'id' | 'disabled' | 'lastLoginAt' | 'displayName'> & {
  /** Absent on accounts of an earlier version. */
  disabled?: boolean;
  lastLoginAt?: Date | null;
  /** The person's name; absent when none is given (and on accounts of an earlier version). */
  displayName?: string;
  _id: string;
  /** usernameKey(username); absent only on an account of an earlier version whose key another took. */
  usernameKey?: string;
  /** searchText and searchPieces of its username and display name (absent on an earlier version's until the store opens). */
  searchText?: string;
  searchPieces?: string[];
};

/** An account import's answer kept for its administrator (`accountImports`); a TTL index removes it at `expiresAt`. */
export interface KeptImportDoc {
  _id: string;
  accountId: string;
  createdAt: Date;
  expiresAt: Date;
  count: number;
  accounts: ImportedAccount[];
}

export interface SessionDoc {
  _id: string;
  accountId: string;
  csrfToken: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface TokenDoc {
  _id: string;
  accountId: string;
  secretHash: string;
  label: string;
  createdAt: Date;
  /** Absent on tokens of an earlier version: they never expire. */
  expiresAt?: Date | null;
  lastUsedAt?: Date | null;
  /** Absent on tokens of an earlier version: they have no scope. */
  scopes?: TokenScope[];
}

/** A login throttle record (`loginAttempts`): `_id` is its key; removed by a TTL index at `expiresAt`. */
export interface LoginAttemptDoc {
  _id: string;
  failures: number;
  lastFailureAt: Date | null;
  knownUntil: Date | null;
  expiresAt: Date;
}

/** A request counter (`rateCounts`): `_id` is key and window; removed by a TTL index after the window. */
export interface RateCountDoc {
  _id: string;
  hits: number;
  windowEnd: Date;
}

export function accountCollections(db: Db) {
  return {
    accounts: db.collection<AccountDoc>('accounts'),
    sessions: db.collection<SessionDoc>('sessions'),
    tokens: db.collection<TokenDoc>('apiTokens'),
    loginAttempts: db.collection<LoginAttemptDoc>('loginAttempts'),
    rateCounts: db.collection<RateCountDoc>('rateCounts'),
    keptImports: db.collection<KeptImportDoc>('accountImports'),
  };
}

export type AccountCollections = ReturnType<typeof accountCollections>;

/** How many accounts a piece is counted up to when the rarest of a part's pieces is chosen (as on the embedded store). */
const SEARCH_PROBE = 2000;

/** The search fields of an account's document. */
const searchFields = (username: string, displayName: string | null) => ({
  searchText: searchText(username, displayName),
  searchPieces: searchPieces(username, displayName),
});

/**
 * A selection as a query, each part on an index: a search by the search pieces (a short part:
 * the pieces starting with it, an anchored match; one of three characters: its piece; a longer
 * one: the piece `pieceOf` chose, the whole checked on those) or the units' index.
 */
function selectionFilter(selection: AccountSelection, piece?: string): Filter<AccountDoc> {
  const all: Array<Filter<AccountDoc>> = [];
  if (selection.units) all.push({ 'unit.id': { $in: [...selection.units] } });
  if (selection.role) all.push({ role: selection.role });
  if (selection.text) {
    const { part, units } = selection.text;
    const length = [...part].length;
    const byPieces: Filter<AccountDoc> =
      length < 3
        ? { searchPieces: { $regex: `^${escapeRegex(part)}` } }
        : length === 3
          ? { searchPieces: part }
          : { searchPieces: piece ?? { $all: partPieces(part) }, searchText: { $regex: escapeRegex(part) } };
    all.push(units.length > 0 ? { $or: [byPieces, { 'unit.id': { $in: [...units] } }] } : byPieces);
  }
  if (selection.disabled !== undefined) all.push(selection.disabled ? { disabled: true } : { disabled: { $ne: true } });
  if (selection.mustChangePassword !== undefined)
    all.push(selection.mustChangePassword ? { mustChangePassword: true } : { mustChangePassword: { $ne: true } });
  const keys = selection.usernameKeys;
  if (keys && 'in' in keys) all.push({ usernameKey: { $in: [...keys.in] } });
  else if (keys) all.push({ usernameKey: { $nin: [...keys.notIn] } });
  return all.length ? { $and: all } : {};
}

export async function createAccountIndexes(c: AccountCollections): Promise<void> {
  await Promise.all([
    c.accounts.createIndex({ username: 1 }, { unique: true }),
    // Sparse: an account of an earlier version left without a key is not in it.
    c.accounts.createIndex({ usernameKey: 1 }, { unique: true, sparse: true, name: 'username_key' }),
    // The accounts page: a unit's accounts (a reach, a filter) in name order.
    c.accounts.createIndex({ 'unit.id': 1, usernameKey: 1, _id: 1 }, { name: 'unit_by_name' }),
    // The accounts page in name order, of a role, of a state; a search by its pieces.
    c.accounts.createIndex({ usernameKey: 1, _id: 1 }, { name: 'by_name' }),
    c.accounts.createIndex({ role: 1, usernameKey: 1, _id: 1 }, { name: 'role_by_name' }),
    c.accounts.createIndex({ disabled: 1, mustChangePassword: 1, usernameKey: 1, _id: 1 }, { name: 'state_by_name' }),
    // A piece's accounts in name order: a page of a common part is a range of it (docs/decisions/account-search.md).
    c.accounts.createIndex({ searchPieces: 1, usernameKey: 1, _id: 1 }, { name: 'search_pieces_by_name' }),
    c.tokens.createIndex({ createdAt: 1 }, { name: 'created' }),
    c.sessions.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
    c.sessions.createIndex({ accountId: 1 }),
    c.tokens.createIndex({ accountId: 1 }, { name: 'account' }),
    // The sweep of tokens long expired (no TTL: an expired token is listed as such for a while first).
    c.tokens.createIndex({ expiresAt: 1 }, { name: 'expiry' }),
    c.loginAttempts.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0, name: 'expiry' }),
    c.rateCounts.createIndex({ windowEnd: 1 }, { expireAfterSeconds: 0, name: 'expiry' }),
    c.keptImports.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0, name: 'expiry' }),
    c.keptImports.createIndex({ accountId: 1, createdAt: 1 }, { name: 'account' }),
  ]);
  // The pieces' index of an earlier version, without the name order: search_pieces_by_name serves
  // all it did. (Another instance starting at once may have dropped it first.)
  if ((await c.accounts.indexes()).some((index) => index.name === 'search_pieces'))
    await c.accounts.dropIndex('search_pieces').catch((err: unknown) => {
      if ((err as { codeName?: string }).codeName !== 'IndexNotFound') throw err;
    });
}

export function accountFromDoc(doc: AccountDoc): Account {
  // Accounts written before the login throttle may still carry failedLogins and lockedUntil.
  const { _id, username, passwordHash, role, unit, createdAt, mustChangePassword } = doc;
  const [disabled, lastLoginAt, displayName] = [
    doc.disabled ?? false,
    doc.lastLoginAt ?? null,
    doc.displayName ?? null,
  ];
  return {
    id: _id,
    username,
    displayName,
    passwordHash,
    role,
    unit,
    createdAt,
    mustChangePassword,
    disabled,
    lastLoginAt,
  };
}

function accountDoc(a: NewAccount): AccountDoc {
  const { id, displayName, ...rest } = a;
  return {
    _id: id,
    ...rest,
    ...(displayName !== null && { displayName }),
    usernameKey: usernameKey(a.username),
    ...searchFields(a.username, displayName),
  };
}

export class MongoAccountStore implements AccountStore {
  constructor(private readonly c: AccountCollections) {}

  async create(a: NewAccount): Promise<void> {
    try {
      await this.c.accounts.insertOne(accountDoc(a));
    } catch (err) {
      if (isDuplicateKey(err)) throw new UsernameTakenError(a.username);
      throw err;
    }
  }

  /**
   * Without transactions (decisions/no-multi-document-transactions.md): the answer is kept first,
   * then the accounts inserted in order; a taken username stops the insert, and this import's
   * accounts (by their fresh ids) and then its answer are deleted. A crash between the steps
   * leaves an answer kept for accounts not (all) created, never an account whose password is
   * lost; nobody has seen those passwords yet, so undoing the accounts takes nothing from anyone.
   */
  async createMany(accounts: readonly NewAccount[], kept: KeptImport): Promise<void> {
    const { id, accounts: rows, ...rest } = kept;
    await this.c.keptImports.insertOne({ _id: id, ...rest, count: rows.length, accounts: rows });
    try {
      if (accounts.length > 0) await this.c.accounts.insertMany(accounts.map(accountDoc), { ordered: true });
    } catch (err) {
      await this.c.accounts.deleteMany({ _id: { $in: accounts.map((a) => a.id) } });
      await this.c.keptImports.deleteOne({ _id: id });
      if (isDuplicateKey(err)) {
        const index = (err as { writeErrors?: Array<{ index?: number }> }).writeErrors?.[0]?.index;
        throw new UsernameTakenError(accounts[index ?? 0]!.username);
      }
      throw err;
    }
  }

  async takenUsernames(usernames: readonly string[]): Promise<Set<string>> {
    if (usernames.length === 0) return new Set();
    const docs = await this.c.accounts
      .find(
        { $or: [{ username: { $in: [...usernames] } }, { usernameKey: { $in: usernames.map(usernameKey) } }] },
        { projection: { _id: 0, username: 1, usernameKey: 1 } },
      )
      .toArray();
    const names = new Set(docs.map((d) => d.username));
    const keys = new Set(docs.map((d) => d.usernameKey));
    return new Set(usernames.filter((u) => names.has(u) || keys.has(usernameKey(u))));
  }

  async keptImports(accountId: string, now: Date): Promise<KeptImportSummary[]> {
    // The TTL index removes expired ones eventually; the filter makes expiry exact.
    const docs = await this.c.keptImports
      .find({ accountId, expiresAt: { $gt: now } }, { projection: { accounts: 0 } })
      .sort({ createdAt: 1, _id: 1 })
      .toArray();
    return docs.map((d) => ({
      id: d._id,
      accountId: d.accountId,
      createdAt: d.createdAt,
      expiresAt: d.expiresAt,
      count: d.count,
    }));
  }

  async takeKeptImport(id: string, accountId: string, now: Date): Promise<KeptImport | undefined> {
    // findOneAndDelete: of two takes at once, one gets it.
    const doc = await this.c.keptImports.findOneAndDelete({ _id: id, accountId, expiresAt: { $gt: now } });
    if (!doc) return undefined;
    return {
      id: doc._id,
      accountId: doc.accountId,
      createdAt: doc.createdAt,
      expiresAt: doc.expiresAt,
      accounts: doc.accounts,
    };
  }

  async purgeExpiredImports(now: Date): Promise<number> {
    // Not left to the TTL index alone: a server without one (the emulator) would keep them.
    return (await this.c.keptImports.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
  }

  async get(id: string): Promise<Account | undefined> {
    const doc = await this.c.accounts.findOne({ _id: id });
    return doc ? accountFromDoc(doc) : undefined;
  }

  async findByUsername(username: string): Promise<Account | undefined> {
    // The exact name first (an account of an earlier version left without its key is found so),
    // else the key.
    const doc =
      (await this.c.accounts.findOne({ username })) ??
      (await this.c.accounts.findOne({ usernameKey: usernameKey(username) }));
    return doc ? accountFromDoc(doc) : undefined;
  }

  /**
   * Gives accounts made before usernames compared by key theirs, oldest first (run at start; the
   * unique index decides): where two names of an earlier version share a key, the older account
   * has it and the other keeps its exact name.
   */
  async keyUsernames(): Promise<void> {
    const keyless = this.c.accounts.find({ usernameKey: { $exists: false } }).sort({ createdAt: 1, _id: 1 });
    for await (const doc of keyless) {
      try {
        await this.c.accounts.updateOne(
          { _id: doc._id, usernameKey: { $exists: false } },
          { $set: { usernameKey: usernameKey(doc.username) } },
        );
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
  }

  /** Gives accounts of an earlier version their search fields (run at start; the pieces' index finds them). */
  async indexSearch(): Promise<void> {
    const unsearchable = this.c.accounts.find(
      { searchPieces: { $exists: false } },
      { projection: { username: 1, displayName: 1 } },
    );
    for await (const doc of unsearchable)
      await this.c.accounts.updateOne({ _id: doc._id }, { $set: searchFields(doc.username, doc.displayName ?? null) });
  }

  async getMany(ids: readonly string[]): Promise<Account[]> {
    if (ids.length === 0) return [];
    return (await this.c.accounts.find({ _id: { $in: [...new Set(ids)] } }).toArray()).map(accountFromDoc);
  }

  async list(): Promise<Account[]> {
    return (await this.c.accounts.find().sort({ username: 1 }).toArray()).map(accountFromDoc);
  }

  async page(
    selection: AccountSelection,
    offset: number,
    limit: number,
    countLimit = ACCOUNT_COUNT_LIMIT,
  ): Promise<AccountPage> {
    const part = selection.text?.part;
    const piece = part !== undefined && [...part].length > 3 ? await this.pieceOf(part) : undefined;
    const filter = selectionFilter(selection, piece);
    const all = Object.keys(selection).length === 0;
    const [docs, n] = await Promise.all([
      this.c.accounts.find(filter).sort({ usernameKey: 1, _id: 1 }).skip(offset).limit(limit).toArray(),
      // All of them: the collection's count, exact, without a scan.
      all
        ? this.c.accounts.estimatedDocumentCount()
        : this.c.accounts.countDocuments(filter, { limit: countLimit + 1 }),
    ]);
    if (all) return { items: docs.map(accountFromDoc), total: n, capped: false };
    return { items: docs.map(accountFromDoc), total: Math.min(n, countLimit), capped: n > countLimit };
  }

  /**
   * The piece a part longer than three characters is looked for by, as on the embedded store: the
   * rarest of its three-character pieces (counted up to SEARCH_PROBE), and of pieces as common as
   * each other the one whose first account comes latest in name order, where a part clustered
   * there (`clerk01` among `clerk000001…`) starts.
   */
  private async pieceOf(part: string): Promise<string> {
    const found = await Promise.all(
      partPieces(part).map(async (piece) => {
        const [n, first] = await Promise.all([
          this.c.accounts.countDocuments({ searchPieces: piece }, { limit: SEARCH_PROBE }),
          this.c.accounts.findOne(
            { searchPieces: piece },
            { sort: { usernameKey: 1, _id: 1 }, projection: { _id: 1, usernameKey: 1 } },
          ),
        ]);
        return { piece, n, first };
      }),
    );
    const later = (a: (typeof found)[number], b: (typeof found)[number]) =>
      a.first !== null &&
      (b.first === null ||
        (a.first.usernameKey ?? '') > (b.first.usernameKey ?? '') ||
        ((a.first.usernameKey ?? '') === (b.first.usernameKey ?? '') && a.first._id > b.first._id));
    return found.reduce((chosen, p) => (p.n < chosen.n || (p.n === chosen.n && later(p, chosen)) ? p : chosen)).piece;
  }

  async count(): Promise<number> {
    return this.c.accounts.countDocuments();
  }

  async setPassword(id: string, passwordHash: string, mustChangePassword: boolean): Promise<void> {
    await this.c.accounts.updateOne(
      { _id: id },
      { $set: { passwordHash, mustChangePassword }, $unset: { failedLogins: '', lockedUntil: '' } },
    );
  }

  async update(id: string, patch: AccountPatch): Promise<void> {
    const { role, unit, disabled, displayName } = patch;
    const set = {
      ...(role ? { role } : {}),
      ...(unit ? { unit } : {}),
      ...(disabled !== undefined ? { disabled } : {}),
      ...(typeof displayName === 'string' ? { displayName } : {}),
    };
    // A new display name is searched by: its pieces replace the old ones.
    if (displayName !== undefined) {
      const doc = await this.c.accounts.findOne({ _id: id }, { projection: { username: 1 } });
      if (doc) Object.assign(set, searchFields(doc.username, displayName));
    }
    // No name is no field, as on accounts that never had one.
    const unset = displayName === null ? { displayName: '' as const } : undefined;
    if (Object.keys(set).length > 0 || unset)
      await this.c.accounts.updateOne(
        { _id: id },
        { ...(Object.keys(set).length > 0 && { $set: set }), ...(unset && { $unset: unset }) },
      );
  }

  async recordLogin(id: string, at: Date): Promise<void> {
    await this.c.accounts.updateOne({ _id: id }, { $set: { lastLoginAt: at } });
  }

  async displayNames(usernames: readonly string[]): Promise<Map<string, string>> {
    if (usernames.length === 0) return new Map();
    const docs = await this.c.accounts
      .find(
        { username: { $in: [...new Set(usernames)] }, displayName: { $exists: true } },
        { projection: { _id: 0, username: 1, displayName: 1 } },
      )
      .toArray();
    return new Map(docs.map((d) => [d.username, d.displayName!]));
  }
}

export class MongoSessionStore implements SessionStore {
  constructor(private readonly c: AccountCollections) {}

  async create(s: SessionRecord): Promise<void> {
    const { idHash, ...rest } = s;
    await this.c.sessions.insertOne({ _id: idHash, ...rest });
  }

  async get(idHash: string, now: Date): Promise<SessionRecord | undefined> {
    // The TTL index removes expired sessions eventually; the filter makes expiry exact.
    const doc = await this.c.sessions.findOne({ _id: idHash, expiresAt: { $gt: now } });
    if (!doc) return undefined;
    const { _id, ...rest } = doc;
    return { idHash: _id, ...rest };
  }

  async delete(idHash: string): Promise<void> {
    await this.c.sessions.deleteOne({ _id: idHash });
  }

  async deleteForAccount(accountId: string): Promise<void> {
    await this.c.sessions.deleteMany({ accountId });
  }

  async purgeExpired(now: Date): Promise<void> {
    await this.c.sessions.deleteMany({ expiresAt: { $lte: now } });
  }
}

export class MongoTokenStore implements TokenStore {
  constructor(private readonly c: AccountCollections) {}

  async create(t: ApiTokenRecord): Promise<void> {
    const { id, ...rest } = t;
    await this.c.tokens.insertOne({ _id: id, ...rest });
  }

  async get(id: string): Promise<ApiTokenRecord | undefined> {
    const doc = await this.c.tokens.findOne({ _id: id });
    return doc ? tokenFromDoc(doc) : undefined;
  }

  async list(owners?: TokenOwners): Promise<ApiTokenRecord[]> {
    let accountIds: string[] | undefined;
    if (owners && 'accounts' in owners) accountIds = [...owners.accounts];
    else if (owners)
      // The units' accounts by their index (ids only), then their tokens by the tokens' account index.
      accountIds = (
        await this.c.accounts.find({ 'unit.id': { $in: [...owners.units] } }, { projection: { _id: 1 } }).toArray()
      ).map((d) => d._id);
    const filter = accountIds ? { accountId: { $in: accountIds } } : {};
    return (await this.c.tokens.find(filter).sort({ createdAt: 1 }).toArray()).map(tokenFromDoc);
  }

  async liveCounts(accountIds: readonly string[], now: Date): Promise<Map<string, number>> {
    if (accountIds.length === 0) return new Map();
    const rows = await this.c.tokens
      .aggregate<{ _id: string; n: number }>([
        {
          $match: {
            accountId: { $in: [...new Set(accountIds)] },
            $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }],
          },
        },
        { $group: { _id: '$accountId', n: { $sum: 1 } } },
      ])
      .toArray();
    return new Map(rows.map((r) => [r._id, r.n]));
  }

  async countLive(accountId: string, now: Date): Promise<number> {
    return this.c.tokens.countDocuments({
      accountId,
      $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }],
    });
  }

  async revoke(id: string): Promise<boolean> {
    return (await this.c.tokens.deleteOne({ _id: id })).deletedCount > 0;
  }

  async revokeForAccount(accountId: string): Promise<number> {
    return (await this.c.tokens.deleteMany({ accountId })).deletedCount;
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.c.tokens.updateOne({ _id: id }, { $set: { lastUsedAt: at } });
  }

  async purgeExpired(before: Date): Promise<number> {
    // A token that never expires has null there (or, of an earlier version, nothing): $lte takes neither.
    return (await this.c.tokens.deleteMany({ expiresAt: { $lte: before } })).deletedCount;
  }
}

const tokenFromDoc = (doc: TokenDoc): ApiTokenRecord => {
  const { expiresAt, lastUsedAt, scopes, ...rest } = recordFromDoc(doc);
  return { ...rest, expiresAt: expiresAt ?? null, lastUsedAt: lastUsedAt ?? null, scopes: scopes ?? [] };
};

const record = (d: LoginAttemptDoc): LoginRecord => ({
  failures: d.failures,
  lastFailureAt: d.lastFailureAt,
  knownUntil: d.knownUntil,
  expiresAt: d.expiresAt,
});

/**
 * Login records as single documents, changed by atomic updates only (no transactions), so
 * concurrent failures on one key all count; the TTL index removes a record some time after it
 * expired, so reads also check `expiresAt`.
 */
export class MongoLoginAttempts implements LoginAttemptStore {
  constructor(private readonly c: AccountCollections) {}

  async get(keys: string[], now: Date): Promise<Map<string, LoginRecord>> {
    const docs = await this.c.loginAttempts.find({ _id: { $in: keys }, expiresAt: { $gt: now } }).toArray();
    return new Map(docs.map((d) => [d._id, record(d)]));
  }

  async fail(key: string, at: Date, expiresAt: Date): Promise<LoginRecord> {
    for (;;) {
      // A live record counts one more.
      const live = await this.c.loginAttempts.findOneAndUpdate(
        { _id: key, expiresAt: { $gt: at } },
        { $inc: { failures: 1 }, $set: { lastFailureAt: at }, $max: { expiresAt } },
        { returnDocument: 'after' },
      );
      if (live) return record(live);
      // An expired one starts again (only one of two racing failures matches; the other goes round).
      const restarted = await this.c.loginAttempts.findOneAndUpdate(
        { _id: key, expiresAt: { $lte: at } },
        { $set: { failures: 1, lastFailureAt: at, knownUntil: null, expiresAt } },
        { returnDocument: 'after' },
      );
      if (restarted) return record(restarted);
      const fresh: LoginAttemptDoc = { _id: key, failures: 1, lastFailureAt: at, knownUntil: null, expiresAt };
      try {
        await this.c.loginAttempts.insertOne(fresh);
        return record(fresh);
      } catch (err) {
        // Two first failures raced to insert: the loser counts on the winner's record.
        if (!isDuplicateKey(err)) throw err;
      }
    }
  }

  async succeed(key: string, knownUntil: Date): Promise<void> {
    await this.c.loginAttempts.updateOne(
      { _id: key },
      { $set: { failures: 0, lastFailureAt: null, knownUntil, expiresAt: knownUntil } },
      { upsert: true },
    );
  }

  async all(now: Date): Promise<Map<string, LoginRecord>> {
    const docs = await this.c.loginAttempts.find({ expiresAt: { $gt: now } }).toArray();
    return new Map(docs.map((d) => [d._id, record(d)]));
  }

  async forget(prefixes: string[]): Promise<void> {
    if (prefixes.length === 0) return;
    await this.c.loginAttempts.deleteMany({ $or: prefixes.map((p) => ({ _id: new RegExp(`^${escapeRegex(p)}`) })) });
  }

  async purgeExpired(now: Date): Promise<number> {
    // Not left to the TTL index alone: a server without one (the emulator) would keep them.
    return (await this.c.loginAttempts.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
  }
}

/** Counters as single documents updated with $inc; a TTL index removes ended windows. */
export class MongoRateCounts implements RateCounts {
  constructor(private readonly c: AccountCollections) {}

  async hit(key: string, windowEnd: Date, by = 1): Promise<number> {
    const _id = `${key}|${windowEnd.getTime()}`;
    for (;;) {
      try {
        const doc = await this.c.rateCounts.findOneAndUpdate(
          { _id },
          { $inc: { hits: by }, $setOnInsert: { windowEnd } },
          { upsert: true, returnDocument: 'after' },
        );
        return doc!.hits;
      } catch (err) {
        // Two first hits raced to insert: the loser increments the winner's document.
        if (!isDuplicateKey(err)) throw err;
      }
    }
  }

  async undo(key: string, windowEnd: Date): Promise<void> {
    await this.c.rateCounts.updateOne(
      { _id: `${key}|${windowEnd.getTime()}`, hits: { $gt: 0 } },
      { $inc: { hits: -1 } },
    );
  }

  async reset(key: string): Promise<void> {
    // An anchored prefix: read from the _id index.
    await this.c.rateCounts.deleteMany({ _id: { $regex: `^${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\|` } });
  }

  async purgeEnded(before: Date): Promise<number> {
    // Not left to the TTL index alone: a server without one (the emulator) would keep them.
    return (await this.c.rateCounts.deleteMany({ windowEnd: { $lt: before } })).deletedCount;
  }
}
