import { Router, type Request, type Response } from 'express';
import { loginRequest, passwordChangeRequest, type SessionView } from '../../../shared/schemas.js';
import { ownDisplayNameRequest } from '../../../shared/accounts.js';
import { accountView, type AccountService } from '../../services/accounts.js';
import type { AuditService } from '../../services/audit.js';
import type { Principal, SessionService } from '../../services/sessions.js';
import type { UnitDirectory } from '../../services/unit-directory.js';
import type { Account, SessionRecord } from '../../store/accounts/port.js';
import { refuseCrossSite, requireAuth, SESSION_COOKIE, sessionCookieOptions } from '../auth.js';
import { parse } from '../validate.js';

export interface SessionRouteDeps {
  accounts: AccountService;
  directory: Pick<UnitDirectory, 'reachSubtree'>;
  audit: AuditService;
  sessions: SessionService;
  sessionTtlMs: number;
  /** The largest file the archive takes, told to the page so it refuses larger ones before reading them. */
  maxFileSize: number;
  /** REPORT_TIME_ZONE: the page shows times in it, as the exports do. */
  timeZone: string;
  /** WITHDRAW_DAYS and TRASH_DAYS, told to the page so its promises are the server's. */
  withdrawal: { withdrawDays: number; trashDays: number };
}

async function view(
  {
    directory,
    maxFileSize,
    timeZone,
    withdrawal,
  }: Pick<SessionRouteDeps, 'directory' | 'maxFileSize' | 'timeZone' | 'withdrawal'>,
  account: Account,
  session: SessionRecord | undefined,
): Promise<SessionView> {
  const { city, county, town } = account.unit;
  // A clerk reaches its own unit; an administrator the subtree of its unit, or everything.
  const reach =
    account.role === 'admin'
      ? ((await directory.reachSubtree(account)) ?? null)
      : { city, ...(county && { county }), ...(town && { town }) };
  return {
    account: accountView(account),
    csrfToken: session?.csrfToken ?? null,
    mustChangePassword: account.mustChangePassword,
    reach,
    maxFileSize,
    timeZone,
    withdrawDays: withdrawal.withdrawDays,
    trashDays: withdrawal.trashDays,
  };
}

/** `/api/session`: log in, who am I, log out, change password, set one's own display name. */
export function sessionRoutes(deps: SessionRouteDeps): Router {
  const router = Router();
  const startSession = async (req: Request, res: Response, account: Account) => {
    const { cookieValue, session } = await deps.sessions.open(account);
    res.cookie(SESSION_COOKIE, cookieValue, sessionCookieOptions(req, deps.sessionTtlMs));
    return view(deps, account, session);
  };

  router.post('/', refuseCrossSite, async (req, res) => {
    const { username, password } = parse(loginRequest, req.body, 'body');
    const address = req.ip ?? null;
    // Wrong passwords are counted, throttled and audited by the account service.
    const account = await deps.accounts.authenticate(username, password, address);
    // Recorded before the session exists: a login the log cannot hold does not happen.
    await deps.audit.record('login', account, { address });
    res.status(201).json(await startSession(req, res, account));
  });

  router.get('/', requireAuth(['clerk', 'admin'], { allowPendingPasswordChange: true }), async (req, res) => {
    const p = req.principal as Principal;
    res.json(await view(deps, p.account, p.session));
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
    // A wrong current password is throttled like a login: it is a guess like any other.
    const { tokensRevoked } = await deps.accounts.changePassword(p.account, body, req.ip ?? null);
    // Every session of the account has ended; a browser gets a fresh one.
    const account = (await deps.accounts.get(p.account.id))!;
    const answer = p.via === 'session' ? await startSession(req, res, account) : await view(deps, account, undefined);
    res.json({ ...answer, tokensRevoked });
  });

  // The owner names itself (an administrator may too, for any account in reach: PATCH /api/accounts/:id).
  router.put('/name', requireAuth(['clerk', 'admin']), async (req, res) => {
    const p = req.principal!;
    const { displayName } = parse(ownDisplayNameRequest, req.body, 'body');
    const account = await deps.accounts.setOwnDisplayName(p.account, displayName, req.ip ?? null);
    res.json(await view(deps, account, p.session));
  });

  return router;
}
