import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import type { FileList } from '../../shared/schemas.js';
import { artifactPath, browserSkip, BrowserWindows, fieldProblem, focused } from '../support/browser.js';
import { cli, killServer, processStore, startServer, type ProcessStore, type Started } from '../support/process.js';
import { Client } from '../support/server.js';
import { embeddedTarget, tempDir } from '../support/stores.js';

/** The page's document, as the callbacks run inside the browser see it. */
declare const document: {
  querySelector(selector: string): { dataset: Record<string, string | undefined> } | null;
  querySelectorAll(selector: string): { length: number };
  documentElement: { lang: string };
};

/**
 * The clerks' app in Debian's Chromium against a real server process on the embedded store:
 * what a clerk does, checked against what the server then holds.
 */

const PASSWORD = 'a long password';
/** The test server's upload limit: every other test file is smaller. */
const MAX_FILE_SIZE = 30 * 1024 * 1024;
const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');

function addAccount(env: Record<string, string>, username: string, unitId: string, county: string): string {
  const add = cli(
    ['user', 'add', username, '--role', 'clerk', '--unit', unitId, '--city', '沧州市', '--county', county],
    env,
    `${PASSWORD}\n`,
  );
  assert.equal(add.status, 0, add.stderr);
  const token = cli(['token', 'create', username], env);
  assert.equal(token.status, 0, token.stderr);
  return token.stdout.trim().split('\n').pop()!;
}

function writeFile(dir: string, name: string, data: Uint8Array, mtime?: Date): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, data);
  if (mtime) fs.utimesSync(file, mtime, mtime);
  return file;
}

async function login(page: Page, url: string, username: string, password = PASSWORD): Promise<void> {
  await page.goto(url);
  await page.getByLabel('用户名').fill(username);
  await page.getByLabel('密码').fill(password);
  await page.getByRole('button', { name: '登录' }).click();
}

const fileInput = (page: Page) => page.locator('input[type=file]:not([webkitdirectory])');
const folderInput = (page: Page) => page.locator('input[type=file][webkitdirectory]');
const sha256Hex = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** Numbers the page's events as the test hears of them (in the order the browser reports them). */
let eventOrder = 0;

/**
 * What the page asks the archive while it uploads: checked names, proofs' claims, batched files
 * (read from the batch's manifest as the page builds it: Chromium does not show bodies of files).
 * Call before the page is opened.
 */
async function recordUploadRequests(page: Page) {
  const checked: string[] = [];
  const claims: string[] = [];
  const batched: Array<{ name: string; key?: string }> = [];
  let requests = 0;
  let lastCheckAt = 0;
  await page.exposeBinding('recordManifest', (_source, manifest: string) => {
    batched.push(...(JSON.parse(manifest) as Array<{ name: string; key?: string }>));
  });
  await page.addInitScript(() => {
    const w = globalThis as unknown as {
      FormData: { prototype: { append: (this: unknown, name: string, value: unknown, ...rest: unknown[]) => void } };
      recordManifest(manifest: string): void;
    };
    const append = w.FormData.prototype.append;
    w.FormData.prototype.append = function (name, value, ...rest) {
      if (name === 'manifest' && typeof value === 'string') w.recordManifest(value);
      return append.call(this, name, value, ...rest);
    };
  });
  page.on('request', (r) => {
    const { pathname } = new URL(r.url());
    if (!pathname.startsWith('/api/uploads') && !pathname.startsWith('/api/tus')) return;
    requests++;
    if (pathname === '/api/uploads/checks') {
      checked.push(...(r.postDataJSON() as { files: Array<{ name: string }> }).files.map((f) => f.name));
      lastCheckAt = ++eventOrder;
    } else if (pathname === '/api/uploads/proofs')
      claims.push(...(r.postDataJSON() as { proofs: Array<{ claimId: string }> }).proofs.map((p) => p.claimId));
  });
  return {
    checked,
    claims,
    batched,
    requests: () => requests,
    get lastCheckAt() {
      return lastCheckAt;
    },
  };
}

/** Bends, in the first batch that holds it, the declared SHA-256 `sha256` (as if the file's bytes changed on the way). */
async function bendFirstManifest(page: Page, sha256: string): Promise<void> {
  await page.addInitScript((hex) => {
    const w = globalThis as unknown as {
      FormData: { prototype: { append: (this: unknown, name: string, value: unknown, ...rest: unknown[]) => void } };
      bent?: boolean;
    };
    const append = w.FormData.prototype.append;
    w.FormData.prototype.append = function (name, value, ...rest) {
      if (name === 'manifest' && typeof value === 'string' && value.includes(hex) && !w.bent) {
        w.bent = true;
        return append.call(this, name, value.replace(hex, 'f'.repeat(64)), ...rest);
      }
      return append.call(this, name, value, ...rest);
    };
  }, sha256);
}

async function waitForSummary(
  page: Page,
  expected: { instant: number; stored: number; failed?: number },
  timeout = 60_000,
): Promise<void> {
  await page.waitForFunction(
    (e) => {
      const s = document.querySelector('.results .summary');
      return (
        s?.dataset.instant === String(e.instant) &&
        s.dataset.stored === String(e.stored) &&
        s.dataset.failed === String(e.failed ?? 0)
      );
    },
    expected,
    { timeout },
  );
}

async function statusOf(page: Page, name: string): Promise<string | null> {
  return page.locator(`.outcomes li[data-name="${name}"]`).getAttribute('data-status');
}

/** Slows the page's uploads so a test can act in the middle of one. */
async function throttleUploads(context: BrowserContext, page: Page, bytesPerSecond: number): Promise<CDPSession> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: bytesPerSecond,
  });
  return cdp;
}

/** Every tus request the page sends, with the offset it claims. */
function recordTus(page: Page) {
  const requests: { method: string; offset: number | undefined; at: number }[] = [];
  const created: string[] = [];
  page.on('request', (r) => {
    if (!new URL(r.url()).pathname.startsWith('/api/tus')) return;
    const offset = r.headers()['upload-offset'];
    requests.push({ method: r.method(), offset: offset === undefined ? undefined : Number(offset), at: Date.now() });
  });
  page.on('response', (r) => {
    if (r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/tus' && r.status() === 201)
      created.push(new URL(r.headers().location!, r.url()).pathname);
  });
  return { requests, created };
}

/** An entry of the page's own log: a tus request as it is sent, or a click on a button. */
type PageEvent = { method?: string; offset?: number; click?: string };

/**
 * What the page itself does, in the order it does it: each tus request as it is sent (method and
 * Upload-Offset) and each click on a button, logged before the app handles the click. The test's
 * view of the network comes later and by another way; in this log, a request after the click on
 * 暂停 was sent while paused. Call before the page is opened.
 */
async function logInPage(page: Page): Promise<() => Promise<PageEvent[]>> {
  await page.addInitScript(() => {
    type Sent = { tus?: PageEvent };
    const w = globalThis as unknown as {
      pageLog: PageEvent[];
      location: { href: string };
      XMLHttpRequest: {
        prototype: {
          open: (this: Sent, method: string, url: string, ...rest: unknown[]) => void;
          setRequestHeader: (this: Sent, name: string, value: string) => void;
          send: (this: Sent, body?: unknown) => void;
        };
      };
      document: { addEventListener(type: 'click', listener: (e: { target: unknown }) => void, capture: true): void };
    };
    w.pageLog = [];
    const xhr = w.XMLHttpRequest.prototype;
    const { open, setRequestHeader, send } = xhr;
    xhr.open = function (method, url, ...rest) {
      this.tus = new URL(String(url), w.location.href).pathname.startsWith('/api/tus') ? { method } : undefined;
      open.call(this, method, url, ...rest);
    };
    xhr.setRequestHeader = function (name, value) {
      if (this.tus && name.toLowerCase() === 'upload-offset') this.tus.offset = Number(value);
      setRequestHeader.call(this, name, value);
    };
    xhr.send = function (body) {
      if (this.tus) w.pageLog.push(this.tus);
      send.call(this, body);
    };
    w.document.addEventListener(
      'click',
      (e) => {
        const button = (e.target as { closest?(s: string): { textContent: string | null } | null }).closest?.('button');
        if (button) w.pageLog.push({ click: button.textContent?.trim() ?? '' });
      },
      true,
    );
  });
  return () => page.evaluate(() => (globalThis as unknown as { pageLog: PageEvent[] }).pageLog);
}

/** The tus requests of the log between a click on `from` and the next on `to` (or its end). */
function sentBetween(log: PageEvent[], from: string, to?: string): PageEvent[] {
  const start = log.findIndex((e) => e.click === from);
  assert.ok(start >= 0, `${from} was clicked`);
  const end = to === undefined ? -1 : log.findIndex((e, i) => i > start && e.click === to);
  return log.slice(start + 1, end < 0 ? undefined : end).filter((e) => e.method);
}

/**
 * The upload's offset once no request writes to it: a PATCH of no bytes at its offset is taken
 * (204) only when no other PATCH holds the upload (423) and the offset has not moved since (409).
 * A PATCH the page broke off ends at the server only when the server has read what arrived of it.
 */
async function offsetAtRest(client: Client, uploadPath: string): Promise<number> {
  let offset = 0;
  await until(async () => {
    offset = await serverOffset(client, uploadPath);
    const probe = await client.fetch(uploadPath, {
      method: 'PATCH',
      headers: {
        'tus-resumable': '1.0.0',
        'content-type': 'application/offset+octet-stream',
        'upload-offset': String(offset),
      },
      body: new Uint8Array(0),
    });
    await probe.arrayBuffer();
    return probe.status === 204;
  }, 'no request writes to the upload');
  return offset;
}

async function serverOffset(client: Client, uploadPath: string): Promise<number> {
  const head = await client.fetch(uploadPath, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } });
  assert.equal(head.status, 200);
  return Number(head.headers.get('upload-offset'));
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function listFiles(client: Client, q?: string): Promise<FileList> {
  const res = await client.fetch(`/api/files?limit=200${q ? `&q=${encodeURIComponent(q)}` : ''}`);
  assert.equal(res.status, 200);
  return (await res.json()) as FileList;
}

describe('the clerks’ browser app (Debian Chromium, embedded store)', { skip: browserSkip, timeout: 600_000 }, () => {
  let store: ProcessStore;
  let server: Started;
  let files: string;
  const tokens: Record<string, string> = {};
  const api = (user: string) => new Client(server.url, { bearer: tokens[user]! });
  const windows = new BrowserWindows();
  const newPage = () => windows.open();

  before(async () => {
    store = processStore(embeddedTarget);
    files = tempDir('archive-browser-files-');
    tokens['clerk-a'] = addAccount(store.env, 'clerk-a', 'unit-a', '青县');
    tokens['clerk-a2'] = addAccount(store.env, 'clerk-a2', 'unit-a', '青县');
    tokens['clerk-b'] = addAccount(store.env, 'clerk-b', 'unit-b', '献县');
    addAccount(store.env, 'clerk-slowed', 'unit-a', '青县');
    tokens['clerk-pw'] = addAccount(store.env, 'clerk-pw', 'unit-a', '青县');
    server = await startServer({
      ...store.env,
      LOGIN_FREE_FAILURES: '3',
      GC_INTERVAL_SECONDS: '0',
      MAX_FILE_SIZE: String(MAX_FILE_SIZE),
    });
  });
  after(async () => {
    await windows.closeAll();
    if (server) await killServer(server);
    await store?.dispose();
    fs.rmSync(files, { recursive: true, force: true });
  });

  it('refuses a wrong password with a message the clerk understands, then says how long to wait, in Chinese and in English', async () => {
    const { page, errors } = await newPage();
    await page.goto(server.url);
    await page.screenshot({ path: artifactPath('01-login.png') });
    await login(page, server.url, 'clerk-slowed', 'not the password');
    await assert.doesNotReject(page.getByRole('alert').filter({ hasText: '用户名或密码错误' }).waitFor());
    await page.screenshot({ path: artifactPath('02-login-wrong-password.png') });
    // Two more wrong passwords from this address (LOGIN_FREE_FAILURES is 3): the next try must wait.
    const attempt = (password: string) =>
      fetch(`${server.url}/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'clerk-slowed', password }),
      });
    for (let i = 0; i < 2; i++) assert.equal((await attempt('not the password')).status, 401);
    const throttled = await attempt(PASSWORD);
    assert.equal(throttled.status, 429);
    // The server's own answer, given to the page with a wait of three minutes (the first wait is
    // one second, too short to read the message before it is over).
    const body = await throttled.text();
    await page.route('**/api/session', (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '180' }, body })
        : route.continue(),
    );
    await page.getByLabel('密码').fill(PASSWORD);
    await page.getByRole('button', { name: '登录' }).click();
    await page.getByRole('alert').filter({ hasText: '请等待 3 分钟 后再试；届时输入正确的密码即可登录' }).waitFor();
    await page.screenshot({ path: artifactPath('03-login-throttled.png') });

    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('button', { name: 'Log in' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'Wait 3 minutes and try again: the right password works then' })
      .waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
    assert.deepEqual(errors, []);
  });

  it('lets a clerk name themselves and change their own password from the top bar, ending other logins and revoking API tokens when asked', async () => {
    const { page, errors } = await newPage();
    await login(page, server.url, 'clerk-pw');
    await page.getByRole('link', { name: '我的账号' }).click();
    await page.getByRole('heading', { name: '修改我的密码' }).waitFor();
    // The clerk names themselves there: the top bar shows the name beside the login at once.
    await page.getByRole('textbox', { name: '姓名', exact: true }).fill('改密码的档案员');
    await page.getByRole('button', { name: '保存姓名' }).click();
    await page.getByRole('status').filter({ hasText: '姓名已保存。' }).waitFor();
    await page.getByText(/^当前用户：改密码的档案员（clerk-pw，/).waitFor();
    assert.equal((await (await api('clerk-pw').fetch('/api/session')).json()).account.displayName, '改密码的档案员');
    await page.getByLabel('当前密码').fill(PASSWORD);
    // A common password is refused, in the clerk's language, with what to do instead.
    const newPassword = page.getByLabel(/^新密码/);
    await newPassword.fill('qwertyuiop');
    await page.getByLabel('再次输入新密码').fill('qwertyuiop');
    await page.getByRole('button', { name: '修改密码' }).click();
    assert.match(await fieldProblem(newPassword), /这个密码太常见/, 'said at the new password');
    assert.ok(await focused(newPassword), 'which takes the focus');
    await page.screenshot({ path: artifactPath('03a-own-password-too-common.png') });
    await newPassword.fill('a brand new password');
    await page.getByLabel('再次输入新密码').fill('a brand new password');
    await page.getByLabel('同时吊销我的全部接入令牌', { exact: false }).check();
    await page.getByRole('button', { name: '修改密码' }).click();
    await page.getByRole('status').filter({ hasText: '密码已修改，其他登录已退出。 已吊销 1 个令牌。' }).waitFor();
    await page.screenshot({ path: artifactPath('03b-own-password-changed.png') });
    assert.equal((await api('clerk-pw').fetch('/api/files')).status, 401, 'the API token was revoked');
    await page.getByRole('link', { name: '本单位文件' }).click();
    await page.getByRole('heading', { name: '本单位文件' }).waitFor();
    assert.deepEqual(errors, []);
  });

  it('uploads a folder: new files go in a batch, a large one resumably, twins and held files finish instantly, paths kept', async () => {
    const archived = randomBytes(700_000);
    const held = await api('clerk-a2').upload('已有档案.pdf', archived);
    assert.equal(held.status, 201);
    const fresh = randomBytes(3_000_000);
    const large = randomBytes(6 * 1024 * 1024);
    const note = Buffer.from('县档案馆 2026 年度移交清单\n', 'utf8');
    const folder = path.join(files, '2026年移交');
    writeFile(folder, '新文件.pdf', fresh);
    writeFile(folder, '副本/新文件-副本.pdf', fresh);
    writeFile(folder, '已归档的扫描件.pdf', archived);
    writeFile(folder, '说明.txt', note);
    writeFile(folder, '大卷/全卷扫描.tif', large);

    const { page, errors } = await newPage();
    const tus = recordTus(page);
    const sent = await recordUploadRequests(page);
    await login(page, server.url, 'clerk-a');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await page.screenshot({ path: artifactPath('04-upload-empty.png') });
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 2, stored: 3 });
    await page.screenshot({ path: artifactPath('05-upload-folder-done.png'), fullPage: true });

    assert.equal(await statusOf(page, '2026年移交/新文件.pdf'), 'stored');
    assert.equal(await statusOf(page, '2026年移交/说明.txt'), 'stored');
    assert.equal(await statusOf(page, '2026年移交/大卷/全卷扫描.tif'), 'stored');
    assert.equal(
      await statusOf(page, '2026年移交/副本/新文件-副本.pdf'),
      'instant',
      'the twin waits for the first copy, then proves it',
    );
    assert.equal(await statusOf(page, '2026年移交/已归档的扫描件.pdf'), 'instant');
    assert.match(await page.locator('.outcomes li[data-status="instant"]').first().innerText(), /秒传/);
    assert.equal(tus.created.length, 1, 'only the large file went through tus');
    assert.deepEqual(
      sent.batched.map((f) => f.name).sort(),
      ['2026年移交/新文件.pdf', '2026年移交/说明.txt'],
      'the new small contents were sent once, in batches',
    );
    assert.ok(sent.requests() <= 8, `${sent.requests()} requests for five files`);

    const listed = await listFiles(api('clerk-a'));
    const byMd5 = new Map(listed.items.map((f) => [f.fileMD5, f]));
    assert.ok(['2026年移交/新文件.pdf', '2026年移交/副本/新文件-副本.pdf'].includes(byMd5.get(md5(fresh))!.fileName));
    assert.equal(byMd5.get(md5(fresh))?.myUploadCount, 2, 'the file and its twin are both in the ledger');
    assert.equal(byMd5.get(md5(archived))?.uploadCount, 2, 'held by the unit, uploaded again by this clerk');
    assert.equal(byMd5.get(md5(archived))?.myUploadCount, 1);
    assert.equal(byMd5.get(md5(note))?.fileName, '2026年移交/说明.txt');
    assert.equal(byMd5.get(md5(large))?.fileName, '2026年移交/大卷/全卷扫描.tif');
    const download = await api('clerk-a').fetch(`/api/files/${byMd5.get(md5(large))!.fileId}`);
    assert.equal(md5(Buffer.from(await download.arrayBuffer())), md5(large));
    assert.match(download.headers.get('content-disposition') ?? '', /filename\*=UTF-8''%E5%85%A8/);
    assert.deepEqual(errors, []);
  });

  it('lists my and my unit’s files, searchable by name, with working downloads; a clerk of another unit never sees them', async () => {
    const mine = await newPage();
    await login(mine.page, server.url, 'clerk-a');
    await mine.page.getByRole('link', { name: '本单位文件' }).click();
    // The flat list (本单位文件 opens on the folders).
    await mine.page.getByRole('link', { name: '最近上传的文件' }).click();
    const table = mine.page.locator('table.files:not(.folders)');
    await table.waitFor();
    const names = await table.locator('td.name .file-name').allInnerTexts();
    // Four contents: the new file (under its unit's latest name), the one the unit held, the note, the large scan.
    assert.equal(names.length, 4, names.join(', '));
    assert.ok(names.includes('2026年移交/说明.txt') && names.some((n) => n.includes('新文件')), names.join(', '));
    await mine.page.screenshot({ path: artifactPath('06-my-uploads.png') });

    await mine.page.getByPlaceholder('按文件名或文件夹搜索').fill('说明');
    await mine.page.getByRole('button', { name: '筛选' }).click();
    await mine.page.waitForFunction(() => document.querySelectorAll('table.files td.name').length === 1);
    assert.deepEqual(await table.locator('td.name .file-name').allInnerTexts(), ['2026年移交/说明.txt']);
    const href = await table.locator('a', { hasText: '下载' }).first().getAttribute('href');
    const body = await mine.page.evaluate(async (url) => (await fetch(url!)).text(), href);
    assert.equal(body, '县档案馆 2026 年度移交清单\n');

    const other = await newPage();
    const theirs = randomBytes(50_000);
    assert.equal((await api('clerk-b').upload('献县卷宗.pdf', theirs)).status, 201);
    await login(other.page, server.url, 'clerk-b');
    await other.page.getByRole('link', { name: '本单位文件' }).click();
    await other.page.getByRole('link', { name: '最近上传的文件' }).click();
    await other.page.locator('table.files:not(.folders)').waitFor();
    assert.deepEqual(await other.page.locator('table.files td.name .file-name').allInnerTexts(), ['献县卷宗.pdf']);
    await other.page.getByPlaceholder('按文件名或文件夹搜索').fill('新文件');
    await other.page.getByRole('button', { name: '筛选' }).click();
    await other.page.getByText('没有找到文件。').waitFor();
    // And not through the API either, by id.
    const aFile = (await listFiles(api('clerk-a'), '新文件')).items[0]!;
    assert.equal((await api('clerk-b').fetch(`/api/files/${aFile.fileId}`)).status, 404);
    assert.ok(!(await listFiles(api('clerk-a'))).items.some((f) => f.fileName === '献县卷宗.pdf'));
  });

  it('keeps a receipt (上传清单) of the folder on the server: listed, printable, as CSV, matching what the archive holds', async () => {
    const folder = path.join(files, '清单测试');
    const pages = Array.from({ length: 3 }, (_, i) =>
      writeFile(folder, `正本/第${i + 1}页.jpg`, randomBytes(5000 + i)),
    );
    writeFile(folder, '副本/第1页.jpg', fs.readFileSync(pages[0]!));
    writeFile(folder, '超大.tif', randomBytes(MAX_FILE_SIZE + 1));
    const { page, errors } = await newPage();
    await login(page, server.url, 'clerk-a2');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 1, stored: 3, failed: 1 });
    await page.getByRole('link', { name: '查看上传清单' }).click();
    await page.getByRole('heading', { name: '上传清单：清单测试' }).waitFor();
    await page.getByText('共 5 个：秒传 1 个，已上传 3 个，失败 1 个').waitFor();
    // Read by the header's column names, not positions: the table has more columns (撤回's pick box) than it reads.
    const rows = await page.locator('table.receipt-rows').evaluate((table) => {
      const names = [...table.querySelectorAll('thead th')].map((th) => th.textContent?.trim() ?? '');
      const [path, outcome] = [names.indexOf('文件路径'), names.indexOf('结果')];
      return [...table.querySelectorAll('tbody tr')].map((tr) => {
        const cells = [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '');
        return [cells[path] ?? '', cells[outcome] ?? ''];
      });
    });
    const outcomes = new Map(rows.map(([path, outcome]) => [path!, outcome!.split('：')[0]!.trim()]));
    assert.deepEqual([...outcomes.keys()].sort(), [
      '清单测试/副本/第1页.jpg',
      '清单测试/正本/第1页.jpg',
      '清单测试/正本/第2页.jpg',
      '清单测试/正本/第3页.jpg',
      '清单测试/超大.tif',
    ]);
    assert.deepEqual(
      [outcomes.get('清单测试/副本/第1页.jpg'), outcomes.get('清单测试/正本/第1页.jpg')].sort(),
      ['秒传', '已上传'].sort(),
      'one of the twins was sent, the other instant',
    );
    assert.equal(outcomes.get('清单测试/正本/第2页.jpg'), '已上传');
    assert.equal(outcomes.get('清单测试/超大.tif'), '失败');
    await page.screenshot({ path: artifactPath('14-receipt.png'), fullPage: true });
    await page.emulateMedia({ media: 'print' });
    await page.screenshot({ path: artifactPath('15-receipt-print.png'), fullPage: true });
    assert.equal(await page.locator('.topbar').isVisible(), false, 'printed without the top bar');
    await page.emulateMedia({ media: 'screen' });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByText('下载 CSV').click()]);
    assert.match(download.suggestedFilename(), /^上传清单-清单测试-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = fs.readFileSync(await download.path(), 'utf8');
    const [header, ...lines] = csv
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
    assert.equal(header, '序号,文件路径,大小（字节）,结果,原因,时间,系统编号,您的上传次数');
    assert.equal(lines.length, 5);
    const listed = await listFiles(api('clerk-a2'), '清单测试');
    for (const line of lines) {
      const [, filePath, , outcome, reason, , fileId] = line.split(',');
      if (outcome === '失败') {
        assert.equal(filePath, '清单测试/超大.tif');
        assert.match(reason!, /^文件超过 [\d.]+ [KMG]?B 的上限，无法上传。请拆分或压缩后再上传，或联系管理员$/);
        continue;
      }
      const held = listed.items.find((f) => f.fileId === fileId);
      assert.ok(held, `${filePath}: ${fileId} is in the archive`);
      assert.equal(held.fileMD5, md5(fs.readFileSync(path.join(files, filePath!))));
    }

    await page.getByRole('link', { name: '← 全部上传清单' }).click();
    await page.getByRole('link', { name: '清单测试' }).waitFor();
    await page.getByRole('link', { name: '上传清单' }).first().waitFor();
    assert.deepEqual(errors, []);
  });

  it('takes files dropped on the page, as from the file manager', async () => {
    const { page, errors } = await newPage();
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    const names = ['拖入-甲.txt', '拖入-乙.txt'];
    await page.evaluate((dropped) => {
      const w = globalThis as unknown as {
        DataTransfer: new () => { items: { add(file: unknown): void } };
        File: new (parts: string[], name: string, options: object) => unknown;
        DragEvent: new (type: string, init: object) => unknown;
        document: { querySelector(s: string): { dispatchEvent(e: unknown): void } };
      };
      const data = new w.DataTransfer();
      for (const name of dropped)
        data.items.add(new w.File([`内容 ${name} ${Math.random()}`], name, { type: 'text/plain' }));
      const zone = w.document.querySelector('.dropzone');
      zone.dispatchEvent(new w.DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new w.DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }, names);
    await waitForSummary(page, { instant: 0, stored: 2 });
    for (const name of names) assert.equal(await statusOf(page, name), 'stored');
    assert.equal((await listFiles(api('clerk-b'), '拖入-')).total, 2);
    assert.deepEqual(errors, []);
  });

  it('refuses a file over the limit before reading it, saying the limit and offering no retry, while the rest goes on', async () => {
    const folder = path.join(files, 'too-big');
    writeFile(folder, '超大扫描件.tif', randomBytes(MAX_FILE_SIZE + 1));
    writeFile(folder, '普通.pdf', randomBytes(10_000));
    const { page, errors } = await newPage();
    const sent = await recordUploadRequests(page);
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await page.getByText('单个文件不超过 30.0 MB').waitFor();
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 0, stored: 1, failed: 1 });
    const failed = page.locator('.outcomes li[data-status="failed"]');
    assert.equal(await failed.getAttribute('data-name'), 'too-big/超大扫描件.tif');
    assert.match(await failed.innerText(), /文件超过 30\.0 MB 的上限，无法上传/);
    assert.ok(!sent.checked.includes('too-big/超大扫描件.tif'), 'never fingerprinted nor checked');
    assert.equal(await page.getByRole('button', { name: /重试全部失败/ }).count(), 0, 'no retry that cannot succeed');
    await page.screenshot({ path: artifactPath('07-file-failed.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });

  it('a file whose proof the archive rejects is uploaded normally, and counted once', async () => {
    const data = randomBytes(200_000);
    assert.equal((await api('clerk-a').upload('证明失败-原件.pdf', data)).status, 201);
    const file = writeFile(path.join(files, 'proof'), '证明失败.pdf', data);
    const { page, errors } = await newPage();
    const sent = await recordUploadRequests(page);
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    // The page answers the archive's question wrongly, as a client without the real bytes would.
    await page.route('**/api/uploads/proofs', (route) => {
      const body = route.request().postDataJSON() as { proofs: Array<{ claimId: string; digests: string[] }> };
      const proofs = body.proofs.map((p) => ({ ...p, digests: p.digests.map(() => '0'.repeat(32)) }));
      return route.continue({ postData: JSON.stringify({ proofs }) });
    });
    await fileInput(page).setInputFiles(file);
    await waitForSummary(page, { instant: 0, stored: 1 });
    assert.equal(
      await statusOf(page, '证明失败.pdf'),
      'duplicate',
      'sent in full, and the archive recognised the content',
    );
    assert.deepEqual(
      sent.batched.map((f) => f.name),
      ['证明失败.pdf'],
    );
    const listed = (await listFiles(api('clerk-b'), '证明失败')).items[0]!;
    assert.equal(listed.fileMD5, md5(data));
    assert.equal(listed.myUploadCount, 1, 'the rejected proof recorded nothing; the upload counted once');
    assert.deepEqual(errors, []);
  });

  it('sends a proof whose answer was lost again with the same claim, and a lost batch answer under the same keys: each file counted once', async () => {
    const data = randomBytes(150_000);
    assert.equal((await api('clerk-a').upload('答复丢失-原件.pdf', data)).status, 201);
    const folder = path.join(files, 'lost-answer');
    writeFile(folder, '答复丢失.pdf', data);
    const fresh = Array.from({ length: 3 }, (_, i) => writeFile(folder, `新的-${i}.pdf`, randomBytes(40_000 + i)));
    const { page, errors } = await newPage();
    const sent = await recordUploadRequests(page);
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    // The first proofs and the first batch reach the archive and are counted; their answers are lost.
    for (const pattern of ['**/api/uploads/proofs', '**/api/uploads/batch']) {
      let first = true;
      await page.route(pattern, async (route) => {
        if (!first) return route.continue();
        first = false;
        await route.fetch();
        await route.abort('connectionreset');
      });
    }
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 1, stored: 3 });
    assert.equal(sent.claims.length, 2);
    assert.equal(sent.claims[1], sent.claims[0], 'sent again with the same claim, not checked anew');
    assert.equal(sent.batched.length, 6, 'the batch was sent twice');
    const keys = sent.batched.map((f) => f.key);
    assert.ok(
      keys.every((k) => /^[0-9a-f]{32}$/.test(k ?? '')),
      'every file carries its key',
    );
    assert.deepEqual(keys.slice(3), keys.slice(0, 3), 'sent again under the same keys');
    assert.equal((await listFiles(api('clerk-b'), '答复丢失')).items[0]!.myUploadCount, 1, 'counted once');
    const news = (await listFiles(api('clerk-b'), '新的-')).items;
    assert.deepEqual(
      news.map((f) => f.myUploadCount),
      [1, 1, 1],
    );
    assert.equal(fresh.length, 3);
    assert.deepEqual(errors, []);
  });

  it('can be used with the keyboard alone: log in, reach the upload page and the language switch', async () => {
    const { page } = await newPage();
    await page.goto(server.url);
    await page.getByLabel('用户名').waitFor();
    await page.keyboard.type('clerk-b'); // the user name field has the focus on arrival
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    // Every control the clerk needs is reachable by Tab and has a name.
    const reached = new Set<string>();
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      reached.add(
        await page.evaluate(() => {
          const el = (
            globalThis as unknown as {
              document: {
                activeElement: { textContent: string | null; getAttribute(n: string): string | null } | null;
              };
            }
          ).document.activeElement;
          return (el?.getAttribute('aria-label') ?? el?.textContent ?? '').trim();
        }),
      );
    }
    for (const name of ['上传', '本单位文件', 'English', '退出登录'])
      assert.ok(reached.has(name), `${name} reachable by Tab: ${[...reached].join(' | ')}`);
  });

  it('a file of a batch refused on its own shows why while the others finish; a refused batch fails its files; both can be retried', async () => {
    const folder = path.join(files, 'retry');
    const datas = Array.from({ length: 3 }, (_, i) => randomBytes(30_000 + i));
    datas.forEach((data, i) => writeFile(folder, `重试-${i}.pdf`, data));
    const { page, errors } = await newPage();
    await bendFirstManifest(page, sha256Hex(datas[1]!));
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    // The first batch arrives with one file's digest bent (as if its bytes changed on the way);
    // the second is refused whole, as by a proxy rule.
    let batches = 0;
    await page.route('**/api/uploads/batch', async (route) => {
      batches++;
      if (batches === 2)
        return route.fulfill({
          status: 403,
          contentType: 'application/json',
          body: JSON.stringify({ error: 'forbidden', message: 'Your account may not do this.' }),
        });
      return route.continue();
    });
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 0, stored: 2, failed: 1 });
    const failed = page.locator('.outcomes li[data-status="failed"]');
    assert.equal(await failed.getAttribute('data-name'), 'retry/重试-1.pdf');
    assert.match(await failed.innerText(), /失败：/);
    await page.screenshot({ path: artifactPath('07a-batch-file-failed.png'), fullPage: true });
    await page.getByRole('button', { name: '重试全部失败的文件（1）' }).click();
    await failed.filter({ hasText: '您没有权限执行此操作' }).waitFor();
    await waitForSummary(page, { instant: 0, stored: 2, failed: 1 });
    await page.getByRole('button', { name: '重试全部失败的文件（1）' }).click();
    await waitForSummary(page, { instant: 0, stored: 3, failed: 0 });
    assert.equal(batches, 3);
    for (const data of datas)
      assert.equal(
        (await listFiles(api('clerk-b'), '重试-')).items.some((f) => f.fileMD5 === md5(data)),
        true,
      );
    assert.deepEqual(errors, []);
  });

  it('pausing everything while files are still being fingerprinted holds them all, and resuming finishes them all', async () => {
    const folder = path.join(files, 'pause-all');
    for (let i = 0; i < 6; i++) writeFile(folder, `批次-${i}.pdf`, randomBytes(20 * 1024 * 1024));
    const { page, errors } = await newPage();
    const pageLog = await logInPage(page);
    const checks = { named: new Set<string>(), asked: 0, answered: 0 };
    const isCheck = (r: { url(): string }) => new URL(r.url()).pathname === '/api/uploads/checks';
    page.on('request', (r) => {
      if (!isCheck(r)) return;
      checks.asked++;
      for (const f of (r.postDataJSON() as { files: Array<{ name: string }> }).files) checks.named.add(f.name);
    });
    page.on('requestfinished', (r) => void (isCheck(r) && checks.answered++));
    page.on('requestfailed', (r) => void (isCheck(r) && checks.answered++));
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await folderInput(page).setInputFiles(folder);
    await page.getByRole('button', { name: '暂停' }).click();
    await page.getByRole('button', { name: '继续', exact: true }).waitFor();
    // Paused, files go on only as far as the pause lets them: a file being fingerprinted is
    // fingerprinted and checked, and is then held like the others. Once none is on its way there,
    // each file not paused would be sent.
    const statuses = () =>
      page
        .locator('.outcomes li[data-name]')
        .evaluateAll((els) => els.map((e) => [e.getAttribute('data-name')!, e.getAttribute('data-status')!] as const));
    await until(async () => {
      const now = await statuses();
      return (
        now.length === 6 &&
        now.every(([name, status]) => status !== 'hashing' && (status !== 'checking' || checks.named.has(name))) &&
        checks.answered === checks.asked
      );
    }, 'every file is held: not started, or fingerprinted and checked, or stopped while sending');
    await page.getByRole('button', { name: '继续', exact: true }).click();
    await waitForSummary(page, { instant: 0, stored: 6 });
    const log = await pageLog();
    const createdBeforePause = log
      .slice(
        0,
        log.findIndex((e) => e.click === '暂停'),
      )
      .filter((e) => e.method === 'POST');
    assert.ok(createdBeforePause.length < 6, 'paused before every file reached the server');
    assert.deepEqual(sentBetween(log, '暂停', '继续'), [], 'no upload starts or goes on while everything is paused');
    assert.equal(
      sentBetween(log, '继续').filter((e) => e.method === 'POST').length + createdBeforePause.length,
      6,
      'each file created once',
    );
    assert.deepEqual(errors, []);
  });

  it('on a shared browser, the next clerk sees nothing of the previous one’s upload after logout', async () => {
    const { page } = await newPage();
    const uploadAs = async (username: string, name: string) => {
      await login(page, server.url, username);
      await page.getByRole('heading', { name: '上传档案' }).waitFor();
      await fileInput(page).setInputFiles(writeFile(path.join(files, 'shared', username), name, randomBytes(20_000)));
      await waitForSummary(page, { instant: 0, stored: 1 });
      await page.getByRole('button', { name: '退出登录' }).click();
      await page.getByRole('heading', { name: '登录' }).waitFor();
    };
    // Each clerk uploads on this browser; the second clerk comes back.
    await uploadAs('clerk-b', '自己的.pdf');
    await uploadAs('clerk-a', '共用电脑.pdf');
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    // The page has read what this browser remembers for clerk-b (it shows clerk-b's own list),
    // and shows only that.
    await page.locator('.outcomes li[data-name="自己的.pdf"]').waitFor();
    assert.equal(await page.locator('.outcomes li[data-name]').count(), 1);
    assert.equal(await page.getByText('共用电脑').count(), 0);
    const keys = await page.evaluate(() =>
      Object.keys((globalThis as unknown as { localStorage: Record<string, string> }).localStorage),
    );
    assert.ok(!keys.some((k) => k.startsWith('tus::')), `no tus-js-client entries: ${keys.join(', ')}`);
  });

  it('pauses and resumes an upload: nothing moves while paused, and the upload goes on from the server’s offset', async () => {
    const data = randomBytes(12 * 1024 * 1024);
    const file = writeFile(path.join(files, 'pause'), '暂停测试.pdf', data);
    const { context, page, errors } = await newPage();
    const tus = recordTus(page);
    const pageLog = await logInPage(page);
    await login(page, server.url, 'clerk-a');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await throttleUploads(context, page, 1024 * 1024);
    await fileInput(page).setInputFiles(file);
    await until(async () => tus.created.length === 1, 'the upload is created');
    const upload = tus.created[0]!;
    await until(async () => (await serverOffset(api('clerk-a'), upload)) > 1024 * 1024, 'a megabyte arrived');

    await page.getByRole('button', { name: '暂停' }).click();
    await page.getByRole('button', { name: '继续', exact: true }).waitFor();
    await page.screenshot({ path: artifactPath('08-paused.png') });
    // The PATCH the pause broke off ends at the server, which keeps what arrived of it.
    const pausedAt = await offsetAtRest(api('clerk-a'), upload);
    assert.ok(pausedAt > 1024 * 1024 && pausedAt < data.length, `paused at ${pausedAt}`);

    await throttleUploads(context, page, 64 * 1024 * 1024);
    await page.getByRole('button', { name: '继续', exact: true }).click();
    await waitForSummary(page, { instant: 0, stored: 1 });
    const log = await pageLog();
    assert.deepEqual(sentBetween(log, '暂停', '继续'), [], 'nothing was sent while paused');
    const resumed = sentBetween(log, '继续').find((r) => r.method === 'PATCH');
    assert.equal(resumed?.offset, pausedAt, 'the first PATCH after resuming starts at the server’s offset');
    assert.equal(tus.created.length, 1, 'no second upload was created');
    const stored = (await listFiles(api('clerk-a'), '暂停测试')).items[0]!;
    assert.equal(stored.fileMD5, md5(data));
    assert.deepEqual(errors, []);
  });

  it('hashes and checks the next file while the previous one is still uploading', async () => {
    const folder = path.join(files, 'overlap');
    writeFile(folder, '一.pdf', randomBytes(6 * 1024 * 1024));
    writeFile(folder, '二.pdf', randomBytes(6 * 1024 * 1024));
    const { context, page } = await newPage();
    const sent = await recordUploadRequests(page);
    const finished = new Map<string, number>();
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await throttleUploads(context, page, 2 * 1024 * 1024);
    page.on('response', (r) => {
      if (r.request().method() === 'PATCH' && r.status() === 204) finished.set(r.url(), ++eventOrder);
    });
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 0, stored: 2 });
    assert.deepEqual([...sent.checked].sort(), ['overlap/一.pdf', 'overlap/二.pdf']);
    assert.equal(finished.size, 2, 'both uploads finished with a 204');
    const firstUploadDone = Math.min(...finished.values());
    assert.ok(sent.lastCheckAt < firstUploadDone, 'the second file was checked before the first upload finished');
  });

  it('after a reload mid-upload, says what was not finished; the same content chosen from another folder resumes from the server’s offset', async () => {
    const data = randomBytes(24 * 1024 * 1024);
    const original = writeFile(path.join(files, '卷宗'), '大文件.pdf', data);
    const copy = writeFile(
      path.join(files, '另一个文件夹'),
      '大文件（复制）.pdf',
      data,
      new Date('2020-01-01T00:00:00Z'),
    );
    const { context, page, errors } = await newPage();
    const tus = recordTus(page);
    await login(page, server.url, 'clerk-a');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await throttleUploads(context, page, 2 * 1024 * 1024);
    await fileInput(page).setInputFiles(original);
    await page
      .getByText(/正在检查文件|正在上传/)
      .first()
      .waitFor();
    await page.screenshot({ path: artifactPath('09-uploading.png') });
    await until(async () => tus.created.length === 1, 'the upload is created');
    const upload = tus.created[0]!;
    await until(async () => (await serverOffset(api('clerk-a'), upload)) > 4 * 1024 * 1024, 'four megabytes arrived');

    await page.reload();
    const reloadedAt = Date.now();
    const offsetAtReload = await serverOffset(api('clerk-a'), upload);
    await page.getByRole('status').filter({ hasText: '上次有 1 个文件没有完成' }).waitFor();
    assert.equal(await statusOf(page, '大文件.pdf'), 'waiting');
    await page.getByText('未完成：请再次拖入同一文件夹').waitFor();
    await page.screenshot({ path: artifactPath('10-restored-after-reload.png') });
    await throttleUploads(context, page, 64 * 1024 * 1024);
    await fileInput(page).setInputFiles(copy);
    await waitForSummary(page, { instant: 0, stored: 1 });
    await page.screenshot({ path: artifactPath('11-resumed-done.png'), fullPage: true });

    const afterReload = tus.requests.filter((r) => r.at >= reloadedAt);
    assert.ok(!afterReload.some((r) => r.method === 'POST'), 'no new upload was created');
    const firstPatch = afterReload.find((r) => r.method === 'PATCH');
    assert.ok(
      firstPatch && firstPatch.offset! >= offsetAtReload && offsetAtReload > 0,
      `resumed at ${firstPatch?.offset}, server had ${offsetAtReload}`,
    );
    assert.equal(
      await page.locator('.outcomes li[data-name="大文件.pdf"]').count(),
      0,
      'the remembered file is retired',
    );
    const stored = (await listFiles(api('clerk-a'), '大文件')).items[0]!;
    assert.equal(stored.fileMD5, md5(data));
    assert.equal(stored.myUploadCount, 1);
    assert.deepEqual(errors, []);
  });

  it('after a reload in the middle of a batch, the same folder dropped again continues: nothing is counted twice', async () => {
    const folder = path.join(files, '中断的批次');
    const datas = Array.from({ length: 150 }, () => randomBytes(1024));
    datas.forEach((data, i) => writeFile(folder, `${i < 75 ? '甲' : '乙'}/页-${String(i).padStart(3, '0')}.jpg`, data));
    const { page, errors } = await newPage();
    const sent = await recordUploadRequests(page);
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    // The batch reaches the archive and is counted; the page is reloaded before the answer arrives.
    let reachedArchive!: () => void;
    const counted = new Promise<void>((resolve) => (reachedArchive = resolve));
    await page.route('**/api/uploads/batch', async (route) => {
      await route.fetch();
      reachedArchive();
      await new Promise(() => undefined);
    });
    await folderInput(page).setInputFiles(folder);
    await counted;
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await page.reload();
    await page.getByRole('status').filter({ hasText: '上次有 150 个文件没有完成' }).waitFor();
    await page.screenshot({ path: artifactPath('10a-batch-interrupted.png') });
    assert.equal(
      await page.getByRole('button', { name: '清空列表' }).count(),
      0,
      'an unfinished list cannot be cleared (its keys keep its files from counting twice)',
    );
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 0, stored: 150 });
    const sentBefore = sent.batched.length - 150;
    assert.ok(sentBefore > 0, 'files sent before the reload were sent again, after it');
    const listed = await listFiles(api('clerk-b'), '中断的批次');
    assert.equal(listed.total, 150);
    assert.ok(
      listed.items.every((f) => f.myUploadCount === 1),
      'each file counted once',
    );
    assert.equal(listed.items[0]!.fileName.split('/')[0], '中断的批次');
    assert.deepEqual(errors, []);
  });

  it('takes a folder of 1,000 files in a few requests: all finish, duplicates instantly, grouped by sub-folder, the list renders and scrolls', async (t) => {
    const folder = path.join(files, '千份档案');
    const unique = Array.from({ length: 900 }, () => randomBytes(1024));
    unique.forEach((data, i) => writeFile(folder, `卷-${String(i).padStart(4, '0')}.txt`, data));
    unique.slice(0, 100).forEach((data, i) => writeFile(folder, `重复/副本-${String(i).padStart(4, '0')}.txt`, data));
    const { page, errors } = await newPage();
    const sent = await recordUploadRequests(page);
    await login(page, server.url, 'clerk-a2');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await page.evaluate(() => {
      const w = globalThis as unknown as {
        longTasks: number[];
        PerformanceObserver: new (cb: (list: { getEntries(): { duration: number }[] }) => void) => {
          observe(o: object): void;
        };
      };
      w.longTasks = [];
      new w.PerformanceObserver((list) => w.longTasks.push(...list.getEntries().map((e) => e.duration))).observe({
        type: 'longtask',
      });
    });
    const started = Date.now();
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 100, stored: 900 }, 300_000);
    const longTasks = await page.evaluate(() => (globalThis as unknown as { longTasks: number[] }).longTasks);
    t.diagnostic(
      `1,000 files in ${((Date.now() - started) / 1000).toFixed(1)} s, ${sent.requests()} requests; main-thread tasks over 50 ms: ${longTasks.length}, longest ${Math.round(Math.max(0, ...longTasks))} ms`,
    );
    assert.ok(sent.requests() <= 50, `${sent.requests()} requests for 1,000 files`);
    await page.getByText('已完成 1,000 / 1,000').waitFor();
    await page.locator('.outcomes li.folder[data-folder="千份档案"]').getByText('900 / 900').waitFor();

    // The list renders only what is in view: scrolling to the end shows the last file.
    const rendered = () =>
      page.locator('.outcomes li[data-name]').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')));
    const atTop = await rendered();
    assert.ok(atTop.length > 0 && atTop.length < 100, `${atTop.length} rows rendered of 1,000`);
    await page.locator('.virtual-list').evaluate((el) => {
      const list = el as unknown as { scrollTop: number; scrollHeight: number };
      list.scrollTop = list.scrollHeight;
    });
    await until(
      async () => (await rendered()).includes('千份档案/重复/副本-0099.txt'),
      'the end of the list is rendered',
    );
    await page.screenshot({ path: artifactPath('12-thousand-files.png'), fullPage: true });
    await page.getByRole('button', { name: '秒传 (100)' }).click();
    const instantRows = await page
      .locator('.outcomes li[data-name]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-status')));
    assert.ok(instantRows.length > 0 && instantRows.every((s) => s === 'instant'), instantRows.join(','));
    assert.equal((await listFiles(api('clerk-a2'), '卷-0000')).items[0]?.myUploadCount, 2);
    assert.deepEqual(errors, []);
  });

  it('switches to English and remembers the choice', async () => {
    const { page } = await newPage();
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('heading', { name: 'Upload documents' }).waitFor();
    await page.getByRole('button', { name: 'Choose a folder' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Upload documents' }).waitFor();
    await page.getByRole('link', { name: 'Unit files' }).click();
    await page.getByRole('heading', { name: 'Our unit’s files' }).waitFor();
    await page.getByPlaceholder('Search by file or folder name').waitFor();
    await page.screenshot({ path: artifactPath('13-english.png') });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '本单位文件' }).waitFor();
  });
});
