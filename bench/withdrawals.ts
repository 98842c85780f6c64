import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchToken, startBenchServer } from './server.js';

export interface WithdrawalsResult {
  store: 'embedded' | 'mongodb';
  files: number;
  /** Reference: the same uploads counted through POST /api/uploads/batch, 1,000 a request. */
  uploadSeconds: number;
  /** POST /api/withdrawals {receipt}: every upload of the receipt out of every count. */
  withdrawSeconds: number;
  /** POST /api/withdrawals/restore {receipt}: every one counted again. */
  restoreSeconds: number;
  /** The uploads the reports count before, after the withdrawal and after the restore (the counts must go and return). */
  counted: { before: number; withdrawn: number; restored: number };
  serverPeakRssMb: number;
  /** The server's RSS once started, and its peak during each step alone (the kernel's high-water mark, reset between steps). */
  serverRssMb: { started: number; counting: number; receipt: number; withdraw: number; restore: number };
}

const BATCH = 1000;
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/**
 * Withdrawing and restoring a whole folder's upload (issue 41: a receipt of 10,000 files, target
 * ≤ 10 s each way), against the real server process: `files` new files of 1 KiB counted through
 * the batch endpoint, as the upload page sends a folder (the reference, in the same run), their
 * receipt kept, then the receipt withdrawn and restored, each one request. `mongoUri`: on MongoDB
 * (a database of its own, `bench_withdrawals_…`, left there: a benchmark does not use the driver),
 * else the embedded store.
 */
export async function benchWithdrawals(files: number, mongoUri?: string): Promise<WithdrawalsResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-withdrawals-'));
  const database = `bench_withdrawals_${randomBytes(4).toString('hex')}`;
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    GC_INTERVAL_SECONDS: '0',
    ...(mongoUri
      ? { STORE: 'mongodb', MONGODB_URI: mongoUri, MONGODB_DB: database }
      : { STORE: 'embedded', MONGODB_URI: '' }),
  };
  try {
    const clerk = benchToken(env, { username: 'bench-clerk', unit: 'bench-unit', city: 'Bench' });
    const admin = benchToken(env, { username: 'bench-admin', role: 'admin', unit: 'archive', city: 'Archive' });
    const server = await startBenchServer(env);
    try {
      const call = async (token: string, method: string, p: string, body?: unknown) => {
        const res = await fetch(`${server.url}${p}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body !== undefined && !(body instanceof FormData) && { 'content-type': 'application/json' }),
          },
          ...(body !== undefined && { body: body instanceof FormData ? body : JSON.stringify(body) }),
        });
        const text = await res.text();
        if (res.status >= 300) throw new Error(`${method} ${p} answered ${res.status}: ${text.slice(0, 300)}`);
        return JSON.parse(text) as unknown;
      };
      // The server's peak RSS since the last step, the high-water mark then reset (Linux: clear_refs 5).
      const stepPeak = () => {
        const peak = server.peakRssMb();
        fs.writeFileSync(`/proc/${server.process.pid}/clear_refs`, '5');
        return peak;
      };
      const started = server.rssMb();
      stepPeak();
      const uploadsCounted = async () =>
        ((await call(admin, 'GET', '/api/reports/savings')) as { summary: { uploads: number } }).summary.uploads;

      // The folder: new files, each under its key, in batches as the page sends them.
      const at = new Date().toISOString();
      const rows: Array<Record<string, unknown>> = [];
      let uploadMs = 0;
      for (let from = 0; from < files; from += BATCH) {
        const form = new FormData();
        const manifest: unknown[] = [];
        const contents: Buffer[] = [];
        for (let i = from; i < Math.min(files, from + BATCH); i++) {
          const data = randomBytes(1024);
          const key = randomBytes(16).toString('hex');
          const name = `卷${Math.floor(i / 100)}/第${i + 1}页.pdf`;
          contents.push(data);
          manifest.push({ md5: md5(data), sha256: sha256(data), name, key });
          rows.push({ path: name, size: data.length, outcome: 'stored', via: 'batch', key, at });
        }
        form.append('manifest', JSON.stringify(manifest));
        contents.forEach((data, i) =>
          form.append('file', new Blob([data], { type: 'application/pdf' }), `p${from + i}.pdf`),
        );
        const start = performance.now();
        await call(clerk, 'POST', '/api/uploads/batch', form);
        uploadMs += performance.now() - start;
      }
      const counting = stepPeak();
      const receipt = randomBytes(16).toString('hex');
      await call(clerk, 'PUT', `/api/receipts/${receipt}`, { title: '卷', startedAt: at, rows });
      const before = await uploadsCounted();
      const receiptPeak = stepPeak();

      let start = performance.now();
      const answer = (await call(clerk, 'POST', '/api/withdrawals', { receipt, reason: 'wrong_unit' })) as {
        withdrawn: unknown[];
      };
      const withdrawSeconds = (performance.now() - start) / 1000;
      if (answer.withdrawn.length !== files) throw new Error(`withdrew ${answer.withdrawn.length} of ${files}`);
      const withdrawPeak = stepPeak();
      const withdrawn = await uploadsCounted();

      start = performance.now();
      const restored = (await call(clerk, 'POST', '/api/withdrawals/restore', { receipt })) as {
        restored: unknown[];
      };
      const restoreSeconds = (performance.now() - start) / 1000;
      if (restored.restored.length !== files) throw new Error(`restored ${restored.restored.length} of ${files}`);
      const restorePeak = stepPeak();
      return {
        store: mongoUri ? 'mongodb' : 'embedded',
        files,
        uploadSeconds: uploadMs / 1000,
        withdrawSeconds,
        restoreSeconds,
        counted: { before, withdrawn, restored: await uploadsCounted() },
        serverPeakRssMb: Math.max(counting, receiptPeak, withdrawPeak, restorePeak),
        serverRssMb: { started, counting, receipt: receiptPeak, withdraw: withdrawPeak, restore: restorePeak },
      };
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
