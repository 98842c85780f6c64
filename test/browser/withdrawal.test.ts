import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { FileList } from '../../shared/schemas.js';
import { noBlockingFindings } from '../support/accessibility.js';
import { browserSkip, BrowserWindows, login } from '../support/browser.js';
import { cli, killServer, processStore, startServer, type ProcessStore, type Started } from '../support/process.js';
import { Client, PASSWORD } from '../support/server.js';
import { embeddedTarget, tempDir } from '../support/stores.js';

/** The page's document, as the callbacks run inside the browser see it. */
declare const document: {
  querySelector(selector: string): { dataset: Record<string, string | undefined> } | null;
  querySelectorAll(selector: string): ArrayLike<unknown>;
  createRange(): { selectNodeContents(node: unknown): void; getClientRects(): ArrayLike<{ top: number }> };
};

/**
 * The clerk's half of 撤回 and 回收站 (issue 41 part 5): on a receipt a clerk withdraws one file,
 * then the rest of the folder, with a reason; the counts drop at once; 回收站 lists them and 恢复
 * brings one back, counted again; it can be withdrawn again. Debian's Chromium against a server
 * process on the embedded store, at 1280×800.
 */

/** The clerk's login, with hyphens as county offices name them: a login is never broken at one. */
const CLERK = 'qx-clerk-01';

/** Screenshots a person looks at (outside the repository): SHOTS_DIR, or the worktree's test-artifacts. */
const SHOTS = path.resolve(process.env.SHOTS_DIR ?? 'test-artifacts');

function account(env: Record<string, string>, username: string, role: 'clerk' | 'admin', unit: string[]): string {
  const add = cli(['user', 'add', username, '--role', role, ...unit], env, `${PASSWORD}\n`);
  assert.equal(add.status, 0, add.stderr);
  const token = cli(['token', 'create', username], env);
  assert.equal(token.status, 0, token.stderr);
  return token.stdout.trim().split('\n').pop()!;
}

function writeFile(dir: string, name: string, data: Uint8Array): void {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, data);
}

/** Waits until the receipt shows this many withdrawn rows. */
async function withdrawnRows(page: Page, count: number): Promise<void> {
  await page.waitForFunction(
    (n) => document.querySelectorAll('table.receipt-rows tr[data-withdrawn="yes"]').length === n,
    count,
  );
}

async function trashRows(page: Page, count: number): Promise<void> {
  await page.waitForFunction((n) => document.querySelectorAll('table.trash tbody tr').length === n, count);
}

describe(
  '撤回 and 回收站 for a clerk (Debian Chromium, embedded store)',
  { skip: browserSkip, timeout: 600_000 },
  () => {
    let store: ProcessStore;
    let server: Started;
    let files: string;
    const tokens: Record<string, string> = {};
    const api = (user: string) => new Client(server.url, { bearer: tokens[user]! });
    const windows = new BrowserWindows();

    before(async () => {
      store = processStore(embeddedTarget);
      files = tempDir('archive-withdrawal-');
      tokens['clerk'] = account(store.env, CLERK, 'clerk', [
        '--unit',
        'unit-a',
        '--city',
        '沧州市',
        '--county',
        '青县',
      ]);
      tokens['colleague'] = account(store.env, 'colleague', 'clerk', [
        '--unit',
        'unit-a',
        '--city',
        '沧州市',
        '--county',
        '青县',
      ]);
      tokens['top'] = account(store.env, 'top', 'admin', ['--unit', 'archive']);
      server = await startServer({ ...store.env, GC_INTERVAL_SECONDS: '0' });
    });
    after(async () => {
      await windows.closeAll();
      if (server) await killServer(server);
      await store?.dispose();
      fs.rmSync(files, { recursive: true, force: true });
    });

    /** The counts as the clerk's file list and the top administrator's see them. */
    async function counts(): Promise<{ mine: number; everybody: number }> {
      const sum = async (user: string, field: 'myUploadCount' | 'uploadCount') => {
        const res = await api(user).fetch('/api/files?limit=200');
        assert.equal(res.status, 200);
        return ((await res.json()) as FileList).items.reduce((total, f) => total + f[field], 0);
      };
      return { mine: await sum('clerk', 'myUploadCount'), everybody: await sum('top', 'uploadCount') };
    }

    it('withdraws a file, then the rest, with a reason; the counts drop; 恢复 counts it again', async () => {
      const folder = path.join(files, '2026年误传');
      writeFile(folder, '甲.jpg', randomBytes(3000));
      writeFile(folder, '乙.jpg', randomBytes(3100));
      writeFile(folder, '丙.pdf', randomBytes(3200));

      const { page, errors } = await windows.open();
      await page.setViewportSize({ width: 1280, height: 800 });
      await login(page, server.url, CLERK);
      await page.getByRole('heading', { name: '上传档案' }).waitFor();
      await page.locator('input[type=file][webkitdirectory]').setInputFiles(folder);
      await page.waitForFunction(() => document.querySelector('.results .summary')?.dataset.stored === '3');
      assert.deepEqual(await counts(), { mine: 3, everybody: 3 });

      await page.getByRole('link', { name: '查看上传清单' }).click();
      await page.getByRole('heading', { name: '上传清单：2026年误传' }).waitFor();

      // One file, by its row's 撤回.
      await page.getByRole('button', { name: /^撤回 .*甲\.jpg$/ }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      assert.match(
        await dialog.innerText(),
        /撤回后，这些文件不再计入上传次数和各类统计；30 天内可在回收站恢复/,
        'the dialog says what happens to the counts',
      );
      // 其他 needs a note: nothing is sent without one.
      await dialog.getByLabel('其他').check();
      await dialog.getByRole('button', { name: '撤回 1 个文件' }).click();
      await dialog.getByText('选“其他”时请填写说明。').waitFor();
      assert.deepEqual(await counts(), { mine: 3, everybody: 3 }, 'nothing withdrawn without a note');
      await dialog.getByLabel('传错文件').check();
      await page.screenshot({ path: path.join(SHOTS, 'withdraw-dialog-zh.png') });
      await noBlockingFindings(page, 'the withdrawal dialog');
      await dialog.getByRole('button', { name: '撤回 1 个文件' }).click();
      await withdrawnRows(page, 1);
      assert.equal(await dialog.count(), 0, 'the dialog closes once withdrawn');
      assert.match(
        await page.locator('tr[data-withdrawn="yes"]').innerText(),
        /甲\.jpg.*已撤回（\d{4}年\d{1,2}月\d{1,2}日 \d{2}:\d{2}）/s,
      );
      assert.deepEqual(await counts(), { mine: 2, everybody: 2 }, 'the withdrawn file counts nowhere');

      // The rest of the receipt, in English: 整批撤回 takes the two files still counted.
      await page.getByRole('button', { name: 'English' }).click();
      await page.getByRole('button', { name: 'Withdraw the whole receipt' }).click();
      await dialog.waitFor();
      assert.match(await dialog.innerText(), /Withdraw: all of “2026年误传” \(2 files\)/);
      await dialog.getByLabel('Uploaded twice').check();
      await page.screenshot({ path: path.join(SHOTS, 'withdraw-dialog-en.png') });
      await dialog.getByRole('button', { name: 'Withdraw 2 files' }).click();
      await withdrawnRows(page, 3);
      assert.deepEqual(await counts(), { mine: 0, everybody: 0 });
      await page.screenshot({ path: path.join(SHOTS, 'receipt-withdrawn-en.png'), fullPage: true });

      // 回收站: all three, restorable by their uploader.
      await page.getByRole('main').getByRole('link', { name: 'Trash' }).click();
      await page.getByRole('heading', { name: 'Trash' }).waitFor();
      await trashRows(page, 3);
      await page.screenshot({ path: path.join(SHOTS, 'trash-en.png') });
      await page.getByRole('button', { name: '中文' }).click();
      await page.getByRole('heading', { name: '回收站' }).waitFor();
      const first = page.locator('table.trash tbody tr', { hasText: '甲.jpg' });
      assert.match(await first.innerText(), new RegExp(`${CLERK} 于 .* 撤回：传错文件`));
      assert.match(await first.innerText(), /30 天|29 天/);
      await page.screenshot({ path: path.join(SHOTS, 'trash-zh.png') });
      await noBlockingFindings(page, 'the trash');

      await first.getByRole('button', { name: /^恢复 .*甲\.jpg$/ }).click();
      await first.getByText('恢复后，此文件重新计入上传次数和各类统计。').waitFor();
      await first.getByRole('button', { name: '确认恢复' }).click();
      await page.getByText(/^已恢复“.*甲\.jpg”，重新计入统计。$/).waitFor();
      await trashRows(page, 2);
      assert.deepEqual(await counts(), { mine: 1, everybody: 1 }, 'restored, it counts again');

      // Withdrawn again, by its checkbox and 撤回所选.
      await page.goBack();
      await page.getByRole('heading', { name: '上传清单：2026年误传' }).waitFor();
      await withdrawnRows(page, 2);
      await page.getByRole('checkbox', { name: /^选择 .*甲\.jpg$/ }).check();
      await page.getByRole('button', { name: '撤回所选（1 个）' }).click();
      await dialog.getByLabel('传错单位').check();
      await dialog.getByRole('button', { name: '撤回 1 个文件' }).click();
      await withdrawnRows(page, 3);
      assert.deepEqual(await counts(), { mine: 0, everybody: 0 });
      assert.equal(await page.getByRole('button', { name: '整批撤回' }).count(), 0, 'nothing left to withdraw');
      assert.deepEqual(errors, []);
    });

    it('shows the unit’s trash to a colleague without 恢复, and to an administrator with the unit and 恢复', async () => {
      const colleague = await windows.open();
      await colleague.page.setViewportSize({ width: 1280, height: 800 });
      await login(colleague.page, server.url, 'colleague');
      await colleague.page.getByRole('link', { name: '回收站' }).click();
      await trashRows(colleague.page, 3);
      assert.equal(await colleague.page.getByRole('button', { name: /^恢复 / }).count(), 0);
      assert.equal(await colleague.page.getByText('仅上传人或管理员可恢复').count(), 3);

      const top = await windows.open();
      await top.page.setViewportSize({ width: 1280, height: 800 });
      await login(top.page, server.url, 'top');
      await top.page.getByRole('link', { name: '回收站' }).click();
      await trashRows(top.page, 3);
      assert.equal(await top.page.locator('table.trash tbody tr', { hasText: '沧州市 / 青县' }).count(), 3);
      assert.equal(await top.page.getByRole('button', { name: /^恢复 / }).count(), 3);
      // The uploader's login on one line, in the table's widest form (the administrator's, with 单位).
      const uploaderLines = await top.page.$$eval('table.trash tbody td.who', (cells) =>
        cells.map((cell) => {
          const range = document.createRange();
          range.selectNodeContents(cell);
          return new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size;
        }),
      );
      assert.deepEqual(uploaderLines, [1, 1, 1], `${CLERK} on one line`);
      await top.page.screenshot({ path: path.join(SHOTS, 'trash-admin-zh.png') });
      await noBlockingFindings(top.page, 'the trash as an administrator sees it');
      assert.deepEqual([...colleague.errors, ...top.errors], []);
    });
  },
);
