import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import type { Role } from '../../shared/schemas.js';
import { artifactPath, browserSkip, fieldProblem, focused, launchContext } from '../support/browser.js';
import { PASSWORD, TestServer, type Client } from '../support/server.js';
import { chartBars } from '../support/chart.js';
import { MD5_COLLISION } from '../support/content.js';
import { damageContent, embeddedTarget } from '../support/stores.js';
import { NOTICE, NOTICE_FROM_THE_WEB, OTHER_NOTICE } from '../support/texts.js';

/** The page's globals, as the callbacks run inside the browser see them. */
declare const document: {
  querySelector(selector: string): unknown;
  querySelectorAll(
    selector: string,
  ): ArrayLike<{ textContent: string | null; getAttribute(name: string): string | null }>;
};
declare const location: { hash: string };
declare const window: {
  cspViolations: string[];
  addEventListener(
    type: string,
    listener: (e: {
      violatedDirective: string;
      blockedURI: string;
      sourceFile: string;
      lineNumber: number;
      columnNumber: number;
    }) => void,
  ): void;
};

/**
 * The administrators' reports and audit log in Debian's Chromium, over an archive that clerks of
 * two cities filled through the real upload API. Every figure below was worked out by hand from
 * the uploads listed in `before`.
 */

const KiB = 1024;
/** 青县's towns, as the unit filter offers them after 全部 (the directory's order). */
const QINGXIAN_TOWN_CHOICES = [
  '全部',
  '清州镇',
  '金牛镇',
  '新兴镇',
  '流河镇',
  '木门店镇',
  '马厂镇',
  '盘古镇',
  '曹寺镇',
  '上伍乡',
  '陈嘴乡',
  '青县农场',
];
/** The units of the unit directory (Hebei's divisions) the accounts belong to. */
const UNITS = {
  qingzhou: '130922100', // 沧州市 / 青县 / 清州镇
  jinniu: '130922101', // 沧州市 / 青县 / 金牛镇
  leshou: '130929100', // 沧州市 / 献县 / 乐寿镇
  cangzhou: '130900', // 沧州市
  qingxian: '130922', // 沧州市 / 青县
  zhengkou: '131126100', // 衡水市 / 故城县 / 郑口镇
};

async function login(page: Page, url: string, username: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('用户名').fill(username);
  await page.getByLabel('密码').fill(PASSWORD);
  await page.getByRole('button', { name: '登录' }).click();
  await page.getByRole('heading', { name: '上传档案' }).waitFor();
}

/** The table's cells, row by row, as the reader sees them. */
async function tableRows(page: Page, selector = 'table.report > tbody > tr:not(.detail)'): Promise<string[][]> {
  return page
    .locator(selector)
    .evaluateAll((rows) =>
      rows.map((row) =>
        Array.from((row as unknown as { cells: ArrayLike<{ innerText: string }> }).cells, (cell) =>
          cell.innerText.trim(),
        ),
      ),
    );
}

/** A select's choices, as the reader sees them. */
async function options(select: Locator): Promise<string[]> {
  return (await select.locator('option').allInnerTexts()).map((text) => text.trim());
}

async function figures(page: Page): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of ['uploads', 'savedUploads', 'savedBytes'])
    out[name] = (await page.locator(`dd[data-figure="${name}"]`).innerText()).trim();
  return out;
}

describe(
  'the administrators’ reports and audit log (Debian Chromium, embedded store)',
  { skip: browserSkip, timeout: 300_000 },
  () => {
    let server: TestServer;
    const contexts: Array<{ close(): Promise<void> }> = [];
    const newPage = async (locale?: string) => {
      const launched = await launchContext(locale ? { locale } : {});
      contexts.push(launched);
      const page = launched.context.pages()[0] ?? (await launched.context.newPage());
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      // The page's CSP ('self' scripts, inline style attributes) must hold with Chart.js drawing.
      await page.addInitScript(() => {
        window.cspViolations = [];
        window.addEventListener('securitypolicyviolation', (e) =>
          window.cspViolations.push(
            `${e.violatedDirective} ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`,
          ),
        );
      });
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) errors.push(m.text());
      });
      const cspViolations = () => page.evaluate(() => window.cspViolations);
      return { page, errors, cspViolations };
    };

    before(async () => {
      server = await TestServer.start(embeddedTarget);
      await server.archive.services.directory.load(['13']);
      const clients: Record<string, Client> = {};
      const person = async (username: string, role: Role, unitId: string) => {
        clients[username] = await server.tokenClient(await server.addAccountIn(username, role, unitId));
      };
      // The archive's own administrator sees every city; qing-admin only its county, 青县.
      await person('chief', 'admin', 'archive');
      await person('qing-admin', 'admin', UNITS.qingxian);
      await person('qz-clerk', 'clerk', UNITS.qingzhou);
      await person('jn-clerk', 'clerk', UNITS.jinniu);
      await person('ls-clerk', 'clerk', UNITS.leshou);
      await person('cz-clerk', 'clerk', UNITS.cangzhou);
      await person('zk-clerk', 'clerk', UNITS.zhengkou);

      const A = randomBytes(100 * KiB);
      const B = randomBytes(200 * KiB);
      const C = randomBytes(50 * KiB);
      const D = randomBytes(300 * KiB);
      // In this order: the first upload of each content stores it, every later one saves its size.
      const uploads: Array<[string, string, Buffer, 'stored' | 'duplicate']> = [
        ['qz-clerk', '县志.pdf', A, 'stored'],
        ['qz-clerk', '县志（再次）.pdf', A, 'duplicate'], // saves 100 KiB; qz-clerk's repeat
        ['qz-clerk', '年鉴.pdf', B, 'stored'],
        ['jn-clerk', '县志.pdf', A, 'duplicate'], // 100 KiB
        ['jn-clerk', '年鉴.pdf', B, 'duplicate'], // 200 KiB
        ['jn-clerk', '照片.tif', C, 'stored'],
        ['ls-clerk', '年鉴（复印）.pdf', B, 'duplicate'], // 200 KiB
        ['zk-clerk', '照片.tif', C, 'duplicate'], // 50 KiB
        ['zk-clerk', '地图.pdf', D, 'stored'],
        ['cz-clerk', '地图.pdf', D, 'duplicate'], // 300 KiB
        ['zk-clerk', '碰撞-1.bin', MD5_COLLISION[0]!, 'stored'],
        ['zk-clerk', '碰撞-2.bin', MD5_COLLISION[1]!, 'stored'], // same MD5, other content: stored apart
      ];
      for (const [who, name, data, expected] of uploads) {
        const res = await clients[who]!.upload(name, data);
        assert.equal(res.status, expected === 'stored' ? 201 : 200, `${who} ${name}: ${await res.clone().text()}`);
        assert.equal(((await res.json()) as { status: string }).status, expected, `${who} ${name}`);
      }
    });
    after(async () => {
      for (const c of contexts) await c.close().catch(() => undefined);
      await server?.close();
    });

    it('space saved: per city, drilled down to a city by its bar, filtered to one county, with a chart and a CSV of exactly that view', async () => {
      const { page, errors, cspViolations } = await newPage();
      await login(page, server.url, 'chief');
      await page.getByRole('link', { name: '报表' }).click();
      await page.getByRole('heading', { name: '报表' }).waitFor();
      await page.getByRole('link', { name: '节省空间' }).click();
      await page.locator('[data-report="savings"] table.report').waitFor();

      // Two colliding files exist: said on top of every table, in red.
      const alarm = page.getByRole('alert').filter({ hasText: '待核查文件' });
      assert.match(await alarm.innerText(), /有 2 个待核查文件：内容不同，却被识别为同一文件，已分别保存，请核查来源/);

      // No unit filter: one row per city. 沧州市: 8 uploads, 5 saved (100+100+200+200+300 KiB); 衡水市: 4 uploads, 1 saved (50 KiB).
      assert.deepEqual(await tableRows(page), [
        ['沧州市', '8', '5', '900.0 KB'],
        ['衡水市', '4', '1', '50.0 KB'],
      ]);
      assert.deepEqual(await figures(page), { uploads: '12', savedUploads: '6 (50%)', savedBytes: '950.0 KB' });
      await page.screenshot({ path: artifactPath('20-reports-savings.png'), fullPage: true });

      // The chart's biggest bar is 沧州市: clicking it drills down to the city's counties.
      const bars = await chartBars(page);
      assert.equal(bars.length, 2, JSON.stringify(bars));
      assert.ok(bars[0]!.height > bars[1]!.height * 10, `900 KiB against 50 KiB: ${JSON.stringify(bars)}`);
      assert.deepEqual(
        bars.map((bar) => bar.hatched),
        [false, false],
        'both cities can be drilled into: solid bars',
      );
      assert.equal(await page.locator('.chart-legend').count(), 0, 'no legend for one kind of bar');
      const box = (await page.locator('.chart canvas').boundingBox())!;
      await page.mouse.click(box.x + bars[0]!.x, box.y + bars[0]!.y);
      await page.waitForFunction(() => decodeURIComponent(location.hash).includes('city=沧州市'));
      await page.locator('table.report button.drill', { hasText: '青县' }).waitFor();
      // The city's own units (沧州市 itself, no county) are a row of their own.
      assert.deepEqual(await tableRows(page), [
        ['青县', '6', '3', '400.0 KB'],
        ['沧州市本级', '1', '1', '300.0 KB'],
        ['献县', '1', '1', '200.0 KB'],
      ]);
      await page.screenshot({ path: artifactPath('21-reports-savings-city.png'), fullPage: true });

      // The unit filter cascades: 市 first, then its 县（市、区）, then its 乡（镇、街道）; a county without
      // its city cannot be asked for.
      await page.getByRole('button', { name: '清除条件' }).click();
      // The cleared view comes with a new filter form (its fields start from the link): wait for it.
      await page.locator('[data-report="savings"] table.report', { hasText: '衡水市' }).waitFor();
      const city = page.getByLabel('市', { exact: true });
      const county = page.getByLabel('县（市、区）', { exact: true });
      const town = page.getByLabel('乡（镇、街道）', { exact: true });
      assert.ok(await county.isDisabled(), 'no county before its city');
      assert.ok(await town.isDisabled(), 'no town before its county');
      // The archive's administrator chooses among Hebei's cities (the directory's, in its order).
      await city.locator('option', { hasText: '衡水市' }).waitFor({ state: 'attached' });
      assert.deepEqual(await options(city), [
        '全部',
        '石家庄市',
        '唐山市',
        '秦皇岛市',
        '邯郸市',
        '邢台市',
        '保定市',
        '张家口市',
        '承德市',
        '沧州市',
        '廊坊市',
        '衡水市',
      ]);
      await city.selectOption('沧州市');
      await county.locator('option', { hasText: '青县' }).waitFor({ state: 'attached' });
      assert.ok(await county.isEnabled());
      const counties = await options(county);
      assert.equal(counties.length, 1 + 19, '沧州市’s 19 counties, districts and zones');
      assert.ok(counties.includes('献县') && !counties.includes('故城县'), counties.join(' '));
      // Nineteen choices: a box finds one by typing.
      await page.getByLabel('查找县（市、区）').fill('献');
      assert.deepEqual(await options(county), ['全部', '献县']);
      await page.screenshot({ path: artifactPath('22-reports-unit-find.png') });
      await page.getByLabel('查找县（市、区）').fill('');
      await county.selectOption('青县');
      await town.locator('option', { hasText: '金牛镇' }).waitFor({ state: 'attached' });
      assert.deepEqual(await options(town), QINGXIAN_TOWN_CHOICES);
      await town.selectOption('金牛镇');
      // Another city empties the levels below it; 全部 closes them.
      await city.selectOption('衡水市');
      await county.locator('option', { hasText: '故城县' }).waitFor({ state: 'attached' });
      assert.equal(await county.inputValue(), '');
      assert.ok(await town.isDisabled());
      assert.equal(await town.inputValue(), '');
      await city.selectOption('');
      assert.ok(await county.isDisabled());
      await page.screenshot({ path: artifactPath('22-reports-unit-cascade.png'), fullPage: true });

      // A day that does not exist: said at the field, before anything is sent, and the keyboard is taken there.
      const to = page.getByLabel('至', { exact: true });
      await to.fill('2026-02-30');
      await page.getByRole('button', { name: '筛选', exact: true }).click();
      // Read with the field after its format hint.
      assert.match(
        await fieldProblem(to),
        /^可输入 2026年3月1日 或 2026-03-01.* 请填写有效日期，如 2026年3月1日 或 2026-03-01$/,
      );
      assert.ok(await focused(to));
      await page.screenshot({ path: artifactPath('22-reports-filter-error.png'), fullPage: true });
      await to.fill('');

      // One county, chosen with the keyboard: a row per town; 清州镇 saved one upload of A, 金牛镇 A and B.
      await city.focus();
      for (let i = 0; i < 9; i++) await page.keyboard.press('ArrowDown'); // 全部 → 沧州市, the ninth city
      assert.equal(await city.inputValue(), '沧州市');
      await county.locator('option', { hasText: '青县' }).waitFor({ state: 'attached' });
      await page.keyboard.press('Tab');
      assert.ok(await focused(county), 'the county comes next');
      for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowDown'); // 新华区, 运河区, 沧县, 青县
      assert.equal(await county.inputValue(), '青县');
      await page.getByRole('button', { name: '筛选', exact: true }).click();
      await page.locator('table.report button.drill', { hasText: '金牛镇' }).waitFor();
      const countyRows = [
        ['金牛镇', '3', '2', '300.0 KB'],
        ['清州镇', '3', '1', '100.0 KB'],
      ];
      assert.deepEqual(await tableRows(page), countyRows);
      assert.deepEqual(await figures(page), { uploads: '6', savedUploads: '3 (50%)', savedBytes: '400.0 KB' });
      assert.match(await page.locator('th[aria-sort="descending"]').innerText(), /^节省空间/);
      const drawn = await chartBars(page);
      assert.equal(drawn.length, 2, 'a bar per town, drawn on the canvas');
      assert.ok(
        Math.abs(drawn[0]!.height / drawn[1]!.height - 3) < 0.1,
        `300 KiB against 100 KiB: ${JSON.stringify(drawn)}`,
      );
      assert.match(
        (await page.locator('.chart canvas').getAttribute('aria-label'))!,
        /^各单位节省的空间: 金牛镇 300\.0 KB，清州镇 100\.0 KB$/,
      );
      assert.equal(await page.locator('.trail').innerText(), '全部单位 › 沧州市 › 青县');
      await page.screenshot({ path: artifactPath('23-reports-savings-county.png'), fullPage: true });

      // The view is in the address: a reload shows it again.
      await page.reload();
      await page.locator('table.report button.drill', { hasText: '金牛镇' }).waitFor();
      assert.deepEqual(await tableRows(page), countyRows);

      // The CSV is the same view, whole, for people: BOM, Chinese header, every row in the table's
      // order, readable sizes.
      const exportLink = page.getByRole('link', { name: '导出 CSV（全部 2 条）' });
      const [download] = await Promise.all([page.waitForEvent('download'), exportLink.click()]);
      assert.match(download.suggestedFilename(), /^savings-\d{4}-\d{2}-\d{2}\.csv$/);
      const csv = fs.readFileSync(await download.path());
      assert.deepEqual([...csv.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 byte-order mark');
      assert.equal(
        csv.subarray(3).toString('utf8'),
        [
          // Sizes as numbers a spreadsheet adds up, the unit in the header.
          '市,县（市、区）,乡（镇、街道）,上传次数,秒传次数,节省的空间（字节）',
          '沧州市,青县,金牛镇,3,2,307200',
          '沧州市,青县,清州镇,3,1,102400',
          '',
        ].join('\r\n'),
      );
      const exported = new URL((await exportLink.getAttribute('href'))!, server.url);
      assert.deepEqual(Object.fromEntries(exported.searchParams), {
        city: '沧州市',
        county: '青县',
        sort: 'savedBytes',
        order: 'desc',
        format: 'csv',
        lang: 'zh-CN',
      });

      // A header sorts; clicking it again reverses.
      await page.getByRole('button', { name: /^节省空间/ }).click();
      await page.waitForFunction(() => document.querySelector('th[aria-sort="ascending"]') !== null);
      await page.waitForFunction(() =>
        document.querySelectorAll('table.report tbody tr')[0]?.textContent?.startsWith('清州镇'),
      );
      assert.deepEqual(await tableRows(page), [...countyRows].reverse());

      // Over time: every upload was today, so one day.
      await page.getByRole('button', { name: '按日' }).click();
      await page.locator('th', { hasText: '时间' }).waitFor();
      const byDay = await tableRows(page);
      assert.equal(byDay.length, 1);
      assert.deepEqual(byDay[0]!.slice(1), ['6', '3', '400.0 KB']);
      assert.equal((await chartBars(page)).length, 1);
      await page.screenshot({ path: artifactPath('24-reports-savings-by-day.png'), fullPage: true });
      assert.deepEqual(await cspViolations(), []);
      assert.deepEqual(errors, []);
    });

    it('repeat uploaders per user open that user’s entries; cross-unit rows open to their units; the collisions are listed', async () => {
      const { page, errors, cspViolations } = await newPage();
      await login(page, server.url, 'chief');
      await page.goto(`${server.url}/#/reports/repeat-uploaders?group=user`);
      await page.locator('[data-report="repeat-uploaders"] table.report').waitFor();
      // Only qz-clerk uploaded one file twice: 1 file, 2 uploads, 1 repeat (no copy inside one
      // upload, 1 re-send), 100 KiB sent again.
      const [user] = await tableRows(page);
      assert.deepEqual(user!.slice(0, 8), ['qz-clerk', '沧州市 / 青县 / 清州镇', '1', '2', '1', '0', '1', '100.0 KB']);
      await page.getByRole('button', { name: 'qz-clerk' }).click();
      await page.waitForFunction(() => decodeURIComponent(location.hash).includes('user=qz-clerk'));
      await page.locator('th', { hasText: '文件名' }).waitFor();
      const [entry] = await tableRows(page);
      assert.deepEqual(entry!.slice(0, 5), ['qz-clerk', '沧州市 / 青县 / 清州镇', '县志.pdf', '100.0 KB', '2']);
      assert.equal(await page.getByRole('button', { name: '按文件' }).getAttribute('aria-pressed'), 'true');
      await page.screenshot({ path: artifactPath('25-reports-repeat-user.png'), fullPage: true });
      // Days are calendar days: nothing was uploaded up to 2000-01-01.
      await page.getByLabel('至', { exact: true }).fill('2000-01-01');
      await page.getByRole('button', { name: '筛选', exact: true }).click();
      await page.getByText('没有符合条件的记录。').waitFor();
      assert.ok((await page.evaluate(() => location.hash)).includes('to=2000-01-01'));
      assert.equal(
        await page.getByLabel('至', { exact: true }).inputValue(),
        '2000年1月1日',
        'written as the page writes days',
      );
      await page.getByRole('button', { name: '清除条件' }).click();
      await page.locator('table.report').waitFor();

      // Cross-unit: B by three units, A, C and D by two each; B opens to its three units, earliest first.
      await page.getByRole('link', { name: '跨单位重复' }).click();
      await page.locator('[data-report="cross-unit"] table.report').waitFor();
      const cross = await tableRows(page);
      assert.deepEqual(cross[0]!.slice(0, 3), ['年鉴.pdf', '200.0 KB', '3'], 'most units first');
      // Each row leads to its file, which the administrator can fetch.
      const fileHref = await page
        .locator('[data-report="cross-unit"] table.report a[download="年鉴.pdf"]')
        .first()
        .getAttribute('href');
      assert.match(fileHref!, /^\/api\/files\/[0-9a-f]{24}$/);
      assert.equal(await page.evaluate(async (href) => (await fetch(href, { method: 'HEAD' })).status, fileHref!), 200);
      assert.deepEqual(
        cross
          .slice(1)
          .map((r) => `${r[0]} ${r[2]}`)
          .sort(),
        ['县志.pdf 2', '地图.pdf 2', '照片.tif 2'],
      );
      assert.equal(await page.getByRole('button', { name: /年鉴\.pdf/ }).getAttribute('aria-expanded'), 'false');
      await page.getByRole('button', { name: /年鉴\.pdf/ }).click();
      const uploaders = page.locator('table.uploaders tbody tr');
      await uploaders.first().waitFor();
      assert.deepEqual(
        (await uploaders.allInnerTexts()).map((r) => r.split('\t').slice(0, 3).join(' | ')),
        [
          '沧州市 / 青县 / 清州镇 | qz-clerk | 1',
          '沧州市 / 青县 / 金牛镇 | jn-clerk | 1',
          '沧州市 / 献县 / 乐寿镇 | ls-clerk | 1',
        ],
      );
      assert.equal(await page.getByRole('button', { name: /年鉴\.pdf/ }).getAttribute('aria-expanded'), 'true');
      await page.screenshot({ path: artifactPath('26-reports-cross-unit.png'), fullPage: true });

      await page.getByRole('link', { name: '查看待核查文件' }).click();
      await page.locator('[data-report="collisions"] table.report').waitFor();
      const collisions = await tableRows(page);
      assert.deepEqual(collisions.map((r) => [r[0], r[1], r[4]]).sort(), [
        ['碰撞-1.bin', '128 B', '2'],
        ['碰撞-2.bin', '128 B', '2'],
      ]);
      // The checksums, for whoever traces where the files came from: folded under 详情 until asked for.
      const md5 = page.getByText('79054025255fb1a26e4bc422aef54eb4');
      assert.equal(await md5.first().isVisible(), false);
      for (const summary of await page.locator('[data-report="collisions"] table.report summary').all())
        await summary.click();
      assert.equal(await md5.count(), 2);
      assert.ok(await md5.first().isVisible());
      await page.screenshot({ path: artifactPath('27-reports-collisions.png'), fullPage: true });

      // In English, the same view.
      await page.getByRole('button', { name: 'English' }).click();
      await page.getByRole('heading', { name: 'Reports' }).waitFor();
      await page
        .getByRole('alert')
        .filter({ hasText: '2 files to check: different content taken for the same file' })
        .waitFor();
      await page.getByRole('link', { name: 'Space saved' }).click();
      await page.getByRole('button', { name: /^Space saved/ }).waitFor();
      await page.screenshot({ path: artifactPath('28-reports-english.png'), fullPage: true });
      await page.getByRole('button', { name: '中文' }).click();
      assert.deepEqual(await cspViolations(), []);
      assert.deepEqual(errors, []);
    });

    it('a quick period fills both days and keeps the other filters; the chosen one shows pressed', async () => {
      const { page, errors, cspViolations } = await newPage();
      await login(page, server.url, 'chief');
      await page.goto(`${server.url}/#/reports/savings?city=${encodeURIComponent('沧州市')}`);
      await page.locator('table.report').waitFor();
      const lastYear = page.getByRole('group', { name: '常用时间段' }).getByRole('button', { name: '上一年' });
      assert.equal(await lastYear.getAttribute('aria-pressed'), 'false');
      await lastYear.click();
      const year = new Date().getFullYear() - 1;
      await page.waitForFunction(
        (y) => decodeURIComponent(location.hash).includes(`from=${y}-01-01&to=${y}-12-31`),
        year,
      );
      assert.match(decodeURIComponent(await page.evaluate(() => location.hash)), /city=沧州市/);
      await page.locator('.quick-periods button[aria-pressed="true"]', { hasText: '上一年' }).waitFor();
      assert.equal(await page.getByLabel('从', { exact: true }).inputValue(), `${year}年1月1日`);
      assert.equal(await page.getByLabel('至', { exact: true }).inputValue(), `${year}年12月31日`);
      // The seeded uploads are of this year: none last year.
      await page.locator('p.empty').waitFor();
      await page.emulateMedia({ media: 'print' });
      await page.screenshot({ path: artifactPath('24-reports-print.png'), fullPage: true });
      assert.equal(await page.locator('.quick-periods').isVisible(), false, 'no controls on paper');
      await page.emulateMedia({ media: 'screen' });
      assert.deepEqual(await cspViolations(), []);
      assert.deepEqual(errors, []);
    });

    it('a county administrator’s unit filter has its city and county fixed and offers its own towns only', async () => {
      const { page, errors, cspViolations } = await newPage();
      await login(page, server.url, 'qing-admin');
      await page.getByRole('link', { name: '报表' }).click();
      // The reports open on its county.
      await page.waitForURL(/#\/reports\/[a-z-]+\?city=.*county=/);
      await page.getByRole('link', { name: '节省空间' }).click();
      await page.locator('[data-report="savings"] table.report').waitFor();
      const city = page.getByLabel('市', { exact: true });
      const county = page.getByLabel('县（市、区）', { exact: true });
      const town = page.getByLabel('乡（镇、街道）', { exact: true });
      // Shown, read-only, not offered: nothing outside its county can be chosen.
      assert.equal(await city.inputValue(), '沧州市');
      assert.equal(await county.inputValue(), '青县');
      assert.equal(await city.evaluate((e) => (e as unknown as { readOnly: boolean }).readOnly), true);
      assert.equal(await county.evaluate((e) => (e as unknown as { readOnly: boolean }).readOnly), true);
      assert.equal(await page.locator('select[name=city], select[name=county]').count(), 0);
      await town.locator('option', { hasText: '金牛镇' }).waitFor({ state: 'attached' });
      const towns = await options(town);
      assert.deepEqual(towns, QINGXIAN_TOWN_CHOICES);
      await page.screenshot({ path: artifactPath('35-reports-county-admin-filter.png'), fullPage: true });

      // One of its towns: jn-clerk's three uploads there, two of them saved.
      await town.selectOption('金牛镇');
      await page.getByRole('button', { name: '筛选', exact: true }).click();
      await page.waitForFunction(() => decodeURIComponent(location.hash).includes('town=金牛镇'));
      await page.locator('.trail', { hasText: '金牛镇' }).waitFor();
      // Its breadcrumb starts at its own county: nothing above it to go to.
      assert.equal(await page.locator('.trail').innerText(), '沧州市 / 青县 › 金牛镇');
      await page.locator('dd[data-figure="uploads"]', { hasText: '3' }).waitFor();
      assert.deepEqual(await figures(page), { uploads: '3', savedUploads: '2 (66.7%)', savedBytes: '300.0 KB' });
      assert.equal(await town.inputValue(), '金牛镇', 'the town in force stays chosen');

      // A link to another city: refused, and the filter still shows the county's own reach.
      await page.goto(`${server.url}/#/reports/savings?city=${encodeURIComponent('衡水市')}`);
      await page.getByText('所选单位不在您的管理范围内', { exact: false }).first().waitFor();
      assert.equal(await city.inputValue(), '沧州市');
      assert.equal(await county.inputValue(), '青县');

      // In English, the same filter.
      await page.goto(`${server.url}/#/reports/savings`);
      await page.getByRole('button', { name: 'English' }).click();
      await page.getByRole('heading', { name: 'Reports' }).waitFor();
      assert.equal(await page.getByLabel('City', { exact: true }).inputValue(), '沧州市');
      await page
        .getByLabel('Township (town, subdistrict)', { exact: true })
        .locator('option', { hasText: 'All' })
        .waitFor({ state: 'attached' });
      await page.screenshot({ path: artifactPath('35-reports-county-admin-filter-en.png') });
      await page.getByRole('button', { name: '中文' }).click();
      assert.deepEqual(await cspViolations(), []);
      assert.deepEqual(errors, []);
    });

    it('days are written in the page’s language whatever the browser’s: Chinese on an English browser, and English', async () => {
      const { page, errors, cspViolations } = await newPage('en-US');
      assert.equal(
        await page.evaluate(() => (globalThis as unknown as { navigator: { language: string } }).navigator.language),
        'en-US',
      );
      await login(page, server.url, 'chief');
      await page.goto(`${server.url}/#/reports/savings?from=2026-03-01&to=2026-03-31`);
      await page.locator('[data-report="savings"]').waitFor();
      const from = page.getByLabel('从', { exact: true });
      const to = page.getByLabel('至', { exact: true });
      assert.equal(await from.inputValue(), '2026年3月1日');
      assert.equal(await to.inputValue(), '2026年3月31日');
      // Its format hint, as a screen reader reads it with the field.
      const described = (await from.getAttribute('aria-describedby'))!.split(' ');
      assert.match(await page.locator(`[id="${described[0]}"]`).innerText(), /2026年3月1日 或 2026-03-01/);
      // The browser's own date input on the same page: the browser's language (mm/dd/yyyy), not the page's.
      await page.evaluate(() => {
        const doc = (
          globalThis as unknown as {
            document: { createElement(t: string): Record<string, unknown>; body: { append(e: unknown): void } };
          }
        ).document;
        const native = doc.createElement('input');
        Object.assign(native, { type: 'date', lang: 'zh-CN', value: '2026-03-01', id: 'native-date' });
        doc.body.append(native);
      });
      await page.locator('#native-date').screenshot({ path: artifactPath('36-native-date-en-US-browser-zh-page.png') });
      await page.locator('#native-date').evaluate((e) => (e as unknown as { remove(): void }).remove());

      // The calendar: the month in Chinese, Monday first; arrow keys move, Enter chooses, Esc closes.
      await page.getByRole('button', { name: '打开日历：从' }).click();
      const calendar = page.getByRole('dialog', { name: '选择日期：从' });
      await calendar.waitFor();
      assert.equal((await calendar.locator('.calendar-month').innerText()).trim(), '2026年3月');
      assert.deepEqual(await calendar.locator('th').allInnerTexts(), [
        '周一',
        '周二',
        '周三',
        '周四',
        '周五',
        '周六',
        '周日',
      ]);
      // The field's day is focused, named in full for a screen reader.
      await calendar.locator('td[data-day="2026-03-01"]:focus').waitFor();
      assert.equal(await calendar.locator('td:focus').getAttribute('aria-label'), '2026年3月1日星期日');
      assert.equal(await calendar.locator('td:focus').getAttribute('aria-selected'), 'true');
      await page.screenshot({ path: artifactPath('37-date-picker-zh.png') });
      await page.keyboard.press('ArrowDown'); // a week later
      await page.keyboard.press('ArrowRight');
      await calendar.locator('td[data-day="2026-03-09"]:focus').waitFor();
      await page.keyboard.press('PageUp'); // a month back
      await calendar.locator('td[data-day="2026-02-09"]:focus').waitFor();
      assert.equal((await calendar.locator('.calendar-month').innerText()).trim(), '2026年2月');
      await page.keyboard.press('Enter');
      await calendar.waitFor({ state: 'detached' });
      assert.equal(await from.inputValue(), '2026年2月9日');
      assert.ok(await focused(page.getByRole('button', { name: '打开日历：从' })), 'back on the calendar button');
      await page.keyboard.press('Enter');
      await calendar.waitFor();
      await page.keyboard.press('Escape');
      await calendar.waitFor({ state: 'detached' });
      assert.equal(await from.inputValue(), '2026年2月9日', 'Esc changes nothing');
      // Typed in either form; the address gets YYYY-MM-DD.
      await to.fill('2026-3-15');
      await page.getByRole('button', { name: '筛选', exact: true }).click();
      await page.waitForFunction(() => location.hash.includes('from=2026-02-09&to=2026-03-15'));
      assert.equal(await to.inputValue(), '2026年3月15日');

      // The English page writes days in English, in the same browser.
      await page.getByRole('button', { name: 'English' }).click();
      const fromEn = page.getByLabel('From', { exact: true });
      await page.getByRole('heading', { name: 'Reports' }).waitFor();
      assert.equal(await fromEn.inputValue(), '2026-02-09');
      await page.getByRole('button', { name: 'Open the calendar: From' }).click();
      const calendarEn = page.getByRole('dialog', { name: 'Choose a date: From' });
      assert.equal((await calendarEn.locator('.calendar-month').innerText()).trim(), 'February 2026');
      assert.deepEqual(await calendarEn.locator('th').allInnerTexts(), [
        'Mon',
        'Tue',
        'Wed',
        'Thu',
        'Fri',
        'Sat',
        'Sun',
      ]);
      await page.screenshot({ path: artifactPath('38-date-picker-en.png') });
      await page.keyboard.press('Escape');
      await page.getByRole('button', { name: '中文' }).click();
      assert.deepEqual(await cspViolations(), []);
      assert.deepEqual(errors, []);
    });

    it('a clerk sees no reports: no menu entries, the upload page for #/reports, and 403 from the API', async () => {
      const { page, errors, cspViolations } = await newPage();
      await login(page, server.url, 'jn-clerk');
      assert.equal(await page.getByRole('link', { name: '报表' }).count(), 0);
      assert.equal(await page.getByRole('link', { name: '审计日志' }).count(), 0);
      assert.equal(await page.getByRole('link', { name: '完整性校验' }).count(), 0);
      await page.goto(`${server.url}/#/reports/savings?city=沧州市`);
      await page.reload();
      await page.getByRole('heading', { name: '上传档案' }).waitFor();
      assert.equal(await page.getByRole('heading', { name: '报表' }).count(), 0);
      assert.equal(await page.locator('table.report').count(), 0);
      const status = await page.evaluate(async () => (await fetch('/api/reports/savings')).status);
      assert.equal(status, 403);
      await page.goto(`${server.url}/#/audit`);
      await page.getByRole('heading', { name: '上传档案' }).waitFor();
      await page.screenshot({ path: artifactPath('29-clerk-no-reports.png') });
      assert.deepEqual(await cspViolations(), []);
      assert.deepEqual(errors, []);
    });

    it('the audit log lists the administrator’s report views and exports, newest first, and its pages hold still while events arrive', async () => {
      const { page, errors } = await newPage();
      await login(page, server.url, 'chief');
      await page.getByRole('link', { name: '审计日志' }).click();
      await page.getByRole('heading', { name: '审计日志' }).waitFor();
      // It opens on administrators' actions (none here but views); an action chosen is looked for among all.
      await page
        .getByRole('group', { name: '显示' })
        .getByRole('button', { name: '管理操作', pressed: true })
        .waitFor();

      await page.getByLabel('操作').selectOption({ label: '查看报表' });
      await page.getByRole('button', { name: '筛选', exact: true }).click();
      await page.waitForFunction(() => decodeURIComponent(location.hash).includes('action=report_viewed'));
      // The filtered page, not the one before it (which has report views among its rows too).
      await page.waitForFunction(() => {
        const rows = Array.from(document.querySelectorAll('table.audit tbody tr[data-action]'));
        return rows.length > 0 && rows.every((row) => row.getAttribute('data-action') === 'report_viewed');
      });
      assert.equal(await page.getByLabel('操作').inputValue(), 'report_viewed', 'the filter in force stays chosen');
      const views = await tableRows(page, 'table.audit > tbody > tr');
      // The archive's administrator sees every administrator's views: its own, and the county's.
      assert.ok(
        views.every((r) => r[1] === '查看报表' && ['chief', 'qing-admin'].includes(r[2]!)),
        JSON.stringify(views.slice(0, 3)),
      );
      assert.ok(
        views.some(
          (r) =>
            r[2] === 'chief' &&
            r[6]!.startsWith('节省空间：') &&
            r[6]!.includes('市=沧州市') &&
            r[6]!.includes('县（市、区）=青县'),
        ),
        'the county view of the first test is there, with its filters in Chinese',
      );
      await page.screenshot({ path: artifactPath('30-audit-report-views.png'), fullPage: true });

      await page.getByLabel('操作').selectOption({ label: '导出报表' });
      await page.getByRole('button', { name: '筛选', exact: true }).click();
      await page.waitForFunction(
        () => document.querySelectorAll('table.audit tbody tr[data-action="report_exported"]').length === 1,
      );

      // Times: a day, and a time of it if wanted (24-hour, typed); a time without its day is said at the time.
      const fromClock = page.getByLabel('从（时:分）');
      await fromClock.fill('08:00');
      await page.getByRole('button', { name: '筛选', exact: true }).click();
      assert.match(await fieldProblem(fromClock), /^24 小时制；不填则从当天 0:00 起 请同时填写日期$/);
      assert.ok(await focused(fromClock));
      await page.getByLabel('从', { exact: true }).fill('2000-01-01');
      await fromClock.fill('8:61');
      await page.getByRole('button', { name: '筛选', exact: true }).click();
      assert.match(await fieldProblem(fromClock), / 时间请写成 时:分，如 09:30$/);
      await fromClock.fill('8:30');
      await page.getByLabel('至', { exact: true }).fill('2000年1月1日');
      await page.getByRole('button', { name: '筛选', exact: true }).click();
      await page.getByText('没有符合条件的记录。').waitFor();
      // The address holds moments: 08:30 on the archive's clock (Beijing time, as the table and the
      // export show times, whatever the PC's zone) on the first day, the whole of the last day.
      const times = new URLSearchParams((await page.evaluate(() => location.hash)).split('?')[1]);
      assert.equal(times.get('from'), '2000-01-01T00:30:00.000Z');
      assert.equal(times.get('to'), '2000-01-01T15:59:00.000Z');
      assert.equal(await page.getByLabel('从', { exact: true }).inputValue(), '2000年1月1日');
      assert.equal(await fromClock.inputValue(), '08:30');
      assert.equal(await page.getByLabel('至（时:分）').inputValue(), '', 'an empty time: to the day’s end');

      // Paging through everything, 25 at a time: page 2 stays the same while new events are recorded.
      await page.getByRole('button', { name: '清除条件' }).click();
      // Cleared, the log is back on administrators' actions; every event is one click away.
      await page.waitForFunction(() => !location.hash.includes('from='));
      await page.getByRole('group', { name: '显示' }).getByRole('button', { name: '全部' }).click();
      // The unfiltered page (logins among its rows) before choosing its size.
      await page.waitForFunction(() => document.querySelector('table.audit tbody tr[data-action="login"]') !== null);
      await page.getByLabel('每页条数').selectOption('25');
      await page.waitForFunction(() => document.querySelectorAll('table.audit tbody tr').length === 25);
      await page.getByRole('button', { name: '下一页' }).click();
      await page.waitForFunction(() => decodeURIComponent(location.hash).includes('until='));
      await page.locator('.pager .range', { hasText: '第 26–' }).waitFor();
      // The pager follows the address at once; the rows once the page has arrived.
      const settled = () => page.waitForFunction(() => document.querySelector('table.audit:not([aria-busy])') !== null);
      await settled();
      const secondPage = await tableRows(page, 'table.audit > tbody > tr');
      const total = await page.locator('.table-tools .count').innerText();
      for (let i = 0; i < 3; i++)
        assert.equal(await page.evaluate(async () => (await fetch('/api/reports/collisions?limit=1')).status), 200);
      await page.getByRole('button', { name: '上一页' }).click();
      await page.locator('.pager .range', { hasText: '第 1–25' }).waitFor();
      await page.getByRole('button', { name: '下一页' }).click();
      await page.locator('.pager .range', { hasText: '第 26–' }).waitFor();
      await settled();
      assert.deepEqual(await tableRows(page, 'table.audit > tbody > tr'), secondPage);
      assert.equal(await page.locator('.table-tools .count').innerText(), total);
      await page.screenshot({ path: artifactPath('31-audit-page-2.png'), fullPage: true });

      // "Newest" lets the new events in.
      await page.getByRole('link', { name: '显示最新记录' }).click();
      await page.waitForFunction(() => !decodeURIComponent(location.hash).includes('until='));
      await page.waitForFunction(
        (before) =>
          document.querySelector('.table-tools .count') !== null &&
          (document.querySelectorAll('.table-tools .count')[0]?.textContent ?? '') !== before,
        total,
      );
      assert.deepEqual(errors, []);
    });

    it('the fixity page starts a check, follows it to its result, and lists a damaged file with what is wrong', async () => {
      const { page, errors, cspViolations } = await newPage();
      await login(page, server.url, 'chief');
      await page.getByRole('link', { name: '完整性校验' }).click();
      await page.getByRole('heading', { name: '存储完整性校验' }).waitFor();
      await page.getByText('尚未进行过校验。').waitFor();
      await page.getByRole('button', { name: '立即开始校验' }).click();
      await page.locator('[data-state="passed"]').waitFor();
      const facts = await page.locator('.fixity-facts').innerText();
      assert.match(facts, /已检查 6 \/ 6 个文件/);
      assert.match(facts, /缺失 0 个，损坏 0 个/);
      await page.screenshot({ path: artifactPath('32-fixity-passed.png'), fullPage: true });

      const { items } = await (
        await server.tokenClient(await server.archive.services.accounts.getByUsername('chief'))
      )
        .fetch('/api/files?q=地图')
        .then((r) => r.json());
      await damageContent(server.opened, items[0].fileId, { kind: 'flip-byte', offset: 1234 });
      await page.getByRole('button', { name: '立即开始校验' }).click();
      await page.locator('[data-state="failed"]').waitFor();
      const rows = await tableRows(page, 'table.fixity > tbody > tr');
      assert.equal(rows.length, 1);
      assert.match(rows[0]![0]!, /地图\.pdf/);
      assert.equal(rows[0]![1], '数据损坏');
      await page.screenshot({ path: artifactPath('33-fixity-damaged-file.png'), fullPage: true });
      assert.deepEqual(await cspViolations(), []);
      assert.deepEqual(errors, []);
    });

    it('near-duplicates: the pairs found side by side, with where their texts differ, and how the fingerprinting stands', async () => {
      const chief = await server.tokenClient(await server.archive.services.accounts.getByUsername('qz-clerk'));
      const other = await server.tokenClient(await server.archive.services.accounts.getByUsername('jn-clerk'));
      assert.equal((await chief.upload('档案整理通知.txt', Buffer.from(NOTICE), {}, 'text/plain')).status, 201);
      assert.equal(
        (await other.upload('档案整理通知（网页）.txt', Buffer.from(NOTICE_FROM_THE_WEB), {}, 'text/plain')).status,
        201,
      );
      assert.equal((await other.upload('培训通知.txt', Buffer.from(OTHER_NOTICE), {}, 'text/plain')).status, 201);
      while ((await server.archive.services.nearDuplicates.runDue()) > 0);

      const { page, errors, cspViolations } = await newPage();
      await login(page, server.url, 'chief');
      await page.goto(`${server.url}/#/reports/near-duplicates`);
      await page.locator('[data-report="near-duplicates"] table.report').waitFor();
      const rows = await tableRows(page);
      assert.equal(rows.length, 1, 'one pair; the other notice is on the same subject but another document');
      assert.deepEqual([rows[0]![0]!.split('\n')[0], rows[0]![1]!.split('\n')[0]].sort(), [
        '档案整理通知.txt',
        '档案整理通知（网页）.txt',
      ]);
      assert.match(rows[0]![2]!, /^相似度 \d+%/);
      const differences = await page.locator('.near-diff blockquote').allInnerTexts();
      assert.ok(
        differences.some((d) => /首页|注：本通知同时抄送/.test(d)),
        differences.join(' | '),
      );
      await page.getByRole('status').filter({ hasText: '找到 1 对近似重复' }).waitFor();
      await page.screenshot({ path: artifactPath('34-reports-near-duplicates.png'), fullPage: true });
      // Each document opens from its name (a text file is downloaded).
      const firstName = page.locator('.near-file a.name').first();
      assert.match((await firstName.getAttribute('href'))!, /^\/api\/files\/[0-9a-f]{24}$/);

      // The administrator marks the pair handled, with a note: it says so, by whom, and leaves the open list.
      await page.getByRole('button', { name: '标记为已处理' }).click();
      await page.getByLabel('处理说明（可不填）').fill('网页转载稿，与原件内容一致，保留原件');
      await page.getByRole('button', { name: '确认已处理' }).click();
      const handled = page.locator('.pair-review[data-reviewed="true"]');
      await handled.waitFor();
      assert.match(await handled.innerText(), /已处理[\s\S]*chief[\s\S]*网页转载稿，与原件内容一致，保留原件/);
      await page.getByRole('group', { name: '显示' }).getByRole('button', { name: '待处理' }).waitFor();
      await page.getByRole('group', { name: '显示' }).getByRole('button', { name: '已处理' }).click();
      await page.waitForFunction(() => decodeURIComponent(location.hash).includes('status=reviewed'));
      await page.locator('.pair-review[data-reviewed="true"]').waitFor();
      assert.equal((await tableRows(page)).length, 1);
      await page.screenshot({ path: artifactPath('35-reports-near-duplicates-handled.png'), fullPage: true });
      await page.getByRole('group', { name: '显示' }).getByRole('button', { name: '待处理' }).click();
      await page.locator('p.empty').waitFor();
      const audited = await server.store.audit.search({ action: 'near_duplicate_reviewed', limit: 1, offset: 0 });
      assert.equal(audited.items[0]!.userName, 'chief');
      // And opens it again.
      await page.getByRole('group', { name: '显示' }).getByRole('button', { name: '全部' }).click();
      await page.getByRole('button', { name: '改回待处理' }).click();
      await page.getByRole('button', { name: '标记为已处理' }).waitFor();
      assert.deepEqual(await cspViolations(), []);
      assert.deepEqual(errors, []);
    });
  },
);
