import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, PASSWORD, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/** A login from a client address (the server trusts X-Forwarded-For from loopback here, as behind nginx). */
const login = (server: TestServer, username: string, password: string, address: string) =>
  fetch(`${server.url}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify({ username, password }),
  });

const WRONG = 'not the password';

async function answer(res: Response): Promise<{ status: number; retryAfter: string | null; body: unknown }> {
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

for (const target of storeTargets) {
  describe(`wrong passwords slow logins down, never lock (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let now = Date.parse('2026-06-01T08:00:00Z');
    const wait = (ms: number) => (now += ms);
    before(async () => {
      server = await TestServer.start(target, {
        trustProxy: 'loopback',
        clock: () => new Date(now),
        loginThrottle: {
          freeFailures: 3,
          maxDelayMs: 60_000,
          accountFailures: 8,
          addressFailures: 10,
          knownForMs: 30 * 24 * 3600_000,
          rememberMs: 24 * 3600_000,
        },
      });
    });
    after(() => server.close());

    it('makes each try after the free failures wait longer (1 s, 2 s, 4 s… up to the maximum), then takes the right password', async () => {
      await server.addAccount('typist', 'clerk');
      for (let i = 0; i < 3; i++)
        assert.equal((await login(server, 'typist', WRONG, '10.0.0.1')).status, 401, `free failure ${i + 1}`);
      const throttled = await answer(await login(server, 'typist', PASSWORD, '10.0.0.1'));
      assert.equal(throttled.status, 429, 'even the right password waits');
      assert.equal(throttled.retryAfter, '1');
      assert.equal((throttled.body as { error: string }).error, 'login_throttled');
      assert.match(
        (throttled.body as { message: string }).message,
        /Wait 1 second\(s\) and try again: the right password works then/,
      );
      const delays: string[] = [];
      for (let i = 0; i < 9; i++) {
        wait(Number((await answer(await login(server, 'typist', WRONG, '10.0.0.1'))).retryAfter ?? 0) * 1000);
        assert.equal((await login(server, 'typist', WRONG, '10.0.0.1')).status, 401, 'a try after the wait is checked');
        delays.push((await answer(await login(server, 'typist', PASSWORD, '10.0.0.1'))).retryAfter!);
      }
      assert.deepEqual(
        delays,
        ['2', '4', '8', '16', '32', '60', '60', '60', '60'],
        'doubling, capped at the maximum: never a lock',
      );
      wait(60_000);
      assert.equal((await login(server, 'typist', PASSWORD, '10.0.0.1')).status, 201);
      assert.equal((await login(server, 'typist', WRONG, '10.0.0.1')).status, 401, 'a success starts the count again');
    });

    it('never lets wrong passwords from one address stop the right password from another', async () => {
      await server.addAccount('target', 'clerk');
      for (let i = 0; i < 50; i++) {
        const res = await login(server, 'target', WRONG, '203.0.113.9');
        if (res.status === 429) wait(Number(res.headers.get('retry-after')) * 1000);
      }
      assert.equal((await login(server, 'target', PASSWORD, '198.51.100.7')).status, 201, 'a new address');
    });

    it('answers an unknown username exactly as an existing one, all the way into the throttle', async () => {
      await server.addAccount('exists', 'clerk');
      for (let i = 0; i < 5; i++) {
        const known = await answer(await login(server, 'exists', WRONG, '10.0.0.2'));
        const unknown = await answer(await login(server, 'does-not-exist', WRONG, '10.0.0.3'));
        assert.deepEqual(unknown, known, `attempt ${i + 1}`);
      }
      const events = await server.archive.services.audit.search({ action: 'login_failed', limit: 100, offset: 0 });
      assert.ok(
        events.items.some((e) => e.userName === 'does-not-exist'),
        'failures on unknown names are audited too',
      );
    });

    it("keeps a shared office address open: one clerk's mistakes and guesses at many accounts do not stop colleagues", async () => {
      const office = '192.0.2.50';
      await server.addAccount('colleague', 'clerk');
      assert.equal(
        (await login(server, 'colleague', PASSWORD, office)).status,
        201,
        'the colleague has logged in from the office before',
      );
      // Someone at the office tries many names: 3 + 3 + 3 + 1 failures reach the address's 10.
      for (const [name, tries] of [
        ['a1', 3],
        ['a2', 3],
        ['a3', 3],
        ['a4', 1],
      ] as const)
        for (let i = 0; i < tries; i++) assert.equal((await login(server, name, WRONG, office)).status, 401);
      assert.equal(
        (await login(server, 'colleague', PASSWORD, office)).status,
        201,
        'an account known at the address is not slowed',
      );
      await server.addAccount('newcomer', 'clerk');
      assert.equal(
        (await login(server, 'newcomer', PASSWORD, office)).status,
        201,
        'an account with no wrong password of its own gets in at once, though it never logged in there',
      );
      await server.addAccount('typo', 'clerk');
      assert.equal(
        (await login(server, 'typo', WRONG, office)).status,
        401,
        "a new account's password is checked there, and a wrong one counted",
      );
      const slowed = await login(server, 'typo', PASSWORD, office);
      assert.equal(slowed.status, 429, 'with a wrong password of its own, it waits at the busy address as before');
      await server.addAccount('tried-elsewhere', 'clerk');
      assert.equal((await login(server, 'tried-elsewhere', WRONG, '198.51.100.99')).status, 401);
      assert.equal(
        (await login(server, 'tried-elsewhere', PASSWORD, office)).status,
        429,
        'an account with a wrong password from anywhere waits at the busy address',
      );
      wait(Number(slowed.headers.get('retry-after')) * 1000);
      assert.equal((await login(server, 'typo', PASSWORD, office)).status, 201, '...and then gets in');
    });

    it('slows a distributed attack on one account from new addresses, audits it once, and lets the owner in where it logs in', async () => {
      const owner = await server.addAccount('mayor', 'clerk');
      assert.equal((await login(server, 'mayor', PASSWORD, '10.1.1.1')).status, 201);
      // Three addresses, 3 + 3 + 2 failures: the account's 8.
      for (const [address, tries] of [
        ['10.9.0.1', 3],
        ['10.9.0.2', 3],
        ['10.9.0.3', 2],
      ] as const)
        for (let i = 0; i < tries; i++) assert.equal((await login(server, 'mayor', WRONG, address)).status, 401);
      assert.equal((await login(server, 'mayor', PASSWORD, '10.9.0.4')).status, 429, 'a new address waits');
      assert.equal((await login(server, 'mayor', PASSWORD, '10.1.1.1')).status, 201, "the owner's address does not");
      const throttled = await server.archive.services.audit.search({ action: 'login_throttled', limit: 10, offset: 0 });
      const mine = throttled.items.filter((e) => e.userName === owner.username);
      assert.equal(mine.length, 1);
      assert.match(mine[0]!.detail, /8 wrong passwords for this account from several addresses/);
    });

    it('throttles a wrong current password in a password change like a login', async () => {
      await server.addAccount('changer', 'clerk');
      const browser = await server.login('changer');
      for (let i = 0; i < 3; i++)
        assert.equal(
          (
            await browser.json('/api/session/password', 'PUT', {
              currentPassword: WRONG,
              newPassword: 'a new long password',
            })
          ).status,
          401,
        );
      const res = await browser.json('/api/session/password', 'PUT', {
        currentPassword: PASSWORD,
        newPassword: 'a new long password',
      });
      assert.equal(res.status, 429);
      assert.equal((await res.json()).error, 'login_throttled');
    });
  });

  describe(
    `password checks are bounded: a flood waits its turn, the office goes first (${target.name} store)`,
    {
      skip: target.skip,
    },
    () => {
      let server: TestServer;
      before(async () => {
        server = await TestServer.start(target, {
          trustProxy: 'loopback',
          passwordHashing: { concurrency: 1, queueLength: 2, perKey: 1 },
        });
      });
      after(() => server.close());

      it('refuses a try with 503 login_busy and Retry-After while too many checks wait, whatever name it gives, and counts nothing', async () => {
        const hashing = server.archive.passwordHashing;
        await server.addAccount('regular', 'clerk');
        assert.equal(
          (await login(server, 'regular', PASSWORD, '192.0.2.7')).status,
          201,
          'the clerk logs in at the office',
        );
        await server.addAccount('newface', 'clerk');
        // Guesses from three addresses: one being checked, two waiting (the queue's length).
        let release!: () => void;
        const released = new Promise<boolean>((resolve) => (release = () => resolve(false)));
        const knownWaitingWhenStarted: number[] = [];
        const guesses = ['10.0.0.1', '10.0.0.2', '10.0.0.3'].map((address) =>
          hashing.run({ address }, () => {
            knownWaitingWhenStarted.push(hashing.load().known);
            return released;
          }),
        );
        assert.deepEqual(hashing.load(), { running: 1, known: 0, other: 2 });

        const refused = [
          await answer(await login(server, 'newface', PASSWORD, '198.51.100.1')),
          await answer(await login(server, 'no-such-name', PASSWORD, '198.51.100.2')),
        ];
        assert.equal(refused[0]!.status, 503);
        assert.equal((refused[0]!.body as { error: string }).error, 'login_busy');
        assert.match(refused[0]!.retryAfter ?? '', /^[1-9]\d*$/);
        assert.deepEqual(refused[1], refused[0], 'an unknown username is answered exactly as an existing one');

        // The clerk at its office goes ahead of the guesses waiting.
        const regular = login(server, 'regular', PASSWORD, '192.0.2.7');
        while (hashing.load().known === 0) await new Promise((resolve) => setImmediate(resolve));
        release();
        assert.equal((await regular).status, 201);
        await Promise.all(guesses);
        assert.deepEqual(knownWaitingWhenStarted, [0, 0, 0], 'no guess was checked while the clerk waited');

        const failed = await server.archive.services.audit.search({ action: 'login_failed', limit: 10, offset: 0 });
        assert.equal(failed.total, 0, 'a refused try is no failed login');
        assert.equal(
          (await login(server, 'newface', PASSWORD, '198.51.100.1')).status,
          201,
          'nor counted by the throttle',
        );
      });

      it('records wrong passwords in the audit log one by one up to five an address and hour, then summed up', async () => {
        await server.addAccount('victim', 'clerk');
        for (let i = 0; i < 10; i++) assert.equal((await login(server, `name${i}`, WRONG, '203.0.113.50')).status, 401);
        const { items } = await server.archive.services.audit.search({ action: 'login_failed', limit: 20, offset: 0 });
        assert.deepEqual(
          items.map((e) => [e.userName, e.address]),
          [['*', '203.0.113.50'], ...[4, 3, 2, 1, 0].map((i) => [`name${i}`, '203.0.113.50'])],
        );
        assert.match(items[0]!.detail, /^10 wrong passwords from this address this hour/);
      });
    },
  );

  describe(`a changed password ends what the old one opened (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    before(async () => (server = await TestServer.start(target)));
    after(() => server.close());

    it('ends every other session on a self-service change, and revokes the API tokens only when asked', async () => {
      const account = await server.addAccount('keeper', 'clerk');
      const other = await server.login('keeper');
      const script = await server.tokenClient(account);
      const browser = await server.login('keeper');
      const kept = await browser.json('/api/session/password', 'PUT', {
        currentPassword: PASSWORD,
        newPassword: 'second long password',
      });
      assert.equal(kept.status, 200);
      const body = await kept.json();
      assert.equal(body.tokensRevoked, 0);
      assert.equal((await other.fetch('/api/files')).status, 401, 'the other session ended');
      assert.equal((await script.fetch('/api/files')).status, 200, 'tokens kept when not asked');
      const renewed = new Client(server.url, {
        cookie: kept.headers.get('set-cookie')!.split(';')[0]!,
        csrf: body.csrfToken,
      });
      const revoked = await renewed.json('/api/session/password', 'PUT', {
        currentPassword: 'second long password',
        newPassword: 'third long password',
        revokeTokens: true,
      });
      assert.equal(revoked.status, 200);
      assert.equal((await revoked.json()).tokensRevoked, 1);
      assert.equal((await script.fetch('/api/files')).status, 401, 'the token was revoked');
      const [event] = (await server.archive.services.audit.search({ action: 'password_changed', limit: 1, offset: 0 }))
        .items;
      assert.match(event!.detail, /; 1 API token revoked$/);
    });

    it("revokes every session and API token on an administrator's reset", async () => {
      const account = await server.addAccount('reset-me', 'clerk');
      const browser = await server.login('reset-me');
      const script = await server.tokenClient(account);
      const { tokensRevoked } = await server.archive.services.accounts.resetPassword(account, 'a reset long password');
      assert.equal(tokensRevoked, 1);
      assert.equal((await browser.fetch('/api/files')).status, 401);
      assert.equal((await script.fetch('/api/files')).status, 401);
    });
  });
}
