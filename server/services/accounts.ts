import { randomBytes, randomUUID } from 'node:crypto';
import type { AccountView, PasswordChangeRequest, Role, Unit } from '../../shared/schemas.js';
import { displayNameField } from '../../shared/accounts.js';
import { cleanText } from '../../shared/file-name.js';
import {
  AccountDisabledError,
  ConflictError,
  LoginFailedError,
  LoginThrottledError,
  NotFoundError,
  ValidationError,
} from '../errors.js';
import {
  usernameKey,
  type Account,
  type AccountStore,
  type SessionStore,
  type TokenStore,
} from '../store/accounts/port.js';
import type { AuditService } from './audit.js';
import type { FailedLoginLog } from './failed-logins.js';
import type { LoginThrottlePolicy } from '../limits.js';
import type { LoginThrottle } from './login-throttle.js';
import type { PasswordHashing } from './password-hashing.js';
import { checkPasswordPolicy } from './password-policy.js';
import { ARCHIVE_UNIT } from './unit-directory.js';
import { hashPassword, unmatchableHash, verifyPassword } from './password.js';

export interface AccountServiceDeps {
  accounts: AccountStore;
  sessions: Pick<SessionStore, 'deleteForAccount'>;
  tokens: Pick<TokenStore, 'revokeForAccount'>;
  throttle: LoginThrottle;
  throttlePolicy: Pick<LoginThrottlePolicy, 'accountFailures' | 'addressFailures'>;
  /** The bound on the password checks of logins. */
  hashing: PasswordHashing;
  failedLogins: Pick<FailedLoginLog, 'failed'>;
  audit: Pick<AuditService, 'record'>;
  clock: () => Date;
  /** scrypt's N for passwords (password.ts); the archive's own unless given (tests give a cheaper one). */
  passwordCost?: number;
}

export interface NewAccountRequest {
  username: string;
  /** The person's name (姓名); checked by displayNameField's rule. Absent, empty or null: none. */
  displayName?: string | null;
  password: string;
  role: Role;
  unit: Unit;
  mustChangePassword?: boolean;
}

// Letters that show as nothing (U+3164 Hangul filler and the other default-ignorables) would
// make two usernames look alike.
const USERNAME = /^(?:(?!\p{Default_Ignorable_Code_Point})[\p{L}\p{N}._@-]){1,64}$/u;
export const USERNAME_RULE = 'a username is 1 to 64 letters, digits, ".", "_", "@" or "-"';

export function validUsername(username: string): boolean {
  return USERNAME.test(username);
}

/**
 * A display name as given by any way in (the API, a CSV row, the archive command), trimmed and
 * checked: null for none; a name against the rule is refused, naming the field.
 */
export function checkedDisplayName(value: string | null | undefined): string | null {
  const parsed = displayNameField.safeParse(value ?? null);
  if (!parsed.success)
    throw new ValidationError(`Invalid displayName: ${parsed.error.issues[0]!.message}.`, { field: 'displayName' });
  return parsed.data;
}

export class AccountService {
  /** Verified against when a username is unknown, at the cost of a real one. */
  private readonly unmatchable: string;

  constructor(private readonly deps: AccountServiceDeps) {
    this.unmatchable = unmatchableHash(deps.passwordCost);
  }

  async create(req: NewAccountRequest): Promise<Account> {
    if (!validUsername(req.username))
      throw new ValidationError(`Choose another username: ${USERNAME_RULE}.`, { field: 'username' });
    const displayName = checkedDisplayName(req.displayName);
    checkPasswordPolicy(req.password, req.username);
    const account = {
      id: randomUUID(),
      username: req.username,
      displayName,
      passwordHash: await hashPassword(req.password, this.deps.passwordCost),
      role: req.role,
      unit: req.unit,
      createdAt: this.deps.clock(),
      mustChangePassword: req.mustChangePassword ?? false,
      disabled: false,
      lastLoginAt: null,
    };
    await this.deps.accounts.create(account);
    return account;
  }

  list(): Promise<Account[]> {
    return this.deps.accounts.list();
  }

  get(id: string): Promise<Account | undefined> {
    return this.deps.accounts.get(id);
  }

  async getByUsername(username: string): Promise<Account> {
    const account = await this.deps.accounts.findByUsername(username);
    if (!account) throw new NotFoundError(`No account is named "${username}".`);
    return account;
  }

  /**
   * Checks a username and password, through the login throttle (login-throttle.ts): a try that
   * must wait is refused before the password is looked at; the others wait their turn for the
   * password check (password-hashing.ts: a try from an address the account logs in from goes
   * first; too many waiting, 503 login_busy); a wrong password is counted and audited
   * (failed-logins.ts). Unknown usernames cost the same hashing, take the same lane and get the
   * same answers as existing ones.
   */
  async authenticate(
    username: string,
    password: string,
    address: string | null,
    purpose: 'login' | 'password change' = 'login',
  ): Promise<Account> {
    const wait = await this.deps.throttle.wait(username, address);
    if (wait.ms > 0) throw new LoginThrottledError(Math.ceil(wait.ms / 1000));
    const claimant = { address, ...(wait.known && { knownPair: `${usernameKey(username)}\n${address ?? '-'}` }) };
    // Looked up in its turn: a try refused as busy costs no more than the throttle's read.
    const { account, ok } = await this.deps.hashing.run(claimant, async () => {
      const account = await this.deps.accounts.findByUsername(username);
      return {
        account,
        ok: await verifyPassword(password, account?.passwordHash ?? this.unmatchable, this.deps.passwordCost),
      };
    });
    if (account && ok) {
      await this.deps.throttle.succeeded(username, address);
      // Said only to whoever knows the password, so a guesser learns nothing of the account.
      if (account.disabled) throw new AccountDisabledError();
      if (purpose === 'login') await this.deps.accounts.recordLogin(account.id, this.deps.clock());
      return account;
    }
    const crossed = await this.deps.throttle.failed(username, address);
    const actor = account ?? { attemptedUserName: cleanText(username).slice(0, 200) || '(blank)' };
    await this.deps.failedLogins.failed(actor, address, {
      code: purpose === 'login' ? 'wrong_password' : 'wrong_current_password',
    });
    const { accountFailures, addressFailures } = this.deps.throttlePolicy;
    for (const scope of crossed) {
      const note =
        scope === 'account'
          ? ({ code: 'throttled_account', failures: accountFailures } as const)
          : ({ code: 'throttled_address', failures: addressFailures } as const);
      await this.deps.audit.record('login_throttled', actor, { address, note });
    }
    throw new LoginFailedError();
  }

  /**
   * A password changed by its owner: checked like a login, so a stolen session cannot guess it
   * without limit. Every session of the account ends (the caller starts a fresh one); API tokens
   * are revoked too when asked, as a password changed because it leaked may have leaked with them.
   */
  async changePassword(
    account: Account,
    change: PasswordChangeRequest,
    address: string | null,
  ): Promise<{ tokensRevoked: number }> {
    await this.authenticate(account.username, change.currentPassword, address, 'password change');
    checkPasswordPolicy(change.newPassword, account.username);
    if (change.newPassword === change.currentPassword)
      throw new ValidationError('Choose a new password that differs from the current one.', { field: 'newPassword' });
    await this.deps.accounts.setPassword(
      account.id,
      await hashPassword(change.newPassword, this.deps.passwordCost),
      false,
    );
    await this.deps.sessions.deleteForAccount(account.id);
    const tokensRevoked = change.revokeTokens ? await this.deps.tokens.revokeForAccount(account.id) : 0;
    await this.deps.audit.record('password_changed', account, {
      address,
      note: { code: 'password_changed', tokensRevoked: change.revokeTokens ? tokensRevoked : null },
    });
    return { tokensRevoked };
  }

  /**
   * The owner's own display name (PUT /api/session/name): changed, and audited as the account
   * changing itself (account_updated). Returns the account as it is now.
   */
  async setOwnDisplayName(account: Account, displayName: string | null, address: string | null): Promise<Account> {
    const to = checkedDisplayName(displayName);
    if (to === account.displayName) return account;
    await this.deps.accounts.update(account.id, { displayName: to });
    await this.deps.audit.record('account_updated', account, {
      address,
      note: {
        code: 'account_updated',
        username: account.username,
        accountId: account.id,
        name: { from: account.displayName, to },
      },
    });
    return { ...account, displayName: to };
  }

  /**
   * An administrator's reset: the account must choose its own password at next login, and
   * whoever held its sessions or API tokens loses them.
   */
  async resetPassword(account: Account, password: string): Promise<{ tokensRevoked: number }> {
    checkPasswordPolicy(password, account.username);
    await this.deps.accounts.setPassword(account.id, await hashPassword(password, this.deps.passwordCost), true);
    await this.deps.sessions.deleteForAccount(account.id);
    return { tokensRevoked: await this.deps.tokens.revokeForAccount(account.id) };
  }

  /**
   * On an empty store, creates the first administrator with a random one-time password, to
   * be changed at first login. Returns the password (shown once), or undefined if accounts exist.
   */
  async bootstrapAdmin(): Promise<{ username: string; password: string } | undefined> {
    if ((await this.deps.accounts.count()) > 0) return undefined;
    // Random, so never common; in the rare draw that spells the username, draw again.
    let password: string;
    do password = randomBytes(12).toString('base64url');
    while (password.toLowerCase().includes('admin'));
    try {
      await this.create({
        username: 'admin',
        password,
        role: 'admin',
        unit: ARCHIVE_UNIT,
        mustChangePassword: true,
      });
    } catch (err) {
      if (err instanceof ConflictError) return undefined; // another instance bootstrapped first
      throw err;
    }
    return { username: 'admin', password };
  }
}

export function accountView(account: Account): AccountView {
  const { id, username, displayName, role, unit } = account;
  return { id, username, displayName, role, unit };
}
