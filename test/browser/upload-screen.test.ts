import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import type { FileList } from '../../shared/schemas.js';
import { accessibilityFindings, blocking, findingsTable } from '../support/accessibility.js';
import { browserSkip, BrowserWindows, login } from '../support/browser.js';
import { TestServer, type Client } from '../support/server.js';
import { embeddedTarget, tempDir } from '../support/stores.js';

/** The page's document, as the callbacks run inside the browser see it. */
declare const document: {
  querySelector(selector: string): { dataset: Record<string, string | undefined>; textContent: string | null } | null;
};

/**
 * The clerk's upload screen as it is seen at 1280×800 (Debian Chromium, a real server on the
 * embedded store): an outage in the middle of a batch says so, counts down and can be cut short;
 * while an upload runs the drop zone gives the list the screen and the list tells what is left,
 * how long and how fast; identical pages of one drop say which page they equal. Screenshots of
 * each state, in Chinese and English, go to SHOTS_DIR (default test-artifacts/upload-screen).
 */

const SHOTS = path.resolve(process.env.SHOTS_DIR ?? 'test-artifacts/upload-screen');
const shot = (name: string) => {
  fs.mkdirSync(SHOTS, { recursive: true });
  return path.join(SHOTS, name);
};
const MAX_FILE_SIZE = 200 * 1024 * 1024;
const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');

function writeFile(dir: string, name: string, data: Uint8Array): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, data);
  return file;
}

async function listFiles(client: Client, q: string): Promise<FileList> {
  const res = await client.fetch(`/api/files?limit=200&q=${encodeURIComponent(q)}`);
  assert.equal(res.status, 200);
  return (await res.json()) as FileList;
}

const folderInput = (page: Page) => page.locator('input[type=file][webkitdirectory]');

async function waitForSummary(page: Page, expected: { instant: number; stored: number }, timeout = 120_000) {
  await page.waitForFunction(
    (e) => {
      const s = document.querySelector('.results .summary');
      return s?.dataset.instant === String(e.instant) && s.dataset.stored === String(e.stored);
    },
    expected,
    { timeout },
  );
}

/** Slows the page's uploads (Chromium's own network emulation). */
async function throttleUploads(context: BrowserContext, page: Page, bytesPerSecond: number): Promise<void> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: bytesPerSecond,
  });
}

async function noSeriousViolations(page: Page, view: string): Promise<void> {
  const found = blocking(await accessibilityFindings(page, view));
  assert.deepEqual(found, [], findingsTable(found));
}

describe(
  'the upload screen at 1280×800 (Debian Chromium, embedded store)',
  { skip: browserSkip, timeout: 900_000 },
  () => {
    let server: TestServer;
    let files: string;
    const windows = new BrowserWindows();
    const clients: Record<string, Client> = {};

    before(async () => {
      server = await TestServer.start(embeddedTarget, { maxFileSize: MAX_FILE_SIZE });
      files = tempDir('archive-upload-screen-');
      for (const name of ['clerk-outage', 'clerk-compact', 'clerk-twins']) {
        const account = await server.addAccount(name, 'clerk');
        clients[name] = await server.tokenClient(account);
      }
    });
    after(async () => {
      await windows.closeAll();
      await server?.close();
      fs.rmSync(files, { recursive: true, force: true });
    });

    async function open(username: string) {
      const opened = await windows.open();
      await opened.page.setViewportSize({ width: 1280, height: 800 });
      await login(opened.page, server.url, username);
      await opened.page.getByRole('heading', { name: '上传档案' }).waitFor();
      return opened;
    }

    it('an outage mid-batch shows a banner with a live countdown and 立即重试, rows 等待重试; back, it goes and every file counts once', async () => {
      const folder = path.join(files, '移交-断网');
      const datas = Array.from({ length: 36 }, (_, i) => randomBytes(480_000 + i));
      datas.forEach((data, i) => writeFile(folder, `案卷${String(1 + (i % 3)).padStart(3, '0')}/第${i}页.jpg`, data));
      const large = randomBytes(6 * 1024 * 1024);
      writeFile(folder, '全卷扫描.tif', large);
      const { page, errors } = await open('clerk-outage');

      // The archive goes away once the first batch is on its way (that one is answered): every
      // later request of the upload is refused, as by a server that is down; tus from the start.
      let outage = false;
      let tusRefused = true;
      let batches = 0;
      await page.route(/\/api\/(uploads|tus)/, async (route) => {
        const { pathname } = new URL(route.request().url());
        if (pathname === '/api/uploads/batch' && batches++ === 0) {
          await route.continue();
          outage = true;
          return;
        }
        if (outage || (tusRefused && pathname.startsWith('/api/tus'))) return route.abort('connectionrefused');
        return route.continue();
      });
      // What the page does, in its own order and by its own clock: each request of the upload as
      // it is sent, each click on a button before the app hears of it, with the banner's countdown then.
      await page.evaluate(() => {
        type Sent = { logged?: boolean };
        const w = globalThis as unknown as {
          pageLog: Array<{ at: number; request?: string; click?: string; seconds?: string }>;
          fetch: (input: unknown, init?: unknown) => Promise<unknown>;
          location: { href: string };
          XMLHttpRequest: { prototype: { open: (this: Sent, m: string, url: string, ...r: unknown[]) => void } };
          document: { addEventListener(t: 'click', l: (e: { target: unknown }) => void, capture: true): void };
        };
        w.pageLog = [];
        const log = (url: unknown) => {
          const p = new URL(String(url), w.location.href).pathname;
          if (/^\/api\/(uploads|tus)/.test(p)) w.pageLog.push({ at: Date.now(), request: p });
        };
        const fetch = w.fetch;
        w.fetch = (input, init) => {
          log(typeof input === 'string' ? input : (input as { url: string }).url);
          return fetch(input, init);
        };
        const open = w.XMLHttpRequest.prototype.open;
        w.XMLHttpRequest.prototype.open = function (method, url, ...rest) {
          log(url);
          open.call(this, method, url, ...rest);
        };
        w.document.addEventListener(
          'click',
          (e) => {
            const button = (e.target as { closest?(s: string): { textContent: string | null } | null }).closest?.(
              'button',
            );
            if (button)
              w.pageLog.push({
                at: Date.now(),
                click: button.textContent?.trim() ?? '',
                seconds: document.querySelector('.retry-banner')?.dataset.seconds ?? '',
              });
          },
          true,
        );
      });

      await folderInput(page).setInputFiles(folder);
      const banner = page.locator('.retry-banner');
      await banner.waitFor();
      await page.locator('.outcomes li[data-status="retrying"]').first().waitFor();
      assert.match(
        await page.locator('.outcomes li[data-status="retrying"] .status').first().innerText(),
        /^等待重试$/,
      );
      // The countdown moves: it is seen to go down by one second.
      await page.waitForFunction(
        () => {
          const w = globalThis as unknown as { countdown?: number[] };
          const seconds = Number(document.querySelector('.retry-banner')?.dataset.seconds || NaN);
          const seen = (w.countdown ??= []);
          if (Number.isFinite(seconds) && seen[seen.length - 1] !== seconds) seen.push(seconds);
          return seen.some((s, i) => i > 0 && seen[i - 1] === s + 1);
        },
        undefined,
        { timeout: 120_000, polling: 100 },
      );
      // Waits long enough to tell a click from the page's own timers apart.
      await page.waitForFunction(() => Number(document.querySelector('.retry-banner')?.dataset.seconds || 0) >= 8, {
        timeout: 120_000,
        polling: 100,
      });
      assert.match(await banner.innerText(), /与档案库的连接中断，\d+ 秒后自动重试…请勿关闭页面\s*立即重试/);
      assert.ok(
        (await page.locator('.results .summary').getAttribute('data-stored')) !== String(datas.length + 1),
        'the upload has not finished',
      );
      assert.equal(
        await page
          .locator('.outcomes li:is([data-status="checking"], [data-status="proving"], [data-status="sending"])')
          .count(),
        0,
        'no row claims to be checking or sending while nothing reaches the archive',
      );
      await page.screenshot({ path: shot('outage-zh.png') });
      await noSeriousViolations(page, 'upload, outage banner, zh');
      await page.getByRole('button', { name: 'English' }).click();
      await banner
        .getByText(/The connection to the archive is lost\. Retrying automatically in \d+ seconds?…/)
        .waitFor();
      await page.locator('.outcomes li[data-status="retrying"]').getByText('Waiting to retry').first().waitFor();
      await page.screenshot({ path: shot('outage-en.png') });
      await noSeriousViolations(page, 'upload, outage banner, en');
      await page.getByRole('button', { name: '中文' }).click();
      await page.waitForFunction(() => Number(document.querySelector('.retry-banner')?.dataset.seconds || 0) >= 8, {
        timeout: 120_000,
        polling: 100,
      });

      // The archive is back; the clerk does not wait for the countdown. (No await between the
      // two: on a busy machine the countdown would run on while the routes were taken down.)
      outage = false;
      tusRefused = false;
      await page.getByRole('button', { name: '立即重试' }).click();
      await waitForSummary(page, { instant: 0, stored: datas.length + 1 });
      await banner.waitFor({ state: 'detached' });
      assert.equal(await page.locator('.outcomes li[data-status="retrying"]').count(), 0);
      const log = await page.evaluate(
        () =>
          (
            globalThis as unknown as {
              pageLog: Array<{ at: number; request?: string; click?: string; seconds?: string }>;
            }
          ).pageLog,
      );
      const click = log.findIndex((e) => e.click === '立即重试');
      const retried = log.slice(click + 1).find((e) => e.request);
      const seconds = Number(log[click]!.seconds);
      // At least 5 s ahead when clicked (8 s when the wait above ended): a click tells apart from the page's own timer.
      assert.ok(seconds >= 5, `the next try was ${seconds} s away when the clerk clicked`);
      assert.ok(
        retried && retried.at - log[click]!.at < (seconds - 2) * 1000,
        `tried again ${retried && retried.at - log[click]!.at} ms after the click, not after the countdown`,
      );

      const listed = await listFiles(clients['clerk-outage']!, '移交-断网');
      assert.equal(listed.total, datas.length + 1);
      assert.ok(
        listed.items.every((f) => f.myUploadCount === 1),
        'each file counted once',
      );
      assert.ok(listed.items.some((f) => f.fileMD5 === md5(large)));
      assert.deepEqual(errors, []);
    });

    it('while an upload runs, the drop zone is one line (继续添加 adds files), the list tells what is left, how long and how fast', async () => {
      const folder = path.join(files, '移交-大卷');
      const large = randomBytes(40 * 1024 * 1024);
      writeFile(folder, '大卷/全卷扫描.tif', large);
      Array.from({ length: 30 }, (_, i) =>
        writeFile(folder, `案卷001/第${String(i + 1).padStart(4, '0')}页.jpg`, randomBytes(30_000 + i)),
      );
      const more = path.join(files, '补充');
      Array.from({ length: 3 }, (_, i) => writeFile(more, `补-${i}.pdf`, randomBytes(20_000 + i)));
      const { context, page, errors } = await open('clerk-compact');
      const zone = page.locator('.dropzone');
      const fullHeight = (await zone.boundingBox())!.height;
      await page.screenshot({ path: shot('upload-empty-zh.png') });
      await throttleUploads(context, page, 1536 * 1024);

      await folderInput(page).setInputFiles(folder);
      await page.locator('.dropzone.compact').waitFor();
      const compactHeight = (await zone.boundingBox())!.height;
      assert.ok(
        compactHeight < 70 && fullHeight > 2 * compactHeight,
        `the zone took ${fullHeight} px, now ${compactHeight} px`,
      );
      // The large file's row moves as its bytes go: two different amounts sent are seen.
      const largeRow = page.locator('.outcomes li[data-name="移交-大卷/大卷/全卷扫描.tif"] .status');
      const sentSeen = new Set<string>();
      while (sentSeen.size < 2) {
        const text = await largeRow.innerText();
        const sent = /^正在上传 ([\d.]+ [KMG]?B) \/ 40\.0 MB（\d+%）$/.exec(text)?.[1];
        if (sent && sent !== '0 B') sentSeen.add(sent);
        if (sentSeen.size < 2)
          await page.waitForFunction(
            ([before]) =>
              document.querySelector('.outcomes li[data-name="移交-大卷/大卷/全卷扫描.tif"] .status')?.textContent !==
              before,
            [text],
            { timeout: 120_000, polling: 100 },
          );
      }
      const rate = page.locator('.transfer-rate');
      await rate.getByText(/^剩余 [\d.]+ MB · 约 \d+ (秒|分钟) · [\d.]+ (KB|MB)\/秒$/).waitFor({ timeout: 120_000 });
      const remaining = Number(await rate.getAttribute('data-remaining'));
      assert.ok(remaining > 0 && remaining < large.length + 30 * 31_000, `${remaining} bytes left`);
      await page.screenshot({ path: shot('compact-zh.png') });
      await noSeriousViolations(page, 'upload, compact, zh');

      // 继续添加 takes another folder into the running list.
      const [chooser] = await Promise.all([
        page.waitForEvent('filechooser'),
        page.getByRole('button', { name: '继续添加', exact: true }).click(),
      ]);
      assert.ok(chooser.isMultiple());
      await chooser.setFiles(more);
      // Listed under their own folder, below the running one: the list's tally says they joined.
      await page.locator('.results .summary[data-total="34"]').waitFor();

      await page.getByRole('button', { name: 'English' }).click();
      await rate.getByText(/^[\d.]+ MB left · about \d+ (s|min) · [\d.]+ (KB|MB)\/s$/).waitFor({ timeout: 120_000 });
      await page.getByRole('button', { name: 'Add more', exact: true }).waitFor();
      await page.screenshot({ path: shot('compact-en.png') });
      await noSeriousViolations(page, 'upload, compact, en');
      await page.getByRole('button', { name: '中文' }).click();

      await throttleUploads(context, page, -1);
      await waitForSummary(page, { instant: 0, stored: 34 });
      await page.locator('.dropzone:not(.compact)').waitFor();
      assert.equal(await rate.count(), 0, 'nothing left to tell once the list has ended');
      assert.equal((await listFiles(clients['clerk-compact']!, '补-')).total, 3);
      assert.deepEqual(errors, []);
    });

    it('an identical page of the same drop says which page it equals and that one copy is kept, not a repeat count', async () => {
      const folder = path.join(files, '2026年移交');
      const page33 = randomBytes(60_000);
      writeFile(folder, '案卷007/第0033页.jpg', page33);
      writeFile(folder, '案卷009/第0001页.jpg', page33);
      writeFile(folder, '案卷009/第0002页.jpg', randomBytes(60_000));
      const { page, errors } = await open('clerk-twins');
      await folderInput(page).setInputFiles(folder);
      await waitForSummary(page, { instant: 1, stored: 2 });
      const copy = page.locator('.outcomes li[data-status="instant"]');
      const copyPath = await copy.getAttribute('data-name');
      const first = ['2026年移交/案卷007/第0033页.jpg', '2026年移交/案卷009/第0001页.jpg'].find((p) => p !== copyPath)!;
      assert.equal(
        await copy.locator('.status').innerText(),
        `与本批 ${first.slice('2026年移交/'.length)} 相同，只保存一份`,
      );
      assert.doesNotMatch(await page.locator('.outcomes').innerText(), /您第 \d+ 次上传此文件/);
      await page.screenshot({ path: shot('identical-zh.png') });
      await page.getByRole('button', { name: 'English' }).click();
      await copy.getByText(`Identical to ${first.slice('2026年移交/'.length)} in this batch: kept once`).waitFor();
      await page.screenshot({ path: shot('identical-en.png') });
      await noSeriousViolations(page, 'upload, identical pages, en');
      await page.getByRole('button', { name: '中文' }).click();
      // The archive still counts both (the ledger is not the page's to change).
      const held = (await listFiles(clients['clerk-twins']!, '2026年移交')).items.find(
        (f) => f.fileMD5 === md5(page33),
      );
      assert.equal(held?.myUploadCount, 2);
      assert.deepEqual(errors, []);
    });
  },
);
