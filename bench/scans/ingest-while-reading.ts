import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { makeFile, postFileWithCurl, seconds } from '../files.js';
import { benchToken, startBenchServer } from '../server.js';
import { childrenOf, cpuSeconds } from './processes.js';
import { scanFiles } from './scan-files.js';

/**
 * `npm run bench:ingest-reading -- --dir DIR [--mib 256 --rounds 4 --scans 6]`: issue 44's "OCR
 * gives way while files arrive: the upload benchmarks must not get slower while it runs". One
 * server as `npm start` runs it (embedded store, OCR on); rounds in turn (ABBA): a file of `mib`
 * MiB uploaded (POST /api/files, as the ingest bench) while the archive reads nothing, and the same
 * upload while its reading process is busy with `scans` scans from DIR (JPEG or TIFF, e.g. made by
 * `npm run corpus:scans`), sent just before and made new bytes each round. Prints each round's
 * seconds, the medians and their ratio, and the reading process's CPU seconds during the uploads
 * (what the reading still got meanwhile).
 */
const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    mib: { type: 'string', default: '256' },
    rounds: { type: 'string', default: '4' },
    scans: { type: 'string', default: '6' },
  },
});
if (!values.dir) {
  console.error('usage: npm run bench:ingest-reading -- --dir DIR [--mib 256 --rounds 4 --scans 6]');
  process.exit(1);
}
const scans = scanFiles(values.dir, /\.(jpe?g|tiff?)$/i, Number(values.scans));
if (scans.length === 0) throw new Error(`no JPEG or TIFF scans in ${values.dir}`);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-ingest-reading-'));
const big = path.join(work, 'upload.bin');
await makeFile(big, Number(values.mib) * 1024 * 1024);
execFileSync('md5sum', [big]); // in the page cache for every round
const env = {
  ...process.env,
  STORE: 'embedded',
  MONGODB_URI: '',
  DATA_DIR: path.join(work, 'data'),
  NEAR_DUPLICATE_POLL_SECONDS: '1',
  OCR: 'on',
};
const token = benchToken(env);
const server = await startBenchServer(env);
const serverPid = server.process.pid!;
const readerCpu = () => childrenOf(serverPid).reduce((sum, pid) => sum + cpuSeconds(pid), 0);

/** Waits until the reading process has worked 0.2 CPU s more (busy: true), or stood still for 3 s (idle). */
async function reading(busy: boolean): Promise<void> {
  const deadline = performance.now() + 600_000;
  const start = readerCpu();
  let last = start;
  let stillSince = performance.now();
  while (performance.now() < deadline) {
    await delay(250);
    const now = readerCpu();
    if (busy && now > start + 0.2) return;
    if (now > last) stillSince = performance.now();
    else if (!busy && performance.now() - stillSince > 3000) return;
    last = now;
  }
  throw new Error(`the reading process did not become ${busy ? 'busy' : 'idle'} in 10 minutes`);
}

async function sendScans(round: number): Promise<void> {
  for (const scan of scans) {
    // Bytes after the image's end make new content of the same page (decoders stop at its end).
    const bytes = Buffer.concat([fs.readFileSync(scan), Buffer.from(`round ${round} ${Math.random()}`)]);
    const form = new FormData();
    form.append('file', new Blob([bytes]), `${round}-${path.basename(scan)}`);
    const res = await fetch(`${server.url}/api/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    if (res.status !== 201) throw new Error(`upload of ${scan}: ${res.status} ${await res.text()}`);
  }
}

const upload = () =>
  seconds(() => {
    const code = postFileWithCurl(server.url, token, big);
    if (code !== '201' && code !== '200') throw new Error(`upload answered ${code}`);
  });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const times = { idle: [] as number[], reading: [] as number[] };
let readerCpuDuringUploads = 0;
try {
  upload(); // the first upload stores the file; every round's is a duplicate doing the same work
  const rounds = Number(values.rounds);
  for (let r = 0; r < rounds; r++) {
    for (const kind of r % 2 === 0 ? (['idle', 'reading'] as const) : (['reading', 'idle'] as const)) {
      if (kind === 'reading') {
        await sendScans(r);
        await reading(true);
      } else await reading(false);
      const cpuBefore = readerCpu();
      const s = upload();
      if (kind === 'reading') readerCpuDuringUploads += readerCpu() - cpuBefore;
      times[kind].push(s);
      console.log(`round ${r + 1} ${kind.padEnd(7)} ${s.toFixed(2)} s`);
    }
  }
  const [idle, busy] = [median(times.idle), median(times.reading)];
  console.log(
    `${values.mib} MiB uploaded ${times.idle.length} times each: median ${idle.toFixed(2)} s with nothing read, ` +
      `${busy.toFixed(2)} s while scans are read (${(idle / busy).toFixed(2)}× the speed); ` +
      `the reading process used ${readerCpuDuringUploads.toFixed(1)} CPU s during those uploads ` +
      `(OCR_THREADS ${process.env.OCR_THREADS ?? 'default'}); load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
} finally {
  await server.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
