import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { hashPassword, verifyPassword } from '../server/services/password.js';
import { benchToken, startBenchServer, type BenchServer } from './server.js';
import type { Latency } from './abuse.js';

/** What anonymous password guessing from many addresses does to a clerk's login. */
export interface LoginsResult {
  guessers: number;
  seconds: number;
  /** One password check (scrypt, as the server's) in this process, alone, just before: what the machine gives now. */
  hashMs: number;
  /** The clerk's logins from its office address with nobody guessing (the reference). */
  idle: Latency;
  /** The same clerk's logins from the same address while the guessers guess. */
  during: Latency;
  /** First logins of accounts that never logged in anywhere, each from a new address, during the guessing (no target). */
  newcomers: Latency & { refused: number };
  /** The guesses' answers: 401 checked and wrong, 429 throttled, 503 refused as busy, other. */
  guesses: { wrong: number; throttled: number; busy: number; other: number };
  /** Audit events the guessing left (login_failed and login_throttled). */
  auditEvents: number;
  serverPeakRssMb: number;
}

const PASSWORD = 'a long measuring password'; // benchToken's
const CLERK = 'clerk';
const NEWCOMERS = 10;

function latency(ms: number[]): Latency {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { count: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) ?? NaN };
}

/** One login over `pool`; its status and time. */
async function login(pool: Pool, username: string, password: string): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  const res = await pool.request({
    method: 'POST',
    path: '/api/session',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  await res.body.text();
  return { status: res.statusCode, ms: performance.now() - start };
}

/**
 * `guessers` anonymous clients, each on its own loopback address (127.0.0.2, .3…: the server sees
 * the socket's address, trusting no header), guess passwords as fast as answers come for
 * `seconds`, never waiting as told: every fourth guess at the clerk's username, the others at
 * made-up names (each new, so no counter of its own slows it). Meanwhile the clerk, who logs in
 * from 127.0.0.1 (its office: it logged in there before), logs in up to `logins` times (those
 * that end while the guessing goes on are timed), and accounts
 * that never logged in make their first login, each from a new address. Embedded store, the
 * server's default settings. Target: the clerk's logins p99 <= 500 ms.
 */
export async function benchLogins(guessers: number, seconds: number, logins: number): Promise<LoginsResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-logins-'));
  const env = { ...process.env, DATA_DIR: dataDir, STORE: 'embedded', MONGODB_URI: '' };
  let server: BenchServer | undefined;
  const pools: Pool[] = [];
  const poolAt = (address: string) => {
    const pool = new Pool(server!.url, { connections: 1, localAddress: address, headersTimeout: 120_000 });
    pools.push(pool);
    return pool;
  };
  try {
    benchToken(env, { username: CLERK, unit: 'bench', city: 'Bench' });
    for (let i = 0; i < NEWCOMERS; i++) benchToken(env, { username: `newcomer${i}`, unit: 'bench', city: 'Bench' });
    const stored = await hashPassword(PASSWORD);
    const hashTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      await verifyPassword(PASSWORD, stored);
      hashTimes.push(performance.now() - start);
    }
    server = await startBenchServer(env);
    const office = poolAt('127.0.0.1');
    /** `n` logins, or as many as end before `until` (only those are kept: a login must be timed while guessed). */
    const clerkLogins = async (n: number, pauseMs: number, until = Infinity) => {
      const times: number[] = [];
      for (let i = 0; i < n && performance.now() < until; i++) {
        const { status, ms } = await login(office, CLERK, PASSWORD);
        if (status !== 201) throw new Error(`the clerk's login answered ${status}`);
        if (performance.now() <= until) times.push(ms);
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
      return times;
    };
    await clerkLogins(3, 50); // warm-up; the office becomes the clerk's known address
    const idle = latency(await clerkLogins(logins, 100));

    const guesses = { wrong: 0, throttled: 0, busy: 0, other: 0 };
    const end = performance.now() + seconds * 1000;
    const guessing = Array.from({ length: guessers }, async (_, g) => {
      const pool = poolAt(`127.0.0.${2 + g}`);
      for (let n = 0; performance.now() < end; n++) {
        const username = n % 4 === 0 ? CLERK : `guess-${g}-${n}`;
        const { status } = await login(pool, username, randomBytes(9).toString('base64url'));
        if (status === 401) guesses.wrong++;
        else if (status === 429) guesses.throttled++;
        else if (status === 503) guesses.busy++;
        else guesses.other++;
      }
    });
    // The guessing fills the server first, then the clerk and the newcomers come in.
    await new Promise((resolve) => setTimeout(resolve, Math.min(2000, (seconds * 1000) / 4)));
    const newcomerTimes: number[] = [];
    let refused = 0;
    const newcomers = (async () => {
      for (let i = 0; i < NEWCOMERS && performance.now() < end; i++) {
        const { status, ms } = await login(poolAt(`127.0.0.${100 + i}`), `newcomer${i}`, PASSWORD);
        if (status === 201) newcomerTimes.push(ms);
        else refused++;
      }
    })();
    // Spread over the guessing; a login still going when the guessing ends is not counted.
    const pause = Math.max(50, ((seconds * 1000) / 2 - 2000) / logins);
    const during = latency(await clerkLogins(logins, pause, end));
    await Promise.all([...guessing, newcomers]);
    await Promise.all(pools.map((p) => p.close()));
    const peak = server.peakRssMb();
    await server.stop();
    server = undefined;
    const db = (await import('better-sqlite3')).default(path.join(dataDir, 'archive.sqlite'), { readonly: true });
    const { n } = db
      .prepare("SELECT COUNT(*) AS n FROM audit WHERE action IN ('login_failed', 'login_throttled')")
      .get() as { n: number };
    db.close();
    return {
      guessers,
      seconds,
      hashMs: latency(hashTimes).p50Ms,
      idle,
      during,
      newcomers: { ...latency(newcomerTimes), refused },
      guesses,
      auditEvents: n,
      serverPeakRssMb: peak,
    };
  } finally {
    await Promise.all(pools.map((p) => p.close().catch(() => {})));
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
