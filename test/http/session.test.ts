import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomContent } from '../support/content.js';
import { Client, PASSWORD, TestServer } from '../support/server.js';
import { embeddedTarget, storeTargets } from '../support/stores.js';

const login = (server: TestServer, username: string, password: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ username, password }),
  });

for (const target of storeTargets) {
  describe(`logging in and staying safe (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    const now = Date.now();
    before(async () => {
      server = await TestServer.start(target, { clock: () => new Date(now) });
      await server.addAccount('clerk', 'clerk');
    });
    after(() => server.close());

    it('sets an HttpOnly, SameSite session cookie and returns the account with a CSRF token', async () => {
      const res = await login(server, 'clerk', PASSWORD);
      assert.equal(res.status, 201);
      const cookie = res.headers.get('set-cookie')!;
      assert.match(cookie, /^archive_session=[\w-]{43};/);
      assert.match(cookie, /HttpOnly/i);
      assert.match(cookie, /SameSite=Lax/i);
      assert.doesNotMatch(cookie, /Secure/i, 'plain HTTP on loopback');
      const body = await res.json();
      assert.equal(body.account.username, 'clerk');
      assert.equal(body.account.unit.id, 'unit-a');
      assert.match(body.csrfToken, /^[\w-]{43}$/);
      assert.equal(JSON.stringify(body).includes('scrypt'), false);
    });

    it('marks the cookie Secure behind a TLS-terminating proxy when TRUST_PROXY allows it', async () => {
      const proxied = await TestServer.start(embeddedTarget, { trustProxy: 'loopback' });
      await proxied.addAccount('clerk', 'clerk');
      const res = await login(proxied, 'clerk', PASSWORD, { 'x-forwarded-proto': 'https' });
      assert.match(res.headers.get('set-cookie')!, /Secure/);
      await proxied.close();
    });

    it('logs in whatever the case or width of the username, as the account', async () => {
      for (const typed of ['CLERK', 'Clerk', 'ｃｌｅｒｋ']) {
        const res = await login(server, typed, PASSWORD);
        assert.equal(res.status, 201, typed);
        assert.equal((await res.json()).account.username, 'clerk', typed);
      }
    });

    it('refuses a wrong password and an unknown user with the same 401', async () => {
      const wrong = await login(server, 'clerk', 'not the password');
      const unknown = await login(server, 'nobody', 'not the password');
      assert.equal(wrong.status, 401);
      assert.deepEqual(await wrong.json(), await unknown.json());
    });

    it('requires the CSRF token on state-changing requests made with the session cookie', async () => {
      const browser = await server.login('clerk');
      const withoutToken = new Client(server.url, { cookie: browser.credentials.cookie! });
      const refused = await withoutToken.upload('x.pdf', randomContent(10));
      assert.equal(refused.status, 403);
      assert.equal((await refused.json()).error, 'csrf_failed');
      const wrongToken = new Client(server.url, { cookie: browser.credentials.cookie!, csrf: 'x'.repeat(43) });
      assert.equal((await wrongToken.fetch('/api/session', { method: 'DELETE' })).status, 403);
      assert.equal((await withoutToken.fetch('/api/files')).status, 200, 'reads need no token');
      assert.equal((await browser.upload('x.pdf', randomContent(10))).status, 201);
    });

    it('exempts API tokens from CSRF, refuses bad and revoked ones', async () => {
      const account = await server.archive.services.accounts.getByUsername('clerk');
      const { id, token } = await server.archive.services.tokens.create(account);
      const script = new Client(server.url, { bearer: token });
      assert.equal((await script.upload('s.pdf', randomContent(10))).status, 201);
      for (const header of [`Bearer ${token.slice(0, -1)}x`, 'Bearer nonsense', 'Basic abc', `Bearer ${token} extra`]) {
        const res = await fetch(`${server.url}/api/files`, { headers: { authorization: header } });
        assert.equal(res.status, 401, header);
        assert.equal((await res.json()).error, 'unauthenticated');
      }
      await server.archive.services.tokens.revoke(id);
      assert.equal((await script.fetch('/api/files')).status, 401);
    });

    it('ignores a session cookie that is not a plain string (no 500 for "j:" JSON cookies)', async () => {
      for (const value of ['j:{}', 'j:1', 'j:[1]', '']) {
        const res = await fetch(`${server.url}/api/files`, { headers: { cookie: `archive_session=${value}` } });
        assert.equal(res.status, 401, value);
      }
    });

    it('refuses a login posted from another site', async () => {
      const evil = await login(server, 'clerk', PASSWORD, { origin: 'https://evil.example' });
      assert.equal(evil.status, 403);
      assert.equal((await evil.json()).error, 'cross_site_request');
      assert.equal((await login(server, 'clerk', PASSWORD, { 'sec-fetch-site': 'cross-site' })).status, 403);
      assert.equal((await login(server, 'clerk', PASSWORD, { origin: server.url })).status, 201);
    });

    it('logs out: the old cookie no longer works', async () => {
      const browser = await server.login('clerk');
      assert.equal((await browser.fetch('/api/session', { method: 'DELETE' })).status, 204);
      assert.equal((await browser.fetch('/api/files')).status, 401);
    });

    it('changes a password: checks the current one and the rules, ends other sessions', async () => {
      await server.addAccount('changer', 'clerk');
      const first = await server.login('changer');
      const second = await server.login('changer');
      const wrong = await first.json('/api/session/password', 'PUT', {
        currentPassword: 'nope',
        newPassword: 'a new long password',
      });
      assert.equal(wrong.status, 401);
      const [failure] = (
        await server.archive.services.audit.search({ action: 'login_failed', user: 'changer', limit: 1, offset: 0 })
      ).items;
      assert.equal(
        failure?.detail,
        'password change: wrong current password',
        'a wrong current password counts like a failed login',
      );
      const short = await first.json('/api/session/password', 'PUT', {
        currentPassword: PASSWORD,
        newPassword: 'short',
      });
      assert.equal(short.status, 400);
      assert.deepEqual(Object.keys(await short.json()), ['error', 'message']);
      for (const [newPassword, error, message] of [
        ['short', 'password_too_short', /at least 10/],
        ['my name is Changer!', 'password_is_username', /must not contain the username/],
        ['qwertyuiop', 'password_too_common', /most common/],
        ['abcabcabcabc', 'password_repetitive', /short pattern repeated/],
      ] as const) {
        const refused = await first.json('/api/session/password', 'PUT', { currentPassword: PASSWORD, newPassword });
        assert.equal(refused.status, 400, newPassword);
        const body = await refused.json();
        assert.equal(body.error, error, newPassword);
        assert.match(body.message, message);
      }
      assert.equal((await login(server, 'changer', PASSWORD)).status, 201, 'a refused password changed nothing');
      const ok = await first.json('/api/session/password', 'PUT', {
        currentPassword: PASSWORD,
        newPassword: 'a new long password',
      });
      assert.equal(ok.status, 200);
      assert.equal((await second.fetch('/api/files')).status, 401, 'other sessions ended');
      const renewed = new Client(server.url, {
        cookie: ok.headers.get('set-cookie')!.split(';')[0]!,
        csrf: (await ok.json()).csrfToken,
      });
      assert.equal((await renewed.fetch('/api/files')).status, 200);
      assert.equal((await login(server, 'changer', 'a new long password')).status, 201);
    });

    it('keeps an account with a one-time password to changing it', async () => {
      const admin = await server.archive.services.accounts.create({
        username: 'first',
        password: PASSWORD,
        role: 'admin',
        unit: { id: 'archive', geoType: 'city', city: 'Archive' },
        mustChangePassword: true,
      });
      const browser = await server.login('first');
      const session = await (await browser.fetch('/api/session')).json();
      assert.equal(session.mustChangePassword, true);
      const blocked = await browser.fetch('/api/files');
      assert.equal(blocked.status, 403);
      assert.match((await blocked.json()).message, /one-time password/);
      const { token } = await server.archive.services.tokens.create(admin);
      const script = new Client(server.url, { bearer: token });
      assert.equal((await script.fetch('/api/files')).status, 403, 'API tokens wait for the new password too');
      const changed = await browser.json('/api/session/password', 'PUT', {
        currentPassword: PASSWORD,
        newPassword: 'my own password',
      });
      assert.equal((await changed.json()).mustChangePassword, false);
      assert.equal((await script.fetch('/api/files')).status, 200);
      assert.equal((await server.store.accounts.get(admin.id))?.mustChangePassword, false);
    });

    it('never writes passwords, cookies, CSRF or API tokens into the log', async () => {
      const account = await server.archive.services.accounts.getByUsername('clerk');
      const { token } = await server.archive.services.tokens.create(account);
      const res = await login(server, 'clerk', PASSWORD);
      const cookie = res.headers.get('set-cookie')!.split(';')[0]!.split('=')[1]!;
      const { csrfToken } = await res.json();
      await fetch(`${server.url}/api/files`, { headers: { authorization: `Bearer ${token}` } });
      await fetch(`${server.url}/api/files`, {
        headers: { cookie: `archive_session=${cookie}`, 'x-csrf-token': csrfToken },
      });
      const log = server.logLines.join('');
      assert.ok(log.includes('/api/files'), 'requests are logged');
      for (const secret of [PASSWORD, token, cookie, csrfToken]) assert.equal(log.includes(secret), false);
    });
  });
}
