import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ImportReport } from '../client/importer/import-report.js';
import { makeFile, seconds } from './files.js';
import { seedReportData } from './seed.js';
import { benchToken, startBenchServer, type BenchServer } from './server.js';

const IMPORTER = new URL('../client/importer/main.js', import.meta.url).pathname;
const SEED_TIME_ZONE = 'Asia/Shanghai';

export interface ImportPart {
  name: string;
  files: number;
  bytes: number;
  md5sumSeconds: number;
  importSeconds: number;
  serverCpuSeconds: number;
  /** Of which the kernel's (file system, syncs, sockets). */
  serverSystemSeconds: number;
  /** What the server wrote to disk meanwhile (content, database, its log of changes). */
  serverDiskBytes: number;
  report: ImportReport;
}

export interface ImportBenchResult {
  parts: ImportPart[];
  md5sumSeconds: number;
  importSeconds: number;
  bytes: number;
  /** Throughput of the import over md5sum's on the same tree (both end to end). */
  ratio: number;
  /** The small files again, into an archive that already holds many (when asked for). */
  intoSeeded?: ImportPart & { seededFiles: number; seededEntries: number };
}

/** Small files, 4-128 KiB, a fifth of them copies of others (legacy archives are full of copies). */
function makeSmallFiles(dir: string, count: number): number {
  let bytes = 0;
  const originals: string[] = [];
  for (let i = 0; i < count; i++) {
    const file = path.join(
      dir,
      `卷${String(Math.floor(i / 100)).padStart(3, '0')}`,
      `档案-${String(i).padStart(5, '0')}.pdf`,
    );
    if (i % 100 === 0) fs.mkdirSync(path.dirname(file), { recursive: true });
    if (i % 5 === 4 && originals.length > 0) {
      fs.copyFileSync(originals[Math.floor(Math.random() * originals.length)]!, file);
    } else {
      fs.writeFileSync(file, randomBytes(4096 + Math.floor(Math.random() * (124 * 1024))));
      originals.push(file);
    }
    bytes += fs.statSync(file).size;
  }
  return bytes;
}

/** md5sum over every file of a tree, best of two after a warm-up: the page cache serves both contenders. */
function md5sumTree(dir: string): number {
  const run = () => execFileSync('sh', ['-c', 'find "$1" -type f -print0 | xargs -0 md5sum > /dev/null', 'sh', dir]);
  run();
  return Math.min(seconds(run), seconds(run));
}

function importTree(
  dir: string,
  server: string,
  token: string,
  journal: string,
): Promise<{ seconds: number; report: ImportReport }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(
      process.execPath,
      [IMPORTER, dir, '--server', server, '--token', token, '--journal', journal, '--json'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (status) => {
      const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
      if (status !== 0) return reject(new Error(`import exited ${status}: ${stderr.slice(-2000)}`));
      resolve({ seconds: elapsed, report: JSON.parse(stdout.trimEnd().split('\n').pop()!) as ImportReport });
    });
  });
}

/**
 * One import of `dir` into a running server, with a journal of its own (`journal`: a tree imported
 * again into another archive must not find its files done): its time, the server's CPU and disk
 * writes meanwhile.
 */
async function timedImport(server: BenchServer, dir: string, token: string, journal: string) {
  const cpu = server.cpuTimes();
  const written = server.diskWrittenBytes();
  const run = await importTree(dir, server.url, token, journal);
  return {
    importSeconds: run.seconds,
    serverCpuSeconds: server.cpuSeconds() - cpu.user - cpu.system,
    serverSystemSeconds: server.cpuTimes().system - cpu.system,
    serverDiskBytes: server.diskWrittenBytes() - written,
    report: run.report,
  };
}

/**
 * The small files again, into another archive that already holds `seededFiles` files (five ledger
 * entries each, as the reports bench seeds them): what a batch costs once the indexes it writes to
 * are large, the archive's everyday state.
 */
async function importIntoSeeded(
  small: string,
  files: number,
  bytes: number,
  md5sumSeconds: number,
  seededFiles: number,
  work: string,
): Promise<ImportPart & { seededFiles: number; seededEntries: number }> {
  // The seeded entries have no bytes behind them: no collection or fixity run looks at them.
  const env = {
    ...process.env,
    DATA_DIR: path.join(work, 'seeded'),
    STORE: 'embedded',
    MONGODB_URI: '',
    REPORT_TIME_ZONE: SEED_TIME_ZONE,
    GC_INTERVAL_SECONDS: '0',
    VERIFY_INTERVAL_HOURS: '0',
  };
  const seed = await seedReportData(env.DATA_DIR, seededFiles * 5, SEED_TIME_ZONE, 0);
  const token = benchToken(env);
  const server = await startBenchServer(env);
  try {
    return {
      name: `${files} small files into an archive of ${seed.files} files`,
      files,
      bytes,
      md5sumSeconds,
      seededFiles: seed.files,
      seededEntries: seed.entries,
      ...(await timedImport(server, small, token, path.join(work, 'seeded.jsonl'))),
    };
  } finally {
    await server.stop();
  }
}

/**
 * The bulk importer end to end over loopback into the embedded store (hashing, the dedup
 * handshake and uploads, in batches and with tus, the server's re-hash and commit), against md5sum over the same tree:
 * small files and large files as parts of their own, and the whole.
 */
export async function benchImport(
  smallFiles: number,
  largeFiles: number,
  largeMiB: number,
  seededFiles = 0,
): Promise<ImportBenchResult> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-import-'));
  const env = { ...process.env, DATA_DIR: path.join(work, 'data'), STORE: 'embedded', MONGODB_URI: '' };
  try {
    const small = path.join(work, 'small');
    const large = path.join(work, 'large');
    // Both folders exist, also when a part has no files (BENCH_IMPORT_SMALL=0 times the large ones only).
    fs.mkdirSync(small);
    const smallBytes = makeSmallFiles(small, smallFiles);
    fs.mkdirSync(large);
    for (let i = 0; i < largeFiles; i++) await makeFile(path.join(large, `扫描件-${i}.tif`), largeMiB * 1024 * 1024);
    const token = benchToken(env);
    const server = await startBenchServer(env);
    try {
      const parts: ImportPart[] = [];
      for (const [name, dir, files, bytes] of [
        [`${smallFiles} small files`, small, smallFiles, smallBytes],
        [`${largeFiles} files of ${largeMiB} MiB`, large, largeFiles, largeFiles * largeMiB * 1024 * 1024],
      ] as const) {
        const md5sumSeconds = md5sumTree(dir);
        parts.push({
          name,
          files,
          bytes,
          md5sumSeconds,
          ...(await timedImport(server, dir, token, path.join(work, `${path.basename(dir)}.jsonl`))),
        });
      }
      const md5sumSeconds = parts.reduce((s, p) => s + p.md5sumSeconds, 0);
      const importSeconds = parts.reduce((s, p) => s + p.importSeconds, 0);
      return {
        parts,
        md5sumSeconds,
        importSeconds,
        bytes: parts.reduce((s, p) => s + p.bytes, 0),
        ratio: md5sumSeconds / importSeconds,
        ...(seededFiles > 0
          ? {
              intoSeeded: await importIntoSeeded(
                small,
                smallFiles,
                smallBytes,
                parts[0]!.md5sumSeconds,
                seededFiles,
                work,
              ),
            }
          : {}),
      };
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
