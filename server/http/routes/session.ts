import { Router, type Request, type Response } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { cleanFileName } from '../../../shared/file-name.js';
import { loginRequest, passwordChangeRequest, type SessionView } from '../../../shared/schemas.js';
import { ArchiveError, RateLimitedError } from '../../errors.js';
import { accountView, type AccountService } from '../../services/accounts.js';
import type { AuditService } from '../../services/audit.js';
import type { Principal, SessionService } from '../../services/sessions.js';
import type { Account, SessionRecord } from '../../store/port.js';
import { refuseCrossSite, requireAuth, SESSION_COOKIE, sessionCookieOptions } from '../auth.js';
import { parse } from '../validate.js';

export interface SessionRouteDeps {
  accounts: AccountService;
  audit: AuditService;
  sessions: SessionService;
  sessionTtlMs: number;
  /** Logins allowed per client address per 15 minutes (on top of the per-account lockout). */
  loginRateLimit: number;
  /** Where the attempts are counted (the store, so every instance counts the same). */
  loginAttempts: Store;
}

function view(account: Account, session: SessionRecord | undefined): SessionView {
  return { account: accountView(account), csrfToken: session?.csrfToken ?? null, mustChangePassword: account.mustChangePassword };
}

/** `/api/session`: log in, who am I, log out, change password. */
export function sessionRoutes(deps: SessionRouteDeps): Router {
  const router = Router();
  const windowMs = 15 * 60_000;
  const loginLimiter = rateLimit({
    windowMs,
    limit: deps.loginRateLimit,
    standardHeaders: 'draft-7',
    store: deps.loginAttempts,
    legacyHeaders: false,
    handler: (_req, _res, next) => next(new RateLimitedError(Math.ceil(windowMs / 1000))),
  });

  const startSession = async (req: Request, res: Response, account: Account) => {
    const { cookieValue, session } = await deps.sessions.open(account);
    res.cookie(SESSION_COOKIE, cookieValue, sessionCookieOptions(req, deps.sessionTtlMs));
    return view(account, session);
  };

  /** A wrong password or a locked account, by the account's name (cleaned: whatever was typed is kept as text only). */
  const recordLoginFailure = async (err: unknown, username: string, address: string | null, detail: string) => {
    if (!(err instanceof ArchiveError && (err.code === 'login_failed' || err.code === 'account_locked'))) return;
    const known = await deps.accounts.getByUsername(username).catch(() => undefined);
    await deps.audit.record('login_failed', known ?? { attemptedUserName: cleanFileName(username) }, { address, detail });
  };

  router.post('/', refuseCrossSite, loginLimiter, async (req, res) => {
    const { username, password } = parse(loginRequest, req.body, 'body');
    const address = req.ip ?? null;
    let account: Account;
    try {
      account = await deps.accounts.authenticate(username, password);
    } catch (err) {
      await recordLoginFailure(err, username, address, err instanceof ArchiveError ? err.code : '');
      throw err;
    }
    // Recorded before the session exists: a login the log cannot hold does not happen.
    await deps.audit.record('login', account, { address });
    res.status(201).json(await startSession(req, res, account));
  });

  router.get('/', requireAuth(['clerk', 'admin'], { allowPendingPasswordChange: true }), (req, res) => {
    const p = req.principal as Principal;
    res.json(view(p.account, p.session));
  });

  router.delete('/', requireAuth(['clerk', 'admin'], { allowPendingPasswordChange: true }), async (req, res) => {
    // An API token has no session to end.
    if (req.principal!.session) await deps.audit.record('logout', req.principal!.account, { address: req.ip ?? null });
    await deps.sessions.close(req.principal!);
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    res.status(204).end();
  });

  router.put('/password', requireAuth(['clerk', 'admin'], { allowPendingPasswordChange: true }), async (req, res) => {
    const p = req.principal!;
    const body = parse(passwordChangeRequest, req.body, 'body');
    try {
      await deps.accounts.changePassword(p.account, body.currentPassword, body.newPassword);
    } catch (err) {
      // A wrong current password counts towards the lock-out, and is a guess like any other.
      await recordLoginFailure(err, p.account.username, req.ip ?? null, `password change: ${err instanceof ArchiveError ? err.code : ''}`);
      throw err;
    }
    // Every other session of the account ends; a browser gets a fresh one.
    await deps.sessions.closeAll(p.account.id);
    await deps.audit.record('password_changed', p.account, { address: req.ip ?? null });
    const account = (await deps.accounts.get(p.account.id))!;
    if (p.via === 'session') res.json(await startSession(req, res, account));
    else res.json(view(account, undefined));
  });

  return router;
}
