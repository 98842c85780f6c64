import { randomBytes, randomUUID } from 'node:crypto';
import { MIN_PASSWORD_LENGTH, type AccountView, type Role, type Unit } from '../../shared/schemas.js';
import { AccountLockedError, ConflictError, LoginFailedError, NotFoundError, ValidationError } from '../errors.js';
import type { Account, AccountStore } from '../store/port.js';
import { hashPassword, UNMATCHABLE_HASH, verifyPassword } from './password.js';

export interface LoginPolicy {
  maxFailures: number;
  lockMs: number;
}

export interface NewAccountRequest {
  username: string;
  password: string;
  role: Role;
  unit: Unit;
  mustChangePassword?: boolean;
}

// Letters that show as nothing (U+3164 Hangul filler and the other default-ignorables) would
// make two usernames look alike.
const USERNAME = /^(?:(?!\p{Default_Ignorable_Code_Point})[\p{L}\p{N}._@-]){1,64}$/u;

export class AccountService {
  constructor(
    private readonly accounts: AccountStore,
    private readonly policy: LoginPolicy,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async create(req: NewAccountRequest): Promise<Account> {
    if (!USERNAME.test(req.username)) throw new ValidationError('A username is 1 to 64 letters, digits, ".", "_", "@" or "-".');
    checkPasswordRules(req.password);
    const account = {
      id: randomUUID(),
      username: req.username,
      passwordHash: await hashPassword(req.password),
      role: req.role,
      unit: req.unit,
      createdAt: this.clock(),
      mustChangePassword: req.mustChangePassword ?? false,
    };
    await this.accounts.create(account);
    return { ...account, failedLogins: 0, lockedUntil: null };
  }

  list(): Promise<Account[]> {
    return this.accounts.list();
  }

  get(id: string): Promise<Account | undefined> {
    return this.accounts.get(id);
  }

  async getByUsername(username: string): Promise<Account> {
    const account = await this.accounts.findByUsername(username);
    if (!account) throw new NotFoundError(`No account is named "${username}".`);
    return account;
  }

  /**
   * Checks a username and password. After `maxFailures` wrong passwords in a row the account
   * is locked for `lockMs`, even for the right password, which is what stops guessing.
   */
  async authenticate(username: string, password: string): Promise<Account> {
    const account = await this.accounts.findByUsername(username);
    const now = this.clock();
    if (account?.lockedUntil && account.lockedUntil > now) {
      throw new AccountLockedError(Math.ceil((account.lockedUntil.getTime() - now.getTime()) / 1000));
    }
    const ok = await verifyPassword(password, account?.passwordHash ?? UNMATCHABLE_HASH);
    if (!account) throw new LoginFailedError();
    if (!ok) {
      // A lock that ran out starts a fresh count.
      if (account.lockedUntil) await this.accounts.recordLoginSuccess(account.id);
      await this.accounts.recordLoginFailure(account.id, this.policy.maxFailures, new Date(now.getTime() + this.policy.lockMs));
      throw new LoginFailedError();
    }
    if (account.failedLogins > 0 || account.lockedUntil) await this.accounts.recordLoginSuccess(account.id);
    return account;
  }

  async changePassword(account: Account, currentPassword: string, newPassword: string): Promise<void> {
    // Checked like a login, so a stolen session cannot guess the password without limit.
    await this.authenticate(account.username, currentPassword);
    checkPasswordRules(newPassword);
    if (newPassword === currentPassword) throw new ValidationError('Choose a new password that differs from the current one.');
    await this.accounts.setPassword(account.id, await hashPassword(newPassword), false);
  }

  /** An administrator's reset: the account must choose its own password at next login. */
  async setPassword(account: Account, password: string): Promise<void> {
    checkPasswordRules(password);
    await this.accounts.setPassword(account.id, await hashPassword(password), true);
  }

  /**
   * On an empty store, creates the first administrator with a random one-time password, to
   * be changed at first login. Returns the password (shown once), or undefined if accounts exist.
   */
  async bootstrapAdmin(): Promise<{ username: string; password: string } | undefined> {
    if ((await this.accounts.count()) > 0) return undefined;
    const password = randomBytes(12).toString('base64url');
    try {
      await this.create({
        username: 'admin',
        password,
        role: 'admin',
        unit: { id: 'archive', geoType: 'city', city: 'Archive' },
        mustChangePassword: true,
      });
    } catch (err) {
      if (err instanceof ConflictError) return undefined; // another instance bootstrapped first
      throw err;
    }
    return { username: 'admin', password };
  }
}

function checkPasswordRules(password: string): void {
  if (Array.from(password).length < MIN_PASSWORD_LENGTH) throw new ValidationError(`A password has at least ${MIN_PASSWORD_LENGTH} characters.`);
}

export function accountView(account: Account): AccountView {
  return { id: account.id, username: account.username, role: account.role, unit: account.unit };
}
