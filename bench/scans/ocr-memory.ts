import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchToken, startBenchServer } from '../server.js';
import { childrenOf, cpuSeconds, kb, status } from './processes.js';
import { scanFiles } from './scan-files.js';

/**
 * `npm run bench:ocr-memory -- --dir DIR [--pages N]`: the memory of reading scans as `npm start`
 * runs it (the server's flags, the embedded store): each JPEG, PNG or TIFF of DIR (e.g. made by
 * `npm run corpus:scans -- --out DIR` or `npm run eval:ocr -- --keep DIR`) is uploaded and
 * fingerprinted, one after another, while the resident memory of the web server and of its
 * reading process are sampled every 50 ms. Prints the web server's peak (VmHWM) and its largest
 * sample while pages were read, the reading process's peak and its CPU seconds per page.
 */
const { values } = parseArgs({
  options: { dir: { type: 'string' }, pages: { type: 'string', default: '1000' } },
});
if (!values.dir) {
  console.error('usage: npm run bench:ocr-memory -- --dir DIR [--pages N]');
  process.exit(1);
}
const files = scanFiles(values.dir, /\.(jpe?g|tiff?|png)$/i, Number(values.pages));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-ocr-memory-'));
const env = {
  ...process.env,
  STORE: 'embedded',
  MONGODB_URI: '',
  DATA_DIR: dataDir,
  NEAR_DUPLICATE_POLL_SECONDS: '1',
  GC_INTERVAL_SECONDS: '0',
};
const cli = new URL('../../server/cli/archive.js', import.meta.url).pathname;
const fingerprinted = () =>
  (
    JSON.parse(
      spawnSync(process.execPath, [cli, 'near-duplicates', 'status', '--json'], { env, encoding: 'utf8' }).stdout,
    ) as { fingerprinted: number; skipped: number }
  ).fingerprinted;

const token = benchToken(env);
const server = await startBenchServer(env);
const pid = server.process.pid!;
const idleRss = server.rssMb();
let serverMaxMb = 0;
const reader = { pid: 0, peakMb: 0, cpu: 0 };
const sample = setInterval(() => {
  serverMaxMb = Math.max(serverMaxMb, kb(status(pid), 'VmRSS') / 1024);
  for (const child of childrenOf(pid)) {
    const text = status(child);
    reader.pid = child;
    reader.peakMb = Math.max(reader.peakMb, kb(text, 'VmHWM') / 1024);
    try {
      reader.cpu = cpuSeconds(child);
    } catch {
      // ended meanwhile
    }
  }
}, 50);
try {
  for (const [i, file] of files.entries()) {
    const form = new FormData();
    form.append('file', new Blob([fs.readFileSync(file)]), path.basename(file));
    const res = await fetch(`${server.url}/api/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    if (res.status !== 201) throw new Error(`upload of ${file}: ${res.status} ${await res.text()}`);
    const started = performance.now();
    while (fingerprinted() < i + 1) await new Promise((resolve) => setTimeout(resolve, 500));
    console.log(
      `${path.basename(file)}: fingerprinted in ${((performance.now() - started) / 1000).toFixed(1)} s; web server ${Math.round(serverMaxMb)} MB at most so far, reading process ${Math.round(reader.peakMb)} MB`,
    );
  }
} finally {
  clearInterval(sample);
  const serverPeak = server.peakRssMb();
  await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  console.log(
    `${files.length} scan(s): web server ${Math.round(idleRss)} MB at the start, at most ${Math.round(serverMaxMb)} MB sampled while pages were read, peak (VmHWM) ${Math.round(serverPeak)} MB; ` +
      `reading process peak (VmHWM) ${Math.round(reader.peakMb)} MB, ${(reader.cpu / Math.max(1, files.length)).toFixed(1)} CPU s/page (start and models included); ` +
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
}
