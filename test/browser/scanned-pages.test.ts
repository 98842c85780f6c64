import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { artifactPath, browserSkip, BrowserWindows, login } from '../support/browser.js';
import { cannotPrintPages, scannedPage } from '../support/scans.js';
import { TestServer } from '../support/server.js';
import { embeddedTarget, tempDir } from '../support/stores.js';

/** The page's document, as the callbacks run inside the browser see it. */
declare const document: {
  querySelectorAll(selector: string): ArrayLike<{ complete: boolean; naturalWidth: number }>;
};

/**
 * Scanned pages in the browser (issue 44): a clerk of 清州镇 uploads a scan of a notice through the
 * upload page, a clerk of 金牛镇 sends another scan of the same paper; the county's administrator
 * then sees the pair as "同一页重复扫描" in the near-duplicate report, both pages side by side, and
 * finds the page by a word of its text.
 */
const NOTICE_PAGE =
  '青县档案馆关于开展二〇二六年度档案移交工作的通知。各乡镇人民政府：请于十二月底前将本年度文书档案整理完毕，按时移交县档案馆。';

describe(
  'the same page scanned in two towns (Debian Chromium)',
  { skip: browserSkip ?? cannotPrintPages(), timeout: 600_000 },
  () => {
    let server: TestServer;
    let files: string;
    const windows = new BrowserWindows();

    before(async () => {
      server = await TestServer.start(embeddedTarget);
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('qz-clerk', 'clerk', '130922100'); // 沧州市 / 青县 / 清州镇
      await server.addAccountIn('jn-clerk', 'clerk', '130922101'); // 沧州市 / 青县 / 金牛镇
      await server.addAccountIn('qx-admin', 'admin', '130922'); // 沧州市 / 青县
      files = tempDir('archive-browser-scans-');
    });
    after(async () => {
      await windows.closeAll();
      await server?.close();
      fs.rmSync(files, { recursive: true, force: true });
    });

    it('a clerk uploads a scan, another town scans the same paper; the county sees the pair and finds the page by a word', async () => {
      // Two scans of one paper: one saved as JPEG by 清州镇's scanner, one as PNG by 金牛镇's.
      const jpeg = path.join(files, '移交通知扫描件.jpg');
      fs.writeFileSync(jpeg, await scannedPage(NOTICE_PAGE, 'jpeg', 'slip'));
      const clerk = await windows.open();
      await login(clerk.page, server.url, 'qz-clerk');
      await clerk.page.getByRole('heading', { name: '上传档案' }).waitFor();
      await clerk.page.locator('input[type=file]:not([webkitdirectory])').setInputFiles(jpeg);
      await clerk.page.locator('.results .summary[data-stored="1"]').waitFor({ timeout: 60_000 });
      const other = await server.tokenClient(await server.archive.services.accounts.getByUsername('jn-clerk'));
      const png = await scannedPage(NOTICE_PAGE, 'png', 'slip');
      assert.equal((await other.upload('通知（再次扫描）.png', png, {}, 'image/png')).status, 201);
      // The pages' text is read (OCR) in the background, as the server's queue does.
      while ((await server.archive.services.nearDuplicates.runDue()) > 0);

      const { page, errors } = await windows.open();
      await login(page, server.url, 'qx-admin');
      await page.goto(`${server.url}/#/reports/near-duplicates`);
      const row = page.locator('[data-report="near-duplicates"] table.report > tbody > tr', {
        hasText: '移交通知扫描件.jpg',
      });
      await row.first().waitFor();
      assert.match(await row.first().innerText(), /通知（再次扫描）\.png/);
      await page.locator('.near-kind', { hasText: '同一页重复扫描' }).first().waitFor();
      // Both pages side by side, drawn by the server.
      const pages = page.getByRole('group', { name: '同一页重复扫描' }).first();
      await pages.waitFor();
      assert.match(await pages.innerText(), /清州镇[\s\S]*金牛镇|金牛镇[\s\S]*清州镇/);
      await page.waitForFunction(
        () => {
          const images = Array.from(document.querySelectorAll('.near-pages img'));
          return images.length === 2 && images.every((i) => i.complete && i.naturalWidth > 0);
        },
        undefined,
        { timeout: 60_000 },
      );
      await page.screenshot({ path: artifactPath('scans-1-same-page-scanned-again.png'), fullPage: true });

      // The page found by a word of its text, in the county's 本单位文件.
      await page.getByRole('link', { name: '本单位文件' }).click();
      await page.getByRole('link', { name: '按内容搜索' }).click();
      await page.getByLabel('文件中的文字').fill('档案移交');
      await page.getByRole('button', { name: '搜索', exact: true }).click();
      const hits = page.locator('.text-hit');
      await hits.first().waitFor({ timeout: 30_000 });
      const found = await hits.allInnerTexts();
      assert.ok(
        found.some((h) => h.includes('移交通知扫描件.jpg')) && found.some((h) => h.includes('通知（再次扫描）.png')),
        found.join(' | '),
      );
      assert.ok((await hits.locator('mark').allInnerTexts()).includes('移交'));
      await page.screenshot({ path: artifactPath('scans-2-found-by-a-word.png'), fullPage: true });
      assert.deepEqual([...clerk.errors, ...errors], []);
    });
  },
);
