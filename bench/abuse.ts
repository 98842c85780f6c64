import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { Pool } from 'undici';
import { benchToken, startBenchServer, type BenchServer } from './server.js';

/** What 16 clients sending 1,000-file checks do to everybody else's requests. */
export interface AbuseResult {
  name: string;
  clients: number;
  accounts: number;
  seconds: number;
  /** GET /api/health from a separate client every 10 ms, before (idle) and during the abuse. */
  idle: Latency;
  during: Latency;
  /** The abusive bulk checks: answered (200), refused by a quota (429), other. */
  checks: { ok: number; limited: number; other: number; p50Ms: number; maxMs: number };
  claimsWritten: number;
  serverPeakRssMb: number;
}

export interface Latency {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const FILES_HELD = 200;
const BATCH = 1000;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function latency(h: RecordableHistogram): Latency {
  return { count: h.count, p50Ms: h.percentile(50) / 1000, p99Ms: h.percentile(99) / 1000, maxMs: h.max / 1000 };
}

/** Probes GET /api/health every 10 ms on its own connection until `stop` resolves. */
async function probeHealth(url: string, until: Promise<void>): Promise<Latency> {
  const pool = new Pool(url, { connections: 1 });
  const h = createHistogram();
  let done = false;
  void until.then(() => (done = true));
  while (!done) {
    const start = performance.now();
    const res = await pool.request({ method: 'GET', path: '/api/health' });
    await res.body.text();
    h.record(Math.max(1, Math.round((performance.now() - start) * 1000)));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await pool.close();
  return latency(h);
}

/**
 * The abuse a logged-in clerk can do with the bulk endpoints (issue "Hardening"): `clients`
 * closed-loop clients, spread over `accounts` accounts, each sending POST /api/uploads/checks of
 * 1,000 files another unit holds (every one makes a claim), for `seconds`; meanwhile a separate
 * client times GET /api/health. The targets: health p99 <= 50 ms and max <= 200 ms.
 */
export async function benchAbuse(clients: number, accounts: number, seconds: number): Promise<AbuseResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-abuse-'));
  const env = { ...process.env, DATA_DIR: dataDir, STORE: 'embedded', MONGODB_URI: '' };
  let server: BenchServer | undefined;
  try {
    const owner = benchToken(env, { username: 'owner', unit: 'held', city: '江城' });
    const tokens = Array.from({ length: accounts }, (_, i) =>
      benchToken(env, { username: `abuser${i}`, unit: `abuse${i}`, city: '河阳' }),
    );
    server = await startBenchServer(env);
    const pool = new Pool(server.url, { connections: clients + 2, headersTimeout: 120_000, bodyTimeout: 120_000 });
    // Another unit's files, which every check asks for (so each one writes a claim).
    const held: string[] = [];
    for (let i = 0; i < FILES_HELD; i++) {
      const data = randomBytes(1024 + (i % 8) * 1024);
      const boundary = `----bench${i}`;
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="held-${i}.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
        ),
        data,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const res = await pool.request({
        method: 'POST',
        path: '/api/files',
        headers: { authorization: `Bearer ${owner}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      if (res.statusCode !== 201)
        throw new Error(`seeding upload answered ${res.statusCode}: ${await res.body.text()}`);
      await res.body.text();
      held.push(JSON.stringify({ md5: md5(data), sha256: sha256(data), size: data.length, name: `again-${i}.pdf` }));
    }
    const checks = `{"files":[${Array.from({ length: BATCH }, (_, i) => held[i % FILES_HELD]).join(',')}]}`;

    const idle = await probeHealth(server.url, new Promise((resolve) => setTimeout(resolve, 2000)));
    const outcome = { ok: 0, limited: 0, other: 0 };
    const times = createHistogram();
    const end = performance.now() + seconds * 1000;
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const during = probeHealth(server.url, stopped);
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        while (performance.now() < end) {
          const start = performance.now();
          const res = await pool.request({
            method: 'POST',
            path: '/api/uploads/checks',
            headers: { authorization: `Bearer ${tokens[c % accounts]}`, 'content-type': 'application/json' },
            body: checks,
          });
          await res.body.text();
          times.record(Math.max(1, Math.round((performance.now() - start) * 1000)));
          if (res.statusCode === 200) outcome.ok++;
          else if (res.statusCode === 429) {
            outcome.limited++;
            // A well-behaved client waits as told; an abusive one would not, but gains nothing.
            await new Promise((resolve) =>
              setTimeout(resolve, Math.min(Number(res.headers['retry-after'] ?? 1), 5) * 1000),
            );
          } else outcome.other++;
        }
      }),
    );
    stop();
    const duringLatency = await during;
    await pool.close();
    const peak = server.peakRssMb();
    await server.stop();
    server = undefined;
    const db = (await import('better-sqlite3')).default(path.join(dataDir, 'archive.sqlite'), { readonly: true });
    const claimsWritten = (db.prepare('SELECT COUNT(*) AS n FROM claims').get() as { n: number }).n;
    db.close();
    const t = latency(times);
    return {
      name: `${clients} clients, ${accounts} account${accounts === 1 ? '' : 's'}`,
      clients,
      accounts,
      seconds,
      idle,
      during: duringLatency,
      checks: { ...outcome, p50Ms: t.p50Ms, maxMs: t.maxMs },
      claimsWritten,
      serverPeakRssMb: peak,
    };
  } finally {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
