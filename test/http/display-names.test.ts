import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AccountSummary, OneTimePasswordView, TokenView } from '../../shared/accounts.js';
import type { CrossUnitRow, RepeatEntryRow, RepeatUserRow, ReportPage } from '../../shared/reports.js';
import type { AuditList, FileList, FileUploaders, SessionView } from '../../shared/schemas.js';
import { randomContent } from '../support/content.js';
import { body, Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * Display names (姓名) over HTTP: given when an account is made (one by one or by CSV), changed
 * by an administrator within reach or by the owner, checked, audited, and shown beside the login
 * wherever the archive names a person. Hebei is loaded; who is who:
 * - top: the archive's top-level administrator; qing: administrator of 青县; dongguang: of 东光县;
 * - clerk: a clerk of 清州镇 (in 青县); clerkDong: a clerk of 东光镇 (in 东光县).
 */
type Who = 'anonymous' | 'clerk' | 'clerkDong' | 'qing' | 'dongguang' | 'top';
const QINGZHOU = '130922100';
const DONGGUANG_TOWN = '130923100';

/** Names a request must refuse, and why. */
const BAD_NAMES: Array<[unknown, string]> = [
  ['长'.repeat(51), 'more than 50 characters'],
  ['张\u0000三', 'a control character'],
  ['张\n三', 'a line break'],
  ['张\u202E三', 'a right-to-left override'],
  ['张\u200B三', 'a zero-width space'],
  [42, 'not text'],
];

for (const target of storeTargets) {
  describe(`display names over HTTP (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;

    before(async () => {
      server = await TestServer.start(target);
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('top', 'admin', 'archive');
      await server.addAccountIn('qing', 'admin', '130922');
      await server.addAccountIn('dongguang', 'admin', '130923');
      await server.addAccountIn('clerk', 'clerk', QINGZHOU);
      await server.addAccountIn('clerkDong', 'clerk', DONGGUANG_TOWN);
      as = await server.loginAll(['clerk', 'clerkDong', 'qing', 'dongguang', 'top']);
    });
    after(() => server.close());

    const account = (username: string) => server.archive.services.accounts.getByUsername(username);
    const named = async (username: string) => (await account(username)).displayName;
    const lastAudit = async (action: string) => {
      const { items } = await server.store.audit.search({ action: action as never, limit: 1, offset: 0 });
      return items[0]!;
    };

    describe('given and changed by administrators', () => {
      it('POST /api/accounts takes a name, trimmed; without one (or empty) the account has none', async () => {
        const created = await body<OneTimePasswordView>(
          await as.qing.json('/api/accounts', 'POST', {
            username: 'wang.fang',
            displayName: '  王芳 ',
            role: 'clerk',
            unitId: QINGZHOU,
          }),
          201,
        );
        assert.equal(created.account.displayName, '王芳');
        assert.equal(await named('wang.fang'), '王芳');
        const event = await lastAudit('account_created');
        assert.deepEqual(
          [event.userName, event.note && 'displayName' in event.note && event.note.displayName],
          ['qing', '王芳'],
        );
        for (const [username, displayName] of [
          ['no.name', undefined],
          ['empty.name', ''],
          ['null.name', null],
        ] as const) {
          const plain = await body<OneTimePasswordView>(
            await as.qing.json('/api/accounts', 'POST', { username, displayName, role: 'clerk', unitId: QINGZHOU }),
            201,
          );
          assert.equal(plain.account.displayName, null, username);
        }
      });

      it('refuses a bad name with 400 naming the field, creating nothing', async () => {
        const before = (await server.archive.services.accounts.list()).length;
        for (const [displayName, why] of BAD_NAMES) {
          const refused = await body<{ error: string; message: string; details: { field: string } }>(
            await as.qing.json('/api/accounts', 'POST', {
              username: 'bad.name',
              displayName,
              role: 'clerk',
              unitId: QINGZHOU,
            }),
            400,
          );
          assert.equal(refused.details.field, 'displayName', why);
          assert.match(refused.message, /^Invalid displayName: /, why);
        }
        assert.equal((await server.archive.services.accounts.list()).length, before);
      });

      it('lists accounts with their names, and finds them by name', async () => {
        const listed = await body<{ items: AccountSummary[] }>(
          await as.qing.fetch(`/api/accounts?q=${encodeURIComponent('王芳')}`),
          200,
        );
        assert.deepEqual(
          listed.items.map((a) => [a.username, a.displayName]),
          [['wang.fang', '王芳']],
        );
        const clerk = (await body<{ items: AccountSummary[] }>(await as.top.fetch('/api/accounts?q=clerk'), 200)).items;
        assert.ok(clerk.every((a) => a.displayName === null));
      });

      it('PATCH /api/accounts/:id changes and removes a name: administrators within reach only, audited', async () => {
        const id = (await account('clerk')).id;
        const patch = (who: Who, displayName: unknown) => as[who].json(`/api/accounts/${id}`, 'PATCH', { displayName });
        await body(await patch('anonymous', '李清'), 401);
        await body(await patch('clerk', '李清'), 403);
        await body(await patch('clerkDong', '李清'), 403);
        await body(await patch('dongguang', '李清'), 404);
        assert.equal(await named('clerk'), null, 'nobody of those changed it');
        const byCounty = await body<AccountSummary>(await patch('qing', ' 李清 '), 200);
        assert.equal(byCounty.displayName, '李清');
        const event = await lastAudit('account_updated');
        assert.equal(event.userName, 'qing');
        assert.deepEqual(event.note, {
          code: 'account_updated',
          username: 'clerk',
          accountId: id,
          name: { from: null, to: '李清' },
        });
        assert.equal(event.detail, `clerk (${id}): name (none) → "李清"`);
        const byTop = await body<AccountSummary>(await patch('top', '李清清'), 200);
        assert.equal(byTop.displayName, '李清清');
        for (const [displayName, why] of BAD_NAMES) {
          const refused = await body<{ details: { field: string } }>(await patch('qing', displayName), 400);
          assert.equal(refused.details.field, 'displayName', why);
        }
        await body(await patch('qing', ''), 200);
        assert.equal(await named('clerk'), null, 'empty removes it');
        await body(await patch('qing', '李清'), 200);
        const removed = await body<AccountSummary>(await patch('qing', null), 200);
        assert.equal(removed.displayName, null, 'null removes it too');
        const eventsBefore = (await server.store.audit.search({ action: 'account_updated', limit: 1, offset: 0 }))
          .total;
        await body(await patch('qing', null), 200);
        assert.equal(
          (await server.store.audit.search({ action: 'account_updated', limit: 1, offset: 0 })).total,
          eventsBefore,
          'no change, no event',
        );
        await body(await patch('qing', '李清'), 200);
      });
    });

    describe('PUT /api/session/name: the owner’s own name', () => {
      it('lets every logged-in account name itself, and only itself', async () => {
        await body(await as.anonymous.json('/api/session/name', 'PUT', { displayName: '某人' }), 401);
        for (const [who, name] of [
          ['clerkDong', '赵东'],
          ['qing', '青县管理员'],
          ['dongguang', '东光管理员'],
          ['top', '档案馆管理员'],
        ] as const) {
          const view = await body<SessionView>(
            await as[who].json('/api/session/name', 'PUT', { displayName: name }),
            200,
          );
          assert.deepEqual([view.account.username, view.account.displayName], [who, name]);
          assert.equal((await body<SessionView>(await as[who].fetch('/api/session'), 200)).account.displayName, name);
        }
        assert.equal(await named('clerk'), '李清', 'another account’s name is untouched');
        const event = await lastAudit('account_updated');
        assert.deepEqual(
          [event.userName, event.note],
          [
            'top',
            {
              code: 'account_updated',
              username: 'top',
              accountId: (await account('top')).id,
              name: { from: null, to: '档案馆管理员' },
            },
          ],
        );
      });

      it('has no way to name another account: an account id is an unknown field, and PATCH is for administrators', async () => {
        const clerkDongId = (await account('clerkDong')).id;
        const other = await body<{ details: { field: string } }>(
          await as.clerk.json('/api/session/name', 'PUT', { displayName: '冒名', accountId: clerkDongId }),
          400,
        );
        assert.equal(other.details.field, 'body');
        await body(await as.clerk.json(`/api/accounts/${clerkDongId}`, 'PATCH', { displayName: '冒名' }), 403);
        assert.equal(await named('clerkDong'), '赵东');
      });

      it('changes and removes the name, refuses a bad one naming the field, and wants the CSRF token of a session', async () => {
        const set = (displayName: unknown) => as.clerk.json('/api/session/name', 'PUT', { displayName });
        assert.equal((await body<SessionView>(await set(' 李小清 '), 200)).account.displayName, '李小清');
        const event = await lastAudit('account_updated');
        assert.deepEqual(
          [event.userName, event.note && 'name' in event.note && event.note.name],
          ['clerk', { from: '李清', to: '李小清' }],
          'recorded as the account changing itself',
        );
        for (const [displayName, why] of BAD_NAMES) {
          const refused = await body<{ details: { field: string } }>(await set(displayName), 400);
          assert.equal(refused.details.field, 'displayName', why);
        }
        await body(await as.clerk.json('/api/session/name', 'PUT', {}), 400);
        assert.equal((await body<SessionView>(await set(''), 200)).account.displayName, null);
        const noCsrf = new Client(server.url, { cookie: as.clerk.credentials.cookie! });
        await body(await noCsrf.json('/api/session/name', 'PUT', { displayName: '无令牌' }), 403);
        const token = await server.tokenClient(await account('clerk'));
        assert.equal(
          (await body<SessionView>(await token.json('/api/session/name', 'PUT', { displayName: '李清' }), 200)).account
            .displayName,
          '李清',
        );
        assert.equal(await named('clerk'), '李清');
      });

      it('waits until a one-time password is changed', async () => {
        const created = await body<OneTimePasswordView>(
          await as.qing.json('/api/accounts', 'POST', { username: 'fresh.one', role: 'clerk', unitId: QINGZHOU }),
          201,
        );
        const fresh = await server.login('fresh.one', created.oneTimePassword);
        await body(await fresh.json('/api/session/name', 'PUT', { displayName: '新人' }), 403);
        assert.equal(await named('fresh.one'), null);
      });
    });

    describe('POST /api/accounts/import with names', () => {
      const send = (csv: string) =>
        as.qing.fetch('/api/accounts/import', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: csv });

      it('takes an optional fourth column, under either header; the answer lists the names', async () => {
        const ok = await send(
          `\uFEFF用户名,角色,单位代码,姓名\r\nimp1,档案员,${QINGZHOU}, 钱一 \r\nimp2,档案员,${QINGZHOU},\r\nimp3,clerk,${QINGZHOU},"孙,三"\r\n`,
        );
        assert.equal(ok.status, 201, await ok.clone().text());
        const lines = (await ok.text())
          .replace(/^\uFEFF/, '')
          .trim()
          .split(/\r\n/);
        assert.equal(lines[0], '用户名,姓名,角色,单位,一次性密码（首次登录后须修改）');
        assert.match(lines[1]!, /^imp1,钱一,档案员,/);
        assert.match(lines[2]!, /^imp2,,档案员,/);
        assert.match(lines[3]!, /^imp3,"孙,三",档案员,/);
        assert.deepEqual([await named('imp1'), await named('imp2'), await named('imp3')], ['钱一', null, '孙,三']);
        const english = await send(`username,role,unit,name\nimp4,clerk,${QINGZHOU},李四\n`);
        assert.equal(english.status, 201, await english.clone().text());
        const three = await send(`username,role,unit\nimp5,clerk,${QINGZHOU}\n`);
        assert.equal(three.status, 201, 'a file of the three-column import still reads');
        assert.deepEqual([await named('imp4'), await named('imp5')], ['李四', null]);
      });

      it('refuses a bad name at its line, with the rest of the file, creating nothing', async () => {
        const before = (await server.archive.services.accounts.list()).length;
        const refused = await body<{ details: { rows: Array<{ line: number; problems: string[] }> } }>(
          await send(
            `用户名,角色,单位代码,姓名\nimp6,档案员,${QINGZHOU},${'长'.repeat(51)}\nimp7,档案员,${QINGZHOU},周七,多余\n`,
          ),
          400,
        );
        assert.deepEqual(
          refused.details.rows.map((r) => [r.line, r.problems]),
          [
            [2, ['name: a name is at most 50 characters']],
            [3, ['more than four columns']],
          ],
        );
        assert.equal((await server.archive.services.accounts.list()).length, before);
      });
    });

    describe('shown beside the login wherever a person is named', () => {
      let fileId: string;

      before(async () => {
        // 李清 (clerk) sends a file twice; 赵东 (clerkDong) of another county sends it too; qing, an administrator, too.
        const data = randomContent(5000);
        fileId = ((await (await as.clerk.upload('县志.pdf', data)).json()) as { fileId: string }).fileId;
        assert.equal((await as.clerk.upload('县志.pdf', data)).status, 200);
        assert.equal((await as.clerkDong.upload('县志.pdf', data)).status, 200);
        await body(
          await as.top.json(`/api/accounts/${(await account('clerkDong')).id}`, 'PATCH', { displayName: '赵东东' }),
          200,
        );
      });

      it('reports: repeat uploaders per entry and per user, and each unit’s uploaders of a cross-unit file', async () => {
        const entries = await body<ReportPage<RepeatEntryRow>>(
          await as.top.fetch('/api/reports/repeat-uploaders'),
          200,
        );
        assert.deepEqual(
          entries.items.map((r) => [r.userName, r.userDisplayName, r.uploadCount]),
          [['clerk', '李清', 2]],
        );
        const users = await body<ReportPage<RepeatUserRow>>(
          await as.qing.fetch('/api/reports/repeat-uploaders?group=user'),
          200,
        );
        assert.deepEqual(
          users.items.map((r) => [r.userName, r.userDisplayName]),
          [['clerk', '李清']],
        );
        const cross = await body<ReportPage<CrossUnitRow>>(await as.top.fetch('/api/reports/cross-unit'), 200);
        assert.deepEqual(
          cross.items[0]!.uploaders.map((u) => [u.unit.town, u.userNames, u.userDisplayNames]),
          [
            ['清州镇', ['clerk'], ['李清']],
            ['东光镇', ['clerkDong'], ['赵东东']],
          ],
          'the name an administrator just gave',
        );
      });

      it('本单位文件: the uploaders of each file and the uploader filter’s choices', async () => {
        const files = await body<FileList>(await as.top.fetch('/api/files'), 200);
        const file = files.items.find((f) => f.fileId === fileId)!;
        assert.deepEqual(
          file.uploaders.map((login, i) => [login, file.uploaderDisplayNames[i]]),
          [
            ['clerk', '李清'],
            ['clerkDong', '赵东东'],
          ],
        );
        const choices = await body<FileUploaders>(await as.clerk.fetch('/api/files/uploaders'), 200);
        assert.deepEqual(
          choices.items.map((u) => [u.username, u.displayName]),
          [['clerk', '李清']],
        );
      });

      it('the audit log: the login the event recorded, with the account’s name now; a failed login of no account has none', async () => {
        await server.anonymous().json('/api/session', 'POST', { username: 'clerkDong', password: 'not the password' });
        const failed = await body<AuditList>(await as.top.fetch('/api/audit?action=login_failed&limit=1'), 200);
        assert.deepEqual([failed.items[0]!.userName, failed.items[0]!.userDisplayName], ['clerkDong', '赵东东']);
        await server.anonymous().json('/api/session', 'POST', { username: 'imp8', password: 'not the password' });
        // The attempted login becomes an account's later: the old event stays nobody's.
        await body(
          await as.qing.json('/api/accounts', 'POST', {
            username: 'imp8',
            displayName: '后来者',
            role: 'clerk',
            unitId: QINGZHOU,
          }),
          201,
        );
        const attempt = (await body<AuditList>(await as.top.fetch('/api/audit?action=login_failed&user=imp8'), 200))
          .items[0]!;
        assert.deepEqual([attempt.userId, attempt.userDisplayName], [null, null]);
        const uploads = await body<AuditList>(await as.top.fetch('/api/audit?action=upload&user=clerk'), 200);
        assert.ok(uploads.items.length > 0);
        assert.ok(uploads.items.every((e) => e.userName === 'clerk' && e.userDisplayName === '李清'));
        const csv = new TextDecoder()
          .decode(await (await as.top.fetch('/api/audit?format=csv&action=upload&user=clerk&lang=zh-CN')).arrayBuffer())
          .split('\r\n');
        assert.match(csv[0]!, /^时间（北京时间 UTC\+8）,操作,用户,姓名,单位代码,/);
        assert.match(csv[1]!, /,上传,clerk,李清,/);
      });

      it('API tokens: the owners an administrator lists', async () => {
        await body(await as.clerk.json('/api/tokens', 'POST', { label: '扫描仪' }), 201);
        const tokens = await body<{ items: TokenView[] }>(await as.qing.fetch('/api/tokens?scope=reach'), 200);
        const owned = tokens.items.filter((t) => t.username === 'clerk');
        assert.ok(owned.length > 0);
        assert.ok(owned.every((t) => t.displayName === '李清'));
      });
    });
  });
}
