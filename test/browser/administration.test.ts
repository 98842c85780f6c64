import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { artifactPath, browserSkip, BrowserWindows, fieldProblem, login } from '../support/browser.js';
import { TestServer } from '../support/server.js';
import { embeddedTarget } from '../support/stores.js';

/**
 * Administration in Debian's Chromium: accounts, units and tokens, as a county's archives bureau
 * and the archive's top level use them. Hebei is loaded; 青县 and 东光县 are counties of 沧州市.
 */

async function usernamesListed(page: Page): Promise<string[]> {
  await page.locator('table.accounts').waitFor();
  return page
    .locator('table.accounts tbody tr')
    .evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { account: string } }).dataset.account));
}

describe(
  'administration in the browser (Debian Chromium, embedded store)',
  { skip: browserSkip, timeout: 300_000 },
  () => {
    let server: TestServer;
    const windows = new BrowserWindows();
    const files = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-admin-files-'));
    const newPage = () => windows.open();

    before(async () => {
      server = await TestServer.start(embeddedTarget);
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('qing-admin', 'admin', '130922');
      await server.addAccountIn('dong-admin', 'admin', '130923');
      await server.addAccountIn('top', 'admin', 'archive');
      const dongClerk = await server.addAccountIn('dong-clerk', 'clerk', '130923100');
      const client = await server.tokenClient(dongClerk);
      assert.equal((await client.upload('东光县档案.pdf', randomBytes(20_000))).status, 201);
    });
    after(async () => {
      await windows.closeAll();
      await server.close();
      fs.rmSync(files, { recursive: true, force: true });
    });

    it('a county administrator creates a clerk, named, in a town found by search; the clerk logs in with the one-time password, must change it, and uploads; the name shows beside the login', async () => {
      const { page, errors } = await newPage();
      await login(page, server.url, 'qing-admin');
      await page.getByRole('link', { name: '账号管理' }).click();
      await page.getByRole('heading', { name: '账号管理' }).waitFor();
      assert.deepEqual(await usernamesListed(page), ['qing-admin'], 'another county’s accounts are not shown');
      await page.getByRole('button', { name: '新建账号' }).click();
      await page.getByRole('textbox', { name: '用户名', exact: true }).fill('wang.qz');
      await page.getByRole('textbox', { name: '姓名', exact: true }).fill(' 王芳 ');
      await page.getByLabel('按名称或代码查找单位').fill('清州');
      await page.getByRole('button', { name: '河北省 / 沧州市 / 青县 / 清州镇' }).click();
      await page.getByText('已选：河北省 / 沧州市 / 青县 / 清州镇 (130922100)').waitFor();
      // A search never reaches another county.
      await page.getByLabel('按名称或代码查找单位').fill('东光');
      await page.getByText('没有找到，请换个名称或代码。').waitFor();
      await page.getByLabel('按名称或代码查找单位').fill('');
      await page.getByRole('button', { name: '创建账号' }).click();
      const secret = page.locator('code[data-secret]');
      await secret.waitFor();
      const oneTimePassword = (await secret.innerText()).trim();
      assert.match(oneTimePassword, /^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
      // On the 账号开通单 (account-sheet.test.ts), with what the clerk does with it.
      await page.getByText('首次登录后系统会要求设置自己的新密码', { exact: false }).waitFor();
      await page.screenshot({ path: artifactPath('50-accounts-created.png'), fullPage: true });
      await page.locator('tr[data-account="wang.qz"] .badge', { hasText: '待改密码' }).waitFor();
      assert.equal(await page.locator('tr[data-account="wang.qz"] th').innerText(), '王芳（wang.qz）');
      await page.screenshot({ path: artifactPath('51-accounts-list.png'), fullPage: true });

      const clerk = await newPage();
      await login(clerk.page, server.url, 'wang.qz', oneTimePassword);
      await clerk.page.getByRole('heading', { name: '请先修改一次性密码' }).waitFor();
      await clerk.page.getByLabel('当前密码').fill(oneTimePassword);
      await clerk.page.getByLabel(/^新密码/).fill('a fresh password of mine');
      await clerk.page.getByLabel('再次输入新密码').fill('a fresh password of mine');
      await clerk.page.getByRole('button', { name: '修改密码' }).click();
      await clerk.page.getByRole('heading', { name: '上传档案' }).waitFor();
      await clerk.page.getByText('当前用户：王芳（wang.qz，沧州市 / 青县 / 清州镇）').waitFor();
      const file = path.join(files, '清州镇-第一份.pdf');
      fs.writeFileSync(file, randomBytes(30_000));
      await clerk.page.locator('input[type=file]:not([webkitdirectory])').setInputFiles(file);
      await clerk.page.waitForFunction(() => {
        const s = (
          globalThis as unknown as { document: { querySelector(s: string): { dataset: { stored?: string } } | null } }
        ).document.querySelector('.results .summary');
        return s?.dataset.stored === '1';
      });
      const listed = await server.store.unitFiles.list({ accountId: '', limit: 10, offset: 0, nameContains: '清州镇' });
      const [entry] = await server.store.ledger.entriesForFile(listed.items[0]!.entry.fileId);
      assert.equal(entry!.unit.id, '130922100', 'the ledger records the town’s code');
      // The same file again (by a script of the clerk's): a repeat upload, for the report below.
      const script = await server.login('wang.qz', 'a fresh password of mine');
      assert.equal((await script.upload('清州镇-第一份.pdf', fs.readFileSync(file))).status, 200);

      // The county administrator sees the clerk's file, and not the other county's.
      await page.getByRole('link', { name: '本单位文件' }).click();
      await page.getByText('清州镇-第一份.pdf').waitFor();
      await page.getByRole('cell', { name: '王芳（wang.qz）', exact: true }).waitFor();
      assert.equal(await page.getByText('东光县档案.pdf').count(), 0);
      // Its reports count its county only: one upload here, one in 东光县.
      await page.goto(`${server.url}/#/reports/savings`);
      // They open on its county: the filters say what the numbers count.
      await page.waitForURL(/#\/reports\/savings\?city=.*county=/);
      assert.equal(await page.getByLabel('县（市、区）').inputValue(), '青县');
      const uploads = page.locator('dd[data-figure="uploads"]');
      await uploads.waitFor();
      assert.equal((await uploads.innerText()).trim(), '2');
      await page.screenshot({ path: artifactPath('58-reports-county.png'), fullPage: true });
      // The repeat uploader is named as the top bar names them.
      await page.goto(`${server.url}/#/reports/repeat-uploaders`);
      await page.getByRole('cell', { name: '王芳（wang.qz）', exact: true }).waitFor();
      assert.deepEqual([...errors, ...clerk.errors], []);
    });

    it('opened on the accounts page, asks for its first rows beside the session, not after it, and once', async () => {
      const { page, errors } = await newPage();
      await login(page, server.url, 'top');
      await page.getByRole('link', { name: '账号管理' }).waitFor();
      await page.goto('about:blank');
      const asked: string[] = [];
      page.on('request', (r) => {
        if (new URL(r.url()).pathname === '/api/accounts') asked.push(r.url());
      });
      // The scripts read besides the app's own: the accounts page's chunk, without Chart.js (the reports').
      const scripts: Array<Promise<number>> = [];
      page.on('response', (r) => {
        const at = new URL(r.url()).pathname;
        if (at.startsWith('/assets/') && at.endsWith('.js') && !at.startsWith('/assets/index-'))
          scripts.push(r.body().then((b) => b.length));
      });
      // The session's answer held back: the rows' request must not wait for it.
      let releaseSession = () => {};
      const sessionHeld = new Promise<void>((resolve) => (releaseSession = resolve));
      await page.route('**/api/session', async (route) => {
        await sessionHeld;
        await route.continue();
      });
      await page.goto(`${server.url}/#/accounts`);
      await page.waitForRequest((r) => new URL(r.url()).pathname === '/api/accounts', { timeout: 15_000 });
      releaseSession();
      await page.locator('table.accounts tbody tr').first().waitFor();
      assert.deepEqual(
        asked.map((url) => new URL(url).search),
        ['?limit=50&offset=0'],
        'the page took the answer asked for ahead',
      );
      const read = (await Promise.all(scripts)).reduce((a, b) => a + b, 0);
      assert.ok(read > 0 && read < 100_000, `the accounts page's scripts are ${read} bytes: no Chart.js`);
      await page.unroute('**/api/session');
      assert.deepEqual(errors, []);
    });

    it('renames an account (a bad name refused at the field), resets its password and disables it, each shown once or confirmed first', async () => {
      const { page, errors } = await newPage();
      await login(page, server.url, 'qing-admin');
      await page.goto(`${server.url}/#/accounts`);
      await page.getByRole('button', { name: '改姓名 wang.qz' }).click();
      const name = page.getByRole('textbox', { name: '姓名', exact: true });
      assert.equal(await name.inputValue(), '王芳');
      await name.fill('王\u200B芳');
      await page.getByRole('button', { name: '保存姓名' }).click();
      assert.match(
        await fieldProblem(name),
        /姓名中不能有控制字符或看不见的字符/,
        'refused at the field, before sending',
      );
      await name.fill('王小芳');
      await page.getByRole('button', { name: '保存姓名' }).click();
      await page.locator('tr[data-account="wang.qz"] th', { hasText: '王小芳（wang.qz）' }).waitFor();
      assert.equal((await server.archive.services.accounts.getByUsername('wang.qz')).displayName, '王小芳');
      await page.getByRole('button', { name: '重置密码 wang.qz' }).click();
      await page.getByRole('button', { name: '确定重置' }).click();
      await page.locator('.opening-sheet tr[data-sheet-account="wang.qz"]').getByText('（密码已重置）').waitFor();
      await page.getByRole('button', { name: '停用 wang.qz' }).click();
      await page.getByText('确定停用 wang.qz？', { exact: false }).waitFor();
      await page.screenshot({ path: artifactPath('52-accounts-disable-confirm.png'), fullPage: true });
      await page.getByRole('button', { name: '确定停用' }).click();
      await page.locator('tr[data-account="wang.qz"] .badge', { hasText: '已停用' }).waitFor();
      await page.getByRole('button', { name: '启用 wang.qz' }).click();
      await page.locator('tr[data-account="wang.qz"] .badge', { hasText: '待改密码' }).waitFor();
      assert.deepEqual(errors, []);
    });

    it('imports accounts from a CSV: a wrong row refuses the whole file and says why; a right file hands out the passwords', async () => {
      const { page, errors } = await newPage();
      await login(page, server.url, 'qing-admin');
      await page.goto(`${server.url}/#/accounts`);
      await page.getByRole('button', { name: '批量导入' }).click();
      const template = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: '下载模板' }).click(),
      ]);
      const templateText = fs.readFileSync(await template[0].path(), 'utf8');
      assert.match(templateText, /^\uFEFF用户名,角色,单位代码,姓名\r\n/);
      const wrong = path.join(files, 'wrong.csv');
      fs.writeFileSync(wrong, '\uFEFF用户名,角色,单位代码\r\nli.1,档案员,130922101\r\nli.2,档案员,130923100\r\n');
      await page.getByLabel('选择 Excel 或 CSV 文件').setInputFiles(wrong);
      await page.getByRole('button', { name: '导入', exact: true }).click();
      await page.getByText('有 1 行不正确，未创建任何账号', { exact: false }).waitFor();
      await page.getByText('第 3 行（li.2）：单位代码“130923100”不在您的管理范围内', { exact: false }).waitFor();
      await page.screenshot({ path: artifactPath('53-accounts-import-refused.png'), fullPage: true });
      const right = path.join(files, 'right.csv');
      fs.writeFileSync(
        right,
        '\uFEFF用户名,角色,单位代码,姓名\r\nli.1,档案员,130922101,"李,一"\r\nli.2,档案员,130922102,\r\n',
      );
      await page.getByLabel('选择 Excel 或 CSV 文件').setInputFiles(right);
      await page.getByRole('button', { name: '导入', exact: true }).click();
      await page.getByText('已创建 2 个账号', { exact: false }).waitFor();
      const passwords = await page.locator('.opening-sheet code.secret').allInnerTexts();
      assert.equal(passwords.length, 2);
      assert.deepEqual(
        await page
          .locator('.opening-sheet tbody tr')
          .evaluateAll((rows) =>
            rows.map((r) => (r as unknown as { innerText: string }).innerText.split('\t').slice(0, 2)),
          ),
        [
          ['li.1', '李,一'],
          ['li.2', ''],
        ],
        'a name holding a comma stays whole',
      );
      await page.screenshot({ path: artifactPath('54-accounts-imported.png'), fullPage: true });
      // The page is reloaded before the passwords were saved: the server kept them, to download once.
      await page.reload();
      await page.getByRole('heading', { name: '有 1 次导入的一次性密码清单尚未下载' }).waitFor();
      const kept = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: '下载一次性密码清单（仅一次）' }).click(),
      ]);
      const keptText = fs.readFileSync(await kept[0].path(), 'utf8');
      for (const password of passwords) assert.ok(keptText.includes(password.trim()), 'the same passwords');
      await page.getByRole('heading', { name: '有 1 次导入的一次性密码清单尚未下载' }).waitFor({ state: 'detached' });
      await page.reload();
      await page.locator('table.accounts').waitFor();
      assert.equal(await page.getByText('一次性密码清单尚未下载').count(), 0, 'downloaded once, then gone');
      await server.login('li.2', passwords[1]!.trim());
      assert.deepEqual(errors, []);
    });

    it('shows the unit tree within reach; units are added and renamed there', async () => {
      const { page, errors } = await newPage();
      await login(page, server.url, 'qing-admin');
      await page.getByRole('link', { name: '单位', exact: true }).click();
      await page.getByRole('heading', { name: '单位', exact: true }).waitFor();
      // The tree arrives after the heading.
      await page.locator('.tree > li').first().waitFor();
      const top = await page
        .locator('.tree > li')
        .evaluateAll((items) => items.map((i) => (i as unknown as { dataset: { unit: string } }).dataset.unit));
      assert.deepEqual(top, ['130922'], 'a county administrator’s tree starts at the county');
      await page.locator('li[data-unit="130922100"]').waitFor();
      await page.locator('li[data-unit="130922"] > .node').getByRole('button', { name: '添加下级' }).click();
      const newName = page.getByLabel('在“青县”下添加单位');
      const children = async () => (await server.store.units.find({ parentId: '130922', limit: 1, offset: 0 })).total;
      const before = await children();
      // A blank lookalike of the official town, and a name drawn as a path: refused at the field, before sending.
      for (const [typed, problem] of [
        ['清州镇\u3164', /不能有控制字符、看不见或看似空白的字符.*U\+3164/],
        ['青县\u2215清州镇', /不能有“\/”或形似“\/”的字符.*U\+2215/],
      ] as const) {
        await newName.fill(typed);
        await page.getByRole('button', { name: '添加', exact: true }).click();
        assert.match(await fieldProblem(newName), problem);
      }
      assert.equal(await children(), before, 'nothing was added');
      await newName.fill('县档案馆');
      await page.getByRole('button', { name: '添加', exact: true }).click();
      await page.getByText('县档案馆').waitFor();
      await page.locator('.node', { hasText: '县档案馆' }).getByRole('button', { name: '改名' }).click();
      await page.getByLabel('新名称').fill('青县档案馆');
      await page.getByRole('button', { name: '保存' }).click();
      await page.locator('.unit-name', { hasText: '青县档案馆' }).waitFor();
      await page.screenshot({ path: artifactPath('55-units.png'), fullPage: true });
      assert.deepEqual(errors, []);
    });

    it('a top-level administrator sees every county, and assigns units to accounts of an earlier version', async () => {
      await server.store.accounts.create({
        id: 'legacy-1',
        username: 'old-clerk',
        passwordHash: 'scrypt$x',
        role: 'clerk',
        unit: { id: 'old', geoType: 'town', city: '沧州市', county: '青县', town: '老城镇' },
        createdAt: new Date(),
        mustChangePassword: false,
        disabled: false,
        lastLoginAt: null,
        displayName: null,
      });
      const { page, errors } = await newPage();
      await login(page, server.url, 'top');
      await page.goto(`${server.url}/#/accounts`);
      const all = await usernamesListed(page);
      for (const name of ['qing-admin', 'dong-admin', 'dong-clerk', 'wang.qz', 'old-clerk'])
        assert.ok(all.includes(name), name);
      await page.goto(`${server.url}/#/units`);
      await page.getByRole('heading', { name: '待指定单位的账号' }).waitFor();
      const card = page.locator('[data-account="old-clerk"]');
      await card.getByText('原单位：沧州市 / 青县 / 老城镇').waitFor();
      await page.screenshot({ path: artifactPath('56-units-unmapped.png'), fullPage: true });
      await card.getByLabel('按名称或代码查找单位').fill('130922101');
      await card.getByRole('button', { name: '河北省 / 沧州市 / 青县 / 金牛镇' }).click();
      await card.getByRole('button', { name: '指定单位' }).click();
      await page.getByText('所有账号都已在单位目录中。').waitFor();
      assert.equal((await server.archive.services.accounts.getByUsername('old-clerk')).unit.id, '130922101');
      assert.deepEqual(errors, []);
    });

    it('lists the accounts waiting for a unit a hundred at a time, the rest behind 更多', async () => {
      for (let n = 0; n < 105; n++)
        await server.store.accounts.create({
          id: `legacy-many-${n}`,
          username: `old-many-${String(n).padStart(3, '0')}`,
          passwordHash: 'scrypt$x',
          role: 'clerk',
          unit: { id: 'old', geoType: 'town', city: '沧州市', county: '青县', town: '老城镇' },
          createdAt: new Date(),
          mustChangePassword: false,
          disabled: false,
          lastLoginAt: null,
          displayName: null,
        });
      const { page, errors } = await newPage();
      await login(page, server.url, 'top');
      await page.goto(`${server.url}/#/units`);
      await page.getByRole('heading', { name: '待指定单位的账号' }).waitFor();
      const cards = page.locator('[data-account^="old-many-"]');
      await cards.nth(99).waitFor();
      assert.equal(await cards.count(), 100, 'the first hundred');
      await page.getByRole('button', { name: '更多' }).click();
      await cards.nth(104).waitFor();
      assert.equal(await cards.count(), 105, 'and the rest');
      assert.equal(await page.getByRole('button', { name: '更多' }).count(), 0, 'nothing more to ask for');
      assert.deepEqual(errors, []);
    });

    it('says what to do when the unit directory is empty (no UNIT_REGIONS, no units added)', async () => {
      const empty = await TestServer.start(embeddedTarget);
      try {
        await empty.addAccountIn('first', 'admin', 'archive');
        const { page, errors } = await newPage();
        await login(page, empty.url, 'first');
        await page.goto(`${empty.url}/#/accounts`);
        await page.getByRole('button', { name: '新建账号' }).click();
        await page.getByText('单位目录还是空的', { exact: false }).waitFor();
        assert.deepEqual(errors, []);
      } finally {
        await empty.close();
      }
    });

    it('my tokens: created with a label and expiry, shown once, revoked; an administrator sees its accounts’ tokens', async () => {
      const { page, errors } = await newPage();
      await login(page, server.url, 'qing-admin');
      // Under 我的账号: few need them, so they are not in the top bar.
      await page.getByRole('link', { name: '我的账号' }).click();
      await page.getByRole('link', { name: '管理接入令牌' }).click();
      await page.getByRole('heading', { name: '扫描仪和程序接入', level: 1 }).waitFor();
      await page.getByLabel('用途').fill('二楼扫描仪');
      assert.equal(
        await page.getByLabel('有效期', { exact: true }).inputValue(),
        '365',
        'a year unless chosen otherwise',
      );
      await page.getByLabel('有效期', { exact: true }).selectOption('90');
      await page.getByRole('button', { name: '创建令牌' }).click();
      const token = (await page.locator('code.token').innerText()).trim();
      assert.match(token, /^adt_[0-9a-f]{12}_[\w-]{43}$/);
      const check = await fetch(`${server.url}/api/session`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(check.status, 200);
      await page.screenshot({ path: artifactPath('57-tokens.png'), fullPage: true });
      await page.getByRole('button', { name: '我已记下，关闭' }).click();
      await page.getByRole('button', { name: '吊销 二楼扫描仪' }).click();
      await page.getByRole('button', { name: '吊销', exact: true }).click();
      await page.getByText('没有令牌。').first().waitFor();
      const revoked = await fetch(`${server.url}/api/session`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(revoked.status, 401);
      // English, one click away: the accounts page in it.
      await page.getByRole('button', { name: 'English' }).click();
      await page.goto(`${server.url}/#/accounts`);
      await page.getByRole('heading', { name: 'Accounts', exact: true }).waitFor();
      await page.locator('tr[data-account="wang.qz"] .badge').waitFor();
      await page.screenshot({ path: artifactPath('59-accounts-english.png'), fullPage: true });
      assert.deepEqual(errors, []);
    });
  },
);
