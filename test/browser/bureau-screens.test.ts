import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { MESSAGES, type Language } from '../../client/src/i18n/messages.js';
import { accessibilityFindings, blocking, type Finding } from '../support/accessibility.js';
import { browserSkip, BrowserWindows } from '../support/browser.js';
import { PASSWORD, TestServer } from '../support/server.js';
import { embeddedTarget } from '../support/stores.js';
import { NOTICE } from '../support/texts.js';
import { ARCHIVE_UNIT } from '../../server/services/unit-directory.js';

/** The page's globals, as the callbacks run inside the browser see them. */
declare const document: {
  querySelectorAll(selector: string): ArrayLike<{ getAttribute(name: string): string | null }>;
};
declare const location: { hash: string };

/**
 * The bureau's screens in Debian's Chromium, as a county's administrator and the archive's top
 * level use them: buttons by role, the audit log's presets, the plain words of the top bar and
 * 我的账号, the top bar on one line at 1280 and 1366 px, the breadcrumb of a county, and where
 * two near-duplicate texts differ. Screenshots at 1280×800 go to SHOTS_DIR (Chinese and English).
 */
const SHOTS_DIR = process.env.SHOTS_DIR ?? path.resolve('test-artifacts', 'bureau');

/** NOTICE with one word changed in its last paragraph: 六月底 → 五月底. */
const NOTICE_REVISED = NOTICE.replace('次年六月底前', '次年五月底前');

describe('the bureau’s screens (Debian Chromium, embedded store)', { skip: browserSkip, timeout: 600_000 }, () => {
  let server: TestServer;
  const windows = new BrowserWindows();
  const findings: Finding[] = [];

  before(async () => {
    fs.mkdirSync(SHOTS_DIR, { recursive: true });
    server = await TestServer.start(embeddedTarget);
    await server.archive.services.directory.load(['13']);
    // A check of the archive while it is still empty: it covered 0 of 0 files.
    await server.archive.services.fixity.run('command');
    // A long name in the top bar, as a bureau's administrator has.
    await server.archive.services.accounts.create({
      username: 'top',
      displayName: '档案馆系统管理员',
      password: PASSWORD,
      role: 'admin',
      unit: ARCHIVE_UNIT,
    });
    await server.addAccountIn('qing-admin', 'admin', '130922');
    const clerk = await server.addAccountIn('qz-clerk', 'clerk', '130922100');
    const other = await server.addAccountIn('jn-clerk', 'clerk', '130922101');
    const a = await (await server.tokenClient(clerk)).upload('移交通知.txt', Buffer.from(NOTICE), {}, 'text/plain');
    const b = await (
      await server.tokenClient(other)
    ).upload('移交通知（修订）.txt', Buffer.from(NOTICE_REVISED), {}, 'text/plain');
    assert.deepEqual([a.status, b.status], [201, 201]);
    while ((await server.archive.services.nearDuplicates.runDue()) > 0);
  });
  after(async () => {
    await windows.closeAll();
    await server?.close();
  });

  /** A window at 1280×800 in `language`, logged in as `username`. */
  async function open(username: string, language: Language = 'zh-CN') {
    const window = await windows.open();
    const { page } = window;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.addInitScript((saved) => {
      (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem(
        'archive.language',
        saved,
      );
    }, language);
    const m = MESSAGES[language];
    await page.goto(server.url);
    await page.getByLabel(m.username, { exact: true }).fill(username);
    await page.getByLabel(m.password, { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: m.loginButton, exact: true }).click();
    await page.locator('header.topbar').waitFor();
    return window;
  }
  /** axe-core on what the page shows, and a screenshot of it. */
  async function look(page: Page, name: string) {
    findings.push(...(await accessibilityFindings(page, name)));
    await page.screenshot({ path: path.join(SHOTS_DIR, `${name}.png`), fullPage: true });
  }
  const noSeriousFindings = () =>
    assert.deepEqual(
      blocking(findings).map((f) => `${f.id} (${f.impact}) on ${f.page}`),
      [],
    );

  it('fixity: the start button only for the top level (the server lets only them); a county administrator is told who starts it; a check of nothing says so', async () => {
    const county = await open('qing-admin');
    await county.page.goto(`${server.url}/#/fixity`);
    await county.page.getByRole('heading', { name: '存储完整性校验' }).waitFor();
    await county.page.getByText('由档案馆（全部单位）的管理员启动').waitFor();
    assert.equal(await county.page.getByRole('button', { name: '立即开始校验' }).count(), 0);
    assert.equal(await county.page.getByText('可以在此处手动开始').count(), 0, 'not told to start one here');
    await county.page.getByRole('heading', { name: '没有需要校验的文件' }).waitFor();
    assert.equal(await county.page.getByText('通过：没有发现问题').count(), 0, 'not "passed" for 0 of 0 files');
    await county.page.getByText('这次校验开始时档案库中还没有保存文件').waitFor();
    await look(county.page, 'fixity-county-zh');

    const top = await open('top');
    await top.page.goto(`${server.url}/#/fixity`);
    await top.page.getByRole('heading', { name: '没有需要校验的文件' }).waitFor();
    // A refusal says why and stays said (the page reads its view again after a start).
    await top.page.route('**/api/verification', (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({
            status: 403,
            contentType: 'application/json',
            body: JSON.stringify({ error: 'forbidden', message: 'top-level administrators start it' }),
          })
        : route.fallback(),
    );
    await top.page.getByRole('button', { name: '立即开始校验' }).click();
    const refusal = top.page.getByRole('alert').filter({ hasText: '您没有权限执行此操作' });
    await refusal.waitFor();
    await top.page.waitForLoadState('networkidle');
    assert.equal(await refusal.count(), 1, 'the refusal is still shown after the view is read again');
    await top.page.unroute('**/api/verification');
    await top.page.getByRole('button', { name: '立即开始校验' }).click();
    await top.page.locator('[data-state="passed"]').waitFor();
    await top.page.getByText('已检查 2 / 2 个文件').waitFor();
    await look(top.page, 'fixity-top-zh');
    assert.deepEqual([...county.errors, ...top.errors], []);
  });

  it('the reports’ collision banner asks without being logged: one view of a report, one audit event', async () => {
    const { page, errors } = await open('top');
    const views = async () => (await server.store.audit.search({ action: 'report_viewed', limit: 1, offset: 0 })).total;
    const before = await views();
    await page.goto(`${server.url}/#/reports/savings`);
    await page.locator('dd[data-figure="uploads"]').waitFor();
    await page.waitForLoadState('networkidle');
    assert.equal(await views(), before + 1);
    assert.deepEqual(errors, []);
  });

  it('the audit log opens on 管理操作; 全部 and the other presets are one click away, and the address keeps the choice', async () => {
    const { page, errors } = await open('top');
    await page.getByRole('link', { name: '审计日志' }).click();
    await page.getByRole('heading', { name: '审计日志' }).waitFor();
    const presets = page.getByRole('group', { name: '显示' });
    assert.equal(await presets.getByRole('button', { name: '管理操作' }).getAttribute('aria-pressed'), 'true');
    // Only administrators' actions: the fixity check started above, not the uploads and logins.
    await page.waitForFunction(() => document.querySelectorAll('table.audit tbody tr[data-action]').length > 0);
    const actions = async () =>
      page.evaluate(() =>
        Array.from(document.querySelectorAll('table.audit tbody tr[data-action]')).map((r) =>
          r.getAttribute('data-action'),
        ),
      );
    assert.deepEqual([...new Set(await actions())], ['verification_started']);
    await look(page, 'audit-administration-zh');
    await presets.getByRole('button', { name: '全部' }).click();
    await page.waitForFunction(() => location.hash.includes('group=all'));
    await page.waitForFunction(
      () => document.querySelectorAll('table.audit tbody tr[data-action="upload"]').length > 0,
    );
    assert.ok((await actions()).includes('login'));
    await presets.getByRole('button', { name: '登录' }).click();
    await page.waitForFunction(() => location.hash.includes('group=signIn'));
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('table.audit tbody tr[data-action]')).every(
        (r) => r.getAttribute('data-action') === 'login',
      ),
    );
    assert.deepEqual(errors, []);
  });

  it('tokens are under 我的账号 as 扫描仪和程序接入, with a sentence on what they are for; the top bar has no 令牌', async () => {
    const { page, errors } = await open('qz-clerk');
    const bar = page.locator('header.topbar');
    assert.doesNotMatch(await bar.innerText(), /令牌/);
    await bar.getByRole('link', { name: '我的账号' }).click();
    const access = page.getByRole('region', { name: '扫描仪和程序接入' });
    await access.getByText('用“接入令牌”代替您的密码').waitFor();
    await look(page, 'own-account-zh');
    await access.getByRole('link', { name: '管理接入令牌' }).click();
    await page.getByRole('heading', { name: '扫描仪和程序接入', level: 1 }).waitFor();
    assert.equal(await bar.getByRole('link', { name: '我的账号' }).getAttribute('aria-current'), 'page');
    await look(page, 'tokens-zh');
    assert.deepEqual(errors, []);
  });

  for (const width of [1280, 1366])
    for (const language of ['zh-CN', 'en'] as const)
      it(`the administrator’s top bar is one line at ${width} px (${language}), and 退出登录 is a quiet link`, async () => {
        const { page, errors } = await open('top', language);
        await page.setViewportSize({ width, height: 800 });
        await page.goto(`${server.url}/#/reports/savings`);
        await page.locator('dd[data-figure="uploads"]').waitFor();
        const bar = await page.locator('header.topbar').evaluate((header) => {
          const h = header as unknown as {
            children: ArrayLike<{
              getBoundingClientRect(): { top: number; height: number; left: number; right: number };
            }>;
            getBoundingClientRect(): { height: number };
            querySelector(s: string): { getBoundingClientRect(): { height: number } };
          };
          // Items on one line share their middle (the bar centres them); a wrapped one is a line lower.
          const middles = Array.from(h.children).map((c) => {
            const r = c.getBoundingClientRect();
            return r.top + r.height / 2;
          });
          const boxes = Array.from(h.children).map((c) => c.getBoundingClientRect());
          return {
            left: Math.min(...boxes.map((b) => b.left)),
            right: Math.max(...boxes.map((b) => b.right)),
            spread: Math.max(...middles) - Math.min(...middles),
            height: h.getBoundingClientRect().height,
            nav: h.querySelector('nav').getBoundingClientRect().height,
            link: h.querySelector('nav a').getBoundingClientRect().height,
          };
        });
        assert.ok(bar.spread < 4, `every item on one line: ${JSON.stringify(bar)}`);
        assert.ok(bar.nav < bar.link * 1.5, `the pages on one line: ${JSON.stringify(bar)}`);
        assert.ok(bar.height < 64, `one line high: ${JSON.stringify(bar)}`);
        // Every page within the window (every tab of a top-level administrator, in English too).
        assert.ok(bar.left >= 0 && bar.right <= width, `the whole bar in the window: ${JSON.stringify(bar)}`);
        const logout = page.getByRole('button', { name: MESSAGES[language].logout });
        const look_ = await logout.evaluate((b) => {
          const style = (
            globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }
          ).getComputedStyle(b);
          return { background: style.backgroundColor, weight: style.fontWeight };
        });
        assert.equal(look_.background, 'rgba(0, 0, 0, 0)', 'no filled button');
        assert.ok(Number(look_.weight) < 600, 'not bold');
        if (width === 1280) await look(page, `reports-top-${language === 'en' ? 'en' : 'zh'}`);
        assert.deepEqual(errors, []);
      });

  it('a county administrator’s breadcrumb starts at its own county: no link above it, every link works', async () => {
    const { page, errors } = await open('qing-admin');
    await page.goto(`${server.url}/#/reports/savings`);
    await page.waitForURL(/county=/);
    const trail = page.getByRole('navigation', { name: '当前单位范围' });
    assert.equal(await trail.innerText(), '沧州市 / 青县');
    assert.equal(await trail.getByRole('link').count(), 0, 'nothing to go up to');
    // Down to a town: the county is the one step up.
    await page.goto(
      `${server.url}/#/reports/savings?city=${encodeURIComponent('沧州市')}&county=${encodeURIComponent('青县')}&town=${encodeURIComponent('清州镇')}`,
    );
    await trail.getByText('清州镇').waitFor();
    assert.equal(await trail.innerText(), '沧州市 / 青县 › 清州镇');
    assert.doesNotMatch(await trail.innerText(), /全部单位/);
    const links = trail.getByRole('link');
    assert.equal(await links.count(), 1);
    await links.first().click();
    await page.waitForFunction(() => !decodeURIComponent(location.hash).includes('town='));
    assert.match(decodeURIComponent(await page.evaluate(() => location.hash)), /city=沧州市&county=青县/);
    assert.equal(await trail.innerText(), '沧州市 / 青县');
    await page.locator('dd[data-figure="uploads"]').waitFor();
    await look(page, 'reports-county-zh');
    assert.deepEqual(errors, []);
  });

  for (const language of ['zh-CN', 'en'] as const)
    it(`a near-duplicate pair’s detail marks the words in which the two texts differ (${language})`, async () => {
      const { page, errors } = await open('top', language);
      await page.goto(`${server.url}/#/reports/near-duplicates`);
      const quotes = page.locator('.near-diff blockquote');
      await quotes.first().waitFor();
      const marked = await quotes.evaluateAll((all) =>
        all.map((q) =>
          Array.from(
            (q as unknown as { querySelectorAll(s: string): ArrayLike<{ textContent: string }> }).querySelectorAll(
              'mark',
            ),
          ).map((m) => m.textContent),
        ),
      );
      assert.deepEqual(marked.map((m) => [...m].sort()).sort(), [['五'], ['六']]);
      // The algorithms are for the help text above the table, not for each pair's details.
      const table = await page.locator('[data-report="near-duplicates"] table.report').evaluate((t) => t.textContent);
      assert.doesNotMatch(table ?? '', /SimHash|海明|Hamming|Jaccard/);
      await look(page, `near-duplicates-${language === 'en' ? 'en' : 'zh'}`);
      assert.deepEqual(errors, []);
    });

  it('English screens too, the administration pages with their 操作 columns, and axe-core finds nothing serious or critical on any of them', async () => {
    const screens: Array<[string, Language, string, string]> = [
      ['qing-admin', 'en', 'fixity', 'fixity-county-en'],
      ['top', 'en', 'fixity', 'fixity-top-en'],
      ['top', 'en', 'audit', 'audit-administration-en'],
      ['qz-clerk', 'en', 'password', 'own-account-en'],
      ['qz-clerk', 'en', 'tokens', 'tokens-en'],
      ['top', 'zh-CN', 'accounts', 'accounts-zh'],
      ['top', 'en', 'accounts', 'accounts-en'],
      ['qing-admin', 'zh-CN', 'units', 'units-county-zh'],
      ['qing-admin', 'en', 'reports/savings', 'reports-county-en'],
    ];
    for (const [who, language, hash, name] of screens) {
      const window = await open(who, language);
      const { page, errors } = window;
      await page.goto(`${server.url}/#/${hash}`);
      await page.locator('main h1:visible').waitFor();
      await page.waitForLoadState('networkidle');
      await look(page, name);
      if (hash === 'accounts') {
        // Each row's actions start at the same left edge, on whichever line they fall.
        const edges = await page.locator('table.accounts td.actions').evaluateAll((cells) =>
          cells.map((cell) => {
            const c = cell as unknown as {
              getBoundingClientRect(): { left: number };
              querySelectorAll(s: string): ArrayLike<{ getBoundingClientRect(): { left: number; top: number } }>;
            };
            const lineStarts = Array.from(c.querySelectorAll(':scope > button')).filter((b, i, all) =>
              i === 0 ? true : b.getBoundingClientRect().top > all[i - 1]!.getBoundingClientRect().top + 2,
            );
            return lineStarts.map((b) => Math.round(b.getBoundingClientRect().left - c.getBoundingClientRect().left));
          }),
        );
        assert.ok(
          edges.length > 0 && edges.every((lines) => Math.max(...lines) - Math.min(...lines) <= 1),
          `every line of a row's actions starts at the same edge: ${JSON.stringify(edges)}`,
        );
      }
      assert.deepEqual(errors, []);
      await window.close();
    }
    noSeriousFindings();
  });
});
