import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/** dist/, where the compiled server lives (this file runs as dist/bench/ingest.js). */
const dist = new URL('../', import.meta.url).pathname;

/** The Node flags `npm start` runs the server with (package.json "serve"), so we measure what users run. */
function serveFlags(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(dist, '../package.json'), 'utf8')) as { scripts: { serve: string } };
  return pkg.scripts.serve.split(/\s+/).filter((word) => word.startsWith('--'));
}

function seconds(f: () => void): number {
  const t = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

/** Peak resident memory of a process so far (Linux), in MB. */
function peakRssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

async function makeFile(file: string, bytes: number): Promise<void> {
  const fd = fs.openSync(file, 'w');
  const block = 8 * 1024 * 1024;
  for (let written = 0; written < bytes; written += block) fs.writeSync(fd, randomBytes(Math.min(block, bytes - written)));
  fs.closeSync(fd);
}

export interface IngestResult {
  sizeMiB: number;
  md5sumSeconds: number;
  ingestSeconds: number;
  ratio: number;
  serverPeakRssMb: number;
}

/**
 * POST /api/files of one large file over loopback into the embedded store, against md5sum of
 * the same (cached) file: the server must at least hash every byte, so md5sum is the floor.
 */
export async function benchIngest(sizeMiB: number): Promise<IngestResult> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-'));
  const dataDir = path.join(work, 'data');
  const file = path.join(work, 'input.bin');
  const env = { ...process.env, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' };
  try {
    await makeFile(file, sizeMiB * 1024 * 1024);
    execFileSync('md5sum', [file]); // warm the page cache for both contenders
    const md5sumSeconds = Math.min(...[0, 1].map(() => seconds(() => execFileSync('md5sum', [file]))));

    const cli = path.join(dist, 'server/cli/archive.js');
    spawnSync(process.execPath, [cli, 'user', 'add', 'bench', '--role', 'clerk', '--unit', 'bench', '--city', 'Bench'], { env, input: 'bench password 1' });
    const token = spawnSync(process.execPath, [cli, 'token', 'create', 'bench'], { env, encoding: 'utf8' }).stdout.trim().split('\n').pop()!;

    const server = spawn(process.execPath, [...serveFlags(), path.join(dist, 'server/main.js')], { env: { ...env, LOG_LEVEL: 'info' } });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      server.stdout.on('data', (d: Buffer) => {
        out += d;
        const m = /"port":(\d+)/.exec(out);
        if (m) resolve(`http://127.0.0.1:${m[1]}`);
      });
      server.stderr.on('data', (d: Buffer) => process.stderr.write(d));
      server.once('exit', (code) => reject(new Error(`server exited ${code}`)));
    });
    try {
      let status = '';
      const ingestSeconds = seconds(() => {
        status = execFileSync('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-H', `Authorization: Bearer ${token}`, '-F', `file=@${file};type=application/octet-stream`, `${url}/api/files`], {
          encoding: 'utf8',
        });
      });
      if (status !== '201') throw new Error(`upload answered ${status}`);
      await delay(100);
      const serverPeakRssMb = peakRssMb(server.pid!);
      return { sizeMiB, md5sumSeconds, ingestSeconds, ratio: ingestSeconds / md5sumSeconds, serverPeakRssMb };
    } finally {
      server.kill('SIGTERM');
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
