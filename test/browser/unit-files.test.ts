import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { PDFDocument, rgb, StandardFonts } from 'pdf-lib';
import { ReportCalendar } from '../../server/services/calendar.js';
import { nextDay } from '../../shared/calendar.js';
import { dayText } from '../../client/src/pages/date-text.js';
import { artifactPath, browserSkip, BrowserWindows } from '../support/browser.js';
import { cli, killServer, processStore, startServer, type ProcessStore, type Started } from '../support/process.js';
import { embeddedTarget, tempDir } from '../support/stores.js';

/** The page's document and images, as the callbacks run inside the browser see them. */
declare const document: {
  querySelector(selector: string): { naturalWidth?: number; dataset: Record<string, string | undefined> } | null;
};

/**
 * 本单位文件 in Debian's Chromium against a real server process: a clerk uploads a folder in
 * which one content has two names, finds it again by either name and by its folder, filters,
 * sorts, and looks at a photo and a PDF without downloading them.
 */

const PASSWORD = 'a long password';
const TIME_ZONE = 'Asia/Shanghai';

/** A PNG of coloured noise (a photo, as big as one: noise does not compress), made here: no image library needed. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Array.from({ length: height }, () => Buffer.concat([Buffer.from([0]), randomBytes(width * 3)]));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A two-page PDF with a heading and a framed box on each page. */
async function pdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const n of [1, 2]) {
    const page = doc.addPage([420, 595]);
    page.drawRectangle({ x: 40, y: 380, width: 340, height: 160, borderColor: rgb(0.1, 0.3, 0.6), borderWidth: 3 });
    page.drawText(`Transfer list, page ${n}`, { x: 60, y: 500, size: 20, font, color: rgb(0.1, 0.3, 0.6) });
  }
  return Buffer.from(await doc.save());
}

async function login(page: Page, url: string, username: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('用户名').fill(username);
  await page.getByLabel('密码').fill(PASSWORD);
  await page.getByRole('button', { name: '登录' }).click();
}

describe('本单位文件 in the browser (Debian Chromium, embedded store)', { skip: browserSkip, timeout: 300_000 }, () => {
  let store: ProcessStore;
  let server: Started;
  let files: string;
  const windows = new BrowserWindows();

  before(async () => {
    store = processStore(embeddedTarget);
    files = tempDir('archive-browser-unit-files-');
    const add = cli(
      ['user', 'add', 'clerk-files', '--role', 'clerk', '--unit', 'unit-f', '--city', '沧州市', '--county', '青县'],
      store.env,
      `${PASSWORD}\n`,
    );
    assert.equal(add.status, 0, add.stderr);
    server = await startServer({ ...store.env, GC_INTERVAL_SECONDS: '0', REPORT_TIME_ZONE: TIME_ZONE });
  });
  after(async () => {
    await windows.closeAll();
    if (server) await killServer(server);
    await store?.dispose();
    fs.rmSync(files, { recursive: true, force: true });
  });

  it('finds a content by either of its names and by its folder, filters, sorts, keeps the search in the address, and previews a photo and a PDF', async () => {
    const scan = await pdf();
    const folder = path.join(files, '2026年移交');
    const write = (name: string, data: Buffer) => {
      fs.mkdirSync(path.dirname(path.join(folder, name)), { recursive: true });
      fs.writeFileSync(path.join(folder, name), data);
    };
    write('卷宗/移交清单.pdf', scan);
    write('副本/移交清单-副本.pdf', scan);
    write('照片/合影.png', png(320, 200));
    write('说明.txt', Buffer.from('县档案馆 2026 年度移交说明\n'));

    const { page, errors } = await windows.open();
    await login(page, server.url, 'clerk-files');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await page.locator('input[type=file][webkitdirectory]').setInputFiles(folder);
    await page.waitForFunction(
      () => {
        const s = document.querySelector('.results .summary');
        return s?.dataset.stored === '3' && s.dataset.instant === '1';
      },
      undefined,
      { timeout: 60_000 },
    );

    await page.getByRole('link', { name: '本单位文件' }).click();
    // It opens on the folders (the folder uploaded); the flat list is one click away.
    await page.locator('table.folders a.folder-name', { hasText: '2026年移交' }).waitFor();
    await page.getByRole('link', { name: '最近上传的文件' }).click();
    const table = page.locator('table.files:not(.folders)');
    const names = () => table.locator('td.name .file-name').allInnerTexts();
    await table.waitFor();
    assert.equal((await names()).length, 3, 'three contents: the PDF under two names, the photo, the note');
    await page.getByText('共 3 条', { exact: true }).waitFor();
    // What no viewer shows (a text file) says so in place of 预览.
    assert.match(await table.locator('tr', { hasText: '说明.txt' }).innerText(), /无法预览，请下载查看/);

    const search = page.getByPlaceholder('按文件名或文件夹搜索');
    const apply = page.getByRole('button', { name: '筛选' });
    /** Waits until the table lists exactly these names (in any order), the answer to the last request. */
    const showsOnly = async (expected: string[]) => {
      const want = JSON.stringify([...expected].sort());
      const deadline = Date.now() + 30_000; // a safety net, Playwright's own: a busy machine is slow to redraw
      let shown: string[] = [];
      while (Date.now() < deadline) {
        shown = (await names()).sort();
        if (JSON.stringify(shown) === want && (await table.getAttribute('aria-busy')) === null) return;
        await page.waitForTimeout(100);
      }
      assert.deepEqual(shown, [...expected].sort());
    };

    // By the first name, though the unit uploaded it again as a copy (shown as its latest name).
    await search.fill('卷宗/移交清单.pdf');
    await apply.click();
    await page.waitForURL(/#\/files\?q=/);
    await showsOnly(['2026年移交/副本/移交清单-副本.pdf']);
    const row = table.locator('tbody tr').first();
    assert.match(
      await row.locator('.also').innerText(),
      /还以另外 1 个名称上传过[\s\S]*2026年移交\/卷宗\/移交清单\.pdf/,
    );
    assert.match(await row.locator('td.uploaders').innerText(), /clerk-files/);
    await page.screenshot({ path: artifactPath('unit-files-1-found-by-first-name.png'), fullPage: true });

    // By the folder path; a reload keeps the search (it is in the address), Back returns to the one before.
    await search.fill('2026年移交/副本');
    await apply.click();
    await page.waitForURL(/q=2026%E5%B9%B4%E7%A7%BB%E4%BA%A4%2F%E5%89%AF%E6%9C%AC/);
    await showsOnly(['2026年移交/副本/移交清单-副本.pdf']);
    await page.reload();
    await showsOnly(['2026年移交/副本/移交清单-副本.pdf']);
    assert.equal(await page.getByPlaceholder('按文件名或文件夹搜索').inputValue(), '2026年移交/副本');
    await page.goBack();
    await page.waitForURL(/q=%E5%8D%B7%E5%AE%97/);
    assert.equal(await page.getByPlaceholder('按文件名或文件夹搜索').inputValue(), '卷宗/移交清单.pdf');

    // By type and by the day of first upload (至 includes its day).
    await page.getByRole('button', { name: '清除条件' }).click();
    await showsOnly(['2026年移交/副本/移交清单-副本.pdf', '2026年移交/照片/合影.png', '2026年移交/说明.txt']);
    await page.locator('select[name=type]').selectOption({ label: '图片' });
    await apply.click();
    await showsOnly(['2026年移交/照片/合影.png']);
    await page.locator('select[name=type]').selectOption({ label: '文档（Word、WPS 等）' });
    await apply.click();
    await showsOnly(['2026年移交/说明.txt']);
    await page.locator('select[name=type]').selectOption({ label: '全部类型' });
    const today = new ReportCalendar(TIME_ZONE).dayOf(new Date());
    await page.locator('input[name=from]').fill(today);
    await page.locator('input[name=to]').fill(today);
    await apply.click();
    await page.waitForURL(new RegExp(`from=${today}`));
    // Typed as YYYY-MM-DD, written back as the Chinese page writes days.
    assert.equal(await page.locator('input[name=from]').inputValue(), dayText('zh-CN', today));
    await showsOnly(['2026年移交/副本/移交清单-副本.pdf', '2026年移交/照片/合影.png', '2026年移交/说明.txt']);
    await page.locator('input[name=from]').fill(nextDay(today));
    await page.locator('input[name=to]').fill(nextDay(today));
    await apply.click();
    await page.getByText('没有找到文件。').waitFor();
    await page.getByRole('button', { name: '清除条件' }).click();

    // Sorting by size, with the keyboard: smallest first, then biggest first, as the header says.
    const sizeHeader = table.locator('th', { hasText: '大小' });
    await table.waitFor();
    await sizeHeader.getByRole('button').focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/sort=size/);
    const sortedAs = async (order: string) => {
      // Until Playwright's own 30 s, a safety net: a busy machine is slow to redraw.
      for (const end = Date.now() + 30_000; (await sizeHeader.getAttribute('aria-sort')) !== order && Date.now() < end;)
        await page.waitForTimeout(100);
      assert.equal(await sizeHeader.getAttribute('aria-sort'), order);
    };
    await sortedAs('descending');
    assert.deepEqual(await names(), [
      '2026年移交/照片/合影.png',
      '2026年移交/副本/移交清单-副本.pdf',
      '2026年移交/说明.txt',
    ]);
    await sizeHeader.getByRole('button').press('Enter');
    await sortedAs('ascending');
    assert.deepEqual(await names(), [
      '2026年移交/说明.txt',
      '2026年移交/副本/移交清单-副本.pdf',
      '2026年移交/照片/合影.png',
    ]);
    assert.equal(
      await table.locator('tr', { hasText: '说明.txt' }).getByRole('button', { name: /^预览/ }).count(),
      0,
      'a text file is only downloaded',
    );

    // The photo, in the page's viewer.
    await table.locator('tr', { hasText: '合影.png' }).getByRole('button', { name: /^预览/ }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('heading', { name: '2026年移交/照片/合影.png' }).waitFor();
    await page.waitForFunction(() => (document.querySelector('dialog.preview img')?.naturalWidth ?? 0) === 320);
    await page.screenshot({ path: artifactPath('unit-files-2-preview-photo.png') });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    // The PDF, page by page as the server draws it.
    await table.locator('tr', { hasText: '移交清单' }).getByRole('button', { name: /^预览/ }).click();
    await page.waitForFunction(
      () => document.querySelector('dialog.preview .pdf-pages')?.dataset.page === '1',
      undefined,
      {
        timeout: 30_000,
      },
    );
    await dialog.getByText('第 1 页，共 2 页').waitFor();
    const drawn = await page.evaluate(async () => {
      const d = (
        globalThis as unknown as {
          document: { querySelector(s: string): unknown; createElement(t: 'canvas'): unknown };
        }
      ).document;
      const img = d.querySelector('dialog.preview .pdf-pages img') as {
        naturalWidth: number;
        naturalHeight: number;
        decode(): Promise<void>;
      };
      await img.decode();
      const canvas = d.createElement('canvas') as {
        width: number;
        height: number;
        getContext(k: '2d'): {
          drawImage(i: unknown, x: number, y: number): void;
          getImageData(...a: number[]): { data: Uint8ClampedArray };
        };
      };
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const context = canvas.getContext('2d');
      context.drawImage(img, 0, 0);
      const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
      let ink = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i + 2]! > data[i]! + 60) ink++;
      return ink;
    });
    assert.ok(drawn > 500, `the page's blue frame and heading are drawn (${drawn} blue pixels)`);
    await page.screenshot({ path: artifactPath('unit-files-3-preview-pdf.png') });
    await dialog.getByRole('button', { name: '下一页' }).click();
    await page.waitForFunction(() => document.querySelector('dialog.preview .pdf-pages')?.dataset.page === '2');
    await dialog.getByRole('button', { name: '关闭' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.deepEqual(errors, []);
  });
  it('finds the note by a word of its text (按内容搜索), the word marked in its snippet', async () => {
    const { page, errors } = await windows.open();
    await login(page, server.url, 'clerk-files');
    await page.getByRole('link', { name: '本单位文件' }).click();
    await page.getByRole('link', { name: '按内容搜索' }).click();
    const words = page.getByLabel('文件中的文字');
    const hit = page.locator('.text-hit', { hasText: '说明.txt' });
    // The note's text is read in the background after its upload: search until it is found.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      await words.fill('移交说明');
      await page.getByRole('button', { name: '搜索', exact: true }).click();
      await page.waitForURL(/[?&]text=/);
      await page.locator('.text-hits, .text-search p[aria-live]').first().waitFor();
      if ((await hit.count()) > 0) break;
      await page.waitForTimeout(1000);
    }
    await hit.waitFor({ timeout: 1000 });
    assert.deepEqual(await hit.locator('mark').allInnerTexts(), ['移交', '说明']);
    assert.match(await hit.locator('.snippet').innerText(), /县档案馆 2026 年度移交说明/);
    await page.screenshot({ path: artifactPath('unit-files-4-text-search.png') });
    await words.fill('不存在的词语组合');
    await page.getByRole('button', { name: '搜索', exact: true }).click();
    await page.getByText('没有文件的内容含有这些词语。').waitFor();
    assert.deepEqual(errors, []);
  });
});
