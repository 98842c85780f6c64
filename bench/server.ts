import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** dist/, where the compiled server lives (this file runs as dist/bench/server.js). */
const dist = new URL('../', import.meta.url).pathname;

/** The Node flags `npm start` runs the server with (package.json "serve"), so we measure what users run. */
function serveFlags(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(dist, '../package.json'), 'utf8')) as { scripts: { serve: string } };
  return pkg.scripts.serve.split(/\s+/).filter((word) => word.startsWith('--'));
}

export interface BenchServer {
  url: string;
  process: ChildProcess;
  /** Peak resident memory so far (Linux), in MB. */
  peakRssMb(): number;
  stop(): void;
}

/** A clerk account and an API token for it, made with the archive command. */
export function benchToken(env: NodeJS.ProcessEnv): string {
  const cli = path.join(dist, 'server/cli/archive.js');
  spawnSync(process.execPath, [cli, 'user', 'add', 'bench', '--role', 'clerk', '--unit', 'bench', '--city', 'Bench'], { env, input: 'bench password 1' });
  return spawnSync(process.execPath, [cli, 'token', 'create', 'bench'], { env, encoding: 'utf8' }).stdout.trim().split('\n').pop()!;
}

/** Starts the real server process on a free loopback port. */
export async function startBenchServer(env: NodeJS.ProcessEnv): Promise<BenchServer> {
  const child = spawn(process.execPath, [...serveFlags(), path.join(dist, 'server/main.js')], {
    env: { ...env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' },
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /"port":(\d+)/.exec(out);
      if (m) resolve(`http://127.0.0.1:${m[1]}`);
    });
    child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  return {
    url,
    process: child,
    peakRssMb: () => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024,
    stop: () => child.kill('SIGTERM'),
  };
}
