import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { extractText, getDocumentProxy } from 'unpdf';
import { accessibilityFindings, blocking, findingsTable, layoutProblems } from '../support/accessibility.js';
import { browserSkip, BrowserWindows, login } from '../support/browser.js';
import { md5, sha256 } from '../support/content.js';
import { cli, killServer, processStore, startServer, type ProcessStore, type Started } from '../support/process.js';
import { Client, PASSWORD } from '../support/server.js';
import { embeddedTarget } from '../support/stores.js';

/** The page's document, as the callbacks run inside the browser see it. */
declare const document: { querySelectorAll(selector: string): ArrayLike<unknown> };

/**
 * 本单位文件 as a 网盘 and the printed 上传清单 (issue 42 items 10 and 11), in Debian's Chromium
 * against a server process on the embedded store, at 1280×800: a clerk browses the folders of a
 * 1,000-page upload and withdraws one 案卷 folder; its receipt prints as a one-page 移交清单 (one
 * line per 案卷, the signature lines) with the files in an appendix, whatever their number.
 */

/** Screenshots and PDFs a person looks at (outside the repository): SHOTS_DIR, or the worktree's test-artifacts. */
const SHOTS = path.resolve(process.env.SHOTS_DIR ?? 'test-artifacts');
const VOLUMES = 10;

function account(env: Record<string, string>, username: string, name: string): string {
  const add = cli(
    [
      'user',
      'add',
      username,
      '--role',
      'clerk',
      '--name',
      name,
      '--unit',
      'unit-p',
      '--city',
      '沧州市',
      '--county',
      '青县',
    ],
    env,
    `${PASSWORD}\n`,
  );
  assert.equal(add.status, 0, add.stderr);
  const token = cli(['token', 'create', username], env);
  assert.equal(token.status, 0, token.stderr);
  return token.stdout.trim().split('\n').pop()!;
}

/** Uploads `perVolume` pages into each of VOLUMES 案卷 of `title`, 200 a batch, and keeps its receipt: the receipt's id. */
async function folderUpload(client: Client, title: string, perVolume: number): Promise<string> {
  const pages = Array.from({ length: VOLUMES * perVolume }, (_, i) => ({
    path: `${title}/案卷${String(Math.floor(i / perVolume) + 1).padStart(3, '0')}/第${String((i % perVolume) + 1).padStart(4, '0')}页.tif`,
    data: randomBytes(300 + (i % 7)),
    key: randomBytes(16).toString('hex'),
  }));
  for (let at = 0; at < pages.length; at += 200) {
    const batch = pages.slice(at, at + 200);
    const res = await client.batch(
      batch.map((p, i) => ({ name: `p${i}.tif`, data: p.data, type: 'image/tiff' })),
      batch.map((p) => ({ md5: md5(p.data), sha256: sha256(p.data), name: p.path, type: 'image/tiff', key: p.key })),
    );
    assert.equal(res.status, 200, await res.text());
  }
  const id = randomBytes(16).toString('hex');
  const now = new Date().toISOString();
  const rows = pages.map((p) => ({
    path: p.path,
    size: p.data.length,
    outcome: 'stored',
    via: 'batch',
    key: p.key,
    at: now,
  }));
  const res = await client.json(`/api/receipts/${id}`, 'PUT', { title, startedAt: now, rows });
  assert.equal(res.status, 200, await res.text());
  return id;
}

/** The receipt printed to PDF (A4, as its print style asks), and the text of each of its pages. */
async function printed(page: Page, file: string): Promise<string[]> {
  const pdf = await page.pdf({ path: path.join(SHOTS, file), preferCSSPageSize: true, printBackground: true });
  const doc = await getDocumentProxy(new Uint8Array(pdf));
  const { text } = await extractText(doc, { mergePages: false });
  return text.map((t) => t.replace(/\s+/g, ''));
}

describe(
  '本单位文件 by folder, and the printed 移交清单 (Debian Chromium, embedded store)',
  { skip: browserSkip, timeout: 600_000 },
  () => {
    let store: ProcessStore;
    let server: Started;
    let clerk: Client;
    let big: string;
    let small: string;
    const windows = new BrowserWindows();

    before(async () => {
      fs.mkdirSync(SHOTS, { recursive: true });
      store = processStore(embeddedTarget);
      const token = account(store.env, 'clerk-p', '王档案');
      server = await startServer({ ...store.env, GC_INTERVAL_SECONDS: '0' });
      clerk = new Client(server.url, { bearer: token });
      big = await folderUpload(clerk, '2026年移交', 100);
      small = await folderUpload(clerk, '补充移交', 1);
    });
    after(async () => {
      await windows.closeAll();
      if (server) await killServer(server);
      await store?.dispose();
    });

    it('prints page 1 as a 移交清单 with a line per 案卷 and the signature lines; 1,000 files go to the appendix', async () => {
      const { page, errors } = await windows.open();
      await page.setViewportSize({ width: 1280, height: 800 });
      await login(page, server.url, 'clerk-p');
      await page.getByRole('heading', { name: '上传档案' }).waitFor();

      const pages: Record<string, string[]> = {};
      for (const [name, id, files] of [
        ['small', small, VOLUMES],
        ['big', big, VOLUMES * 100],
      ] as const) {
        await page.goto(`${server.url}/#/receipts/${id}`);
        await page
          .locator('table.receipt-rows tbody tr')
          .nth(files - 1)
          .waitFor();
        await page.emulateMedia({ media: 'print' });
        const sheet = page.locator('.transfer-sheet');
        assert.equal(await sheet.isVisible(), true, 'the 移交清单 shows on paper');
        assert.equal(await page.locator('table.transfer-volumes tbody tr').count(), VOLUMES, 'one line per 案卷');
        assert.deepEqual(await page.locator('table.transfer-volumes tbody tr').first().locator('td').allInnerTexts(), [
          '1',
          '案卷001',
          String(files / VOLUMES),
          files === VOLUMES
            ? '300 B'
            : await page.locator('table.transfer-volumes tbody tr').first().locator('td').nth(3).innerText(),
        ]);
        assert.match(await sheet.innerText(), /移交单位：?\s*沧州市 \/ 青县/);
        assert.match(await sheet.innerText(), /移交人：?\s*王档案（clerk-p）/);
        assert.equal(
          (await page.locator('.transfer-parties dd.blank').innerText()).trim(),
          '',
          '接收人 is left to fill in',
        );
        await page.screenshot({ path: path.join(SHOTS, `receipt-print-${name}-zh.png`) });
        pages[name] = await printed(page, `receipt-${name}-zh.pdf`);
        await page.emulateMedia({ media: 'screen' });
      }
      for (const [name, text] of Object.entries(pages)) {
        const [first, second] = text;
        assert.match(first!, /档案移交清单/, name);
        assert.match(first!, /移交单位：沧州市\/青县\/?.*移交人：王档案（clerk-p）接收人：日期：/, name);
        for (let v = 1; v <= VOLUMES; v++) assert.match(first!, new RegExp(`案卷${String(v).padStart(3, '0')}`), name);
        assert.match(first!, /移交人签字：日期：接收人签字：日期：/, `${name}: the signature lines are on page 1`);
        assert.doesNotMatch(first!, /第0001页|系统编号/, `${name}: no file on page 1`);
        assert.match(second!, /^附件：文件目录/, `${name}: the appendix begins page 2`);
        assert.match(second!, /系统编号/, `${name}: the internal id is the 系统编号`);
        assert.doesNotMatch(text.join(''), /档案编号/);
      }
      /** Page 1 without its figures and folder name: what it says, whatever the numbers. */
      const shape = (text: string, title: string) => text.replaceAll(title, 'T').replace(/[\d.,]+(?:[KMG]?B)?/g, '#');
      assert.equal(
        shape(pages.big![0]!, '2026年移交'),
        shape(pages.small![0]!, '补充移交'),
        'page 1 of 1,000 files says what page 1 of 10 does, only the figures differ',
      );
      assert.ok(pages.big!.length > pages.small!.length, '1,000 files take more pages of appendix');

      // In English too.
      await page.getByRole('button', { name: 'English' }).click();
      await page.goto(`${server.url}/#/receipts/${small}`);
      await page.locator('table.receipt-rows tbody tr').first().waitFor();
      await page.emulateMedia({ media: 'print' });
      await page.getByRole('heading', { name: 'Records transfer list' }).waitFor();
      await page.screenshot({ path: path.join(SHOTS, 'receipt-print-small-en.png') });
      const english = await printed(page, 'receipt-small-en.pdf');
      assert.match(english[0]!, /Signature\(handedover\):Date.*Signature\(received\):Date/);
      assert.match(english[1]!, /^Appendix:listoffiles/);
      await page.emulateMedia({ media: 'screen' });
      await page.getByRole('button', { name: '中文' }).click();
      assert.deepEqual(errors, []);
    });

    it('browses the folders of 本单位文件 as a 网盘 and withdraws a whole 案卷 folder', async () => {
      const { page, errors } = await windows.open();
      await page.setViewportSize({ width: 1280, height: 800 });
      await login(page, server.url, 'clerk-p');
      await page.getByRole('heading', { name: '上传档案' }).waitFor();
      await page.getByRole('link', { name: '本单位文件' }).click();
      const rows = page.locator('table.folders tbody tr');
      await page.locator('table.folders a.folder-name').first().waitFor();
      assert.deepEqual(await page.locator('table.folders a.folder-name').allInnerTexts(), ['2026年移交', '补充移交']);
      assert.match(await rows.first().innerText(), /1,000 个文件/);
      await page.screenshot({ path: path.join(SHOTS, 'files-folders-top-zh.png') });

      await page.getByRole('link', { name: '2026年移交' }).click();
      await page.locator('table.folders a.folder-name', { hasText: '案卷010' }).waitFor();
      assert.equal(
        await page
          .locator('nav.folder-path')
          .innerText()
          .then((t) => t.replace(/\s+/g, ' ')),
        '全部文件夹 2026年移交',
      );
      await page.getByRole('link', { name: '案卷003' }).click();
      await page.locator('table.folders td.name', { hasText: '第0001页.tif' }).waitFor();
      // A TIFF scan has 预览: the viewer shows its pages as the server draws them.
      assert.match(await page.locator('table.folders tbody tr').first().innerText(), /第0001页\.tif.*预览/s);
      assert.doesNotMatch(await page.locator('table.folders tbody tr').first().innerText(), /无法预览/);
      const fileNames = await page.locator('table.folders td.name .file-name').allInnerTexts();
      assert.deepEqual(fileNames, [...fileNames].sort(), 'files by name');
      assert.equal(fileNames.length, 50, 'a page of 50 of the 案卷’s 100 files');
      await page.screenshot({ path: path.join(SHOTS, 'files-folder-volume-zh.png') });
      const findings = blocking(await accessibilityFindings(page, 'a folder of 本单位文件'));
      assert.deepEqual(findings, [], findingsTable(findings));
      assert.deepEqual(await layoutProblems(page), []);

      await page.getByRole('button', { name: '撤回整个文件夹' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      assert.match(await dialog.innerText(), /撤回：文件夹“案卷003”（100 个文件）/);
      await dialog.getByLabel('传错文件').check();
      await page.screenshot({ path: path.join(SHOTS, 'files-withdraw-folder-zh.png') });
      await dialog.getByRole('button', { name: '撤回 100 个文件' }).click();
      await page.getByText('已撤回 100 个文件，可在回收站恢复。').waitFor();
      await page.waitForFunction(() => document.querySelectorAll('table.folders td.name .file-name').length === 0);
      await page.getByText('这个文件夹里没有文件。').waitFor();

      await page.getByRole('link', { name: '2026年移交' }).click();
      await page.locator('table.folders a.folder-name', { hasText: '案卷010' }).waitFor();
      assert.equal(
        await page.locator('table.folders a.folder-name', { hasText: '案卷003' }).count(),
        0,
        'the withdrawn 案卷 is gone',
      );
      await page.getByRole('button', { name: 'English' }).click();
      await page.getByRole('link', { name: 'All folders' }).waitFor();
      await page.screenshot({ path: path.join(SHOTS, 'files-folders-en.png') });
      await page.getByRole('link', { name: 'Recently uploaded' }).click();
      await page.locator('table.files td.name .file-name').first().waitFor();
      await page.screenshot({ path: path.join(SHOTS, 'files-latest-en.png') });
      await page.getByRole('button', { name: '中文' }).click();
      assert.deepEqual(errors, []);
    });
  },
);
