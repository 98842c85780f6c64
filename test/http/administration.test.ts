import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { AccountSummary, OneTimePasswordView, TokenView } from '../../shared/accounts.js';
import type { UnitList, UnitView } from '../../shared/units.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import { randomContent } from '../support/content.js';
import { body, Client, PASSWORD, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * Administration over HTTP: the unit directory (Hebei loaded), accounts and API tokens, each
 * administrator within its reach. Who is who:
 * - top: the archive's top-level administrator;
 * - cangzhou: administrator of 沧州市; qing: of 青县 (in 沧州市); dongguang: of 东光县 (in 沧州市);
 * - clerk: a clerk of 清州镇 (in 青县); clerkDong: a clerk of 东光镇 (in 东光县).
 */
type Who = 'anonymous' | 'clerk' | 'qing' | 'dongguang' | 'top';
const QINGXIAN = '130922';
const QINGZHOU = '130922100';
const JINNIU = '130922101';
const DONGGUANG = '130923';
const DONGGUANG_TOWN = '130923100';

const NEW_PASSWORD = 'a long new password 2026';

for (const target of storeTargets) {
  describe(`administration in the browser's API (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    let now = Date.parse('2026-11-25T08:00:00Z');

    before(async () => {
      server = await TestServer.start(target, { clock: () => new Date(now) });
      const [hebei] = await server.archive.services.directory.load(['13']);
      assert.ok(hebei!.units > 2500, `Hebei has ${hebei!.units} units`);
      await server.addAccountIn('top', 'admin', 'archive');
      await server.addAccountIn('cangzhou', 'admin', '130900');
      await server.addAccountIn('qing', 'admin', QINGXIAN);
      await server.addAccountIn('dongguang', 'admin', DONGGUANG);
      await server.addAccountIn('clerk', 'clerk', QINGZHOU);
      await server.addAccountIn('clerkDong', 'clerk', DONGGUANG_TOWN);
      as = await server.loginAll(['clerk', 'qing', 'dongguang', 'top']);
    });
    after(() => server.close());

    const accountId = async (username: string) => (await server.archive.services.accounts.getByUsername(username)).id;

    describe('the unit directory', () => {
      it('loads a province once: loading it again adds nothing', async () => {
        const [again] = await server.archive.services.directory.load(['13']);
        assert.equal(again!.added, 0);
        assert.equal(again!.name, '河北省');
      });

      it('GET /api/units: the top of each caller’s reach, then a parent’s children', async () => {
        await body(await as.anonymous.fetch('/api/units'), 401);
        const top = await body<UnitList>(await as.top.fetch('/api/units'), 200);
        assert.deepEqual(
          top.items.map((u) => [u.id, u.name, u.level, u.parentId]),
          [['130000', '河北省', 'province', null]],
        );
        const qing = await body<UnitList>(await as.qing.fetch('/api/units'), 200);
        assert.deepEqual(
          qing.items.map((u) => u.path),
          ['河北省 / 沧州市 / 青县'],
        );
        const clerk = await body<UnitList>(await as.clerk.fetch('/api/units'), 200);
        assert.deepEqual(
          clerk.items.map((u) => u.id),
          [QINGZHOU],
        );
        const towns = await body<UnitList>(await as.qing.fetch(`/api/units?parent=${QINGXIAN}`), 200);
        assert.equal(towns.items[0]!.id, QINGZHOU);
        assert.equal(towns.items[0]!.path, '河北省 / 沧州市 / 青县 / 清州镇');
        assert.ok(towns.items.every((u) => u.parentId === QINGXIAN && u.level === 'town'));
        assert.equal(towns.total, towns.items.length);
      });

      it('searches names and codes only within the caller’s reach, and never reveals another county’s units', async () => {
        const mine = await body<UnitList>(await as.qing.fetch(`/api/units?q=${encodeURIComponent('镇')}`), 200);
        assert.ok(mine.total > 3);
        assert.ok(mine.items.every((u) => u.path.startsWith('河北省 / 沧州市 / 青县')));
        const byCode = await body<UnitList>(await as.top.fetch('/api/units?q=13092210'), 200);
        assert.deepEqual(
          byCode.items.slice(0, 2).map((u) => u.name),
          ['清州镇', '金牛镇'],
        );
        assert.ok(byCode.items.every((u) => u.code!.startsWith('13092210')));
        const elsewhere = await body<UnitList>(await as.qing.fetch(`/api/units?q=${encodeURIComponent('东光')}`), 200);
        assert.equal(elsewhere.total, 0);
        const outOfReach = await as.qing.fetch(`/api/units?parent=${DONGGUANG}`);
        const unknown = await as.qing.fetch('/api/units?parent=130999');
        const a = await body<{ error: string; message: string }>(outOfReach, 404);
        const b = await body<{ error: string; message: string }>(unknown, 404);
        assert.equal(a.error, b.error, 'out of reach reads as unknown');
        await body(await as.qing.fetch(`/api/units/${DONGGUANG_TOWN}`), 404);
        assert.equal((await body<UnitView>(await as.qing.fetch(`/api/units/${JINNIU}`), 200)).name, '金牛镇');
        const counties = await body<UnitList>(await as.top.fetch('/api/units?level=county&limit=500'), 200);
        assert.ok(counties.items.every((u) => u.level === 'county'));
        assert.ok(counties.total > 150);
      });

      it('refuses bad queries with 400', async () => {
        for (const query of ['parent=13', 'parent[$gt]=', 'level=village', 'limit=0', 'limit=501', 'q=', 'extra=1'])
          await body(await as.top.fetch(`/api/units?${query}`), 400);
      });

      it('POST /api/units: administrators add units under their reach; others are refused', async () => {
        const add = (who: Who, parentId: string | null, name: string) =>
          as[who].json('/api/units', 'POST', { parentId, name });
        await body(await add('anonymous', QINGXIAN, '县档案馆'), 401);
        await body(await add('clerk', QINGXIAN, '县档案馆'), 403);
        await body(await add('dongguang', QINGXIAN, '县档案馆'), 404);
        const created = await body<UnitView>(await add('qing', QINGXIAN, '  县档案馆 '), 201);
        assert.deepEqual(
          [created.name, created.level, created.code, created.parentId],
          ['县档案馆', 'custom', null, QINGXIAN],
        );
        assert.equal(created.path, '河北省 / 沧州市 / 青县 / 县档案馆');
        assert.match(created.id, /^u[0-9a-z]{12}$/);
        await body(await add('qing', QINGXIAN, '县档案馆'), 409);
        await body(await add('qing', null, '省档案馆'), 403);
        await body(await add('top', null, '省档案馆'), 201);
        for (const bad of [
          { parentId: QINGXIAN, name: 'a/b' },
          { parentId: QINGXIAN, name: '' },
          { parentId: QINGXIAN, name: { $gt: '' } },
          { parentId: QINGXIAN },
          { parentId: 'x', name: '科' },
        ])
          await body(await as.qing.json('/api/units', 'POST', bad), 400);
        const listed = await body<UnitList>(await as.qing.fetch(`/api/units?parent=${QINGXIAN}&limit=500`), 200);
        assert.equal(listed.items.at(-1)!.name, '县档案馆', 'custom units after the divisions');
      });

      it('PATCH /api/units/:id renames a custom unit, in paths below it and in its accounts', async () => {
        const office = await body<UnitView>(
          await as.qing.json('/api/units', 'POST', { parentId: QINGXIAN, name: '档案室' }),
          201,
        );
        const desk = await body<UnitView>(
          await as.qing.json('/api/units', 'POST', { parentId: office.id, name: '利用科' }),
          201,
        );
        await server.addAccountIn('deskClerk', 'clerk', desk.id);
        await body(await as.clerk.json(`/api/units/${office.id}`, 'PATCH', { name: '档案馆' }), 403);
        await body(await as.dongguang.json(`/api/units/${office.id}`, 'PATCH', { name: '档案馆' }), 404);
        await body(await as.qing.json(`/api/units/${QINGZHOU}`, 'PATCH', { name: '新镇' }), 400);
        const renamed = await body<UnitView>(
          await as.qing.json(`/api/units/${office.id}`, 'PATCH', { name: '县档案室' }),
          200,
        );
        assert.equal(renamed.path, '河北省 / 沧州市 / 青县 / 县档案室');
        assert.equal(
          (await body<UnitView>(await as.qing.fetch(`/api/units/${desk.id}`), 200)).path,
          '河北省 / 沧州市 / 青县 / 县档案室 / 利用科',
        );
        const account = await server.archive.services.accounts.getByUsername('deskClerk');
        assert.deepEqual(
          [account.unit.county, account.unit.town, account.unit.street, account.unit.geoType],
          ['青县', '县档案室', '利用科', 'street'],
        );
        await body(await as.qing.json(`/api/units/${office.id}`, 'PATCH', { name: '金牛镇' }), 409);
        await body(await as.qing.json(`/api/units/${QINGXIAN}`, 'PATCH', { name: '新县' }), 400);
      });
    });

    describe('accounts', () => {
      it('POST /api/accounts: a clerk created in a town logs in with the one-time password, must change it, and uploads there', async () => {
        for (const [who, status] of [
          ['clerk', 403],
          ['anonymous', 401],
        ] as const)
          await body(
            await as[who].json('/api/accounts', 'POST', { username: 'x', role: 'clerk', unitId: QINGZHOU }),
            status,
          );
        const res = await as.qing.json('/api/accounts', 'POST', {
          username: 'wang.fang',
          role: 'clerk',
          unitId: JINNIU,
        });
        assert.equal(res.headers.get('cache-control'), 'no-store');
        const created = await body<OneTimePasswordView>(res, 201);
        assert.equal(created.account.unit?.path, '河北省 / 沧州市 / 青县 / 金牛镇');
        assert.equal(created.account.state, 'must_change_password');
        assert.match(created.oneTimePassword, /^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
        const first = await server.login('wang.fang', created.oneTimePassword);
        await body(await first.upload('a.pdf', randomContent(10)), 403);
        const changed = await first.json('/api/session/password', 'PUT', {
          currentPassword: created.oneTimePassword,
          newPassword: NEW_PASSWORD,
        });
        await body(changed, 200);
        const clerk = await server.login('wang.fang', NEW_PASSWORD);
        await body(await clerk.upload('a.pdf', randomContent(10)), 201);
        const account = await server.archive.services.accounts.getByUsername('wang.fang');
        assert.deepEqual(account.unit, { id: JINNIU, geoType: 'town', city: '沧州市', county: '青县', town: '金牛镇' });
      });

      it('refuses a taken username (any case or width), a unit out of reach, and bad fields, creating nothing', async () => {
        const before = await server.archive.services.accounts.list();
        for (const taken of ['CLERK', 'ｃｌｅｒｋ'])
          await body(
            await as.qing.json('/api/accounts', 'POST', { username: taken, role: 'clerk', unitId: QINGZHOU }),
            409,
          );
        await body(
          await as.qing.json('/api/accounts', 'POST', { username: 'new1', role: 'clerk', unitId: DONGGUANG_TOWN }),
          404,
        );
        await body(
          await as.qing.json('/api/accounts', 'POST', { username: 'new1', role: 'admin', unitId: 'archive' }),
          404,
        );
        await body(
          await as.top.json('/api/accounts', 'POST', { username: 'new1', role: 'clerk', unitId: 'archive' }),
          400,
        );
        // Administrators' reach is told by the ledger's names: a province with cities, or a unit below a town, cannot be one.
        await body(
          await as.top.json('/api/accounts', 'POST', { username: 'new1', role: 'admin', unitId: '130000' }),
          400,
        );
        const village = await body<UnitView>(
          await as.qing.json('/api/units', 'POST', { parentId: QINGZHOU, name: '东街村' }),
          201,
        );
        await body(
          await as.qing.json('/api/accounts', 'POST', { username: 'new1', role: 'admin', unitId: village.id }),
          400,
        );
        await body(
          await as.qing.json('/api/accounts', 'POST', { username: 'new1', role: 'clerk', unitId: village.id }),
          201,
        );
        const new1 = await accountId('new1');
        await body(await as.qing.json(`/api/accounts/${new1}`, 'PATCH', { role: 'admin' }), 400);
        for (const bad of [
          { username: 'new1', role: 'root', unitId: QINGZHOU },
          { username: { $ne: '' }, role: 'clerk', unitId: QINGZHOU },
          { username: 'new1', role: 'clerk', unitId: { $gt: '' } },
          { username: 'a b', role: 'clerk', unitId: QINGZHOU },
          { username: 'new1', role: 'clerk', unitId: QINGZHOU, password: 'x' },
        ])
          await body(await as.qing.json('/api/accounts', 'POST', bad), 400);
        assert.equal((await server.archive.services.accounts.list()).length, before.length + 1, 'only new1, the clerk');
      });

      it('GET /api/accounts: each administrator sees its reach, filtered by unit, role, state and text', async () => {
        const names = async (who: Who, query = '') =>
          (
            await body<{ items: AccountSummary[] }>(await as[who].fetch(`/api/accounts?limit=200${query}`), 200)
          ).items.map((a) => a.username);
        await body(await as.clerk.fetch('/api/accounts'), 403);
        await body(await as.anonymous.fetch('/api/accounts'), 401);
        const qing = await names('qing');
        assert.ok(qing.includes('clerk') && qing.includes('qing'));
        assert.ok(
          !qing.includes('clerkDong') &&
            !qing.includes('dongguang') &&
            !qing.includes('top') &&
            !qing.includes('cangzhou'),
        );
        const top = await names('top');
        for (const n of ['clerk', 'clerkDong', 'cangzhou', 'top']) assert.ok(top.includes(n), n);
        assert.deepEqual(await names('top', `&unit=${DONGGUANG}`), ['clerkDong', 'dongguang']);
        assert.deepEqual(await names('top', '&role=admin&q=dong'), ['dongguang']);
        assert.deepEqual(await names('top', '&unit=archive'), ['top']);
        assert.deepEqual(await names('qing', `&q=${encodeURIComponent('金牛')}`), ['wang.fang']);
        await body(await as.qing.fetch(`/api/accounts?unit=${DONGGUANG}`), 404);
        await body(await as.qing.fetch('/api/accounts?unit=archive'), 404);
        for (const query of ['state=locked', 'role[$ne]=x', 'limit=1000', 'unit=abc'])
          await body(await as.top.fetch(`/api/accounts?${query}`), 400);
        const [summary] = (
          await body<{ items: AccountSummary[] }>(await as.top.fetch('/api/accounts?q=clerkdong'), 200)
        ).items;
        assert.equal(summary!.unitText, '河北省 / 沧州市 / 东光县 / 东光镇');
        assert.equal(summary!.state, 'active');
        assert.equal(typeof summary!.lastLoginAt, 'object');
        const qingSelf = (
          await body<{ items: AccountSummary[] }>(await as.top.fetch('/api/accounts?q=qing'), 200)
        ).items.find((a) => a.username === 'qing')!;
        assert.equal(qingSelf.lastLoginAt, new Date(now).toISOString(), 'the login was noted');
      });

      it('PATCH /api/accounts/:id: disabling ends sessions and suspends tokens, enabling restores the tokens', async () => {
        const id = await accountId('clerk');
        const session = await server.login('clerk');
        const token = await server.tokenClient(await server.archive.services.accounts.getByUsername('clerk'));
        await body(await token.fetch('/api/session'), 200);
        await body(await as.dongguang.json(`/api/accounts/${id}`, 'PATCH', { disabled: true }), 404);
        await body(await as.clerk.json(`/api/accounts/${id}`, 'PATCH', { disabled: true }), 403);
        const disabled = await body<AccountSummary>(
          await as.qing.json(`/api/accounts/${id}`, 'PATCH', { disabled: true }),
          200,
        );
        assert.equal(disabled.state, 'disabled');
        await body(await session.fetch('/api/session'), 401);
        await body(await token.fetch('/api/session'), 401);
        const login = await server.anonymous().json('/api/session', 'POST', { username: 'clerk', password: PASSWORD });
        assert.equal((await body<{ error: string }>(login, 403)).error, 'account_disabled');
        const wrong = await server
          .anonymous()
          .json('/api/session', 'POST', { username: 'clerk', password: 'wrong one!' });
        assert.equal((await body<{ error: string }>(wrong, 401)).error, 'login_failed', 'a guesser learns nothing');
        await body(await as.qing.json(`/api/accounts/${id}`, 'PATCH', { disabled: false }), 200);
        await body(await token.fetch('/api/session'), 200);
        as.clerk = await server.login('clerk');
      });

      it('moves an account only within reach, and changes its role', async () => {
        const id = await accountId('wang.fang');
        await body(await as.qing.json(`/api/accounts/${id}`, 'PATCH', { unitId: DONGGUANG_TOWN }), 404);
        const moved = await body<AccountSummary>(
          await as.qing.json(`/api/accounts/${id}`, 'PATCH', { unitId: QINGZHOU, role: 'admin' }),
          200,
        );
        assert.deepEqual([moved.unit?.id, moved.role], [QINGZHOU, 'admin']);
        const back = await body<AccountSummary>(
          await as.qing.json(`/api/accounts/${id}`, 'PATCH', { role: 'clerk' }),
          200,
        );
        assert.equal(back.role, 'clerk');
        for (const bad of [{}, { role: 'root' }, { disabled: 'yes' }, { unitId: 'x' }, { password: 'x' }])
          await body(await as.qing.json(`/api/accounts/${id}`, 'PATCH', bad), 400);
        await body(await as.qing.json('/api/accounts/no-such-account', 'PATCH', { disabled: true }), 404);
      });

      it('refuses (409) that administrators disable or demote themselves, or that the last top-level administrator goes', async () => {
        const top = await accountId('top');
        const qing = await accountId('qing');
        // Each refusal says what it is about (details.reason), for the page to word it.
        const reason = async (res: Response) => (await body<{ details: { reason: string } }>(res, 409)).details.reason;
        assert.equal(
          await reason(await as.qing.json(`/api/accounts/${qing}`, 'PATCH', { disabled: true })),
          'own_account_disabled',
        );
        assert.equal(await reason(await as.qing.json(`/api/accounts/${qing}`, 'PATCH', { role: 'clerk' })), 'own_role');
        await body(await as.top.json(`/api/accounts/${top}`, 'PATCH', { disabled: true }), 409);
        // Another top-level administrator cannot remove the last one either.
        await server.addAccountIn('top2', 'admin', 'archive');
        const top2 = await server.login('top2');
        await body(await top2.json(`/api/accounts/${top}`, 'PATCH', { unitId: QINGXIAN }), 200);
        await body(
          await as.top.json(`/api/accounts/${await accountId('top2')}`, 'PATCH', { role: 'clerk', unitId: QINGZHOU }),
          404,
        );
        const last = await top2.json(`/api/accounts/${await accountId('top2')}`, 'PATCH', { role: 'clerk' });
        assert.equal(await reason(last), 'own_role', 'its own role, before it would be the last');
        // A disabled top-level administrator does not count as the other one.
        await body(await top2.json(`/api/accounts/${top}`, 'PATCH', { unitId: 'archive' }), 200);
        await body(await top2.json(`/api/accounts/${top}`, 'PATCH', { disabled: true }), 200);
        await body(await as.top.fetch('/api/session'), 401);
        await body(await top2.json(`/api/accounts/${top}`, 'PATCH', { disabled: false }), 200);
        as.top = await server.login('top');
        await body(await as.top.json(`/api/accounts/${await accountId('top2')}`, 'PATCH', { disabled: true }), 200);
        await body(await top2.json(`/api/accounts/${top}`, 'PATCH', { disabled: true }), 401);
        await body(await as.top.json(`/api/accounts/${top}`, 'PATCH', { role: 'clerk' }), 409);
      });

      it('POST /api/accounts/:id/password-reset: a new one-time password; sessions end and tokens are revoked', async () => {
        const id = await accountId('clerkDong');
        const session = await server.login('clerkDong');
        const token = await server.tokenClient(await server.archive.services.accounts.getByUsername('clerkDong'));
        await body(await as.qing.json(`/api/accounts/${id}/password-reset`, 'POST', {}), 404);
        await body(await as.clerk.json(`/api/accounts/${id}/password-reset`, 'POST', {}), 403);
        const reset = await body<OneTimePasswordView>(
          await as.dongguang.json(`/api/accounts/${id}/password-reset`, 'POST', {}),
          200,
        );
        assert.equal(reset.account.state, 'must_change_password');
        assert.equal(reset.account.tokens, 0);
        await body(await session.fetch('/api/session'), 401);
        await body(await token.fetch('/api/session'), 401);
        await assert.rejects(server.login('clerkDong'), /401/);
        const fresh = await server.login('clerkDong', reset.oneTimePassword);
        await body(
          await fresh.json('/api/session/password', 'PUT', {
            currentPassword: reset.oneTimePassword,
            newPassword: PASSWORD + ' again',
          }),
          200,
        );
      });

      it('POST /api/accounts/:id/unblock clears the login throttle for the account', async () => {
        const id = await accountId('cangzhou');
        for (let i = 0; i < 6; i++)
          await server.anonymous().json('/api/session', 'POST', { username: 'cangzhou', password: `wrong ${i}!` });
        const throttled = await server
          .anonymous()
          .json('/api/session', 'POST', { username: 'Cangzhou', password: PASSWORD });
        await body(throttled, 429);
        const [listed] = (
          await body<{ items: AccountSummary[] }>(await as.top.fetch('/api/accounts?state=throttled'), 200)
        ).items;
        assert.equal(listed?.username, 'cangzhou');
        await body(await as.qing.json(`/api/accounts/${id}/unblock`, 'POST', {}), 404);
        const cleared = await body<AccountSummary>(await as.top.json(`/api/accounts/${id}/unblock`, 'POST', {}), 200);
        assert.equal(cleared.state, 'active');
        await server.login('cangzhou');
      });

      it('POST /api/accounts/import: every row checked first, nothing created if one is wrong; else all, with their passwords once', async () => {
        const send = (who: Who, csv: string) =>
          as[who].fetch('/api/accounts/import', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: csv });
        const count = async () => (await server.archive.services.accounts.list()).length;
        const before = await count();
        const wrong = await body<{
          error: string;
          details: { rows: Array<{ line: number; problems: string[]; codes: Array<{ code: string }> }> };
        }>(
          await send(
            'qing',
            `\uFEFF用户名,角色,单位代码\r\nzhao1,档案员,${QINGZHOU}\r\nzhao2,chief,${QINGZHOU}\r\nZHAO1,clerk,${JINNIU}\r\nzhao3,clerk,${DONGGUANG_TOWN}\r\nclerk,clerk,${QINGZHOU}\r\n`,
          ),
          400,
        );
        assert.deepEqual(
          wrong.details.rows.map((r) => r.line),
          [3, 4, 5, 6],
        );
        assert.match(wrong.details.rows[1]!.problems.join(), /also on line 2/);
        // The same as codes, for the page to say in its language.
        assert.deepEqual(
          wrong.details.rows.map((r) => r.codes),
          [
            [{ code: 'bad_role', role: 'chief' }],
            [{ code: 'username_repeated', line: 2 }],
            [{ code: 'unit_outside_reach', unit: DONGGUANG_TOWN }],
            // Below the top level, not whether the name is taken (issue 39; account-import.test.ts).
            [{ code: 'username_unavailable' }],
          ],
        );
        assert.equal(await count(), before, 'nothing created');
        await body(await send('clerk', `zhao1,clerk,${QINGZHOU}`), 403);
        const ok = await send(
          'qing',
          `\uFEFFusername,role,unit\nzhao1,档案员,${QINGZHOU}\nzhao2,管理员,${JINNIU}\n"zhao3",clerk,${QINGZHOU}\n`,
        );
        assert.equal(ok.status, 201, await ok.clone().text());
        assert.match(ok.headers.get('content-type')!, /text\/csv/);
        const lines = (await ok.text())
          .replace(/^\uFEFF/, '')
          .trim()
          .split(/\r\n/);
        assert.equal(lines.length, 4);
        const [user, , , , password] = lines[2]!.split(',');
        assert.equal(user, 'zhao2');
        assert.equal(await count(), before + 3);
        await server.login('zhao2', password);
        assert.equal((await server.archive.services.accounts.getByUsername('zhao2')).role, 'admin');
        const gbk = await as.qing.fetch('/api/accounts/import', {
          method: 'POST',
          headers: { 'content-type': 'text/csv' },
          // "张三,档案员,…" as GBK, as Excel saves a plain CSV on a Chinese Windows.
          body: Buffer.concat([Buffer.from([0xd5, 0xc5, 0xc8, 0xfd]), Buffer.from(`,clerk,${QINGZHOU}\n`)]),
        });
        // Read as GB18030 (account-import.test.ts): the username is the name as written.
        const gbkAnswer = await gbk.text();
        assert.equal(gbk.status, 201, gbkAnswer);
        assert.match(gbkAnswer, /\r\n张三,/);
        await body(await send('qing', ''), 400);
        await body(await send('qing', 'a,"b'), 400);
      });
    });

    describe('API tokens', () => {
      it('everyone creates, lists and revokes their own tokens; the token works until revoked', async () => {
        await body(await as.anonymous.json('/api/tokens', 'POST', { label: 'x' }), 401);
        const created = await body<{ token: string; view: TokenView }>(
          await as.clerk.json('/api/tokens', 'POST', { label: '扫描仪', expiresInDays: 30 }),
          201,
        );
        assert.equal(created.view.label, '扫描仪');
        assert.equal(created.view.expiresAt, new Date(now + 30 * 86_400_000).toISOString());
        const script = new Client(server.url, { bearer: created.token });
        now += 120_000;
        await body(await script.fetch('/api/session'), 200);
        const mine = await body<{ items: TokenView[] }>(await as.clerk.fetch('/api/tokens'), 200);
        const listed = mine.items.find((t) => t.id === created.view.id)!;
        assert.equal(listed.lastUsedAt, new Date(now).toISOString());
        assert.ok(mine.items.every((t) => t.username === 'clerk'));
        await body(await as.clerk.fetch(`/api/tokens/${created.view.id}`, { method: 'DELETE' }), 204);
        await body(await script.fetch('/api/session'), 401);
        await body(await as.clerk.fetch(`/api/tokens/${created.view.id}`, { method: 'DELETE' }), 404);
        for (const bad of [
          { expiresInDays: 0 },
          { expiresInDays: 5000 },
          { label: 'x'.repeat(101) },
          { label: 'x', owner: 'top' },
        ])
          await body(await as.clerk.json('/api/tokens', 'POST', bad), 400);
      });

      it('a token stops working when it expires', async () => {
        const created = await body<{ token: string }>(
          await as.clerk.json('/api/tokens', 'POST', { expiresInDays: 1 }),
          201,
        );
        const script = new Client(server.url, { bearer: created.token });
        await body(await script.fetch('/api/session'), 200);
        now += 86_400_000;
        const expired = await body<{ message: string }>(await script.fetch('/api/session'), 401);
        assert.match(expired.message, /expired/);
        as.clerk = await server.login('clerk');
        as.qing = await server.login('qing');
        as.dongguang = await server.login('dongguang');
        as.top = await server.login('top');
      });

      it('administrators list and revoke the tokens of accounts in their reach only', async () => {
        const created = await body<{ view: TokenView }>(
          await as.clerk.json('/api/tokens', 'POST', { label: 'scanner' }),
          201,
        );
        const reach = async (who: Who) =>
          (await body<{ items: TokenView[] }>(await as[who].fetch('/api/tokens?scope=reach'), 200)).items.map(
            (t) => t.id,
          );
        assert.ok((await reach('qing')).includes(created.view.id));
        assert.ok(!(await reach('dongguang')).includes(created.view.id));
        const clerkOwn = await body<{ items: TokenView[] }>(await as.clerk.fetch('/api/tokens?scope=reach'), 200);
        assert.ok(
          clerkOwn.items.every((t) => t.username === 'clerk'),
          'a clerk’s reach is its own tokens',
        );
        const clerkDong = await server.login('clerkDong', PASSWORD + ' again');
        assert.deepEqual(
          (await body<{ items: TokenView[] }>(await clerkDong.fetch('/api/tokens?scope=reach'), 200)).items,
          [],
        );
        await body(await as.dongguang.fetch(`/api/tokens/${created.view.id}`, { method: 'DELETE' }), 404);
        await body(await clerkDong.fetch(`/api/tokens/${created.view.id}`, { method: 'DELETE' }), 404);
        await body(await as.qing.fetch(`/api/tokens/${created.view.id}`, { method: 'DELETE' }), 204);
        await body(await as.qing.fetch('/api/tokens/zzz', { method: 'DELETE' }), 400);
      });
    });

    it('audits every action with who did it', async () => {
      const events = await server.store.audit.search({ limit: 1000, offset: 0 });
      const actions = new Set(events.items.map((e) => e.action));
      for (const action of [
        'account_created',
        'account_updated',
        'account_disabled',
        'account_enabled',
        'password_reset',
        'account_unblocked',
        'unit_created',
        'unit_renamed',
        'token_created',
        'token_revoked',
      ])
        assert.ok(actions.has(action as never), action);
      const disabled = events.items.find((e) => e.action === 'account_disabled' && e.detail.startsWith('clerk '))!;
      assert.equal(disabled.userName, 'qing');
    });
  });

  describe(
    `two top-level administrators disabling each other at once (${target.name} store)`,
    { skip: target.skip },
    () => {
      it('leaves one of them: the second change waits for the first, then is refused as the last one going', async () => {
        // The count of top-level administrators takes a while, as over a network: both changes
        // would count the other as staying, and both go through, unless one waits for the other.
        const slowList = (accounts: ArchiveStore['accounts']) =>
          new Proxy(accounts, {
            get(store, name) {
              const value: unknown = Reflect.get(store, name, store);
              if (typeof value !== 'function') return value;
              const method = value as (...args: unknown[]) => Promise<unknown>;
              if (name !== 'list') return method.bind(store);
              return async (...args: unknown[]) => {
                const all = await method.apply(store, args);
                await delay(50);
                return all;
              };
            },
          });
        const server = await TestServer.start(target, {
          wrapStore: (store) => ({ ...store, accounts: slowList(store.accounts) }),
        });
        try {
          await server.addAccountIn('one', 'admin', 'archive');
          await server.addAccountIn('two', 'admin', 'archive');
          const [one, two] = [await server.login('one'), await server.login('two')];
          const idOf = async (username: string) => (await server.archive.services.accounts.getByUsername(username)).id;
          const [oneId, twoId] = [await idOf('one'), await idOf('two')];
          const answers = await Promise.all([
            one.json(`/api/accounts/${twoId}`, 'PATCH', { disabled: true }),
            two.json(`/api/accounts/${oneId}`, 'PATCH', { disabled: true }),
          ]);
          const statuses = answers.map((a) => a.status).sort();
          assert.equal(statuses[0], 200);
          // Refused as the last one, or its session already ended with its account.
          assert.ok([401, 409].includes(statuses[1]!), `the other change answered ${statuses[1]}`);
          const active = (await server.opened.store.accounts.list()).filter((a) => a.role === 'admin' && !a.disabled);
          assert.equal(active.length, 1, 'one top-level administrator is left');
        } finally {
          await server.close();
        }
      });
    },
  );
}
