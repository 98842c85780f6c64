import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { build } from 'vite';
import { CHROMIUM_FLAGS, findChromium } from '../test/support/browser.js';
import { makeFile, seconds } from './files.js';

/**
 * The page's globals as the functions run in it see them (this project compiles without the DOM
 * library): the file input, and workers whose replies are `Reply`.
 */
type PageGlobals<Reply> = {
  document: { querySelector(s: string): { files: Blob[] } };
  Worker: new (
    url: string,
    o: object,
  ) => {
    postMessage(m: unknown): void;
    onmessage: (e: { data: Reply }) => void;
    terminate(): void;
  };
};

const ROOT = new URL('../..', import.meta.url).pathname;
const PUBLIC_DIR = path.join(ROOT, 'dist/public');

export interface BrowserHashResult {
  sizeMiB: number;
  /** (a) spark-md5 alone over bytes in memory. */
  sparkSeconds: number;
  /** (b) the app's hash worker: file reads + spark-md5 + SHA-256 on its second worker. */
  pipelineSeconds: number;
  /** (c) md5sum of the same file. */
  md5sumSeconds: number;
  /** Longest gap between main-thread timer ticks while (b) ran. */
  mainThreadMaxGapMs: number;
  longTasks: number;
}

/** Serves the built app's assets and the bench's own worker, same origin, no CSP in the way. */
async function serve(benchDir: string): Promise<{ url: string; close(): void }> {
  const types: Record<string, string> = { '.js': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm' };
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url!, 'http://x').pathname;
    const file =
      pathname === '/'
        ? null
        : pathname.startsWith('/bench/')
          ? path.join(benchDir, pathname.slice(7))
          : path.join(PUBLIC_DIR, pathname);
    if (file === null) {
      res.setHeader('content-type', 'text/html');
      return res.end('<!doctype html><html><body><input type="file" id="file"></body></html>');
    }
    if (!file.startsWith(benchDir) && !file.startsWith(PUBLIC_DIR)) return res.writeHead(403).end();
    fs.readFile(file, (err, data) => {
      if (err) return res.writeHead(404).end();
      res.setHeader('content-type', types[path.extname(file)] ?? 'application/octet-stream');
      res.end(data);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

/**
 * Hashing in headless Chromium of one large file: the library's ceiling (a), the real pipeline
 * (b) and md5sum (c), in the same run on the same (cached) file.
 */
export async function benchBrowserHash(sizeMiB: number): Promise<BrowserHashResult> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('the browser bench needs Chromium: install the Debian package "chromium"');
  const worker = fs.readdirSync(path.join(PUBLIC_DIR, 'assets')).find((f) => /^hash\.worker-.*\.js$/.test(f));
  if (!worker) throw new Error('dist/public has no hash worker: run "npm run build" first');

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-browser-'));
  const file = path.join(work, 'input.bin');
  const benchDir = path.join(work, 'bench');
  const userDataDir = path.join(work, 'profile');
  await build({
    configFile: false,
    logLevel: 'warn',
    root: ROOT,
    build: {
      outDir: benchDir,
      emptyOutDir: true,
      lib: {
        entry: path.join(ROOT, 'bench/browser/spark-ceiling.worker.ts'),
        formats: ['es'],
        fileName: () => 'spark-ceiling.js',
      },
    },
  });
  const server = await serve(benchDir);
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: CHROMIUM_FLAGS,
  });
  try {
    await makeFile(file, sizeMiB * 1024 * 1024);
    execFileSync('md5sum', [file]);
    const md5sumSeconds = Math.min(...[0, 1].map(() => seconds(() => execFileSync('md5sum', [file]))));
    const expectedMd5 = execFileSync('md5sum', [file], { encoding: 'utf8' }).split(' ')[0];

    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(server.url);
    await page.locator('#file').setInputFiles(file);

    type Run = { seconds: number; md5: string; maxGapMs: number; longTasks: number };
    const pipeline = (): Promise<Run> =>
      page.evaluate(async (workerUrl) => {
        const g = globalThis as unknown as PageGlobals<{ type: string; digest?: { md5: string } }> & {
          PerformanceObserver: new (cb: (l: { getEntries(): unknown[] }) => void) => {
            observe(o: object): void;
            disconnect(): void;
          };
        };
        const blob = g.document.querySelector('#file').files[0]!;
        let longTasks = 0;
        const observer = new g.PerformanceObserver((l) => (longTasks += l.getEntries().length));
        observer.observe({ type: 'longtask' });
        let last = performance.now();
        let maxGapMs = 0;
        const ticker = setInterval(() => {
          const now = performance.now();
          maxGapMs = Math.max(maxGapMs, now - last);
          last = now;
        }, 5);
        const w = new g.Worker(workerUrl, { type: 'module' });
        const started = performance.now();
        const md5 = await new Promise<string>((resolve, reject) => {
          w.onmessage = (e) => {
            if (e.data.type === 'digest') resolve(e.data.digest!.md5);
            else if (e.data.type === 'error') reject(new Error(JSON.stringify(e.data)));
          };
          w.postMessage({ type: 'hash', jobId: 1, file: blob });
        });
        const result = { seconds: (performance.now() - started) / 1000, md5, maxGapMs, longTasks };
        clearInterval(ticker);
        observer.disconnect();
        w.terminate();
        return result;
      }, `/assets/${worker}`);
    const ceiling = (): Promise<{ seconds: number; md5: string }> =>
      page.evaluate(async () => {
        const g = globalThis as unknown as PageGlobals<{ seconds: number; md5: string }>;
        const w = new g.Worker('/bench/spark-ceiling.js', { type: 'module' });
        const result = await new Promise<{ seconds: number; md5: string }>((resolve) => {
          w.onmessage = (e) => resolve(e.data);
          w.postMessage({ file: g.document.querySelector('#file').files[0] });
        });
        w.terminate();
        return result;
      });

    // Best of two each, interleaved: this shared machine's timings vary from run to run.
    const runs: Run[] = [];
    const ceilings: { seconds: number; md5: string }[] = [];
    for (let i = 0; i < 2; i++) {
      ceilings.push(await ceiling());
      runs.push(await pipeline());
    }
    for (const r of [...runs, ...ceilings])
      if (r.md5 !== expectedMd5) throw new Error(`browser MD5 ${r.md5} differs from md5sum ${expectedMd5}`);
    const best = runs.reduce((a, b) => (a.seconds <= b.seconds ? a : b));
    return {
      sizeMiB,
      sparkSeconds: Math.min(...ceilings.map((c) => c.seconds)),
      pipelineSeconds: best.seconds,
      md5sumSeconds,
      mainThreadMaxGapMs: Math.max(...runs.map((r) => r.maxGapMs)),
      longTasks: Math.max(...runs.map((r) => r.longTasks)),
    };
  } finally {
    await context.close();
    server.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
