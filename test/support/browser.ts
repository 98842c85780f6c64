import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import type { Account } from '../../server/store/accounts/port.js';
import type { Role } from '../../shared/schemas.js';
import { PASSWORD, TestServer } from './server.js';
import { embeddedTarget } from './stores.js';

/** The page's document, as the callbacks run inside the browser see it. */
declare const document: { querySelectorAll(selector: string): ArrayLike<unknown> };

/**
 * Debian's Chromium driven by playwright-core (no browser download). Browser tests are
 * mandatory where REQUIRE_BROWSER_TESTS=1 (.ci/run sets it): there a missing Chromium fails the
 * run instead of skipping.
 */
export function findChromium(): string | undefined {
  const given = process.env.CHROMIUM_PATH;
  if (given) return fs.existsSync(given) ? given : undefined;
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const found = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      if (found) return found;
    } catch {
      // not on PATH
    }
  }
  return undefined;
}

const chromiumPath = findChromium();

/** `skip` for describe(): a reason when no Chromium is found outside CI, false otherwise. */
export const browserSkip: string | false =
  chromiumPath || process.env.REQUIRE_BROWSER_TESTS === '1'
    ? false
    : 'no Chromium found: install the Debian package "chromium" (or set CHROMIUM_PATH) to run the browser tests; .ci/run installs it';

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * A persistent context, so a test can reload pages and keep the browser's storage. `locale` is the
 * browser's language (navigator.language, Intl, Accept-Language): Chinese unless a test says.
 */
export async function launchContext({ locale = 'zh-CN' }: { locale?: string } = {}): Promise<{
  context: BrowserContext;
  close(): Promise<void>;
}> {
  if (!chromiumPath)
    throw new Error('REQUIRE_BROWSER_TESTS=1 but no Chromium was found: install the Debian package "chromium".');
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args: [...CHROMIUM_FLAGS],
    viewport: { width: 1280, height: 900 },
    locale,
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The browser windows a suite opens: each page collects its uncaught errors (and, where the page
 * logs them, Content-Security-Policy refusals), and closeAll() ends them all after the suite.
 */
export class BrowserWindows {
  private readonly opened: Array<{ close(): Promise<void> }> = [];

  async open(): Promise<{ context: BrowserContext; page: Page; errors: string[]; close(): Promise<void> }> {
    const launched = await launchContext();
    this.opened.push(launched);
    const page = launched.context.pages()[0] ?? (await launched.context.newPage());
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) errors.push(m.text());
    });
    return { context: launched.context, page, errors, close: () => launched.close() };
  }

  async closeAll(): Promise<void> {
    for (const window of this.opened) await window.close().catch(() => undefined);
  }
}

/** Where screenshots of the main states go (kept after the run, for a person to look at). */
export const ARTIFACTS_DIR = path.resolve(process.env.TEST_ARTIFACTS_DIR ?? 'test-artifacts');
export function artifactPath(name: string): string {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return path.join(ARTIFACTS_DIR, name);
}

/** Logs in through the app's login form, in Chinese (the test server's password unless given). */
export async function login(page: Page, url: string, username: string, password = PASSWORD): Promise<void> {
  await page.goto(url);
  await page.getByLabel('用户名').fill(username);
  await page.getByLabel('密码').fill(password);
  await page.getByRole('button', { name: '登录' }).click();
}

/**
 * What a form field says is wrong with it, once it says so: aria-invalid="true", and the texts
 * its aria-describedby names, as a screen reader reads them with the field. The deadline is a safety
 * net, Playwright's own 30 s: a busy machine can take seconds to show it.
 */
export async function fieldProblem(field: Locator, timeoutMs = 30_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const said = await field
      .evaluate((el) => {
        const e = el as unknown as {
          getAttribute(name: string): string | null;
          ownerDocument: { getElementById(id: string): { textContent: string | null } | null };
        };
        if (e.getAttribute('aria-invalid') !== 'true') return null;
        const ids = (e.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean);
        return (
          ids
            .map((id) => e.ownerDocument.getElementById(id)?.textContent ?? '')
            .join(' ')
            .trim() || null
        );
      })
      .catch(() => null);
    if (said) return said;
    if (Date.now() > end) throw new Error(`no problem was shown at ${field.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether the keyboard is on this element. */
export async function focused(element: Locator): Promise<boolean> {
  return element.evaluate(
    (el) => el === (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement,
  );
}

/** Waits until the page shows `count` elements matching `selector` (a table's rows, mostly). */
export async function rowsShown(page: Page, selector: string, count: number): Promise<void> {
  await page.waitForFunction(([s, n]) => document.querySelectorAll(s).length === n, [selector, count] as const);
}

/**
 * The archive in process on the embedded store, with 河北省's units (code 13) and these accounts
 * (username, role, unit code or `archive`), each by its username: what the screens of 撤回, 冻结
 * and 销毁 are tried on.
 */
export async function hebeiArchive(
  accounts: ReadonlyArray<readonly [username: string, role: Role, unit: string]>,
): Promise<{ server: TestServer; accounts: Record<string, Account> }> {
  const server = await TestServer.start(embeddedTarget);
  try {
    await server.archive.services.directory.load(['13']);
    const made: Record<string, Account> = {};
    for (const [username, role, unit] of accounts) made[username] = await server.addAccountIn(username, role, unit);
    return { server, accounts: made };
  } catch (e) {
    await server.close();
    throw e;
  }
}

/**
 * Whether an element is shown whole without scrolling anything: inside the window, and inside the
 * box of a table's scroller (`.table-scroll`) when it is in one. A page no wider than the window
 * can still hide a row's button past its table's edge.
 */
export async function shownWhole(element: Locator): Promise<boolean> {
  return element.evaluate((el) => {
    interface Box {
      left: number;
      right: number;
      top: number;
      bottom: number;
    }
    const e = el as unknown as {
      getBoundingClientRect(): Box;
      closest(selector: string): { getBoundingClientRect(): Box } | null;
    };
    const { innerWidth, innerHeight } = globalThis as unknown as { innerWidth: number; innerHeight: number };
    const frames: Box[] = [{ left: 0, top: 0, right: innerWidth, bottom: innerHeight }];
    const scroller = e.closest('.table-scroll');
    if (scroller) frames.push(scroller.getBoundingClientRect());
    const box = e.getBoundingClientRect();
    return frames.every(
      (f) => box.left >= f.left && box.right <= f.right && box.top >= f.top && box.bottom <= f.bottom,
    );
  });
}
