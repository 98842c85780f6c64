import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** dist/, where the compiled server lives (this file runs as dist/bench/server.js). */
const dist = new URL('../', import.meta.url).pathname;

/** The Node flags `npm start` runs the server with (package.json "serve"), so we measure what users run. */
export function serveFlags(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(dist, '../package.json'), 'utf8')) as { scripts: { serve: string } };
  return pkg.scripts.serve.split(/\s+/).filter((word) => word.startsWith('--'));
}

export interface BenchServer {
  url: string;
  process: ChildProcess;
  /** What the process printed on standard output (its JSON log lines), so far. */
  logLines: string[];
  /** Peak resident memory so far (Linux), in MB. */
  peakRssMb(): number;
  /** CPU time (user + system, all threads) used so far (Linux), in seconds. */
  cpuSeconds(): number;
  /** Sends SIGTERM; resolves once the process has exited. */
  stop(): Promise<void>;
}

/** A clerk account and an API token for it, made with the archive command. */
export function benchToken(env: NodeJS.ProcessEnv): string {
  const cli = path.join(dist, 'server/cli/archive.js');
  spawnSync(process.execPath, [cli, 'user', 'add', 'bench', '--role', 'clerk', '--unit', 'bench', '--city', 'Bench'], { env, input: 'bench password 1' });
  return spawnSync(process.execPath, [cli, 'token', 'create', 'bench'], { env, encoding: 'utf8' }).stdout.trim().split('\n').pop()!;
}

/** Starts the real server process on a free loopback port. */
export async function startBenchServer(env: NodeJS.ProcessEnv): Promise<BenchServer> {
  return startNodeServer(path.join(dist, 'server/main.js'), [], { ...env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' });
}

/**
 * Starts a Node script (under dist/) with the server's Node flags; it must print `"port":N`
 * to stdout once it listens on 127.0.0.1.
 */
export async function startNodeServer(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<BenchServer> {
  // BENCH_SERVER_FLAGS adds Node flags, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile a contender.
  const extra = (process.env.BENCH_SERVER_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const child = spawn(process.execPath, [...serveFlags(), ...extra, script, ...args], { env });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  const logLines: string[] = [];
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    const lines = (partial + String(d)).split('\n');
    partial = lines.pop()!;
    logLines.push(...lines);
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /"port":(\d+)/.exec(out);
      if (m) resolve(`http://127.0.0.1:${m[1]}`);
    });
    child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
    child.once('exit', (code) => reject(new Error(`${path.basename(script)} exited ${code}`)));
  });
  return {
    url,
    process: child,
    logLines,
    peakRssMb: () => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024,
    cpuSeconds: () => {
      // Fields after the parenthesised command name; utime and stime are fields 14 and 15, in clock ticks (100/s).
      const fields = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    },
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
