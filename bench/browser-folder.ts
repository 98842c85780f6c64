import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Request } from 'playwright-core';
import { ArchiveConnection, type BatchSend } from '../client/importer/archive-connection.js';
import { CHROMIUM_FLAGS, findChromium } from '../test/support/browser.js';
import { makeFile } from './files.js';
import { benchToken, startBenchServer, type BenchServer } from './server.js';

/**
 * Folders of small files through the clerk's upload page in headless Chromium (issue 23 §4). The
 * page is driven only through what both today's page and its successor offer: the folder input
 * (`input[type=file][webkitdirectory]`), the single-file input, and the `.summary` element whose
 * `data-instant`, `data-stored` and `data-failed` attributes count the files that ended.
 */

/** The part's runs, in the order they run. */
export const FOLDER_RUNS = ['small', 'many', 'proxied', 'large'] as const;
export type FolderRunName = (typeof FOLDER_RUNS)[number];

export interface FolderBenchOptions {
  /** Files of 1 KiB in the small folder (issue: 1,000), sent directly and through the delaying proxy. */
  smallFiles: number;
  /** Files of 20 KiB in the large folder (issue: 10,000). */
  manyFiles: number;
  /** The single large file, in MiB (issue: 1 GiB). */
  largeMiB: number;
  /** Each wait ends after this many times its target (the large file: 0.2 s per MiB), reported as unfinished. */
  patience: number;
  /** Only these runs (default: all). */
  runs?: readonly FolderRunName[];
}

/** One run: a fresh Chromium profile, a fresh clerk logged in through the page, fresh files. */
export interface FolderRun {
  files: number;
  bytesEach: number;
  subFolders: number;
  /** Files of the folder sent to the archive beforehand, by a clerk of another unit. */
  archivedBefore: number;
  /** The target for this many files (scaled from the issue's), null where there is none. */
  targetSeconds: number | null;
  /** How long the bench waited at most. */
  limitSeconds: number;
  /** From setInputFiles until instant + stored + failed = files; null when that did not happen in time. */
  seconds: number | null;
  /** How long the bench waited: `seconds`, or the limit. */
  waitedSeconds: number;
  instant: number;
  stored: number;
  failed: number;
  /** Texts of the first few failed files (elements with data-status="failed"), when the page shows them. */
  failures: string[];
  /** Requests to /api/ the page and its workers made in the run, as Chromium reported them. */
  apiRequests: number;
  /** Requests to /api/ (but /api/health) the server logged in the same window, a cross-check. */
  serverApiRequests: number;
  /** The browser's task that adds the files (FileList, change event), when it took over 50 ms. */
  addingTaskMs: number;
  /** Main-thread tasks over 50 ms after the files were added (PerformanceObserver 'longtask'). */
  longestTaskMs: number;
  tasksOver50Ms: number;
  tasksOver200Ms: number;
  /** The tab's JS heap (main thread, CDP Performance.getMetrics) at the end, and after a forced GC. */
  heapUsedMb: number;
  heapAfterGcMb: number;
  pageErrors: string[];
}

/** The runs done (options.runs). */
export interface FolderBenchResult {
  small?: FolderRun;
  many?: FolderRun;
  /** The small folder again (fresh contents), through a proxy delaying each direction by `delayMs`. */
  proxied?: FolderRun & { delayMs: number };
  large?: FolderRun & { sizeMiB: number };
}

/** The targets, for its sizes; other sizes scale them in proportion. */
export const FOLDER_TARGETS = {
  smallSecondsPer1000: 5,
  manySecondsPer10000: 60,
  proxiedSecondsPer1000: 10,
  longTaskMs: 200,
  requestsPerFile: 0.05,
} as const;

const SUB_FOLDERS = ['卷一', '卷二', '卷三', '卷四'];
/** How many sub-folders each folder has, its files split evenly among them. */
export const FOLDER_SUB_FOLDERS = SUB_FOLDERS.length;
/** Every tenth file of a folder is in the archive before the run. */
const ARCHIVED_EVERY = 10;
/** Half the added round-trip time: each chunk waits this long in each direction. */
const PROXY_DELAY_MS = 25;
const PASSWORD = 'a long measuring password';
const FOLDER_INPUT = 'input[type=file][webkitdirectory]';
const FILE_INPUT = 'input[type=file]:not([webkitdirectory])';
const POLL_MS = 50;
const ARTIFACTS_DIR = path.resolve(process.env.TEST_ARTIFACTS_DIR ?? 'test-artifacts');

/** The page's globals as the functions run in it see them (this project compiles without the DOM library). */
interface PageElement {
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  parentElement: PageElement | null;
  textContent: string | null;
}
type PageGlobals = {
  document: {
    querySelector(s: string): PageElement | null;
    querySelectorAll(s: string): Iterable<PageElement>;
    addEventListener(type: string, listener: () => void, options: { capture: boolean }): void;
  };
  performance: { now(): number };
  getComputedStyle(e: PageElement): { display: string };
  PerformanceObserver: new (cb: (list: { getEntries(): { startTime: number; duration: number }[] }) => void) => {
    observe(o: object): void;
  };
  benchLongTasks?: Array<{ start: number; duration: number }>;
  /** When the file input's change event fired: the browser has added the files. */
  benchAddedAt?: number;
};

export async function benchBrowserFolder(options: FolderBenchOptions): Promise<FolderBenchResult> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('the folder bench needs Chromium: install the Debian package "chromium"');
  const unknown = options.runs?.find((run) => !FOLDER_RUNS.includes(run));
  if (unknown !== undefined) throw new Error(`no folder run "${unknown}": the runs are ${FOLDER_RUNS.join(', ')}`);
  const wanted = (run: FolderRunName) => !options.runs || options.runs.includes(run);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-folder-'));
  const env = { ...process.env, DATA_DIR: path.join(work, 'data'), STORE: 'embedded', MONGODB_URI: '' };
  try {
    // Accounts before the server starts (the archive command writes the store directly).
    const holderToken = benchToken(env, { username: 'folder-holder', unit: 'folder-holder', city: 'Bench' });
    for (const run of FOLDER_RUNS) benchToken(env, { username: `folder-${run}`, unit: 'folder-bench', city: 'Bench' });
    const server = await startBenchServer(env);
    try {
      const holder = new ArchiveConnection(server.url, holderToken, []);
      const ctx: RunContext = { executablePath, server, holder, work, patience: options.patience };
      const { smallSecondsPer1000, manySecondsPer10000, proxiedSecondsPer1000 } = FOLDER_TARGETS;
      const result: FolderBenchResult = {};

      if (wanted('small'))
        result.small = await folderRun(ctx, {
          clerk: 'folder-small',
          files: options.smallFiles,
          bytesEach: 1024,
          targetSeconds: (smallSecondsPer1000 * options.smallFiles) / 1000,
        });
      if (wanted('many'))
        result.many = await folderRun(ctx, {
          clerk: 'folder-many',
          files: options.manyFiles,
          bytesEach: 20 * 1024,
          targetSeconds: (manySecondsPer10000 * options.manyFiles) / 10_000,
        });
      if (wanted('proxied')) {
        const proxy = await startDelayProxy(new URL(server.url).port, PROXY_DELAY_MS);
        try {
          const run = await folderRun(ctx, {
            clerk: 'folder-proxied',
            files: options.smallFiles,
            bytesEach: 1024,
            targetSeconds: (proxiedSecondsPer1000 * options.smallFiles) / 1000,
            baseUrl: proxy.url,
          });
          result.proxied = { ...run, delayMs: PROXY_DELAY_MS };
        } finally {
          await proxy.close();
        }
      }
      if (wanted('large')) {
        const largeFile = path.join(work, '整卷扫描.tif');
        await makeFile(largeFile, options.largeMiB * 1024 * 1024);
        try {
          const run = await pageRun(ctx, {
            clerk: 'folder-large',
            select: { file: largeFile },
            files: 1,
            targetSeconds: null,
            limitSeconds: options.largeMiB * 0.2 * options.patience,
          });
          result.large = { ...run, bytesEach: options.largeMiB * 1024 * 1024, sizeMiB: options.largeMiB };
        } finally {
          fs.rmSync(largeFile, { force: true });
        }
      }
      return result;
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

interface RunContext {
  executablePath: string;
  server: BenchServer;
  /** A clerk of another unit, who puts a tenth of each folder into the archive beforehand. */
  holder: ArchiveConnection;
  work: string;
  patience: number;
}

/** Writes a fresh folder (new random contents), puts every tenth file into the archive, uploads the folder through the page. */
async function folderRun(
  ctx: RunContext,
  run: { clerk: string; files: number; bytesEach: number; targetSeconds: number; baseUrl?: string },
): Promise<FolderRun> {
  const folder = path.join(fs.mkdtempSync(path.join(ctx.work, 'folder-')), '扫描件');
  try {
    const perFolder = Math.ceil(run.files / SUB_FOLDERS.length);
    const digits = Math.max(4, String(perFolder).length);
    for (const sub of SUB_FOLDERS) fs.mkdirSync(path.join(folder, sub), { recursive: true });
    const archived: BatchSend[] = [];
    for (let i = 0; i < run.files; i++) {
      const sub = SUB_FOLDERS[Math.floor(i / perFolder)]!;
      const name = `${sub}/第${String((i % perFolder) + 1).padStart(digits, '0')}页.jpg`;
      const bytes = randomBytes(run.bytesEach);
      fs.writeFileSync(path.join(folder, name), bytes);
      if (i % ARCHIVED_EVERY === 0)
        archived.push({
          bytes,
          name: `扫描件/${name}`,
          type: 'image/jpeg',
          md5: createHash('md5').update(bytes).digest('hex'),
          sha256: createHash('sha256').update(bytes).digest('hex'),
        });
    }
    for (let from = 0; from < archived.length; from += 500) {
      const results = await ctx.holder.sendMany(archived.slice(from, from + 500));
      const failed = results.find((r) => r.status === 'failed');
      if (failed) throw new Error(`putting the folder's archived tenth in beforehand: ${JSON.stringify(failed)}`);
    }
    const result = await pageRun(ctx, {
      clerk: run.clerk,
      select: { folder },
      files: run.files,
      targetSeconds: run.targetSeconds,
      limitSeconds: run.targetSeconds * ctx.patience,
      ...(run.baseUrl ? { baseUrl: run.baseUrl } : {}),
    });
    return { ...result, bytesEach: run.bytesEach, subFolders: SUB_FOLDERS.length, archivedBefore: archived.length };
  } finally {
    fs.rmSync(path.dirname(folder), { recursive: true, force: true });
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`, or `fallback` when it has not settled in `ms` (the page's main thread may be busy). */
async function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A clerk logs in through the page in a fresh Chromium profile and adds the folder (or file); timed until all ended. */
async function pageRun(
  ctx: RunContext,
  run: {
    clerk: string;
    select: { folder: string } | { file: string };
    files: number;
    targetSeconds: number | null;
    limitSeconds: number;
    baseUrl?: string;
  },
): Promise<FolderRun> {
  const baseUrl = run.baseUrl ?? ctx.server.url;
  const userDataDir = fs.mkdtempSync(path.join(ctx.work, 'profile-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: ctx.executablePath,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 900 },
    locale: 'zh-CN',
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));

    await page.goto(baseUrl);
    await page.getByLabel('用户名', { exact: true }).fill(run.clerk);
    await page.getByLabel('密码', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: '登录' }).click();
    await page.getByLabel('密码', { exact: true }).waitFor({ state: 'hidden', timeout: 30_000 });
    // The upload page is shown: its folder input is in the document, and nothing around it is hidden.
    await page.waitForFunction(
      (selector) => {
        const g = globalThis as unknown as PageGlobals;
        const input = g.document.querySelector(selector);
        if (!input) return false;
        for (let at = input.parentElement; at; at = at.parentElement)
          if (at.hasAttribute('hidden') || g.getComputedStyle(at).display === 'none') return false;
        return true;
      },
      FOLDER_INPUT,
      { timeout: 30_000 },
    );

    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.evaluate(() => {
      const g = globalThis as unknown as PageGlobals;
      g.benchLongTasks = [];
      new g.PerformanceObserver((list) =>
        g.benchLongTasks!.push(...list.getEntries().map((e) => ({ start: e.startTime, duration: e.duration }))),
      ).observe({ type: 'longtask' });
      g.document.addEventListener('change', () => (g.benchAddedAt ??= g.performance.now()), { capture: true });
    });
    // Requests of the page and of its dedicated workers (Playwright reports both on the context).
    let apiRequests = 0;
    let counting = false;
    const count = (r: Request) => {
      if (counting && new URL(r.url()).pathname.startsWith('/api/')) apiRequests++;
    };
    context.on('request', count);
    const logLinesBefore = ctx.server.logLineCount();

    const readSummary = () =>
      page.evaluate(() => {
        const g = globalThis as unknown as PageGlobals;
        const s = g.document.querySelector('.summary');
        const n = (k: string) => Number(s?.getAttribute(`data-${k}`) ?? 0) || 0;
        return { instant: n('instant'), stored: n('stored'), failed: n('failed') };
      });
    const limitMs = run.limitSeconds * 1000;
    counting = true;
    const started = performance.now();
    const input = page.locator('folder' in run.select ? FOLDER_INPUT : FILE_INPUT).first();
    await input.setInputFiles('folder' in run.select ? run.select.folder : run.select.file, { timeout: limitMs });
    let summary = { instant: 0, stored: 0, failed: 0 };
    let seconds: number | null = null;
    for (;;) {
      const left = limitMs - (performance.now() - started);
      summary = await within(readSummary(), Math.max(left, 1000), summary);
      const elapsed = (performance.now() - started) / 1000;
      if (summary.instant + summary.stored + summary.failed >= run.files) {
        seconds = elapsed;
        break;
      }
      if (elapsed * 1000 >= limitMs) break;
      await sleep(POLL_MS);
    }
    const waitedSeconds = seconds ?? (performance.now() - started) / 1000;
    // The screen as the clerk sees it at the end, for a person to look at (test-artifacts/).
    fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
    await within(
      page.screenshot({ path: path.join(ARTIFACTS_DIR, `bench-folder-${run.files}-files.png`), fullPage: true }),
      30_000,
      undefined,
    );
    counting = false;
    // The server writes a request's log line as it answers (to a file, synchronously): count up to now.
    const serverApiRequests = ctx.server
      .logLines()
      .slice(logLinesBefore)
      .filter((line) => /"url":"\/api\//.test(line)).length;

    const observed = await within(
      page.evaluate(() => {
        const g = globalThis as unknown as PageGlobals;
        return { tasks: g.benchLongTasks ?? [], addedAt: g.benchAddedAt ?? 0 };
      }),
      30_000,
      { tasks: [], addedAt: 0 },
    );
    // The task in which the browser adds the files (it builds the FileList, then fires the change
    // event) is apart: the target is for the tasks after it.
    const adding = observed.tasks.find((t) => t.start <= observed.addedAt && observed.addedAt <= t.start + t.duration);
    const longTasks = observed.tasks.filter((t) => t !== adding).map((t) => t.duration);
    const failures = await within(
      page.evaluate(() =>
        [...(globalThis as unknown as PageGlobals).document.querySelectorAll('[data-status="failed"]')]
          .slice(0, 3)
          .map((e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim()),
      ),
      30_000,
      [],
    );
    const heapUsedMb = async () => {
      const { metrics } = await cdp.send('Performance.getMetrics');
      return (metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? NaN) / 1e6;
    };
    const heapAtEnd = await within(heapUsedMb(), 30_000, NaN);
    await within(cdp.send('HeapProfiler.collectGarbage'), 30_000, undefined);
    const heapAfterGc = await within(heapUsedMb(), 30_000, NaN);
    return {
      files: run.files,
      bytesEach: 0,
      subFolders: 0,
      archivedBefore: 0,
      targetSeconds: run.targetSeconds,
      limitSeconds: run.limitSeconds,
      seconds,
      waitedSeconds,
      ...summary,
      failures,
      apiRequests,
      serverApiRequests,
      addingTaskMs: adding?.duration ?? 0,
      longestTaskMs: Math.max(0, ...longTasks),
      tasksOver50Ms: longTasks.length,
      tasksOver200Ms: longTasks.filter((ms) => ms > FOLDER_TARGETS.longTaskMs).length,
      heapUsedMb: heapAtEnd,
      heapAfterGcMb: heapAfterGc,
      pageErrors,
    };
  } finally {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
}

/**
 * A TCP proxy on 127.0.0.1 in front of the server's `port` that holds every chunk `delayMs` in
 * each direction (the round trip gains twice that), in order per connection. No backpressure: it
 * carries the small folder's megabyte, not the large file.
 */
export async function startDelayProxy(port: string, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const delayed = (from: net.Socket, to: net.Socket) => {
    const queue: { at: number; chunk: Buffer | null }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const pump = () => {
      timer = undefined;
      const now = performance.now();
      while (queue.length > 0 && queue[0]!.at <= now + 0.5) {
        const { chunk } = queue.shift()!;
        if (to.destroyed) return;
        if (chunk) to.write(chunk);
        else to.end();
      }
      if (queue.length > 0) timer = setTimeout(pump, Math.max(1, queue[0]!.at - now));
    };
    const hold = (chunk: Buffer | null) => {
      queue.push({ at: performance.now() + delayMs, chunk });
      timer ??= setTimeout(pump, delayMs);
    };
    from.on('data', (chunk: Buffer) => hold(chunk));
    from.on('end', () => hold(null));
    from.on('close', (hadError) => {
      if (hadError) to.destroy();
    });
    to.on('close', () => clearTimeout(timer));
  };
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      socket.on('close', () => sockets.delete(socket));
    }
    delayed(client, upstream);
    delayed(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
