import type { CookieOptions, Request, RequestHandler } from 'express';
import type { TokenScope } from '../../shared/accounts.js';
import type { Role } from '../../shared/schemas.js';
import { CrossSiteError, ForbiddenError, TokenScopeError, UnauthenticatedError } from '../errors.js';
import { SessionService, type TokenService } from '../services/sessions.js';
import './request.js';

export const SESSION_COOKIE = 'archive_session';
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Finds who is calling: an API token (`Authorization: Bearer`) wins over the session cookie;
 * a bad token is refused outright rather than falling back to the cookie.
 */
export function authenticate(sessions: SessionService, tokens: TokenService): RequestHandler {
  return async (req, _res, next) => {
    const authorization = req.headers.authorization;
    if (authorization !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (!match) throw new UnauthenticatedError('The Authorization header must be "Bearer <token>".');
      req.principal = await tokens.resolve(match[1]!);
      return next();
    }
    // cookie-parser turns "j:…" values into JSON; a session cookie is only ever a string.
    const cookie: unknown = (req.cookies as Record<string, unknown> | undefined)?.[SESSION_COOKIE];
    if (typeof cookie === 'string' && cookie !== '') req.principal = await sessions.resolve(cookie);
    next();
  };
}

/**
 * Lets only authenticated callers of the given roles through. Cookie-authenticated
 * state-changing requests must carry the session's CSRF token.
 */
export function requireAuth(
  roles: readonly Role[] = ['clerk', 'admin'],
  options: { allowPendingPasswordChange?: boolean } = {},
): RequestHandler {
  return (req, _res, next) => {
    const principal = req.principal;
    if (!principal) throw new UnauthenticatedError();
    if (!SAFE_METHODS.has(req.method)) SessionService.checkCsrf(principal, req.get(CSRF_HEADER));
    if (principal.account.mustChangePassword && !options.allowPendingPasswordChange) {
      throw new ForbiddenError('Change your one-time password first (PUT /api/session/password).');
    }
    if (!roles.includes(principal.account.role))
      throw new ForbiddenError(`Only ${roles.join(' or ')} accounts may do this.`);
    next();
  };
}

/**
 * Over an API token, lets through only a token made with `scope` (a browser session needs none):
 * making tokens and administering accounts are not for every script that uploads. After requireAuth.
 */
export function requireScope(scope: TokenScope): RequestHandler {
  return (req, _res, next) => {
    const principal = req.principal!;
    if (principal.via === 'token' && !principal.token?.scopes.includes(scope)) throw new TokenScopeError(scope);
    next();
  };
}

/**
 * A login has no session to carry a CSRF token yet, so a login posted from another site is
 * refused by its Origin (browsers always send Origin on cross-origin POSTs).
 */
export const refuseCrossSite: RequestHandler = (req, _res, next) => {
  if (req.get('sec-fetch-site') === 'cross-site') throw new CrossSiteError();
  const origin = req.get('origin');
  if (origin !== undefined && origin !== `${req.protocol}://${req.get('host')}`) throw new CrossSiteError();
  next();
};

export function sessionCookieOptions(req: Request, maxAgeMs: number): CookieOptions {
  return { httpOnly: true, sameSite: 'lax', secure: req.secure, path: '/', maxAge: maxAgeMs };
}
