import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { KeptImportView } from '../../shared/accounts.js';
import type { AccountStore } from '../../server/store/accounts/port.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * Account import (issue 39): any cell gives a 4xx naming its row; all accounts or none, even when a
 * username is taken meanwhile; the answer kept for the administrator who ran it until downloaded
 * once, so a dropped connection loses no password; and a taken username outside an
 * administrator's reach not revealed to it. Hebei loaded; who is who:
 * - top: the archive's top-level administrator; top2: another one;
 * - qing: administrator of 青县; dongguang: of 东光县;
 * - clerk: a clerk of 清州镇 (in 青县); clerkDong: a clerk of 东光镇 (in 东光县).
 */
type Who = 'anonymous' | 'clerk' | 'qing' | 'dongguang' | 'top' | 'top2';
const QINGXIAN = '130922';
const QINGZHOU = '130922100';
const JINNIU = '130922101';
const DONGGUANG = '130923';
const DONGGUANG_TOWN = '130923100';

interface Refusal {
  error: string;
  message: string;
  details: { reason?: string; rows?: Array<{ line: number; username: string; codes: Array<{ code: string }> }> };
}

const answerRows = (csv: string) =>
  csv
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r\n/)
    .slice(1)
    .map((line) => line.split(','));

for (const target of storeTargets) {
  describe(`account import (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    let now = Date.parse('2026-11-25T08:00:00Z');
    /** Runs before the store creates an import's accounts (another administrator's doing, a dropped connection). */
    let beforeCreateMany: (() => Promise<void>) | undefined;
    /** Told when the store has created them (or refused). */
    let afterCreateMany: (() => void) | undefined;

    // The accounts store with createMany between the two hooks.
    const hooked = (store: ArchiveStore): ArchiveStore => {
      const createMany: AccountStore['createMany'] = async (accounts, kept) => {
        await beforeCreateMany?.();
        try {
          return await store.accounts.createMany(accounts, kept);
        } finally {
          afterCreateMany?.();
        }
      };
      const accounts = new Proxy(store.accounts, {
        get: (t, prop) => {
          if (prop === 'createMany') return createMany;
          const value = Reflect.get(t, prop, t) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
        },
      });
      return { ...store, accounts };
    };

    before(async () => {
      // Sessions outlive the kept answers (the last test moves the clock a day on).
      server = await TestServer.start(target, {
        clock: () => new Date(now),
        wrapStore: hooked,
        sessionTtlMs: 48 * 3600_000,
      });
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('top', 'admin', 'archive');
      await server.addAccountIn('top2', 'admin', 'archive');
      await server.addAccountIn('qing', 'admin', QINGXIAN);
      await server.addAccountIn('dongguang', 'admin', DONGGUANG);
      await server.addAccountIn('clerk', 'clerk', QINGZHOU);
      await server.addAccountIn('clerkDong', 'clerk', DONGGUANG_TOWN);
      as = await server.loginAll(['clerk', 'qing', 'dongguang', 'top', 'top2']);
    });
    after(() => server.close());
    beforeEach(() => {
      beforeCreateMany = undefined;
      afterCreateMany = undefined;
    });

    const send = (who: Who, csv: string, init: RequestInit = {}) =>
      as[who].fetch('/api/accounts/import', {
        method: 'POST',
        headers: { 'content-type': 'text/csv' },
        body: csv,
        ...init,
      });
    const usernames = async () => (await server.archive.services.accounts.list()).map((a) => a.username).sort();
    const kept = async (who: Who) =>
      (await body<{ items: KeptImportView[] }>(await as[who].fetch('/api/accounts/imports'), 200)).items;

    it('refuses a role cell naming a property of every object (__proto__, constructor, …) with 400 naming its row, creating nothing', async () => {
      const before = await usernames();
      const roles = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__PROTO__'];
      const csv = [`fine1,clerk,${QINGZHOU}`, ...roles.map((role, i) => `odd${i},${role},${QINGZHOU}`)].join('\n');
      const refused = await body<Refusal>(await send('qing', csv), 400);
      assert.deepEqual(
        refused.details.rows!.map((r) => [r.line, r.username, r.codes]),
        roles.map((role, i) => [i + 2, `odd${i}`, [{ code: 'bad_role', role }]]),
      );
      assert.match(refused.message, /line 2: role "__proto__" is not clerk/);
      assert.deepEqual(await usernames(), before, 'not even the good row before them');
      assert.deepEqual(await kept('qing'), []);
    });

    it('creates none of its accounts when another administrator takes one of its usernames meanwhile', async () => {
      const before = await usernames();
      beforeCreateMany = async () => {
        beforeCreateMany = undefined;
        await server.addAccountIn('Raced.Name', 'clerk', QINGZHOU);
      };
      const csv = `用户名,角色,单位代码\nearly1,clerk,${QINGZHOU}\nearly2,clerk,${JINNIU}\nraced.name,clerk,${QINGZHOU}\nlate1,clerk,${QINGZHOU}\n`;
      const refused = await body<Refusal>(await send('qing', csv), 400);
      assert.deepEqual(
        refused.details.rows!.map((r) => [r.line, r.username, r.codes]),
        [[4, 'raced.name', [{ code: 'username_unavailable' }]]],
      );
      assert.match(refused.message, /no account was created/);
      assert.deepEqual(await usernames(), [...before, 'Raced.Name'].sort(), 'only the other administrator’s');
      assert.deepEqual(await kept('qing'), [], 'and no answer is kept');
      // Sent again, the file is refused before anything is made, the same way.
      const again = await body<Refusal>(await send('qing', csv), 400);
      assert.deepEqual(again.details.rows, refused.details.rows);
    });

    it('tells only top-level administrators that a username is taken; others that it cannot be used', async () => {
      const before = await usernames();
      // clerkDong is 东光县's, outside 青县's reach; clerk is within it: qing is told the same of both.
      for (const taken of ['clerkDong', 'CLERK']) {
        const one = await body<Refusal>(
          await as.qing.json('/api/accounts', 'POST', { username: taken, role: 'clerk', unitId: QINGZHOU }),
          409,
        );
        assert.equal(one.details.reason, 'username_unavailable', taken);
        assert.doesNotMatch(one.message, /taken|exists/, taken);
        const row = await body<Refusal>(await send('qing', `${taken},clerk,${QINGZHOU}`), 400);
        assert.deepEqual(row.details.rows![0]!.codes, [{ code: 'username_unavailable' }], taken);
        assert.doesNotMatch(row.message, /taken|exists/, taken);
      }
      const top = await body<Refusal>(
        await as.top.json('/api/accounts', 'POST', { username: 'clerkdong', role: 'clerk', unitId: QINGZHOU }),
        409,
      );
      assert.equal(top.details.reason, 'username_taken');
      const topRow = await body<Refusal>(await send('top', `clerkdong,clerk,${QINGZHOU}`), 400);
      assert.deepEqual(topRow.details.rows![0]!.codes, [{ code: 'username_taken' }]);
      assert.deepEqual(await usernames(), before);
    });

    it('keeps the answer for its administrator until downloaded once, listed without the passwords', async () => {
      const res = await send(
        'qing',
        `\uFEFF用户名,角色,单位代码,姓名\nkept1,档案员,${QINGZHOU},张三\nkept2,管理员,${JINNIU}\n`,
      );
      const answer = await res.text();
      assert.equal(res.status, 201, answer);
      const location = res.headers.get('location')!;
      assert.match(location, /^\/api\/accounts\/imports\/[\w-]+$/);
      const id = location.split('/').pop()!;
      assert.deepEqual(await kept('qing'), [
        {
          id,
          createdAt: new Date(now).toISOString(),
          expiresAt: new Date(now + 24 * 3600_000).toISOString(),
          count: 2,
        },
      ]);
      const download = await as.qing.fetch(location);
      assert.equal(download.status, 200);
      assert.match(download.headers.get('content-type')!, /text\/csv/);
      assert.equal(download.headers.get('cache-control'), 'no-store');
      assert.equal(await download.text(), answer, 'the same answer');
      await body(await as.qing.fetch(location), 404);
      assert.deepEqual(await kept('qing'), [], 'downloaded once, then forgotten');
      const [[user, name, role, , password]] = answerRows(answer) as [string[]];
      assert.deepEqual([user, name, role], ['kept1', '张三', '档案员']);
      await server.login('kept1', password);
      const stored = await server.archive.services.accounts.getByUsername('kept1');
      assert.match(stored.passwordHash, /^scrypt\$256\$8\$1\$/, 'the one-time password’s cheaper hash');
      assert.equal(stored.mustChangePassword, true);
      for (const line of server.logLines) assert.ok(!line.includes(password!), 'no password in the log');
    });

    it('loses no password when the connection drops before the answer: the administrator downloads it afterwards', async () => {
      const dropped = new AbortController();
      const stored = new Promise<void>((resolve) => (afterCreateMany = resolve));
      beforeCreateMany = async () => {
        beforeCreateMany = undefined;
        dropped.abort();
      };
      await assert.rejects(send('qing', `lost1,clerk,${QINGZHOU}\nlost2,clerk,${JINNIU}`, { signal: dropped.signal }));
      await stored; // the server went on after the client was gone
      const list = await kept('qing');
      assert.equal(list.length, 1);
      assert.equal(list[0]!.count, 2);
      const download = await as.qing.fetch(`/api/accounts/imports/${list[0]!.id}`);
      const rows = answerRows(await download.text());
      assert.deepEqual(
        rows.map((r) => r[0]),
        ['lost1', 'lost2'],
      );
      for (const [user, , , , password] of rows) await server.login(user!, password);
    });

    it('gives a kept answer to the administrator who ran the import only', async () => {
      const res = await send('qing', `mine1,clerk,${QINGZHOU}`);
      assert.equal(res.status, 201);
      const location = res.headers.get('location')!;
      const expected: Record<Exclude<Who, 'qing'>, number> = {
        anonymous: 401,
        clerk: 403,
        dongguang: 404,
        top: 404,
        top2: 404,
      };
      for (const [who, status] of Object.entries(expected) as Array<[Who, number]>) {
        await body(await as[who].fetch('/api/accounts/imports'), status === 404 ? 200 : status);
        if (status === 404) assert.deepEqual(await kept(who), [], `${who} lists none`);
        await body(await as[who].fetch(location), status);
        await body(await as[who].fetch(location, { method: 'DELETE' }), status);
      }
      assert.equal((await kept('qing')).length, 1, 'still there for qing');
      await body(await as.qing.fetch(location, { method: 'DELETE' }), 204);
    });

    it('refuses an import id that cannot be one with 400', async () => {
      await body(await as.qing.fetch(`/api/accounts/imports/${'x'.repeat(65)}`), 400);
    });

    // Last: it moves the clock a day on.
    it('forgets the kept answer when its administrator says it has the passwords (DELETE), or after 24 hours', async () => {
      const first = await send('qing', `forget1,clerk,${QINGZHOU}`);
      assert.equal(first.status, 201);
      await body(await as.qing.fetch(first.headers.get('location')!, { method: 'DELETE' }), 204);
      await body(await as.qing.fetch(first.headers.get('location')!, { method: 'DELETE' }), 404);
      await body(await as.qing.fetch(first.headers.get('location')!), 404);
      const second = await send('qing', `forget2,clerk,${QINGZHOU}`);
      assert.equal(second.status, 201);
      now += 24 * 3600_000 - 1;
      assert.equal((await kept('qing')).length, 1, 'kept for 24 hours');
      now += 1;
      assert.deepEqual(await kept('qing'), []);
      await body(await as.qing.fetch(second.headers.get('location')!), 404);
    });
  });
}
