import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { FileList } from '../../shared/schemas.js';
import { accessibilityFindings, blocking, findingsTable } from '../support/accessibility.js';
import { browserSkip, BrowserWindows, focused, login } from '../support/browser.js';
import { cli, killServer, processStore, startServer, type ProcessStore, type Started } from '../support/process.js';
import { Client, PASSWORD } from '../support/server.js';
import { embeddedTarget, tempDir } from '../support/stores.js';

/** The page's document, as the callbacks run inside the browser see it. */
declare const document: {
  querySelector(selector: string): { dataset: Record<string, string | undefined> } | null;
};

/**
 * A folder dropped again after it finished (issue 42, item 5): the page asks once for the whole
 * drop, skipping is the default, skipped files count nowhere and the receipt lists them; 仍要再次登记
 * counts them. Debian's Chromium against a server process on the embedded store.
 */

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');
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

const folderInput = (page: Page) => page.locator('input[type=file][webkitdirectory]');

async function summary(page: Page, expected: Record<'instant' | 'stored' | 'skipped', number>): Promise<void> {
  await page.waitForFunction((e) => {
    const s = document.querySelector('.results .summary');
    return (
      s?.dataset.instant === String(e.instant) &&
      s.dataset.stored === String(e.stored) &&
      s.dataset.skipped === String(e.skipped) &&
      s.dataset.failed === '0'
    );
  }, expected);
}

describe('a folder dropped again (Debian Chromium, embedded store)', { skip: browserSkip, timeout: 600_000 }, () => {
  let store: ProcessStore;
  let server: Started;
  let files: string;
  const tokens: Record<string, string> = {};
  const api = (user: string) => new Client(server.url, { bearer: tokens[user]! });
  const windows = new BrowserWindows();

  before(async () => {
    store = processStore(embeddedTarget);
    files = tempDir('archive-repeat-drop-');
    const unitA = ['--unit', 'unit-a', '--city', '沧州市', '--county', '青县'];
    tokens['clerk'] = account(store.env, 'clerk', 'clerk', unitA);
    tokens['colleague'] = account(store.env, 'colleague', 'clerk', unitA);
    tokens['top'] = account(store.env, 'top', 'admin', ['--unit', 'archive']);
    server = await startServer({ ...store.env, GC_INTERVAL_SECONDS: '0' });
  });
  after(async () => {
    await windows.closeAll();
    if (server) await killServer(server);
    await store?.dispose();
    fs.rmSync(files, { recursive: true, force: true });
  });

  /** What the ledger holds for the clerk's unit: each content's upload counts, and the repeat-uploaders report. */
  async function ledger() {
    const res = await api('clerk').fetch('/api/files?limit=200');
    assert.equal(res.status, 200);
    const listed = ((await res.json()) as FileList).items.map((f) => [f.fileMD5, f.uploadCount, f.myUploadCount]);
    const report = await api('top').fetch('/api/reports/repeat-uploaders?group=user');
    assert.equal(report.status, 200, await report.clone().text());
    const { items } = (await report.json()) as { items: unknown[] };
    return { files: listed.sort(), report: items };
  }

  it('asks once for the whole drop, skips by default (nothing counted, the receipt lists them), and counts them again when asked', async () => {
    const folder = path.join(files, '2026年移交');
    const pages = Array.from({ length: 5 }, (_, i) => randomBytes(3000 + i));
    pages.forEach((data, i) => writeFile(folder, `案卷001/第000${i + 1}页.jpg`, data));
    // A colleague sent one of the pages too: not the clerk's own upload, never asked about.
    const colleagues = randomBytes(2500);
    writeFile(folder, '案卷002/同事已传.pdf', colleagues);
    assert.equal((await api('colleague').upload('同事已传.pdf', colleagues)).status, 201);

    const { page, errors } = await windows.open();
    await page.setViewportSize({ width: 1280, height: 800 });
    await login(page, server.url, 'clerk');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await folderInput(page).setInputFiles(folder);
    await summary(page, { instant: 1, stored: 5, skipped: 0 });
    assert.equal(await page.getByRole('alertdialog').count(), 0, 'a first upload asks nothing');
    const once = await ledger();
    assert.ok(once.files.every(([, , mine]) => mine === 1));

    // Dropped again with a page added: the five pages (and the colleague's file, which the clerk
    // has now sent too) were sent before; the new page goes up meanwhile.
    const added = randomBytes(4000);
    writeFile(folder, '案卷003/补充.jpg', added);
    await folderInput(page).setInputFiles(folder);
    const question = page.getByRole('alertdialog');
    await question.waitFor();
    assert.match(await question.innerText(), /其中 6 个文件本单位已于 \d{4}年\d{1,2}月\d{1,2}日 \d{2}:\d{2} 上传过：/);
    await summary(page, { instant: 0, stored: 1, skipped: 0 });
    assert.equal(await question.count(), 1, 'one question for the drop');
    assert.ok(await focused(page.getByRole('button', { name: '跳过这些' })), 'skipping is the default');
    await page.screenshot({ path: path.join(SHOTS, 'repeat-drop-question-zh.png') });
    const findings = blocking(await accessibilityFindings(page, 'the question of a folder dropped again'));
    assert.deepEqual(findings, [], findingsTable(findings));
    assert.deepEqual(
      (await ledger()).files.filter(([md5sum]) => md5sum !== md5(added)),
      once.files,
      'nothing counted while the clerk reads',
    );

    await page.keyboard.press('Enter');
    await summary(page, { instant: 0, stored: 1, skipped: 6 });
    assert.equal(await question.count(), 0);
    const skipped = await ledger();
    assert.deepEqual(
      skipped.files.filter(([md5sum]) => md5sum !== md5(added)),
      once.files,
      'skipped files are counted nowhere',
    );
    assert.deepEqual(skipped.report, once.report, 'the repeat-uploaders report is as before');
    assert.match(
      await page.locator('.outcomes li[data-status="skipped"]').first().innerText(),
      /跳过：本单位已于 .* 上传过，本次未登记/,
    );
    await page.screenshot({ path: path.join(SHOTS, 'repeat-drop-skipped-zh.png') });

    await page.getByRole('link', { name: '查看上传清单' }).click();
    await page.getByRole('heading', { name: '上传清单：2026年移交' }).waitFor();
    await page.getByText('共 7 个：秒传 0 个，已上传 1 个，失败 0 个，跳过 6 个').waitFor();
    // The 结果 column by its header: the table has more columns (撤回's pick box) than this reads.
    const outcomes = await page.locator('table.receipt-rows').evaluate((table) => {
      const column = [...table.querySelectorAll('thead th')].findIndex((th) => th.textContent?.trim() === '结果');
      return [...table.querySelectorAll('tbody tr')].map(
        (tr) => tr.querySelectorAll('td')[column]?.textContent?.trim() ?? '',
      );
    });
    assert.deepEqual(outcomes.filter((o) => o === '跳过：本单位已上传').length, 6);
    await page.screenshot({ path: path.join(SHOTS, 'repeat-drop-receipt-zh.png'), fullPage: true });
    await page.getByRole('button', { name: 'English' }).click();
    await page.locator('table.receipt-rows').getByText('Skipped: already uploaded to your unit').first().waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'repeat-drop-receipt-en.png'), fullPage: true });

    // In English, dropped once more: 仍要再次登记 (Record them again) counts them, as before.
    await page.getByRole('link', { name: 'Upload', exact: true }).click();
    await page.getByRole('heading', { name: 'Upload documents' }).waitFor();
    await folderInput(page).setInputFiles(folder);
    await question.waitFor();
    assert.match(await question.innerText(), /7 of these files were already uploaded to your unit, last on/);
    await page.screenshot({ path: path.join(SHOTS, 'repeat-drop-question-en.png') });
    await page.getByRole('button', { name: 'Record them again' }).click();
    await summary(page, { instant: 7, stored: 0, skipped: 0 });
    await page.screenshot({ path: path.join(SHOTS, 'repeat-drop-counted-en.png') });
    const counted = await ledger();
    for (const data of [...pages, colleagues, added])
      assert.equal(counted.files.find(([m]) => m === md5(data))?.[2], 2, 'counted a second time');
    assert.notDeepEqual(counted.report, once.report);
    await page.getByRole('button', { name: '中文' }).click();
    assert.deepEqual(errors, []);
  });
});
