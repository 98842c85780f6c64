import { ConflictError } from '../../errors.js';
import type { Account, AccountStore, ApiTokenRecord, ClaimRecord, ClaimStore, NewAccount, SessionRecord, SessionStore, TokenStore } from '../port.js';
import type { Db } from './database.js';
import { accountFromRow, type AccountRow } from './rows.js';

export class EmbeddedAccountStore implements AccountStore {
  constructor(private readonly db: Db) {}

  async create(a: NewAccount): Promise<void> {
    try {
      this.db
        .prepare(
          `INSERT INTO accounts (id, username, password_hash, role, unit, created_at, must_change_password)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(a.id, a.username, a.passwordHash, a.role, JSON.stringify(a.unit), a.createdAt.getTime(), a.mustChangePassword ? 1 : 0);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new ConflictError(`The username "${a.username}" is taken.`);
      throw err;
    }
  }

  async get(id: string): Promise<Account | undefined> {
    const row = this.db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?').get(id);
    return row && accountFromRow(row);
  }

  async findByUsername(username: string): Promise<Account | undefined> {
    const row = this.db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE username = ?').get(username);
    return row && accountFromRow(row);
  }

  async list(): Promise<Account[]> {
    return this.db.prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY username').all().map(accountFromRow);
  }

  async count(): Promise<number> {
    return this.db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM accounts').get()!.n;
  }

  async setPassword(id: string, passwordHash: string, mustChangePassword: boolean): Promise<void> {
    this.db
      .prepare('UPDATE accounts SET password_hash = ?, must_change_password = ? WHERE id = ?')
      .run(passwordHash, mustChangePassword ? 1 : 0, id);
  }
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
    const row = this.db.prepare<[string, number], SessionRow>('SELECT * FROM sessions WHERE id_hash = ? AND expires_at > ?').get(idHash, now.getTime());
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
}

const tokenFromRow = (row: TokenRow): ApiTokenRecord => ({
  id: row.id,
  accountId: row.account_id,
  secretHash: row.secret_hash,
  label: row.label,
  createdAt: new Date(row.created_at),
});

export class EmbeddedTokenStore implements TokenStore {
  constructor(private readonly db: Db) {}

  async create(t: ApiTokenRecord): Promise<void> {
    this.db
      .prepare('INSERT INTO api_tokens (id, account_id, secret_hash, label, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(t.id, t.accountId, t.secretHash, t.label, t.createdAt.getTime());
  }

  async get(id: string): Promise<ApiTokenRecord | undefined> {
    const row = this.db.prepare<[string], TokenRow>('SELECT * FROM api_tokens WHERE id = ?').get(id);
    return row && tokenFromRow(row);
  }

  async list(): Promise<ApiTokenRecord[]> {
    return this.db.prepare<[], TokenRow>('SELECT * FROM api_tokens ORDER BY created_at').all().map(tokenFromRow);
  }

  async revoke(id: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM api_tokens WHERE id = ?').run(id).changes > 0;
  }

  async revokeForAccount(accountId: string): Promise<number> {
    return this.db.prepare('DELETE FROM api_tokens WHERE account_id = ?').run(accountId).changes;
  }
}

interface ClaimRow {
  id: string;
  account_id: string;
  file_id: string;
  file_name: string;
  content_type: string;
  ranges: string;
  expected: string;
  expires_at: number;
}

export class EmbeddedClaimStore implements ClaimStore {
  private readonly takeStatement;

  constructor(private readonly db: Db) {
    this.takeStatement = db.prepare<[string], ClaimRow>('DELETE FROM claims WHERE id = ? RETURNING *');
  }

  async create(c: ClaimRecord): Promise<void> {
    this.db
      .prepare('INSERT INTO claims (id, account_id, file_id, file_name, content_type, ranges, expected, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(c.id, c.accountId, c.fileId, c.fileName, c.contentType, JSON.stringify(c.ranges), JSON.stringify(c.expected), c.expiresAt.getTime());
  }

  async take(id: string): Promise<ClaimRecord | undefined> {
    const row = this.takeStatement.get(id);
    return (
      row && {
        id: row.id,
        accountId: row.account_id,
        fileId: row.file_id,
        fileName: row.file_name,
        contentType: row.content_type,
        ranges: JSON.parse(row.ranges) as ClaimRecord['ranges'],
        expected: JSON.parse(row.expected) as string[],
        expiresAt: new Date(row.expires_at),
      }
    );
  }

  async countOutstanding(accountId: string, now: Date): Promise<number> {
    return this.db.prepare<[string, number], { n: number }>('SELECT COUNT(*) AS n FROM claims WHERE account_id = ? AND expires_at > ?').get(accountId, now.getTime())!.n;
  }

  async purgeExpired(now: Date): Promise<void> {
    this.db.prepare('DELETE FROM claims WHERE expires_at <= ?').run(now.getTime());
  }
}
