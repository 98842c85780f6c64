import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { NearDuplicateStatus } from '../../shared/reports.js';
import { cli, clerkToken, processStore, startServer, stopServer, type ProcessStore } from '../support/process.js';
import { cannotPrintPages, scannedPage } from '../support/scans.js';
import { Client } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { POEM } from '../support/texts.js';
import { until } from '../support/until.js';

/**
 * OCR holds 0.8–1.4 GB while it reads a page: it runs in a process of its own, never in the web
 * server's. These tests look at the real processes: which has onnxruntime's library mapped, and
 * what becomes of the server when the reading process dies.
 */

const CLI = new URL('../../server/cli/archive.js', import.meta.url).pathname;

/** Whether a process has onnxruntime's native library mapped (loaded by any of its threads). */
const loadsOnnxruntime = (pid: number) => fs.readFileSync(`/proc/${pid}/maps`, 'utf8').includes('libonnxruntime');

/** The processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (name) state ppid …": the name may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** How the fingerprinting stands, as `archive near-duplicates status --json` says. */
function status(env: Record<string, string>): NearDuplicateStatus {
  const run = cli(['near-duplicates', 'status', '--json'], env);
  return JSON.parse(run.stdout) as NearDuplicateStatus;
}

for (const target of storeTargets) {
  describe(
    `OCR in a process of its own, never in the web server's (${target.name} store)`,
    { skip: target.skip ?? cannotPrintPages(), timeout: 600_000 },
    () => {
      let store: ProcessStore;
      let token: string;
      before(() => {
        store = processStore(target);
        token = clerkToken(store.env);
      });
      after(() => store.dispose());

      it('the server reads scans in a child process; killed, it leaves the server serving and the next scan is read in a new one', async () => {
        const server = await startServer({ ...store.env, GC_INTERVAL_SECONDS: '0', VERIFY_INTERVAL_HOURS: '0' });
        const pid = server.child.pid!;
        try {
          const clerk = new Client(server.url, { bearer: token });
          const first = await scannedPage(POEM, 'jpeg', 'slip');
          assert.equal((await clerk.upload('静夜思扫描件.jpg', first, {}, 'image/jpeg')).status, 201);
          await until(() => status(store.env).fingerprinted === 1, 'the scan is fingerprinted', {
            timeoutMs: 300_000,
            everyMs: 500,
          });
          const [reading, ...others] = childrenOf(pid);
          assert.ok(reading, 'the server has a reading process');
          assert.deepEqual(others, [], 'one reading process');
          assert.equal(loadsOnnxruntime(reading), true, 'the reading process recognised the scan');
          assert.equal(loadsOnnxruntime(pid), false, 'the web server never loaded onnxruntime');

          process.kill(reading, 'SIGKILL'); // as the kernel's OOM killer ends a process
          await until(() => !childrenOf(pid).includes(reading), 'the reading process is gone');
          assert.equal((await fetch(`${server.url}/api/ready`)).status, 200, 'the server still serves');
          const second = await scannedPage(`${POEM}\n春眠不觉晓，处处闻啼鸟。`, 'png', 'slip');
          assert.equal((await clerk.upload('两首诗扫描件.png', second, {}, 'image/png')).status, 201);
          await until(() => status(store.env).fingerprinted === 2, 'the second scan is fingerprinted', {
            timeoutMs: 300_000,
            everyMs: 500,
          });
          const [again] = childrenOf(pid);
          assert.ok(again && again !== reading, 'a new reading process');
          assert.equal(loadsOnnxruntime(pid), false, 'still no onnxruntime in the web server');
          assert.equal(status(store.env).skipped, 0);
        } finally {
          assert.equal(await stopServer(server), 0);
        }
        assert.deepEqual(childrenOf(pid), [], 'the reading process ended with the server');
      });

      it('the Docker profile: web instances with OCR off only queue files, and `near-duplicates work` reads them in its own reading process', async () => {
        const server = await startServer({
          ...store.env,
          GC_INTERVAL_SECONDS: '0',
          VERIFY_INTERVAL_HOURS: '0',
          NEAR_DUPLICATE_POLL_SECONDS: '0',
          OCR: 'off',
        });
        const worker = spawn(process.execPath, [CLI, 'near-duplicates', 'work'], {
          env: { ...process.env, ...store.env, NEAR_DUPLICATE_POLL_SECONDS: '1', OCR: 'on' },
        });
        let said = '';
        worker.stdout.on('data', (d: Buffer) => (said += d.toString()));
        try {
          const clerk = new Client(server.url, { bearer: token });
          const before = status(store.env).fingerprinted;
          const scan = await scannedPage(`送别：${POEM}`, 'jpeg', 'slip');
          assert.equal((await clerk.upload('送别扫描件.jpg', scan, {}, 'image/jpeg')).status, 201);
          await until(() => status(store.env).fingerprinted === before + 1, 'the worker fingerprints the scan', {
            timeoutMs: 300_000,
            everyMs: 500,
          });
          assert.deepEqual(childrenOf(server.child.pid!), [], 'the web instance started no reading process');
          assert.equal(loadsOnnxruntime(server.child.pid!), false);
          const [reading] = childrenOf(worker.pid!);
          assert.ok(reading && loadsOnnxruntime(reading), "the worker's reading process recognised the scan");
          assert.equal(loadsOnnxruntime(worker.pid!), false, 'and not the worker itself');
        } finally {
          worker.kill('SIGTERM');
          const [code] = await once(worker, 'exit');
          assert.equal(code, 0, `the worker stops on SIGTERM: ${said}`);
          assert.equal(await stopServer(server), 0);
        }
        assert.match(said, /fingerprinting queued files every 1 s \(OCR on\)/);
      });
    },
  );
}
