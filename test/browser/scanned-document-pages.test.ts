import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { artifactPath, browserSkip, BrowserWindows, login } from '../support/browser.js';
import { scansSharingPages } from '../support/multi-page-scans.js';
import { cannotPrintPages } from '../support/scans.js';
import { TestServer } from '../support/server.js';
import { embeddedTarget } from '../support/stores.js';

/** The page's document, as the callbacks run inside the browser see it. */
declare const document: {
  querySelectorAll(selector: string): ArrayLike<{ complete: boolean; naturalWidth: number; src: string }>;
};

/**
 * Two multi-page scans of partly the same paper in the browser (issue 44): 清州镇 scanned three
 * pages to a TIFF, 金牛镇 three to a PDF, two of them the same sheets. The county's administrator
 * sees them once, as a document pair: "2 页相同（A 共 3 页，B 共 3 页）", the matching pages listed
 * with their similarity, a matching pair of pages side by side (another when picked), and marks
 * the pair handled once.
 */
describe(
  'two multi-page scans sharing pages, shown as one document pair (Debian Chromium)',
  { skip: browserSkip ?? cannotPrintPages(), timeout: 600_000 },
  () => {
    let server: TestServer;
    const windows = new BrowserWindows();

    before(async () => {
      server = await TestServer.start(embeddedTarget);
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('qz-clerk', 'clerk', '130922100'); // 沧州市 / 青县 / 清州镇
      await server.addAccountIn('jn-clerk', 'clerk', '130922101'); // 沧州市 / 青县 / 金牛镇
      await server.addAccountIn('qx-admin', 'admin', '130922'); // 沧州市 / 青县
    });
    after(async () => {
      await windows.closeAll();
      await server?.close();
    });

    it('the county sees the two scans once, with their matching pages, each pair of pages side by side, and handles them once', async () => {
      const { tiff, pdf } = await scansSharingPages();
      const { accounts } = server.archive.services;
      const qz = await server.tokenClient(await accounts.getByUsername('qz-clerk'));
      const jn = await server.tokenClient(await accounts.getByUsername('jn-clerk'));
      assert.equal((await qz.upload('档案移交通知.tif', tiff, {}, 'image/tiff')).status, 201);
      assert.equal((await jn.upload('移交通知扫描件.pdf', pdf, {}, 'application/pdf')).status, 201);
      while ((await server.archive.services.nearDuplicates.runDue()) > 0);

      const { page, errors } = await windows.open();
      await login(page, server.url, 'qx-admin');
      await page.goto(`${server.url}/#/reports/near-duplicates`);
      const rows = page.locator('[data-report="near-duplicates"] table.report > tbody > tr', {
        hasText: '档案移交通知.tif',
      });
      await rows.first().waitFor();
      assert.match(await rows.first().innerText(), /移交通知扫描件\.pdf/);
      assert.equal(await page.locator('.near-kind', { hasText: '多页扫描件有相同的页' }).count(), 1, 'one row');
      assert.match(await page.locator('.near-page-count').innerText(), /^2 页相同（A 共 3 页，B 共 3 页）$/);

      // The matching pages listed, each with its similarity; the first pair drawn side by side.
      const matches = page.getByRole('list', { name: '相同的页' }).getByRole('button');
      assert.equal(await matches.count(), 2);
      const listed = await matches.allInnerTexts();
      assert.ok(
        listed.every((m) => /^A 第 \d 页 ↔ B 第 \d 页，相似度 \d+%$/.test(m)),
        listed.join(' | '),
      );
      const pages = page.getByRole('group', { name: '多页扫描件有相同的页' });
      assert.match(await pages.innerText(), /清州镇[\s\S]*金牛镇|金牛镇[\s\S]*清州镇/);
      // Both pages of a match drawn, A's then B's: `want` their page numbers.
      const drawn = (want: number[]) =>
        page.waitForFunction(
          (want) => {
            const images = Array.from(document.querySelectorAll('.near-pages img'));
            return (
              images.length === 2 &&
              images.every((i, k) => i.src.includes(`/pages/${want[k]}?`) && i.complete && i.naturalWidth > 0)
            );
          },
          want,
          { timeout: 60_000 },
        );
      const numbers = (text: string) => [...text.matchAll(/第 (\d) 页/g)].map((m) => Number(m[1]));
      await drawn(numbers(listed[0]!));
      await page.screenshot({ path: artifactPath('scans-3-document-pair.png'), fullPage: true });
      // Another pair of pages, when picked.
      await matches.nth(1).click();
      await drawn(numbers(listed[1]!));
      assert.equal(await matches.nth(1).getAttribute('aria-pressed'), 'true');

      // Handled once, for the two documents.
      await page.getByRole('button', { name: '标记为已处理' }).click();
      await page.getByLabel('处理说明（可不填）').fill('两个镇扫描了同一批文件');
      await page.getByRole('button', { name: '确认已处理' }).click();
      await page.locator('.pair-review[data-reviewed="true"]').waitFor();
      assert.equal(await page.getByRole('button', { name: '标记为已处理' }).count(), 0);
      assert.deepEqual(errors, []);
    });
  },
);
