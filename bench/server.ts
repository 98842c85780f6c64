import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** dist/, where the compiled server lives (this file runs as dist/bench/server.js). */
const dist = new URL('../', import.meta.url).pathname;

/** The Node flags `npm start` runs the server with (package.json "serve"), so we measure what users run. */
export function serveFlags(): string[] {
  return serveScript().filter((word) => word.startsWith('--'));
}

/** The environment `npm run serve` sets before the command (MALLOC_ARENA_MAX=2), unless the caller's sets it. */
function serveEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const set = serveScript()
    .filter((word) => /^[A-Z_]+=/.test(word))
    .map((word) => word.split('=') as [string, string]);
  return { ...Object.fromEntries(set.filter(([name]) => env[name] === undefined)), ...env };
}

function serveScript(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(dist, '../package.json'), 'utf8')) as { scripts: { serve: string } };
  return pkg.scripts.serve.split(/\s+/);
}

export interface BenchServer {
  url: string;
  process: ChildProcess;
  /** The whole lines the process printed on standard output (its JSON log) so far; until stop(). */
  logLines(): string[];
  /** How many whole lines the log has, without reading it into a string (an hour's log passes V8's 512 MB string limit). */
  logLineCount(): number;
  /** Peak resident memory so far (Linux), in MB. */
  peakRssMb(): number;
  /** Resident memory now (Linux), in MB. */
  rssMb(): number;
  /** CPU time (user + system, all threads) used so far (Linux), in seconds. */
  cpuSeconds(): number;
  /** The same, user and system (the kernel's work: file system, syncs, sockets) apart. */
  cpuTimes(): { user: number; system: number };
  /** Bytes the process caused to be written to disk so far (Linux: write_bytes of /proc/PID/io). */
  diskWrittenBytes(): number;
  /** Sends SIGTERM; resolves once the process has exited. */
  stop(): Promise<void>;
}

/** An account to make for a benchmark: its unit is `unit` in `city` (and `county`, `town` when given). */
export interface BenchAccount {
  username: string;
  role?: 'clerk' | 'admin';
  unit: string;
  city: string;
  county?: string;
  town?: string;
}

/** An account (by default the clerk `bench`) and an API token for it, made with the archive command. */
export function benchToken(
  env: NodeJS.ProcessEnv,
  account: BenchAccount = { username: 'bench', unit: 'bench', city: 'Bench' },
): string {
  const cli = path.join(dist, 'server/cli/archive.js');
  const { username, role = 'clerk', unit, city, county, town } = account;
  const where = [
    '--unit',
    unit,
    '--city',
    city,
    ...(county ? ['--county', county] : []),
    ...(town ? ['--town', town] : []),
  ];
  const added = spawnSync(process.execPath, [cli, 'user', 'add', username, '--role', role, ...where], {
    env,
    // Not "bench …": a password must not contain the username (the password policy).
    input: 'a long measuring password',
    encoding: 'utf8',
  });
  if (added.status !== 0) throw new Error(`archive user add ${username}: ${added.stderr}`);
  return spawnSync(process.execPath, [cli, 'token', 'create', username], { env, encoding: 'utf8' })
    .stdout.trim()
    .split('\n')
    .pop()!;
}

/**
 * The server's own time per request (its log's responseTime, whole ms), p50 and p99 for each of
 * `endpoints`, whose patterns match "METHOD /url".
 */
export function handlingTimes<K extends string>(
  lines: string[],
  endpoints: Record<K, RegExp>,
): Record<K, { p50: number; p99: number }> {
  const times = new Map<K, number[]>(Object.keys(endpoints).map((name) => [name as K, []]));
  for (const line of lines) {
    const m = /"method":"(\w+)","url":"([^"]*)".*"responseTime":(\d+)/.exec(line);
    const name = m && [...times.keys()].find((k) => endpoints[k].test(`${m[1]} ${m[2]}`));
    if (name) times.get(name)!.push(Number(m[3]));
  }
  const summary = (t: number[]) => {
    t.sort((a, b) => a - b);
    return { p50: t[Math.floor(0.5 * (t.length - 1))] ?? NaN, p99: t[Math.floor(0.99 * (t.length - 1))] ?? NaN };
  };
  return Object.fromEntries([...times].map(([name, t]) => [name, summary(t)])) as Record<
    K,
    { p50: number; p99: number }
  >;
}

/** Starts the real server process on a free loopback port. */
export async function startBenchServer(env: NodeJS.ProcessEnv): Promise<BenchServer> {
  // No scheduled fixity check: it would start a few seconds in and read the seeded data (whose
  // catalog entries mostly have no bytes) while the measurement runs.
  return startNodeServer(path.join(dist, 'server/main.js'), [], {
    VERIFY_INTERVAL_HOURS: '0',
    ...env,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
  });
}

/**
 * Starts a Node script (under dist/) with the server's Node flags; it must print `"port":N`
 * to stdout once it listens on 127.0.0.1. Its standard output goes to a file, not a pipe to this
 * process: busy generating load, this process would drain a pipe late, and the server (pino
 * retries a full pipe after 100 ms) would hold the lines in its memory, measured as its own.
 */
export async function startNodeServer(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<BenchServer> {
  // BENCH_SERVER_FLAGS adds Node flags, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile a contender.
  const extra = (process.env.BENCH_SERVER_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-log-'));
  const logFile = path.join(logDir, 'stdout.log');
  const out = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, [...serveFlags(), ...extra, script, ...args], {
    env: serveEnv(env),
    stdio: ['ignore', out, 'pipe'],
  });
  fs.closeSync(out);
  child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      fs.rmSync(logDir, { recursive: true, force: true });
      resolve();
    }),
  );
  const logLines = () => fs.readFileSync(logFile, 'utf8').split('\n').slice(0, -1); // whole lines only
  let port: string | undefined;
  while (!(port = /"port":(\d+)/.exec(fs.readFileSync(logFile, 'utf8'))?.[1])) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${path.basename(script)} exited ${child.exitCode ?? child.signalCode}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    process: child,
    logLines,
    logLineCount: () => {
      const bytes = fs.readFileSync(logFile);
      let n = 0;
      for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) n++;
      return n;
    },
    peakRssMb: () => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024,
    rssMb: () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024,
    cpuTimes: () => cpuTimesOf(child.pid!),
    diskWrittenBytes: () => Number(/^write_bytes: (\d+)$/m.exec(fs.readFileSync(`/proc/${child.pid}/io`, 'utf8'))![1]),
    cpuSeconds: () => {
      const { user, system } = cpuTimesOf(child.pid!);
      return user + system;
    },
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A process's CPU time so far (Linux), all threads: utime and stime, fields 14 and 15 of its stat, in ticks (100/s). */
function cpuTimesOf(pid: number): { user: number; system: number } {
  const fields = fs
    .readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /s, '')
    .split(' ');
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}
