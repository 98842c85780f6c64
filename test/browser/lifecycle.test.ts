import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { noBlockingFindings } from '../support/accessibility.js';
import { browserSkip, BrowserWindows, login } from '../support/browser.js';
import { md5, sha256 } from '../support/content.js';
import { cli, killServer, processStore, startServer, type ProcessStore, type Started } from '../support/process.js';
import { body, Client, PASSWORD } from '../support/server.js';
import { embeddedTarget, tempDir } from '../support/stores.js';

/** The page's document, as the callbacks run inside the browser see it. */
declare const document: {
  querySelector(selector: string): { dataset: Record<string, string | undefined>; textContent: string | null } | null;
  querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }>;
};

/**
 * An upload's life, end to end (issue 41 part 5): a clerk drops a folder they had sent twice
 * before and counts it again; withdraws the whole drop from the upload page; the administrator's
 * repeat-uploaders report shows the counts drop; the clerk restores it from 回收站 and the counts
 * return; withdraws it again. Then the administrator, from the report's upload count, opens the
 * file's uploads and withdraws one of the clerk's. Debian's Chromium against a server process on
 * the embedded store, at 1280×800; screenshots in Chinese and English.
 */

/** Screenshots a person looks at (outside the repository): SHOTS_DIR, or the worktree's test-artifacts. */
const SHOTS = path.resolve(process.env.SHOTS_DIR ?? 'test-artifacts');
const FOLDER = '2026年移交';
const PAGES = ['甲.jpg', '乙.jpg', '丙.pdf'];

function account(env: Record<string, string>, username: string, role: 'clerk' | 'admin', unit: string[]): string {
  const add = cli(['user', 'add', username, '--role', role, ...unit], env, `${PASSWORD}\n`);
  assert.equal(add.status, 0, add.stderr);
  const token = cli(['token', 'create', username], env);
  assert.equal(token.status, 0, token.stderr);
  return token.stdout.trim().split('\n').pop()!;
}

describe(
  'an upload withdrawn, restored and withdrawn again (Debian Chromium, embedded store)',
  { skip: browserSkip, timeout: 900_000 },
  () => {
    let store: ProcessStore;
    let server: Started;
    let files: string;
    let clerkToken: string;
    const windows = new BrowserWindows();
    const contents = PAGES.map((_, i) => randomBytes(4000 + i * 100));

    before(async () => {
      store = processStore(embeddedTarget);
      files = tempDir('archive-lifecycle-');
      clerkToken = account(store.env, 'clerk', 'clerk', ['--unit', 'unit-a', '--city', '沧州市', '--county', '青县']);
      account(store.env, 'top', 'admin', ['--unit', 'archive']);
      server = await startServer({ ...store.env, GC_INTERVAL_SECONDS: '0' });
      const folder = path.join(files, FOLDER);
      fs.mkdirSync(folder, { recursive: true });
      PAGES.forEach((name, i) => fs.writeFileSync(path.join(folder, name), contents[i]!));
      // The same folder sent twice before, by a script of the clerk's: each file counts 2.
      const script = new Client(server.url, { bearer: clerkToken });
      for (let round = 0; round < 2; round++)
        await body(
          await script.batch(
            PAGES.map((name, i) => ({ name, data: contents[i]! })),
            PAGES.map((name, i) => ({
              md5: md5(contents[i]!),
              sha256: sha256(contents[i]!),
              name: `${FOLDER}/${name}`,
              key: randomBytes(16).toString('hex'),
            })),
          ),
          200,
        );
    });
    after(async () => {
      await windows.closeAll();
      if (server) await killServer(server);
      await store?.dispose();
      fs.rmSync(files, { recursive: true, force: true });
    });

    /** The administrator's repeat-uploaders report, read again: each page's upload count as it shows it. */
    async function reportCounts(admin: Page, expected: number): Promise<void> {
      await admin.reload();
      // Only the clerk repeats uploads here: the report has the folder's pages, each with its count.
      await admin.waitForFunction((count) => {
        const links = Array.from(document.querySelectorAll('[data-report="repeat-uploaders"] a.uploads-link'));
        return links.length === 3 && links.every((link) => link.textContent === String(count));
      }, expected);
    }

    const withdrawnRows = (page: Page, count: number) =>
      page.waitForFunction((n) => document.querySelectorAll('.outcomes li[data-withdrawn="yes"]').length === n, count);

    it('the clerk withdraws a drop from the upload page, restores it from 回收站 and withdraws it again; the report follows', async () => {
      const clerk = await windows.open();
      const admin = await windows.open();
      for (const w of [clerk, admin]) await w.page.setViewportSize({ width: 1280, height: 800 });
      await login(admin.page, server.url, 'top');
      await admin.page.getByRole('link', { name: '报表', exact: true }).click();
      await reportCounts(admin.page, 2);

      const page = clerk.page;
      await login(page, server.url, 'clerk');
      await page.getByRole('heading', { name: '上传档案' }).waitFor();
      await page.locator('input[type=file][webkitdirectory]').setInputFiles(path.join(files, FOLDER));
      // Sent before: counted again only when the clerk says so.
      await page.getByRole('button', { name: '仍要再次登记' }).click();
      await page.waitForFunction(() => document.querySelector('.results .summary')?.dataset.instant === '3');
      await reportCounts(admin.page, 3);

      // Once the drop ended and its receipt is kept: 撤回 for a file, a selection, the whole drop.
      const whole = page.getByRole('button', { name: '撤回本次上传' });
      await whole.waitFor();
      assert.equal(await page.getByRole('button', { name: /^撤回 2026年移交\// }).count(), 3);
      assert.equal(await page.getByRole('button', { name: '撤回所选（0 个）' }).isDisabled(), true);
      await page.screenshot({ path: path.join(SHOTS, 'upload-withdrawable-zh.png') });
      await noBlockingFindings(page, 'an ended drop, withdrawable');

      await whole.click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      const said = await dialog.innerText();
      assert.match(said, /撤回：本次上传“2026年移交”（3 个文件）/);
      assert.match(said, /撤回后，这些文件不再计入上传次数和各类统计；30 天内可在回收站恢复/);
      await dialog.getByLabel('重复上传').check();
      await page.screenshot({ path: path.join(SHOTS, 'upload-withdraw-dialog-zh.png') });
      await noBlockingFindings(page, 'the withdrawal dialog on the upload page');
      await dialog.getByRole('button', { name: '撤回 3 个文件' }).click();
      await withdrawnRows(page, 3);
      assert.equal(await dialog.count(), 0, 'the dialog closes once withdrawn');
      assert.match(
        await page.locator('.outcomes li[data-withdrawn="yes"]').first().innerText(),
        /已撤回（\d{4}年\d{1,2}月\d{1,2}日 \d{2}:\d{2}）\s*回收站/,
      );
      await page.getByText('本次上传中已撤回 3 个文件，可在回收站恢复。').waitFor();
      assert.equal(await whole.count(), 0, 'nothing left to withdraw');
      await page.screenshot({ path: path.join(SHOTS, 'upload-withdrawn-zh.png') });
      await noBlockingFindings(page, 'an ended drop, withdrawn');
      await page.getByRole('button', { name: 'English' }).click();
      await page.getByText('3 files of this upload withdrawn; you can restore them from the trash.').waitFor();
      await page.screenshot({ path: path.join(SHOTS, 'upload-withdrawn-en.png') });
      await page.getByRole('button', { name: '中文' }).click();
      await reportCounts(admin.page, 2);

      // 回收站, from the note's link: each restored, and the report counts them again.
      await page.locator('.withdrawn-note').getByRole('link', { name: '回收站' }).click();
      await page.getByRole('heading', { name: '回收站' }).waitFor();
      for (let left = 3; left > 0; left--) {
        await page.waitForFunction((n) => document.querySelectorAll('table.trash tbody tr').length === n, left);
        await page
          .getByRole('button', { name: /^恢复 / })
          .first()
          .click();
        await page.getByRole('button', { name: '确认恢复' }).click();
        await page.getByText(/^已恢复“.*”，重新计入统计。$/).waitFor();
      }
      await page.getByText('回收站是空的。').waitFor();
      await reportCounts(admin.page, 3);

      // Back on the upload page, the drop counts again and can be withdrawn again: one file, then the rest picked.
      await page.getByRole('link', { name: '上传', exact: true }).click();
      await whole.waitFor();
      await withdrawnRows(page, 0);
      await page.getByRole('button', { name: '撤回 2026年移交/甲.jpg' }).click();
      await dialog.getByLabel('传错文件').check();
      await dialog.getByRole('button', { name: '撤回 1 个文件' }).click();
      await withdrawnRows(page, 1);
      await page.getByRole('checkbox', { name: '选择 2026年移交/乙.jpg' }).check();
      await page.getByRole('checkbox', { name: '选择 2026年移交/丙.pdf' }).check();
      await page.getByRole('button', { name: 'English' }).click();
      await page.getByRole('button', { name: 'Withdraw selected (2)' }).click();
      await dialog.waitFor();
      assert.match(await dialog.innerText(), /Withdraw: the selected files \(2 files\)/);
      await dialog.getByLabel('Wrong unit').check();
      await page.screenshot({ path: path.join(SHOTS, 'upload-withdraw-dialog-en.png') });
      await dialog.getByRole('button', { name: 'Withdraw 2 files' }).click();
      await withdrawnRows(page, 3);
      await page.getByRole('button', { name: '中文' }).click();
      await reportCounts(admin.page, 2);
      assert.deepEqual([...clerk.errors, ...admin.errors], []);
    });

    it('the administrator opens a file’s uploads from the report and withdraws one of the clerk’s', async () => {
      const admin = await windows.open();
      const page = admin.page;
      await page.setViewportSize({ width: 1280, height: 800 });
      await login(page, server.url, 'top');
      await page.getByRole('link', { name: '报表', exact: true }).click();
      await reportCounts(page, 2);
      const row = page.locator('[data-report="repeat-uploaders"] table.report tbody tr', { hasText: '甲.jpg' });
      await row.locator('a.uploads-link').click();
      await page.getByRole('heading', { name: '“甲.jpg”的上传记录' }).waitFor();
      const rows = page.locator('table.file-uploads tbody tr');
      await page.waitForFunction(() => document.querySelectorAll('table.file-uploads tbody tr').length === 3);
      // The drop withdrawn on the upload page, and the two sent before, each with its unit.
      assert.equal(await page.locator('table.file-uploads tr[data-withdrawn="yes"]').count(), 1);
      assert.match(await rows.nth(0).innerText(), /clerk\s+沧州市 \/ 青县.*已撤回（clerk，/s);
      assert.equal(await page.getByRole('button', { name: /^撤回 clerk / }).count(), 2);
      await page.screenshot({ path: path.join(SHOTS, 'file-uploads-admin-zh.png') });
      await noBlockingFindings(page, 'a file’s uploads, as an administrator sees them');

      await page
        .getByRole('button', { name: /^撤回 clerk / })
        .first()
        .click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      assert.match(await dialog.innerText(), /撤回后，这些文件不再计入上传次数和各类统计；30 天内可在回收站恢复/);
      await dialog.getByLabel('其他').check();
      await dialog.getByRole('textbox').fill('误登记，核对后撤回');
      await dialog.getByRole('button', { name: '撤回 1 个文件' }).click();
      await page.waitForFunction(
        () => document.querySelectorAll('table.file-uploads tr[data-withdrawn="yes"]').length === 2,
      );
      await page.getByText('已撤回 1 个文件，可在回收站恢复。').waitFor();
      // The newest still counting (the second sent before), by the administrator; the first still counts.
      assert.match(await rows.nth(1).innerText(), /已撤回（top，/);
      assert.match(await rows.nth(2).innerText(), /计入统计/);
      await page.getByRole('button', { name: 'English' }).click();
      await page.getByRole('heading', { name: 'Uploads of “甲.jpg”' }).waitFor();
      await page.screenshot({ path: path.join(SHOTS, 'file-uploads-admin-en.png') });
      await noBlockingFindings(page, 'a file’s uploads after a withdrawal, in English');
      await page.getByRole('button', { name: '中文' }).click();

      // The report counts the file once now: under two, it is no repeat.
      await page.goBack();
      await page.waitForFunction(
        () =>
          document.querySelectorAll('[data-report="repeat-uploaders"] a.uploads-link').length === 2 &&
          !Array.from(document.querySelectorAll('[data-report="repeat-uploaders"] table.report tbody tr')).some((r) =>
            r.textContent?.includes('甲.jpg'),
          ),
      );
      assert.deepEqual(admin.errors, []);
    });
  },
);
