import type { Unit } from '../../../shared/schemas.js';
import { UsernameTakenError } from '../../errors.js';
import { addMissingColumns, type Db, type EmbeddedSchema } from '../embedded/database.js';
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

export const accountSchema: EmbeddedSchema = {
  tables: `
CREATE TABLE IF NOT EXISTS accounts (
  id                   TEXT PRIMARY KEY,
  username             TEXT NOT NULL UNIQUE,
  password_hash        TEXT NOT NULL,
  role                 TEXT NOT NULL,
  unit                 TEXT NOT NULL,
  created_at           INTEGER NOT NULL,
  must_change_password INTEGER NOT NULL DEFAULT 0,
  -- usernameKey(username); NULL only for an account of an earlier version whose key another took.
  username_key         TEXT,
  disabled             INTEGER NOT NULL DEFAULT 0,
  last_login_at        INTEGER,
  -- The person's name (姓名); NULL: none given.
  display_name         TEXT,
  -- searchText(username, display_name): what a search checks a part against.
  search_text          TEXT
);

-- The accounts' search index (searchPieces), each piece's accounts in name order: a search finds
-- its accounts here, not by reading every name, and a page of a common part is a range of it.
CREATE TABLE IF NOT EXISTS account_pieces (
  piece      TEXT NOT NULL,
  -- The account's place in name order (BY_NAME: its username key, else its username).
  name       TEXT NOT NULL,
  account_id TEXT NOT NULL,
  PRIMARY KEY (piece, name, account_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS sessions (
  id_hash    TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  csrf_token TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_account ON sessions (account_id);

CREATE TABLE IF NOT EXISTS api_tokens (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  label       TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER,
  last_used_at INTEGER,
  -- TOKEN_SCOPES as a JSON array; tokens of earlier versions get none.
  scopes      TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS api_tokens_account ON api_tokens (account_id);

-- An account import's answer (its one-time passwords, JSON), kept for the administrator who ran it
-- until taken once or expired.
CREATE TABLE IF NOT EXISTS kept_imports (
  id         TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  count      INTEGER NOT NULL,
  accounts   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS kept_imports_account ON kept_imports (account_id, created_at);

-- What the login throttle remembers per key (account and address, account, address).
-- (Databases made before it keep two unused columns in accounts: failed_logins, locked_until.)
CREATE TABLE IF NOT EXISTS login_attempts (
  key             TEXT PRIMARY KEY,
  failures        INTEGER NOT NULL,
  last_failure_at INTEGER,
  known_until     INTEGER,
  expires_at      INTEGER NOT NULL
) WITHOUT ROWID;

-- Request counters per key and fixed window (quotas), shared by every process on DATA_DIR.
CREATE TABLE IF NOT EXISTS rate_counts (
  key        TEXT NOT NULL,
  window_end INTEGER NOT NULL,
  hits       INTEGER NOT NULL,
  PRIMARY KEY (key, window_end)
) WITHOUT ROWID;
`,
  upgrade(db) {
    // Accounts made before usernames compared by key get theirs, oldest first; where two names of
    // an earlier version share a key, the older account has it and the other keeps its exact name.
    addMissingColumns(db, 'accounts', {
      username_key: 'TEXT',
      disabled: 'INTEGER NOT NULL DEFAULT 0',
      last_login_at: 'INTEGER',
      display_name: 'TEXT',
      search_text: 'TEXT',
    });
    addMissingColumns(db, 'api_tokens', {
      expires_at: 'INTEGER',
      last_used_at: 'INTEGER',
      scopes: "TEXT NOT NULL DEFAULT '[]'",
    });
    db.transaction(() => {
      const keyless = db
        .prepare<[], { id: string; username: string; display_name: string | null; searchable: number }>(
          `SELECT id, username, display_name, search_text IS NOT NULL AS searchable FROM accounts
           WHERE username_key IS NULL ORDER BY created_at, id`,
        )
        .all();
      const taken = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM accounts WHERE username_key = ?');
      const setKey = db.prepare('UPDATE accounts SET username_key = ? WHERE id = ?');
      const move = db.prepare(
        'UPDATE account_pieces SET name = @key WHERE piece = @piece AND name = @username AND account_id = @id',
      );
      for (const { id, username, display_name, searchable } of keyless) {
        const key = usernameKey(username);
        if (taken.get(key)!.n > 0) continue;
        setKey.run(key, id);
        // Its place in name order moves from its username to its key: its pieces (if it has them yet) move with it.
        if (searchable)
          for (const piece of searchPieces(username, display_name)) move.run({ key, piece, username, id });
      }
      db.exec('CREATE UNIQUE INDEX IF NOT EXISTS accounts_username_key ON accounts (username_key)');
    }).immediate();
    // The accounts page: pages in name order, and an account's unit (a reach, a filter, a search),
    // role or state, each in name order, so a page of them stops after its rows.
    db.exec(`CREATE INDEX IF NOT EXISTS accounts_by_name ON accounts (${BY_NAME}, id);
             CREATE INDEX IF NOT EXISTS accounts_by_unit ON accounts (${UNIT_ID}, ${BY_NAME}, id);
             CREATE INDEX IF NOT EXISTS accounts_by_role ON accounts (role, ${BY_NAME}, id);
             CREATE INDEX IF NOT EXISTS accounts_by_state ON accounts (disabled, must_change_password, ${BY_NAME}, id);
             CREATE INDEX IF NOT EXISTS accounts_unsearchable ON accounts (id) WHERE search_text IS NULL;
             CREATE INDEX IF NOT EXISTS api_tokens_created ON api_tokens (created_at);
             CREATE INDEX IF NOT EXISTS api_tokens_expiry ON api_tokens (expires_at)`);
    // The pieces of an earlier version (account_search, without the name order) move into
    // account_pieces once, in the new table's order (1.1 million rows at the bench's 100,000 accounts).
    const earlier = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'account_search'").get();
    if (earlier)
      db.transaction(() =>
        db.exec(`INSERT OR IGNORE INTO account_pieces (piece, name, account_id)
                   SELECT s.piece, ${BY_NAME}, s.account_id FROM account_search s JOIN accounts a ON a.id = s.account_id
                   ORDER BY 1, 2, 3;
                 DROP TABLE account_search`),
      ).immediate();
    // Accounts of an earlier version get their search pieces once (the index above finds them at once).
    db.transaction(() => {
      const unsearchable = db
        .prepare<[], { id: string; username: string; display_name: string | null; name: string }>(
          `SELECT id, username, display_name, ${BY_NAME} AS name FROM accounts INDEXED BY accounts_unsearchable WHERE search_text IS NULL`,
        )
        .all();
      for (const a of unsearchable) indexSearch(db, a, a.display_name, null);
    }).immediate();
  },
};

/** The name order of the accounts page (an account of an earlier version may lack a key). */
const BY_NAME = 'COALESCE(username_key, username)';
const UNIT_ID = "json_extract(unit, '$.id')";

/**
 * Writes an account's search text and pieces, at its place in name order (`name`, BY_NAME);
 * `before` (its display name until now) says which pieces to take away. Within the caller's
 * transaction.
 */
function indexSearch(
  db: Db,
  account: { id: string; username: string; name: string },
  displayName: string | null,
  before: { displayName: string | null } | null,
): void {
  const { id, username, name } = account;
  const pieces = searchPieces(username, displayName);
  if (before) {
    const kept = new Set(pieces);
    const drop = db.prepare('DELETE FROM account_pieces WHERE piece = ? AND name = ? AND account_id = ?');
    for (const piece of searchPieces(username, before.displayName)) if (!kept.has(piece)) drop.run(piece, name, id);
  }
  const add = db.prepare('INSERT OR IGNORE INTO account_pieces (piece, name, account_id) VALUES (?, ?, ?)');
  for (const piece of pieces) add.run(piece, name, id);
  db.prepare('UPDATE accounts SET search_text = ? WHERE id = ?').run(searchText(username, displayName), id);
}

/**
 * How many candidates a search part may find through the pieces (or the units it names) and still
 * be looked up by them; a part found more often is common enough that walking the accounts in
 * name order finds a page of it soon.
 */
const SEARCH_PROBE = 2000;

/** Parameters by name: lists as JSON arrays, for json_each. */
type Params = Record<string, string | number>;

/**
 * The piece a part of three characters or more is found by: the part itself (exactly its
 * accounts, nothing to check), or of a longer part the rarest of its three-character pieces,
 * each account of which is then checked whole (`checked`). Of pieces as common as each other (at
 * least SEARCH_PROBE accounts), the one whose first account comes latest in name order: a part
 * whose accounts are clustered there (`clerk01` among `clerk000001…`) has a piece that starts
 * there too (`k01`), which a walk in name order finds its accounts by at once. `common`: the
 * piece has SEARCH_PROBE accounts or more.
 */
function pieceOf(db: Db, part: string): { piece: string; checked: boolean; common: boolean } {
  const count = db.prepare<{ piece: string }, { n: number }>(
    `SELECT COUNT(*) AS n FROM (SELECT 1 FROM account_pieces WHERE piece = @piece LIMIT ${SEARCH_PROBE})`,
  );
  if ([...part].length === 3)
    return { piece: part, checked: false, common: count.get({ piece: part })!.n >= SEARCH_PROBE };
  const first = db.prepare<{ piece: string }, { name: string; id: string }>(
    'SELECT name, account_id AS id FROM account_pieces WHERE piece = @piece ORDER BY name, account_id LIMIT 1',
  );
  const later = (a: { name: string; id: string } | undefined, b: { name: string; id: string } | undefined) =>
    a !== undefined && (b === undefined || a.name > b.name || (a.name === b.name && a.id > b.id));
  let chosen: { piece: string; n: number; first?: { name: string; id: string } } = { piece: '', n: Infinity };
  for (const piece of partPieces(part)) {
    const n = count.get({ piece })!.n;
    if (n === 0) return { piece, checked: true, common: false };
    if (n > chosen.n) continue;
    const starts = first.get({ piece });
    if (n < chosen.n || later(starts, chosen.first)) chosen = { piece, n, first: starts };
  }
  return { piece: chosen.piece, checked: true, common: chosen.n >= SEARCH_PROBE };
}

/**
 * A search by a part of three characters or more that names no unit, alone or rare: its piece's
 * accounts are read in name order (a range of account_pieces, each checked whole when the part is
 * longer), so a page stops after its rows however the part's accounts lie in name order, and the
 * count after the limit. `from` is the FROM and WHERE of those accounts, joined to the selection's
 * other parts (`where`, on the accounts `a`).
 */
function pieceWalk(db: Db, selection: AccountSelection, where: string, params: Params): { from: string } | undefined {
  const text = selection.text;
  if (!text || text.units.length > 0 || [...text.part].length < 3) return undefined;
  const { piece, checked, common } = pieceOf(db, text.part);
  const alone = Object.keys(selection).every((k) => k === 'text');
  // A common part with other parts to it: the others' indexes may find a page sooner (textWhere).
  if (common && !alone) return undefined;
  params.piece = piece;
  params.part = text.part;
  const others = where ? ` AND ${where}` : '';
  if (!checked && !others) return { from: 'account_pieces s WHERE s.piece = @piece' };
  // CROSS JOIN: the pieces lead, in their name order; each account is found by its id.
  return {
    from: `account_pieces s CROSS JOIN accounts a ON a.id = s.account_id
           WHERE s.piece = @piece${checked ? ' AND instr(a.search_text, @part) > 0' : ''}${others}`,
  };
}

/**
 * A search's condition where no piece walk answers it (a part of one or two characters, units
 * named, a common part with other filters): by its pieces and the units' index when it is rare
 * (the page and count read only the candidates), else checked on each account as the name order
 * walks them; and the accounts it takes by those indexes alone (`matches`, maybe more than once
 * each), which count a search that has nothing else to it without a walk.
 */
function textWhere(
  db: Db,
  text: { part: string; units: readonly string[] },
  params: Params,
): { where: string; matches: string } {
  const part = text.part;
  params.part = part;
  params.textUnits = JSON.stringify(text.units);
  const inUnits = `${UNIT_ID} IN (SELECT value FROM json_each(@textUnits))`;
  const probe = (sql: string, args: Params) =>
    db.prepare<Params, { n: number }>(`SELECT COUNT(*) AS n FROM (${sql} LIMIT ${SEARCH_PROBE})`).get(args)!.n;
  const named = text.units.length > 0;
  const unitCandidates = named ? probe(`SELECT 1 FROM accounts WHERE ${inUnits}`, { textUnits: params.textUnits }) : 0;
  let pieces: string;
  let byPieces: string;
  let pieceCandidates: number;
  if ([...part].length < 3) {
    // A short part: the pieces starting with it are exactly its accounts.
    params.partEnd = `${part}\u{10FFFF}`;
    pieces = 'piece >= @part AND piece < @partEnd';
    byPieces = `SELECT account_id AS id FROM account_pieces WHERE ${pieces}`;
    pieceCandidates = probe(`SELECT 1 FROM account_pieces WHERE ${pieces}`, { part, partEnd: params.partEnd });
  } else {
    const found = pieceOf(db, part);
    params.piece = found.piece;
    byPieces = found.checked
      ? `SELECT s.account_id AS id FROM account_pieces s JOIN accounts a ON a.id = s.account_id
         WHERE s.piece = @piece AND instr(a.search_text, @part) > 0`
      : 'SELECT account_id AS id FROM account_pieces WHERE piece = @piece';
    pieceCandidates = found.common ? SEARCH_PROBE : 0;
  }
  // No unit named: the walk checks the names alone (the units' test on every account walked
  // was half of a clustered part's walk, `clerk01`).
  const matches = named ? `${byPieces} UNION ALL SELECT id FROM accounts WHERE ${inUnits}` : byPieces;
  if (pieceCandidates >= SEARCH_PROBE || unitCandidates >= SEARCH_PROBE)
    return {
      where: named ? `(instr(search_text, @part) > 0 OR ${inUnits})` : 'instr(search_text, @part) > 0',
      matches,
    };
  return { where: `id IN (${matches})`, matches };
}

/** A selection's WHERE clause but its search's, with its named parameters. */
function selectionWhere(selection: Omit<AccountSelection, 'text'>): { where: string; params: Params } {
  const parts: string[] = [];
  const params: Params = {};
  if (selection.units) {
    parts.push(`${UNIT_ID} IN (SELECT value FROM json_each(@units))`);
    params.units = JSON.stringify(selection.units);
  }
  if (selection.role) {
    parts.push('role = @role');
    params.role = selection.role;
  }
  if (selection.disabled !== undefined) {
    parts.push('disabled = @disabled');
    params.disabled = selection.disabled ? 1 : 0;
  }
  if (selection.mustChangePassword !== undefined) {
    parts.push('must_change_password = @mustChange');
    params.mustChange = selection.mustChangePassword ? 1 : 0;
  }
  const keys = selection.usernameKeys;
  if (keys && 'in' in keys) {
    parts.push('username_key IN (SELECT value FROM json_each(@keys))');
    params.keys = JSON.stringify(keys.in);
  } else if (keys) {
    parts.push('(username_key IS NULL OR username_key NOT IN (SELECT value FROM json_each(@keys)))');
    params.keys = JSON.stringify(keys.notIn);
  }
  return { where: parts.join(' AND '), params };
}

export class EmbeddedAccountStore implements AccountStore {
  constructor(private readonly db: Db) {}

  async create(a: NewAccount): Promise<void> {
    this.db.transaction(() => this.insert(a)).immediate();
  }

  private insert(a: NewAccount): void {
    try {
      this.db
        .prepare(
          `INSERT INTO accounts (id, username, username_key, display_name, password_hash, role, unit, created_at, must_change_password, disabled, last_login_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          a.id,
          a.username,
          usernameKey(a.username),
          a.displayName,
          a.passwordHash,
          a.role,
          JSON.stringify(a.unit),
          a.createdAt.getTime(),
          a.mustChangePassword ? 1 : 0,
          a.disabled ? 1 : 0,
          a.lastLoginAt?.getTime() ?? null,
        );
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new UsernameTakenError(a.username);
      throw err;
    }
    indexSearch(this.db, { id: a.id, username: a.username, name: usernameKey(a.username) }, a.displayName, null);
  }

  async createMany(accounts: readonly NewAccount[], kept: KeptImport): Promise<void> {
    // One transaction: a taken username rolls back the accounts before it and the answer.
    this.db
      .transaction(() => {
        for (const a of accounts) this.insert(a);
        this.db
          .prepare(
            'INSERT INTO kept_imports (id, account_id, created_at, expires_at, count, accounts) VALUES (?, ?, ?, ?, ?, ?)',
          )
          .run(
            kept.id,
            kept.accountId,
            kept.createdAt.getTime(),
            kept.expiresAt.getTime(),
            kept.accounts.length,
            JSON.stringify(kept.accounts),
          );
        // The expired ones go now and then: whenever another is kept.
        this.db.prepare('DELETE FROM kept_imports WHERE expires_at <= ?').run(kept.createdAt.getTime());
      })
      .immediate();
  }

  async takenUsernames(usernames: readonly string[]): Promise<Set<string>> {
    if (usernames.length === 0) return new Set();
    const found = (column: 'username' | 'username_key', values: string[]) =>
      new Set(
        this.db
          .prepare<[string], { v: string }>(
            `SELECT ${column} AS v FROM accounts WHERE ${column} IN (SELECT value FROM json_each(?))`,
          )
          .all(JSON.stringify(values))
          .map((r) => r.v),
      );
    const names = found('username', [...usernames]);
    const keys = found('username_key', usernames.map(usernameKey));
    return new Set(usernames.filter((u) => names.has(u) || keys.has(usernameKey(u))));
  }

  async keptImports(accountId: string, now: Date): Promise<KeptImportSummary[]> {
    return this.db
      .prepare<[string, number], Omit<KeptImportRow, 'accounts'>>(
        `SELECT id, account_id, created_at, expires_at, count FROM kept_imports
         WHERE account_id = ? AND expires_at > ? ORDER BY created_at, id`,
      )
      .all(accountId, now.getTime())
      .map((r) => ({
        id: r.id,
        accountId: r.account_id,
        createdAt: new Date(r.created_at),
        expiresAt: new Date(r.expires_at),
        count: r.count,
      }));
  }

  async takeKeptImport(id: string, accountId: string, now: Date): Promise<KeptImport | undefined> {
    // One statement: of two takes at once, one gets it.
    const row = this.db
      .prepare<[string, string, number], KeptImportRow>(
        'DELETE FROM kept_imports WHERE id = ? AND account_id = ? AND expires_at > ? RETURNING *',
      )
      .get(id, accountId, now.getTime());
    return (
      row && {
        id: row.id,
        accountId: row.account_id,
        createdAt: new Date(row.created_at),
        expiresAt: new Date(row.expires_at),
        accounts: JSON.parse(row.accounts) as ImportedAccount[],
      }
    );
  }

  async purgeExpiredImports(now: Date): Promise<number> {
    return this.db.prepare('DELETE FROM kept_imports WHERE expires_at <= ?').run(now.getTime()).changes;
  }

  async get(id: string): Promise<Account | undefined> {
    const row = this.db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?').get(id);
    return row && accountFromRow(row);
  }

  async findByUsername(username: string): Promise<Account | undefined> {
    // The exact name first (an account of an earlier version left without its key is found so),
    // else the key.
    const row = this.db
      .prepare<{ name: string; key: string }, AccountRow>(
        'SELECT * FROM accounts WHERE username = @name OR username_key = @key ORDER BY username = @name DESC LIMIT 1',
      )
      .get({ name: username, key: usernameKey(username) });
    return row && accountFromRow(row);
  }

  async list(): Promise<Account[]> {
    return this.db.prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY username').all().map(accountFromRow);
  }

  async getMany(ids: readonly string[]): Promise<Account[]> {
    if (ids.length === 0) return [];
    return this.db
      .prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id IN (SELECT value FROM json_each(?))')
      .all(JSON.stringify([...new Set(ids)]))
      .map(accountFromRow);
  }

  async page(
    selection: AccountSelection,
    offset: number,
    limit: number,
    countLimit = ACCOUNT_COUNT_LIMIT,
  ): Promise<AccountPage> {
    const { text, ...others } = selection;
    const { where: otherWhere, params } = selectionWhere(others);
    const walk = pieceWalk(this.db, selection, otherWhere, params);
    if (walk) {
      // The piece's accounts in name order: the page stops after its rows, the count at its limit.
      const ids = this.db
        .prepare<Params, { id: string }>(
          `SELECT s.account_id AS id FROM ${walk.from} ORDER BY s.name, s.account_id LIMIT @limit OFFSET @offset`,
        )
        .all({ ...params, limit, offset })
        .map((r) => r.id);
      const n = this.db
        .prepare<Params, { n: number }>(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${walk.from} LIMIT @upTo)`)
        .get({ ...params, upTo: countLimit + 1 })!.n;
      const rows = new Map((await this.getMany(ids)).map((a) => [a.id, a]));
      return { items: ids.map((id) => rows.get(id)!), total: Math.min(n, countLimit), capped: n > countLimit };
    }
    const found = text && textWhere(this.db, text, params);
    const conditions = [otherWhere, found?.where ?? ''].filter(Boolean);
    const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
    // The page's ids first (an offset steps over index entries, not rows), then their rows.
    const ids = this.db
      .prepare<Params, { id: string }>(
        `SELECT id FROM accounts ${where} ORDER BY ${BY_NAME}, id LIMIT @limit OFFSET @offset`,
      )
      .all({ ...params, limit, offset })
      .map((r) => r.id);
    const rows = new Map((await this.getMany(ids)).map((a) => [a.id, a]));
    // All of them: SQLite counts a table without stepping through its rows.
    if (!where) {
      const all = this.db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM accounts').get()!.n;
      return { items: ids.map((id) => rows.get(id)!), total: all, capped: false };
    }
    // A search alone is counted from its indexes (each account once), not by walking the accounts.
    const counted =
      found && !otherWhere
        ? `SELECT DISTINCT id FROM (${found.matches}) LIMIT @upTo`
        : `SELECT 1 FROM accounts ${where} LIMIT @upTo`;
    const n = this.db
      .prepare<Params, { n: number }>(`SELECT COUNT(*) AS n FROM (${counted})`)
      .get({ ...params, upTo: countLimit + 1 })!.n;
    return { items: ids.map((id) => rows.get(id)!), total: Math.min(n, countLimit), capped: n > countLimit };
  }

  async count(): Promise<number> {
    return this.db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM accounts').get()!.n;
  }

  async setPassword(id: string, passwordHash: string, mustChangePassword: boolean): Promise<void> {
    this.db
      .prepare('UPDATE accounts SET password_hash = ?, must_change_password = ? WHERE id = ?')
      .run(passwordHash, mustChangePassword ? 1 : 0, id);
  }

  async update(id: string, patch: AccountPatch): Promise<void> {
    this.db.transaction(() => this.change(id, patch)).immediate();
  }

  private change(id: string, patch: AccountPatch): void {
    if (patch.displayName !== undefined) {
      const before = this.db
        .prepare<[string], { username: string; display_name: string | null; name: string }>(
          `SELECT username, display_name, ${BY_NAME} AS name FROM accounts WHERE id = ?`,
        )
        .get(id);
      if (before) indexSearch(this.db, { id, ...before }, patch.displayName, { displayName: before.display_name });
    }
    // NULL keeps a column, except the display name, where NULL is a value (none): a flag says whether to set it.
    this.db
      .prepare(
        `UPDATE accounts SET role = ifnull(@role, role), unit = ifnull(@unit, unit), disabled = ifnull(@disabled, disabled),
           display_name = IIF(@setName, @name, display_name)
         WHERE id = @id`,
      )
      .run({
        id,
        role: patch.role ?? null,
        unit: patch.unit ? JSON.stringify(patch.unit) : null,
        disabled: patch.disabled === undefined ? null : patch.disabled ? 1 : 0,
        setName: patch.displayName === undefined ? 0 : 1,
        name: patch.displayName ?? null,
      });
  }

  async recordLogin(id: string, at: Date): Promise<void> {
    this.db.prepare('UPDATE accounts SET last_login_at = ? WHERE id = ?').run(at.getTime(), id);
  }

  async displayNames(usernames: readonly string[]): Promise<Map<string, string>> {
    if (usernames.length === 0) return new Map();
    const rows = this.db
      .prepare<[string], { username: string; display_name: string }>(
        `SELECT username, display_name FROM accounts
         WHERE username IN (SELECT value FROM json_each(?)) AND display_name IS NOT NULL`,
      )
      .all(JSON.stringify([...new Set(usernames)]));
    return new Map(rows.map((r) => [r.username, r.display_name]));
  }
}

interface KeptImportRow {
  id: string;
  account_id: string;
  created_at: number;
  expires_at: number;
  count: number;
  accounts: string;
}

interface SessionRow {
  id_hash: string;
  account_id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export class EmbeddedSessionStore implements SessionStore {
  constructor(private readonly db: Db) {}

  async create(s: SessionRecord): Promise<void> {
    this.db
      .prepare('INSERT INTO sessions (id_hash, account_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)')
      .run(s.idHash, s.accountId, s.csrfToken, s.createdAt.getTime(), s.expiresAt.getTime());
  }

  async get(idHash: string, now: Date): Promise<SessionRecord | undefined> {
    const row = this.db
      .prepare<[string, number], SessionRow>('SELECT * FROM sessions WHERE id_hash = ? AND expires_at > ?')
      .get(idHash, now.getTime());
    return (
      row && {
        idHash: row.id_hash,
        accountId: row.account_id,
        csrfToken: row.csrf_token,
        createdAt: new Date(row.created_at),
        expiresAt: new Date(row.expires_at),
      }
    );
  }

  async delete(idHash: string): Promise<void> {
    this.db.prepare('DELETE FROM sessions WHERE id_hash = ?').run(idHash);
  }

  async deleteForAccount(accountId: string): Promise<void> {
    this.db.prepare('DELETE FROM sessions WHERE account_id = ?').run(accountId);
  }

  async purgeExpired(now: Date): Promise<void> {
    this.db.prepare('DELETE FROM sessions WHERE expires_at <= ?').run(now.getTime());
  }
}

interface TokenRow {
  id: string;
  account_id: string;
  secret_hash: string;
  label: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  scopes: string;
}

const dateOrNull = (ms: number | null) => (ms === null ? null : new Date(ms));

const tokenFromRow = (row: TokenRow): ApiTokenRecord => ({
  id: row.id,
  accountId: row.account_id,
  secretHash: row.secret_hash,
  label: row.label,
  createdAt: new Date(row.created_at),
  expiresAt: dateOrNull(row.expires_at),
  lastUsedAt: dateOrNull(row.last_used_at),
  scopes: JSON.parse(row.scopes) as ApiTokenRecord['scopes'],
});

export class EmbeddedTokenStore implements TokenStore {
  constructor(private readonly db: Db) {}

  async create(t: ApiTokenRecord): Promise<void> {
    this.db
      .prepare(
        'INSERT INTO api_tokens (id, account_id, secret_hash, label, created_at, expires_at, last_used_at, scopes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        t.id,
        t.accountId,
        t.secretHash,
        t.label,
        t.createdAt.getTime(),
        t.expiresAt?.getTime() ?? null,
        t.lastUsedAt?.getTime() ?? null,
        JSON.stringify(t.scopes),
      );
  }

  async get(id: string): Promise<ApiTokenRecord | undefined> {
    const row = this.db.prepare<[string], TokenRow>('SELECT * FROM api_tokens WHERE id = ?').get(id);
    return row && tokenFromRow(row);
  }

  async list(owners?: TokenOwners): Promise<ApiTokenRecord[]> {
    if (!owners)
      return this.db.prepare<[], TokenRow>('SELECT * FROM api_tokens ORDER BY created_at').all().map(tokenFromRow);
    // By the tokens' account index, for the accounts given or those the units' index finds.
    const accounts =
      'accounts' in owners
        ? 'SELECT value FROM json_each(@ids)'
        : `SELECT id FROM accounts WHERE ${UNIT_ID} IN (SELECT value FROM json_each(@ids))`;
    return this.db
      .prepare<{ ids: string }, TokenRow>(
        `SELECT * FROM api_tokens WHERE account_id IN (${accounts}) ORDER BY created_at`,
      )
      .all({ ids: JSON.stringify('accounts' in owners ? owners.accounts : owners.units) })
      .map(tokenFromRow);
  }

  async liveCounts(accountIds: readonly string[], now: Date): Promise<Map<string, number>> {
    if (accountIds.length === 0) return new Map();
    const rows = this.db
      .prepare<[string, number], { account_id: string; n: number }>(
        `SELECT account_id, COUNT(*) AS n FROM api_tokens
         WHERE account_id IN (SELECT value FROM json_each(?)) AND (expires_at IS NULL OR expires_at > ?)
         GROUP BY account_id`,
      )
      .all(JSON.stringify([...new Set(accountIds)]), now.getTime());
    return new Map(rows.map((r) => [r.account_id, r.n]));
  }

  async countLive(accountId: string, now: Date): Promise<number> {
    return this.db
      .prepare<[string, number], { n: number }>(
        'SELECT COUNT(*) AS n FROM api_tokens WHERE account_id = ? AND (expires_at IS NULL OR expires_at > ?)',
      )
      .get(accountId, now.getTime())!.n;
  }

  async revoke(id: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM api_tokens WHERE id = ?').run(id).changes > 0;
  }

  async revokeForAccount(accountId: string): Promise<number> {
    return this.db.prepare('DELETE FROM api_tokens WHERE account_id = ?').run(accountId).changes;
  }

  async touch(id: string, at: Date): Promise<void> {
    this.db.prepare('UPDATE api_tokens SET last_used_at = ? WHERE id = ?').run(at.getTime(), id);
  }

  async purgeExpired(before: Date): Promise<number> {
    return this.db.prepare('DELETE FROM api_tokens WHERE expires_at <= ?').run(before.getTime()).changes;
  }
}

interface LoginRow {
  key: string;
  failures: number;
  last_failure_at: number | null;
  known_until: number | null;
  expires_at: number;
}

const record = (r: LoginRow): LoginRecord => ({
  failures: r.failures,
  lastFailureAt: r.last_failure_at === null ? null : new Date(r.last_failure_at),
  knownUntil: r.known_until === null ? null : new Date(r.known_until),
  expiresAt: new Date(r.expires_at),
});

/** Login records in one table; every process on DATA_DIR throttles with the same rows. */
export class EmbeddedLoginAttempts implements LoginAttemptStore {
  private writes = 0;

  constructor(private readonly db: Db) {}

  async get(keys: string[], now: Date): Promise<Map<string, LoginRecord>> {
    const found = new Map<string, LoginRecord>();
    const read = this.db.prepare<[string, number], LoginRow>(
      'SELECT * FROM login_attempts WHERE key = ? AND expires_at > ?',
    );
    for (const key of keys) {
      const row = read.get(key, now.getTime());
      if (row) found.set(key, record(row));
    }
    return found;
  }

  async fail(key: string, at: Date, expiresAt: Date): Promise<LoginRecord> {
    this.sweep(at);
    const row = this.db
      .prepare<{ key: string; at: number; expires: number }, LoginRow>(
        `INSERT INTO login_attempts (key, failures, last_failure_at, known_until, expires_at) VALUES (@key, 1, @at, NULL, @expires)
         ON CONFLICT (key) DO UPDATE SET
           failures = CASE WHEN expires_at <= @at THEN 1 ELSE failures + 1 END,
           known_until = CASE WHEN expires_at <= @at THEN NULL ELSE known_until END,
           last_failure_at = @at,
           expires_at = MAX(CASE WHEN expires_at <= @at THEN 0 ELSE expires_at END, @expires)
         RETURNING *`,
      )
      .get({ key, at: at.getTime(), expires: expiresAt.getTime() });
    return record(row!);
  }

  async succeed(key: string, knownUntil: Date): Promise<void> {
    this.sweep(new Date());
    this.db
      .prepare(
        `INSERT INTO login_attempts (key, failures, last_failure_at, known_until, expires_at) VALUES (@key, 0, NULL, @until, @until)
         ON CONFLICT (key) DO UPDATE SET failures = 0, last_failure_at = NULL, known_until = @until, expires_at = @until`,
      )
      .run({ key, until: knownUntil.getTime() });
  }

  async all(now: Date): Promise<Map<string, LoginRecord>> {
    const rows = this.db
      .prepare<[number], LoginRow>('SELECT * FROM login_attempts WHERE expires_at > ?')
      .all(now.getTime());
    return new Map(rows.map((r) => [r.key, record(r)]));
  }

  async forget(prefixes: string[]): Promise<void> {
    // substr, not LIKE: keys hold any characters a username may have.
    const drop = this.db.prepare('DELETE FROM login_attempts WHERE substr(key, 1, length(@p)) = @p');
    this.db.transaction(() => prefixes.forEach((p) => drop.run({ p })))();
  }

  async purgeExpired(now: Date): Promise<number> {
    return this.db.prepare('DELETE FROM login_attempts WHERE expires_at <= ?').run(now.getTime()).changes;
  }

  // Expired records are dropped now and then, so the table holds only what is remembered.
  private sweep(now: Date): void {
    if (++this.writes % 100 === 0)
      this.db.prepare('DELETE FROM login_attempts WHERE expires_at <= ?').run(now.getTime());
  }
}

/** Counters in one table; every process on DATA_DIR counts in the same rows. */
export class EmbeddedRateCounts implements RateCounts {
  private hits = 0;

  constructor(private readonly db: Db) {}

  async hit(key: string, windowEnd: Date, by = 1): Promise<number> {
    // Windows that ended long before this one are dropped now and then, so the table stays small.
    // (Measured from the window asked for, not this machine's clock: the caller's clock decides.)
    if (++this.hits % 100 === 0)
      this.db.prepare('DELETE FROM rate_counts WHERE window_end < ?').run(windowEnd.getTime() - 3600_000);
    const row = this.db
      .prepare<{ key: string; end: number; by: number }, { hits: number }>(
        'INSERT INTO rate_counts (key, window_end, hits) VALUES (@key, @end, @by) ON CONFLICT (key, window_end) DO UPDATE SET hits = hits + @by RETURNING hits',
      )
      .get({ key, end: windowEnd.getTime(), by });
    return row!.hits;
  }

  async undo(key: string, windowEnd: Date): Promise<void> {
    this.db
      .prepare('UPDATE rate_counts SET hits = hits - 1 WHERE key = ? AND window_end = ? AND hits > 0')
      .run(key, windowEnd.getTime());
  }

  async reset(key: string): Promise<void> {
    this.db.prepare('DELETE FROM rate_counts WHERE key = ?').run(key);
  }

  async purgeEnded(before: Date): Promise<number> {
    return this.db.prepare('DELETE FROM rate_counts WHERE window_end < ?').run(before.getTime()).changes;
  }
}

export interface AccountRow {
  id: string;
  username: string;
  display_name: string | null;
  password_hash: string;
  role: Account['role'];
  unit: string;
  created_at: number;
  must_change_password: number;
  disabled: number;
  last_login_at: number | null;
}

export function accountFromRow(row: AccountRow): Account {
  return {
    id: row.id,
    username: row.username,
    displayName: row.display_name,
    passwordHash: row.password_hash,
    role: row.role,
    unit: JSON.parse(row.unit) as Unit,
    createdAt: new Date(row.created_at),
    mustChangePassword: row.must_change_password === 1,
    disabled: row.disabled === 1,
    lastLoginAt: dateOrNull(row.last_login_at),
  };
}
