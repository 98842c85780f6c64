import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip, BrowserWindows, login } from '../support/browser.js';
import { cli, killServer, processStore, startServer, type ProcessStore, type Started } from '../support/process.js';
import { PASSWORD } from '../support/server.js';
import { embeddedTarget, tempDir } from '../support/stores.js';

/** The page's document, as the callbacks run inside the browser see it. */
declare const document: {
  querySelector(selector: string): { dataset: Record<string, string | undefined> } | null;
};

/**
 * Identical pages inside one folder upload are copies, not re-sends (issue 42, item 6): a clerk
 * drops a folder where one scan is there three times, then sends that page again in a later
 * upload; the administrator's repeat-uploaders report shows, next to the repeats, 2 copies inside
 * one upload and 1 re-send, and 只看重复发送 counts the re-send only. Debian's Chromium against a
 * server process on the embedded store, the uploads made by the clerk's own page.
 */

/** Screenshots a person looks at (outside the repository): SHOTS_DIR, or the worktree's test-artifacts. */
const SHOTS = path.resolve(process.env.SHOTS_DIR ?? 'test-artifacts');

function account(env: Record<string, string>, username: string, role: 'clerk' | 'admin', unit: string[]): void {
  const add = cli(['user', 'add', username, '--role', role, ...unit], env, `${PASSWORD}\n`);
  assert.equal(add.status, 0, add.stderr);
}

function writeFile(dir: string, name: string, data: Uint8Array): void {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, data);
}

const folderInput = (page: Page) => page.locator('input[type=file][webkitdirectory]');

/** Waits until the drop's summary says every file finished, none failed. */
async function finished(page: Page, files: number): Promise<void> {
  await page.waitForFunction((n) => {
    const s = document.querySelector('.results .summary');
    if (!s || s.dataset.failed !== '0') return false;
    const done = ['instant', 'stored', 'skipped'].reduce((sum, k) => sum + Number(s.dataset[k] ?? 0), 0);
    return done === n;
  }, files);
}

/** The report table's rows, cells as the reader sees them. */
async function tableRows(page: Page): Promise<string[][]> {
  return page
    .locator('[data-report="repeat-uploaders"] table.report > tbody > tr')
    .evaluateAll((rows) =>
      rows.map((row) =>
        Array.from((row as unknown as { cells: ArrayLike<{ innerText: string }> }).cells, (cell) =>
          cell.innerText.trim(),
        ),
      ),
    );
}

/**
 * Waits until the logged-in clerk's saved receipts hold `rows` rows in all, asking the archive
 * again while they do not (page.waitForFunction takes a promise for a truthy answer and would
 * not wait: the question is asked from here).
 */
async function receiptRowsSaved(page: Page, rows: number): Promise<void> {
  const saved = () =>
    page.evaluate(async () => {
      const res = await fetch('/api/receipts');
      if (!res.ok) return 0;
      const list = (await res.json()) as { items: Array<{ total: number }> };
      return list.items.reduce((sum, r) => sum + r.total, 0);
    });
  for (const end = Date.now() + 60_000; (await saved()) < rows; await page.waitForTimeout(200))
    assert.ok(Date.now() < end, `the receipts never held ${rows} rows`);
}

/** What the upload list says of each file whose path ends with `name`. */
async function statusOf(page: Page, name: string): Promise<string> {
  return (await page.locator(`[data-name$="${name}"] .status`).innerText()).trim();
}

async function headers(page: Page): Promise<string[]> {
  return (await page.locator('[data-report="repeat-uploaders"] table.report > thead th').allInnerTexts()).map((h) =>
    h.trim(),
  );
}

describe(
  'copies inside one upload vs re-sends (Debian Chromium, embedded store)',
  { skip: browserSkip, timeout: 600_000 },
  () => {
    let store: ProcessStore;
    let server: Started;
    let files: string;
    const windows = new BrowserWindows();

    before(async () => {
      store = processStore(embeddedTarget);
      files = tempDir('archive-repeat-copies-');
      account(store.env, 'clerk', 'clerk', ['--unit', 'unit-a', '--city', '沧州市', '--county', '青县']);
      account(store.env, 'top', 'admin', ['--unit', 'archive']);
      account(store.env, 'clerkb', 'clerk', ['--unit', 'unit-b', '--city', '沧州市', '--county', '青县']);
      server = await startServer({ ...store.env, GC_INTERVAL_SECONDS: '0' });
    });
    after(async () => {
      await windows.closeAll();
      if (server) await killServer(server);
      await store?.dispose();
      fs.rmSync(files, { recursive: true, force: true });
    });

    // The second folder is dropped as soon as the first finished, as a clerk does: the page
    // clears the ended list then, and the first drop's receipt must still be kept (it was lost,
    // and its copies counted as re-sends, before FolderUpload.clear sent it). The first receipt
    // sent is refused once (no network), so that the list is cleared before the archive holds
    // its receipt whichever comes first, the page's own send or the next drop.
    it('shows copies inside one upload and re-sends beside the repeats, and ranks by re-sends alone when asked', async () => {
      const page33 = randomBytes(5000);
      const first = path.join(files, '2026年移交');
      writeFile(first, '案卷007/第0033页.jpg', page33);
      writeFile(first, '案卷007/第0034页.jpg', page33);
      writeFile(first, '案卷007/第0035页.jpg', page33);
      writeFile(first, '案卷007/第0036页.jpg', randomBytes(6000));
      const later = path.join(files, '补交');
      writeFile(later, '案卷007/第0033页.jpg', page33);

      const clerk = await windows.open();
      await clerk.page.setViewportSize({ width: 1280, height: 800 });
      await login(clerk.page, server.url, 'clerk');
      await clerk.page.getByRole('heading', { name: '上传档案' }).waitFor();
      let refused = false;
      await clerk.page.route('**/api/receipts/*', (route) => {
        if (refused || route.request().method() !== 'PUT') return route.continue();
        refused = true;
        return route.abort('internetdisconnected');
      });
      await folderInput(clerk.page).setInputFiles(first);
      await finished(clerk.page, 4);
      // The later upload: the page was sent before; the clerk means to register it again.
      await folderInput(clerk.page).setInputFiles(later);
      await clerk.page.getByRole('alertdialog').waitFor();
      await clerk.page.getByRole('button', { name: '仍要再次登记' }).click();
      await finished(clerk.page, 1);
      // The report counts copies from each drop's receipt (上传清单), which the page saves after
      // its uploads have finished: the five rows of the two drops are waited for.
      await receiptRowsSaved(clerk.page, 5);
      assert.ok(refused, 'the first receipt sent was refused once');
      assert.deepEqual(clerk.errors, []);

      const admin = await windows.open();
      const { page } = admin;
      await page.setViewportSize({ width: 1280, height: 800 });
      await login(page, server.url, 'top');
      await page.goto(`${server.url}/#/reports/repeat-uploaders?group=user`);
      await page.locator('[data-report="repeat-uploaders"] table.report tbody tr').first().waitFor();
      const columns = await headers(page);
      const at = (row: string[], column: string) => row[columns.findIndex((h) => h.startsWith(column))];
      const figures = (row: string[]) =>
        ['上传次数', '重复上传次数', '其中同批重复', '其中重复发送'].map((column) => at(row, column));
      assert.equal(
        columns.findIndex((h) => h.startsWith('其中同批重复')),
        columns.findIndex((h) => h.startsWith('重复上传次数')) + 1,
        'next to the repeats',
      );
      const [withCopies] = await tableRows(page);
      // Four uploads of the page: 3 in one folder upload (2 copies), 1 later (a re-send).
      assert.deepEqual(figures(withCopies!), ['4', '3', '2', '1']);
      await page.getByText('同批重复：一次上传（一份上传清单）里内容相同的文件').waitFor();
      await page.screenshot({ path: path.join(SHOTS, 'repeat-copies-zh.png') });

      await page.getByRole('button', { name: '不算（只看重复发送）' }).click();
      // The table read again without copies: its uploads cell says 2.
      await page.waitForFunction(
        (column) => {
          const row = document.querySelector(
            '[data-report="repeat-uploaders"] table.report > tbody > tr',
          ) as unknown as {
            cells: ArrayLike<{ innerText: string }>;
          } | null;
          return row?.cells[column]?.innerText.trim() === '2';
        },
        columns.findIndex((h) => h.startsWith('上传次数')),
      );
      const [resendsOnly] = await tableRows(page);
      // Each folder upload once: two uploads, one repeat, which is the re-send.
      assert.deepEqual(figures(resendsOnly!), ['2', '1', '2', '1']);
      assert.equal(
        await page.getByRole('button', { name: '不算（只看重复发送）' }).getAttribute('aria-pressed'),
        'true',
      );
      await page.screenshot({ path: path.join(SHOTS, 'repeat-copies-resends-only-zh.png') });
      assert.deepEqual(admin.errors, []);

      // The same in English, from the top bar's language switch.
      await page
        .getByRole('button', { name: 'English' })
        .or(page.getByRole('link', { name: 'English' }))
        .click();
      await page.getByRole('columnheader', { name: /Copies in one upload/ }).waitFor();
      assert.equal(
        await page.getByRole('button', { name: 'Leave out (re-sends only)' }).getAttribute('aria-pressed'),
        'true',
      );
      await page.screenshot({ path: path.join(SHOTS, 'repeat-copies-resends-only-en.png') });
      assert.deepEqual(admin.errors, []);
    });

    it('says of each copy counted by a proof which page of the drop it equals, on the page and in the receipt', async () => {
      const page = randomBytes(4000);
      const dropped = path.join(files, '2026年移交乙');
      for (const name of ['第0033页.jpg', '第0034页.jpg', '第0035页.jpg']) writeFile(dropped, `案卷007/${name}`, page);
      const clerk = await windows.open();
      await clerk.page.setViewportSize({ width: 1280, height: 800 });
      await login(clerk.page, server.url, 'clerkb');
      await clerk.page.getByRole('heading', { name: '上传档案' }).waitFor();
      await folderInput(clerk.page).setInputFiles(dropped);
      await finished(clerk.page, 3);
      // The first of the three to be counted is stored; the others were counted by proofs
      // (instant), not sent, and say which page they equal, not how often the clerk sent the file.
      const pages = ['第0033页.jpg', '第0034页.jpg', '第0035页.jpg'];
      const said = await Promise.all(pages.map((name) => statusOf(clerk.page, name)));
      const kept = pages.filter((_, i) => !said[i]!.startsWith('与本批'));
      assert.equal(kept.length, 1, `one page of the three is the one kept: ${said.join(' | ')}`);
      const copy = `与本批 案卷007/${kept[0]} 相同，只保存一份`;
      for (const [i, name] of pages.entries()) {
        const status = await clerk.page.locator(`[data-name$="${name}"]`).getAttribute('data-status');
        if (name === kept[0]) assert.equal(status, 'stored');
        else assert.deepEqual([status, said[i]], ['instant', copy]);
      }
      assert.ok(!said.some((text) => text.includes('次上传此文件')), said.join(' | '));
      await clerk.page.screenshot({ path: path.join(SHOTS, 'repeat-copies-drop-zh.png') });

      // The receipt (上传清单) says the same of the two copies.
      await clerk.page.locator('.receipt-link a').click();
      const rows = clerk.page.locator('table tbody tr[data-outcome]');
      await rows.first().waitFor();
      const cells = await rows.evaluateAll((trs) =>
        trs.map((tr) => (tr as unknown as { innerText: string }).innerText.replace(/\s+/g, ' ')),
      );
      assert.equal(cells.length, 3);
      assert.equal(cells.filter((text) => text.includes(`秒传：${copy}`)).length, 2, cells.join('\n'));
      assert.ok(
        cells.some((text) => text.includes(`案卷007/${kept[0]}`) && !text.includes('与本批')),
        cells.join('\n'),
      );
      await clerk.page.screenshot({ path: path.join(SHOTS, 'repeat-copies-receipt-zh.png') });
      assert.deepEqual(clerk.errors, []);
    });
  },
);
