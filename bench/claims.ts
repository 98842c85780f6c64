import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { benchToken, handlingTimes, startBenchServer } from './server.js';
import { seedCatalog } from './seed.js';

export interface Latency {
  count: number;
  p50Ms: number;
  p99Ms: number;
  perSecond: number;
}

export interface ClaimsResult {
  catalogued: number;
  clients: number;
  /** check + prove pairs. */
  pairs: Latency;
  /** Reference: GET /api/health (no work beyond HTTP, auth and logging) under the same load. */
  health: Latency;
  /** The same clients at a steady pace (open loop), pairs per second per client. */
  paced: { perClientPerSecond: number; pairs: Latency; health: Latency; serverMs: ServerTimes };
}

/** Runs `op` `count` times (after a warm-up) from `clients` concurrent loops; latency per op. */
async function closedLoop(clients: number, count: number, op: (i: number) => Promise<void>): Promise<Latency> {
  const warmup = 200;
  const times: number[] = [];
  let next = 0;
  let started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < count + warmup) {
        const i = next++;
        if (i === warmup) started = process.hrtime.bigint();
        const t = process.hrtime.bigint();
        await op(i);
        if (i >= warmup) times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { count: times.length, p50Ms: at(0.5), p99Ms: at(0.99), perSecond: times.length / seconds };
}

/**
 * `clients` clients each starting `op` at a steady `perClientPerSecond` pace for `seconds`
 * (open loop: a slow answer does not slow the arrivals). Latency counts from the planned
 * start, so waiting behind a slow request is included.
 */
async function openLoop(
  clients: number,
  perClientPerSecond: number,
  seconds: number,
  op: (i: number) => Promise<void>,
): Promise<Latency> {
  const times: number[] = [];
  const intervalMs = 1000 / perClientPerSecond;
  const begin = performance.now() + 100;
  let n = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      // Clients spread over one interval, so arrivals are even rather than in bursts.
      for (let planned = begin + (c * intervalMs) / clients; planned < begin + seconds * 1000; planned += intervalMs) {
        const wait = planned - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        await op(n++);
        times.push(performance.now() - planned);
      }
    }),
  );
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { count: times.length, p50Ms: at(0.5), p99Ms: at(0.99), perSecond: times.length / seconds };
}

/** Time the server spent on each request (its own log's responseTime), p50 and p99 per endpoint. */
export interface ServerTimes {
  check: { p50: number; p99: number };
  prove: { p50: number; p99: number };
}

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');

/**
 * check + prove round trips against the real server process on the embedded store, with
 * `catalogued` catalog entries (seeded) and `clients` concurrent clients proving files the
 * archive holds. Latency is per pair, as a clerk's browser sees it.
 */
export async function benchClaims(catalogued: number, clients = 64, count = 4000): Promise<ClaimsResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-claims-'));
  const env = { ...process.env, DATA_DIR: dataDir, STORE: 'embedded', MONGODB_URI: '' };
  try {
    const token = benchToken(env);
    await seedCatalog(dataDir, catalogued);
    const server = await startBenchServer(env);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    // node:http with kept-alive connections, like a browser's: fetch() costs the load generator,
    // which shares this machine's two cores with the server, several times more per request.
    const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
    const request = (
      method: string,
      p: string,
      body?: unknown,
      retried = false,
    ): Promise<{ status: number; text: string }> =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const req = http.request(
          `${server.url}${p}`,
          {
            method,
            agent,
            headers: payload
              ? { ...headers, 'content-length': Buffer.byteLength(payload) }
              : { authorization: headers.authorization },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.on('end', () => resolve({ status: res.statusCode!, text }));
          },
        );
        // A kept-alive connection the server closed just as it was reused: send once more.
        req.on('error', (err: NodeJS.ErrnoException) => {
          if (err.code === 'ECONNRESET' && req.reusedSocket && !retried)
            request(method, p, body, true).then(resolve, reject);
          else reject(err);
        });
        req.end(payload);
      });
    const post = async (p: string, body: unknown) => {
      const res = await request('POST', p, body);
      if (res.status >= 300) throw new Error(`${p} answered ${res.status}: ${res.text}`);
      return JSON.parse(res.text) as { status: string; claimId: string; ranges: Array<{ start: number; end: number }> };
    };
    try {
      // Real files to prove: 100 of 200 KB, uploaded the ordinary way.
      const files = Array.from({ length: 100 }, () => randomBytes(200 * 1024));
      for (const data of files) {
        const form = new FormData();
        form.append('file', new Blob([data]), 'seed.bin');
        const res = await fetch(`${server.url}/api/files`, {
          method: 'POST',
          headers: { authorization: headers.authorization },
          body: form,
        });
        if (res.status !== 201) throw new Error(`seeding upload answered ${res.status}`);
      }
      const checkBody = files.map((data) => ({
        md5: md5(data),
        sha256: createHash('sha256').update(data).digest('hex'),
        size: data.length,
        name: 'again.bin',
      }));

      const pair = async (i: number) => {
        const f = i % files.length;
        const check = await post('/api/uploads/check', checkBody[f]);
        if (check.status !== 'prove') throw new Error('expected a proof request');
        const proved = await post('/api/uploads/prove', {
          claimId: check.claimId,
          digests: check.ranges.map((r) => md5(files[f]!.subarray(r.start, r.end))),
        });
        if (proved.status !== 'duplicate') throw new Error('expected a duplicate');
      };
      const healthCheck = async () => {
        const res = await request('GET', '/api/health');
        if (res.status !== 200) throw new Error(`health answered ${res.status}`);
      };
      // The paced run first, on a fresh server: the saturating runs after it leave a backlog of
      // work (WAL growth, garbage) that would be charged to it.
      const perClientPerSecond = 2;
      const logStart = server.logLines().length;
      const pacedPairs = await openLoop(clients, perClientPerSecond, 20, pair);
      const serverMs = handlingTimes(server.logLines().slice(logStart), {
        check: /^POST \/api\/uploads\/check$/,
        prove: /^POST \/api\/uploads\/prove$/,
      });
      const paced = {
        perClientPerSecond,
        pairs: pacedPairs,
        health: await openLoop(clients, 2 * perClientPerSecond, 20, healthCheck),
        serverMs,
      };
      const pairs = await closedLoop(clients, count, pair);
      const health = await closedLoop(clients, count, healthCheck);
      agent.destroy();
      return { catalogued, clients, pairs, health, paced };
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
