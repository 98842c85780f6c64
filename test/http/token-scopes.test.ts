import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { NewTokenView, TokenScope, TokenView } from '../../shared/accounts.js';
import type { AuditEventView } from '../../shared/schemas.js';
import { body, Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * What an API token may make: tokens and account changes need a scope given when the token was
 * made, a token made over a token stays within it, and an account holds a bounded number of
 * working tokens. Callers: anonymous; a clerk of 清州镇 (in 青县); the administrator of 青县; the
 * archive's top-level administrator; each over its browser session, a token without scope and a
 * token with the scope the endpoint needs.
 */
type Role = 'clerk' | 'county' | 'top';
type Way = 'session' | 'bare token' | 'scoped token';
const ROLES: Role[] = ['clerk', 'county', 'top'];
const WAYS: Way[] = ['session', 'bare token', 'scoped token'];
const QINGXIAN = '130922';
const QINGZHOU = '130922100';
const DAY = 86_400_000;
const PER_ACCOUNT = 4;

for (const target of storeTargets) {
  describe(`what an API token may make (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    const T0 = Date.parse('2026-11-25T08:00:00Z');
    let now = T0;
    let sessions: Record<Role, Client>;
    const username: Record<Role, string> = { clerk: 'clerk', county: 'qing', top: 'top' };

    before(async () => {
      server = await TestServer.start(target, { clock: () => new Date(now), tokensPerAccount: PER_ACCOUNT });
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('top', 'admin', 'archive');
      await server.addAccountIn('qing', 'admin', QINGXIAN);
      await server.addAccountIn('clerk', 'clerk', QINGZHOU);
      await server.addAccountIn('target', 'clerk', QINGZHOU);
    });
    // Fresh sessions for each test: a login at a later hour (below) ends the sessions expired by then.
    beforeEach(async () => {
      sessions = {
        clerk: await server.login('clerk'),
        county: await server.login('qing'),
        top: await server.login('top'),
      };
    });
    after(() => server.close());
    // The clock goes back after each test that moved it (the sessions were opened then).
    afterEach(() => {
      now = T0;
    });

    const account = (role: Role) => server.archive.services.accounts.getByUsername(username[role]);
    const revokeAll = async () => {
      for (const t of await server.archive.services.tokens.list()) await server.archive.services.tokens.revoke(t.id);
    };
    /** A caller of this role over this way (tokens are made fresh, and the account's tokens cleared first, so the cap stays out of the way). */
    const caller = async (role: Role, way: Way, scope: TokenScope): Promise<Client> => {
      if (way === 'session') return sessions[role];
      await revokeAll();
      // A clerk's token cannot hold "accounts": its scoped token holds what a clerk may have.
      const scopes: TokenScope[] = way === 'bare token' ? [] : role === 'clerk' ? ['tokens'] : [scope];
      return server.tokenClient(await account(role), scopes);
    };
    const refused = async (res: Response, scope: TokenScope) => {
      const answer = await body<{ error: string; message: string; details: { scope: string } }>(res, 403);
      assert.equal(answer.error, 'token_scope_missing');
      assert.equal(answer.details.scope, scope);
      assert.match(answer.message, new RegExp(`"${scope}" scope`));
    };

    it('POST /api/tokens: anonymous 401; every role over its session or a token with "tokens"; a token without it 403', async () => {
      await body(await server.anonymous().json('/api/tokens', 'POST', { label: 'x' }), 401);
      for (const role of ROLES)
        for (const way of WAYS) {
          const c = await caller(role, way, 'tokens');
          const res = await c.json('/api/tokens', 'POST', { label: `${role} ${way}`, expiresInDays: null });
          if (way === 'bare token') await refused(res, 'tokens');
          else {
            const made = await body<NewTokenView>(res, 201);
            assert.equal(made.view.username, username[role]);
          }
        }
      await revokeAll();
    });

    /** The account the changes are made to (not a caller: a password reset ends its sessions). */
    const target_ = async () => (await server.archive.services.accounts.getByUsername('target')).id;
    const ACCOUNT_CHANGES: Array<[string, (c: Client) => Promise<Response>, number]> = [
      [
        'POST /api/accounts',
        async (c) =>
          c.json('/api/accounts', 'POST', {
            username: `new-${Math.random().toString(36).slice(2, 8)}`,
            role: 'clerk',
            unitId: QINGZHOU,
          }),
        201,
      ],
      [
        'POST /api/accounts/import',
        async (c) =>
          c.fetch('/api/accounts/import', {
            method: 'POST',
            headers: { 'content-type': 'text/csv' },
            body: `imp-${Math.random().toString(36).slice(2, 8)},clerk,${QINGZHOU}\n`,
          }),
        201,
      ],
      // The kept answers of imports hold one-time passwords: account administration too.
      ['GET /api/accounts/imports', async (c) => c.fetch('/api/accounts/imports'), 200],
      [
        'DELETE /api/accounts/imports/:id (none kept under that id)',
        async (c) => c.fetch('/api/accounts/imports/no-such-import', { method: 'DELETE' }),
        404,
      ],
      [
        'PATCH /api/accounts/:id',
        async (c) => c.json(`/api/accounts/${await target_()}`, 'PATCH', { displayName: '张三' }),
        200,
      ],
      [
        'POST /api/accounts/:id/password-reset',
        async (c) => c.fetch(`/api/accounts/${await target_()}/password-reset`, { method: 'POST' }),
        200,
      ],
      [
        'POST /api/accounts/:id/unblock',
        async (c) => c.fetch(`/api/accounts/${await target_()}/unblock`, { method: 'POST' }),
        200,
      ],
    ];

    for (const [name, call, ok] of ACCOUNT_CHANGES)
      it(`${name}: anonymous 401, clerks 403; administrators over a session or a token with "accounts", not a token without`, async () => {
        await body(await call(server.anonymous()), 401);
        for (const way of WAYS) {
          const res = await call(await caller('clerk', way, 'accounts'));
          // A clerk is refused for its role, whatever its token holds.
          assert.equal((await body<{ error: string }>(res, 403)).error, 'forbidden');
        }
        for (const role of ['county', 'top'] as const)
          for (const way of WAYS) {
            const res = await call(await caller(role, way, 'accounts'));
            if (way === 'bare token') await refused(res, 'accounts');
            else assert.equal(res.status, ok, `${role} over its ${way}: ${await res.clone().text()}`);
          }
        await revokeAll();
      });

    it('a token with "tokens" but not "accounts" may not change accounts, and one with "accounts" may not make tokens', async () => {
      await revokeAll();
      const tokensOnly = await server.tokenClient(await account('top'), ['tokens']);
      await refused(
        await tokensOnly.fetch(`/api/accounts/${await target_()}/password-reset`, { method: 'POST' }),
        'accounts',
      );
      const accountsOnly = await server.tokenClient(await account('top'), ['accounts']);
      await refused(await accountsOnly.json('/api/tokens', 'POST', { label: 'x' }), 'tokens');
      // Reading stays open to every token: the list of accounts, the tokens, the session.
      const bare = await server.tokenClient(await account('top'));
      await body(await bare.fetch('/api/accounts'), 200);
      await body(await bare.fetch('/api/tokens'), 200);
      await revokeAll();
    });

    it('a token made over a token expires no later than it: a never-expiring or longer one is refused with what to ask for', async () => {
      await revokeAll();
      const top = await account('top');
      const { token } = await server.archive.services.tokens.create(top, { expiresInDays: 30, scopes: ['tokens'] });
      const script = new Client(server.url, { bearer: token });
      now += 10 * DAY + 3_600_000;
      for (const expiresInDays of [null, 365, 20]) {
        const answer = await body<{ message: string; details: { field: string } }>(
          await script.json('/api/tokens', 'POST', { label: 'child', expiresInDays }),
          400,
        );
        assert.equal(answer.details.field, 'expiresInDays');
        assert.match(answer.message, /cannot outlive it/);
        assert.match(answer.message, /at most 19 day/);
      }
      // Without "expiresInDays" the default (365 days) is longer too.
      await body(await script.json('/api/tokens', 'POST', { label: 'child' }), 400);
      const child = await body<NewTokenView>(
        await script.json('/api/tokens', 'POST', { label: 'child', expiresInDays: 19, scopes: ['tokens'] }),
        201,
      );
      assert.deepEqual(child.view.scopes, ['tokens']);
      // The child may make tokens too, within itself (and so within its parent).
      // An hour on, 19 days would end within the parent but after the child: refused.
      now += 3_600_000;
      const grandchild = new Client(server.url, { bearer: child.token });
      await body(await grandchild.json('/api/tokens', 'POST', { expiresInDays: 19 }), 400);
      await body(await grandchild.json('/api/tokens', 'POST', { expiresInDays: 18 }), 201);
      // A token about to end cannot make one at all, and says to use a browser session.
      now += 19 * DAY;
      const last = await body<{ message: string }>(await script.json('/api/tokens', 'POST', { expiresInDays: 1 }), 400);
      assert.match(last.message, /browser session/);
      // A session may still make a token that never expires.
      await body(await (await server.login('top')).json('/api/tokens', 'POST', { expiresInDays: null }), 201);
      await revokeAll();
    });

    it('a token made over a token gets no scope its parent lacks', async () => {
      await revokeAll();
      const script = await server.tokenClient(await account('top'), ['tokens']);
      const answer = await body<{ error: string; message: string }>(
        await script.json('/api/tokens', 'POST', { expiresInDays: null, scopes: ['accounts'] }),
        403,
      );
      assert.equal(answer.error, 'token_scope_missing');
      assert.match(answer.message, /lacks "accounts"/);
      const both = await server.tokenClient(await account('top'), ['tokens', 'accounts']);
      await body(await both.json('/api/tokens', 'POST', { expiresInDays: null, scopes: ['accounts', 'tokens'] }), 201);
      await revokeAll();
    });

    it('only administrators’ tokens may have the "accounts" scope; scopes are named once, from the list', async () => {
      await revokeAll();
      const refusedClerk = await body<{ details: { field: string } }>(
        await sessions.clerk.json('/api/tokens', 'POST', { scopes: ['accounts'] }),
        400,
      );
      assert.equal(refusedClerk.details.field, 'scopes');
      await body(await sessions.clerk.json('/api/tokens', 'POST', { scopes: ['tokens'] }), 201);
      for (const scopes of [['tokens', 'tokens'], ['everything'], 'tokens'])
        await body(await sessions.top.json('/api/tokens', 'POST', { scopes }), 400);
      await body(await sessions.county.json('/api/tokens', 'POST', { scopes: ['accounts'] }), 201);
      await revokeAll();
    });

    it('lists each token with its scopes, and the audit log says which scopes a token was made with, and over which token', async () => {
      await revokeAll();
      const made = await body<NewTokenView>(
        await sessions.top.json('/api/tokens', 'POST', { label: '导入脚本', scopes: ['accounts', 'tokens'] }),
        201,
      );
      assert.deepEqual(made.view.scopes, ['accounts', 'tokens']);
      const script = new Client(server.url, { bearer: made.token });
      now += 60_000; // the newest first
      const child = await body<NewTokenView>(
        await script.json('/api/tokens', 'POST', { label: 'child', expiresInDays: 30 }),
        201,
      );
      const mine = await body<{ items: TokenView[] }>(await sessions.top.fetch('/api/tokens'), 200);
      assert.deepEqual(
        mine.items.map((t) => [t.label, t.scopes]),
        [
          ['child', []],
          ['导入脚本', ['accounts', 'tokens']],
        ],
      );
      const events = await body<{ items: AuditEventView[] }>(
        await sessions.top.fetch('/api/audit?action=token_created&limit=5'),
        200,
      );
      const detail = (id: string) =>
        events.items.find((e) => e.note?.code === 'token_created' && e.note.tokenId === id)?.detail ?? '';
      assert.match(detail(made.view.id), /scopes: accounts, tokens/);
      assert.match(detail(child.view.id), new RegExp(`no scope, made with token ${made.view.id}`));
      await revokeAll();
    });

    it(`an account holds at most ${PER_ACCOUNT} working tokens: the next is refused until one is revoked or expires`, async () => {
      await revokeAll();
      const made: string[] = [];
      for (let i = 0; i < PER_ACCOUNT - 1; i++)
        made.push(
          (await body<NewTokenView>(await sessions.clerk.json('/api/tokens', 'POST', { expiresInDays: null }), 201))
            .view.id,
        );
      made.push(
        (await body<NewTokenView>(await sessions.clerk.json('/api/tokens', 'POST', { expiresInDays: 1 }), 201)).view.id,
      );
      const full = await body<{ error: string; message: string; details: { reason: string } }>(
        await sessions.clerk.json('/api/tokens', 'POST', { expiresInDays: null }),
        409,
      );
      assert.equal(full.details.reason, 'too_many_tokens');
      assert.match(full.message, new RegExp(`at most ${PER_ACCOUNT}\\). Revoke`));
      // Another account's tokens are its own count.
      await body(await sessions.top.json('/api/tokens', 'POST', {}), 201);
      await body(await sessions.clerk.fetch(`/api/tokens/${made[0]}`, { method: 'DELETE' }), 204);
      await body(await sessions.clerk.json('/api/tokens', 'POST', { expiresInDays: null }), 201);
      await body(await sessions.clerk.json('/api/tokens', 'POST', { expiresInDays: null }), 409);
      // An expired token no longer counts.
      now += DAY;
      const later = await server.login('clerk');
      await body(await later.json('/api/tokens', 'POST', { expiresInDays: null }), 201);
      await body(await later.json('/api/tokens', 'POST', { expiresInDays: null }), 409);
      await revokeAll();
    });
  });
}
