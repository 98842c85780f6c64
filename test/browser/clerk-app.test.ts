import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import type { FileList } from '../../shared/schemas.js';
import { artifactPath, browserSkip, BrowserWindows } from '../support/browser.js';
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

const fileInput = (page: Page) => page.locator('input.uppy-Dashboard-input:not([webkitdirectory])');
const folderInput = (page: Page) => page.locator('input.uppy-Dashboard-input[webkitdirectory]');

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

async function serverOffset(client: Client, uploadPath: string): Promise<number> {
  const head = await client.fetch(uploadPath, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } });
  assert.equal(head.status, 200);
  return Number(head.headers.get('upload-offset'));
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
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

  it('lets a clerk change their own password from the top bar, ending other logins and revoking API tokens when asked', async () => {
    const { page, errors } = await newPage();
    await login(page, server.url, 'clerk-pw');
    await page.getByRole('link', { name: '修改密码' }).click();
    await page.getByRole('heading', { name: '修改我的密码' }).waitFor();
    await page.getByLabel('当前密码').fill(PASSWORD);
    // A common password is refused, in the clerk's language, with what to do instead.
    await page.getByLabel('新密码').fill('qwertyuiop');
    await page.getByRole('button', { name: '修改密码' }).click();
    await page.getByRole('alert').filter({ hasText: '这个密码太常见' }).waitFor();
    await page.screenshot({ path: artifactPath('03a-own-password-too-common.png') });
    await page.getByLabel('新密码').fill('a brand new password');
    await page.getByLabel('同时吊销我的全部 API 令牌', { exact: false }).check();
    await page.getByRole('button', { name: '修改密码' }).click();
    await page.getByRole('status').filter({ hasText: '密码已修改，其他登录已退出。 已吊销 1 个 API 令牌。' }).waitFor();
    await page.screenshot({ path: artifactPath('03b-own-password-changed.png') });
    assert.equal((await api('clerk-pw').fetch('/api/files')).status, 401, 'the API token was revoked');
    await page.getByRole('link', { name: '我的上传' }).click();
    await page.getByRole('heading', { name: '我的上传' }).waitFor();
    assert.deepEqual(errors, []);
  });

  it('uploads a folder: a new file is sent once, its identical twin and a file the archive holds finish instantly, Chinese names kept', async () => {
    const archived = randomBytes(700_000);
    const held = await api('clerk-a2').upload('已有档案.pdf', archived);
    assert.equal(held.status, 201);
    const fresh = randomBytes(3_000_000);
    const note = Buffer.from('县档案馆 2026 年度移交清单\n', 'utf8');
    const folder = path.join(files, '2026年移交');
    writeFile(folder, '新文件.pdf', fresh);
    writeFile(folder, '副本/新文件-副本.pdf', fresh);
    writeFile(folder, '已归档的扫描件.pdf', archived);
    writeFile(folder, '说明.txt', note);

    const { page, errors } = await newPage();
    const tus = recordTus(page);
    await login(page, server.url, 'clerk-a');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await page.screenshot({ path: artifactPath('04-upload-empty.png') });
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 2, stored: 2 });
    await page.screenshot({ path: artifactPath('05-upload-folder-done.png'), fullPage: true });

    assert.equal(await statusOf(page, '2026年移交/新文件.pdf'), 'stored');
    assert.equal(await statusOf(page, '2026年移交/说明.txt'), 'stored');
    assert.equal(
      await statusOf(page, '2026年移交/副本/新文件-副本.pdf'),
      'instant',
      'the twin waits for the first copy, then proves it',
    );
    assert.equal(await statusOf(page, '2026年移交/已归档的扫描件.pdf'), 'instant');
    assert.match(await page.locator('.outcomes li[data-status="instant"]').first().innerText(), /秒传/);
    assert.equal(tus.created.length, 2, 'only the two new contents went through tus');

    const listed = await listFiles(api('clerk-a'));
    const byMd5 = new Map(listed.items.map((f) => [f.fileMD5, f]));
    assert.ok(['新文件.pdf', '新文件-副本.pdf'].includes(byMd5.get(md5(fresh))!.fileName));
    assert.equal(byMd5.get(md5(fresh))?.myUploadCount, 2, 'the file and its twin are both in the ledger');
    assert.equal(byMd5.get(md5(archived))?.uploadCount, 2, 'held by the unit, uploaded again by this clerk');
    assert.equal(byMd5.get(md5(archived))?.myUploadCount, 1);
    assert.equal(byMd5.get(md5(note))?.fileName, '说明.txt');
    const download = await api('clerk-a').fetch(`/api/files/${byMd5.get(md5(fresh))!.fileId}`);
    assert.equal(md5(Buffer.from(await download.arrayBuffer())), md5(fresh));
    assert.deepEqual(errors, []);
  });

  it('lists my and my unit’s files, searchable by name, with working downloads; a clerk of another unit never sees them', async () => {
    const mine = await newPage();
    await login(mine.page, server.url, 'clerk-a');
    await mine.page.getByRole('link', { name: '我的上传' }).click();
    const table = mine.page.locator('table.files');
    await table.waitFor();
    const names = await table.locator('td.name').allInnerTexts();
    // Three contents: the new file (under its unit's latest name), the one the unit held, the note.
    assert.equal(names.length, 3, names.join(', '));
    assert.ok(names.includes('说明.txt') && names.some((n) => n.startsWith('新文件')), names.join(', '));
    await mine.page.screenshot({ path: artifactPath('06-my-uploads.png') });

    await mine.page.getByPlaceholder('按文件名搜索').fill('说明');
    await mine.page.getByRole('button', { name: '搜索' }).click();
    await mine.page.waitForFunction(() => document.querySelectorAll('table.files td.name').length === 1);
    assert.deepEqual(await table.locator('td.name').allInnerTexts(), ['说明.txt']);
    const href = await table.locator('a').first().getAttribute('href');
    const body = await mine.page.evaluate(async (url) => (await fetch(url!)).text(), href);
    assert.equal(body, '县档案馆 2026 年度移交清单\n');

    const other = await newPage();
    const theirs = randomBytes(50_000);
    assert.equal((await api('clerk-b').upload('献县卷宗.pdf', theirs)).status, 201);
    await login(other.page, server.url, 'clerk-b');
    await other.page.getByRole('link', { name: '我的上传' }).click();
    await other.page.locator('table.files').waitFor();
    assert.deepEqual(await other.page.locator('table.files td.name').allInnerTexts(), ['献县卷宗.pdf']);
    await other.page.getByPlaceholder('按文件名搜索').fill('新文件');
    await other.page.getByRole('button', { name: '搜索' }).click();
    await other.page.getByText('没有找到文件。').waitFor();
    // And not through the API either, by id.
    const aFile = (await listFiles(api('clerk-a'), '新文件')).items[0]!;
    assert.equal((await api('clerk-b').fetch(`/api/files/${aFile.fileId}`)).status, 404);
    assert.ok(!(await listFiles(api('clerk-a'))).items.some((f) => f.fileName === '献县卷宗.pdf'));
  });

  it('tells the clerk, in Chinese, why a file failed and what to do, while the rest of the batch goes on', async () => {
    const folder = path.join(files, 'too-big');
    writeFile(folder, '超大扫描件.tif', randomBytes(MAX_FILE_SIZE + 1));
    writeFile(folder, '普通.pdf', randomBytes(10_000));
    const { page, errors } = await newPage();
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 0, stored: 1, failed: 1 });
    const failed = page.locator('.outcomes li[data-status="failed"]');
    assert.equal(await failed.getAttribute('data-name'), 'too-big/超大扫描件.tif');
    assert.match(await failed.innerText(), /文件超过系统允许的大小上限/);
    await page.screenshot({ path: artifactPath('07-file-failed.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });

  it('a file whose proof the archive rejects is uploaded normally, and counted once', async () => {
    const data = randomBytes(200_000);
    assert.equal((await api('clerk-a').upload('证明失败-原件.pdf', data)).status, 201);
    const file = writeFile(path.join(files, 'proof'), '证明失败.pdf', data);
    const { page, errors } = await newPage();
    const tus = recordTus(page);
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    // The page answers the archive's question wrongly, as a client without the real bytes would.
    await page.route('**/api/uploads/prove', (route) => {
      const body = route.request().postDataJSON() as { claimId: string; digests: string[] };
      return route.continue({ postData: JSON.stringify({ ...body, digests: body.digests.map(() => '0'.repeat(32)) }) });
    });
    await fileInput(page).setInputFiles(file);
    await waitForSummary(page, { instant: 0, stored: 1 });
    assert.equal(
      await statusOf(page, '证明失败.pdf'),
      'duplicate',
      'sent in full, and the archive recognised the content',
    );
    assert.equal(tus.created.length, 1);
    const listed = (await listFiles(api('clerk-b'), '证明失败')).items[0]!;
    assert.equal(listed.fileMD5, md5(data));
    assert.equal(listed.myUploadCount, 1, 'the rejected proof recorded nothing; the upload counted once');
    assert.deepEqual(errors, []);
  });

  it('sends a proof whose answer was lost again with the same claim, and the file is counted once; tus uploads carry a key', async () => {
    const data = randomBytes(150_000);
    assert.equal((await api('clerk-a').upload('答复丢失-原件.pdf', data)).status, 201);
    const fresh = randomBytes(40_000);
    const folder = path.join(files, 'lost-answer');
    writeFile(folder, '答复丢失.pdf', data);
    writeFile(folder, '新的.pdf', fresh);
    const { page, errors } = await newPage();
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    // The first proof reaches the archive and is counted; its answer is lost on the way back.
    const claims: string[] = [];
    await page.route('**/api/uploads/prove', async (route) => {
      claims.push((route.request().postDataJSON() as { claimId: string }).claimId);
      if (claims.length > 1) return route.continue();
      await route.fetch();
      await route.abort('connectionreset');
    });
    const metadata: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/tus')
        metadata.push(r.headers()['upload-metadata'] ?? '');
    });
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 1, stored: 1 });
    assert.equal(claims.length, 2);
    assert.equal(claims[1], claims[0], 'sent again with the same claim, not checked anew');
    const listed = (await listFiles(api('clerk-b'), '答复丢失')).items[0]!;
    assert.equal(listed.myUploadCount, 1, 'counted once');
    assert.equal(metadata.length, 1);
    const key = metadata[0]!.split(',').find((pair) => pair.startsWith('idempotencyKey '));
    assert.match(
      Buffer.from(key?.split(' ')[1] ?? '', 'base64').toString(),
      /^[0-9a-f]{32}$/,
      'the tus upload carries its key',
    );
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
    for (const name of ['上传', '我的上传', 'English', '退出登录'])
      assert.ok(reached.has(name), `${name} reachable by Tab: ${[...reached].join(' | ')}`);
  });

  it('a refused upload can be retried by the clerk, and then finishes', async () => {
    const data = randomBytes(300_000);
    const file = writeFile(path.join(files, 'retry'), '重试.pdf', data);
    const { page, errors } = await newPage();
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    // The first attempt to create the upload is refused as if by a proxy rule.
    let refused = 0;
    await page.route('**/api/tus', async (route) => {
      if (route.request().method() !== 'POST' || refused > 0) return route.continue();
      refused++;
      await route.fulfill({
        status: 403,
        contentType: 'application/json',
        body: JSON.stringify({ error: 'forbidden', message: 'Your account may not do this.' }),
      });
    });
    await fileInput(page).setInputFiles(file);
    await waitForSummary(page, { instant: 0, stored: 0, failed: 1 });
    assert.match(await page.locator('.outcomes li[data-status="failed"]').innerText(), /您没有权限执行此操作/);
    await page.getByRole('button', { name: '重试' }).click();
    await waitForSummary(page, { instant: 0, stored: 1, failed: 0 });
    assert.equal(refused, 1);
    assert.equal((await listFiles(api('clerk-b'), '重试')).items[0]?.fileMD5, md5(data));
    assert.deepEqual(errors, []);
  });

  it('pausing everything while files are still being fingerprinted holds them all, and resuming finishes them all', async () => {
    const folder = path.join(files, 'pause-all');
    for (let i = 0; i < 6; i++) writeFile(folder, `批次-${i}.pdf`, randomBytes(20 * 1024 * 1024));
    const { page, errors } = await newPage();
    const tus = recordTus(page);
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await folderInput(page).setInputFiles(folder);
    // As soon as the first file uploads, pause everything: the others are still being fingerprinted.
    await page.locator('[data-cy="togglePauseResume"]').click();
    // A file already past its checks when the button was clicked may still reach the server.
    await page.waitForTimeout(300);
    const createdAtPause = tus.created.length;
    assert.ok(createdAtPause < 6, 'paused before every file reached the server');
    // Meanwhile the rest is fingerprinted (about 0.3 s a file here), and held: nothing more is
    // created on the server while paused.
    await page.waitForTimeout(4000);
    assert.equal(tus.created.length, createdAtPause, 'no upload starts while everything is paused');
    await page.locator('[data-cy="togglePauseResume"]').click();
    await waitForSummary(page, { instant: 0, stored: 6 });
    assert.deepEqual(errors, []);
  });

  it('a file removed while it is being fingerprinted stops there, and the next file is fingerprinted correctly', async () => {
    // Larger than the server takes, but it never gets that far: about 4 s of fingerprinting here.
    const big = writeFile(path.join(files, 'remove'), '删除我.pdf', randomBytes(200 * 1024 * 1024));
    const next = randomBytes(5 * 1024 * 1024);
    const nextFile = writeFile(path.join(files, 'remove'), '保留.pdf', next);
    const { page, errors } = await newPage();
    const tus = recordTus(page);
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await fileInput(page).setInputFiles(big);
    await page
      .getByText(/正在计算指纹 [1-9]/)
      .first()
      .waitFor();
    await page.locator('.uppy-Dashboard-Item-action--remove').first().click();
    // With no file left, the Dashboard shows its empty drop zone again, with its inputs.
    await page.locator('.uppy-Dashboard-Item').waitFor({ state: 'detached' });
    await fileInput(page).setInputFiles(nextFile);
    await waitForSummary(page, { instant: 0, stored: 1 });
    assert.equal(tus.created.length, 1, 'only the kept file was uploaded');
    const stored = (await listFiles(api('clerk-b'), '保留')).items[0]!;
    assert.equal(stored.fileMD5, md5(next), 'the aborted file left nothing behind in the MD5 worker');
    assert.equal((await listFiles(api('clerk-b'), '删除我')).items.length, 0);
    assert.deepEqual(errors, []);
  });

  it('on a shared browser, the next clerk sees nothing of the previous one’s batch after logout', async () => {
    const { page } = await newPage();
    await login(page, server.url, 'clerk-a');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await fileInput(page).setInputFiles(writeFile(path.join(files, 'shared'), '共用电脑.pdf', randomBytes(20_000)));
    await waitForSummary(page, { instant: 0, stored: 1 });
    await page.getByRole('button', { name: '退出登录' }).click();
    await page.getByRole('heading', { name: '登录' }).waitFor();
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    assert.equal(await page.locator('.uppy-Dashboard-Item').count(), 0);
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
    await login(page, server.url, 'clerk-a');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await throttleUploads(context, page, 1024 * 1024);
    await fileInput(page).setInputFiles(file);
    await until(async () => tus.created.length === 1, 'the upload is created');
    const upload = tus.created[0]!;
    await until(async () => (await serverOffset(api('clerk-a'), upload)) > 1024 * 1024, 'a megabyte arrived');

    await page.getByRole('button', { name: '暂停上传' }).click();
    await page.getByRole('button', { name: '恢复上传' }).waitFor();
    await page.screenshot({ path: artifactPath('08-paused.png') });
    await new Promise((r) => setTimeout(r, 1000));
    const pausedAt = await serverOffset(api('clerk-a'), upload);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await serverOffset(api('clerk-a'), upload), pausedAt, 'no bytes while paused');
    const before = tus.requests.length;

    await throttleUploads(context, page, 64 * 1024 * 1024);
    await page.getByRole('button', { name: '恢复上传' }).click();
    await waitForSummary(page, { instant: 0, stored: 1 });
    const resumed = tus.requests.slice(before).find((r) => r.method === 'PATCH');
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
    const checks = new Map<string, number>();
    const finished = new Map<string, number>();
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/uploads/check')
        checks.set((r.postDataJSON() as { name: string }).name, Date.now());
    });
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await throttleUploads(context, page, 2 * 1024 * 1024);
    page.on('response', (r) => {
      if (r.request().method() === 'PATCH' && r.status() === 204) finished.set(r.url(), Date.now());
    });
    await folderInput(page).setInputFiles(folder);
    await waitForSummary(page, { instant: 0, stored: 2 });
    assert.equal(checks.size, 2);
    assert.equal(finished.size, 2, 'both uploads finished with a 204');
    const lastCheck = Math.max(...checks.values());
    const firstUploadDone = Math.min(...finished.values());
    assert.ok(
      lastCheck < firstUploadDone,
      `the second file was checked ${firstUploadDone - lastCheck} ms before the first upload finished`,
    );
  });

  it('after a reload mid-upload, the same content re-selected from another folder resumes from the server’s offset', async () => {
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
      .getByText(/正在计算指纹|正在上传/)
      .first()
      .waitFor();
    await page.screenshot({ path: artifactPath('09-uploading.png') });
    await until(async () => tus.created.length === 1, 'the upload is created');
    const upload = tus.created[0]!;
    await until(async () => (await serverOffset(api('clerk-a'), upload)) > 4 * 1024 * 1024, 'four megabytes arrived');

    await page.reload();
    const reloadedAt = Date.now();
    const offsetAtReload = await serverOffset(api('clerk-a'), upload);
    await page.locator('.uppy-Dashboard-Item.is-ghost').waitFor();
    await page.screenshot({ path: artifactPath('10-restored-after-reload.png') });
    await throttleUploads(context, page, 64 * 1024 * 1024);
    await page.getByRole('button', { name: '添加更多文件' }).click();
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
      await page.locator('.uppy-Dashboard-Item.is-ghost').count(),
      0,
      'the restored copy without bytes is retired',
    );
    const stored = (await listFiles(api('clerk-a'), '大文件')).items[0]!;
    assert.equal(stored.fileMD5, md5(data));
    assert.deepEqual(errors, []);
  });

  it('takes a batch of 1,000 files: all finish, duplicates instantly, and the list still renders and scrolls', async (t) => {
    const folder = path.join(files, '千份档案');
    const unique = Array.from({ length: 900 }, () => randomBytes(1024));
    unique.forEach((data, i) => writeFile(folder, `卷-${String(i).padStart(4, '0')}.txt`, data));
    unique.slice(0, 100).forEach((data, i) => writeFile(folder, `重复/副本-${String(i).padStart(4, '0')}.txt`, data));
    const { page, errors } = await newPage();
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
      `1,000 files in ${((Date.now() - started) / 1000).toFixed(1)} s; main-thread tasks over 50 ms: ${longTasks.length}, longest ${Math.round(Math.max(0, ...longTasks))} ms`,
    );

    // The Dashboard's list renders only what is in view: scrolling to the end shows the last file.
    const rendered = () => page.locator('.uppy-Dashboard-Item-name').allInnerTexts();
    const atTop = await rendered();
    assert.ok(atTop.length > 0 && atTop.length < 200, `${atTop.length} items rendered of 1,000`);
    await page.locator('.uppy-Dashboard-files').evaluate((el) => {
      const list = el as unknown as { scrollTop: number; scrollHeight: number };
      list.scrollTop = list.scrollHeight;
    });
    await until(async () => {
      const now = await rendered();
      return now.length > 0 && !now.some((name) => atTop.includes(name));
    }, 'the end of the list is rendered');
    await page.screenshot({ path: artifactPath('12-thousand-files.png'), fullPage: true });
    // The results are paged, 100 rows at a time.
    assert.equal(await page.locator('.outcomes li').count(), 100);
    await page.getByRole('button', { name: '秒传' }).click();
    assert.equal(await page.locator('.outcomes li[data-status="instant"]').count(), 100);
    assert.equal((await listFiles(api('clerk-a2'), '卷-0000')).items[0]?.myUploadCount, 2);
    assert.deepEqual(errors, []);
  });

  it('switches to English, Uppy included, and remembers the choice', async () => {
    const { page } = await newPage();
    await login(page, server.url, 'clerk-b');
    await page.getByRole('heading', { name: '上传档案' }).waitFor();
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('heading', { name: 'Upload documents' }).waitFor();
    await page.getByText('browse files', { exact: false }).first().waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Upload documents' }).waitFor();
    await page.getByRole('link', { name: 'My uploads' }).click();
    await page.getByRole('heading', { name: 'My uploads' }).waitFor();
    await page.getByPlaceholder('Search by file name').waitFor();
    await page.screenshot({ path: artifactPath('13-english.png') });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '我的上传' }).waitFor();
  });
});
