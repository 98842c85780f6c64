import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { DEFAULT_SETTINGS } from '../../server/services/near-duplicates/fingerprint.js';
import { NEAR_DUPLICATE_SETTINGS_RECORD } from '../../server/services/near-duplicates/detection.js';
import { openEmbeddedStore } from '../../server/store/embedded.js';
import { loadCorpus } from '../near-duplicates/corpus.js';
import { benchToken, startBenchServer, type BenchServer } from '../server.js';
import { childrenOf, cpuSeconds } from './processes.js';
import { scanFiles } from './scan-files.js';

/**
 * `npm run bench:refingerprint -- --dir DIR [--texts 500 --scans 30]`: what the first start after
 * an upgrade that changes the near-duplicate settings costs (every stored file fingerprinted
 * again, images read by OCR again). One server as `npm start` runs it (embedded store, OCR on) is
 * given `texts` text files (real texts of the near-duplicate corpus) and `scans` scans from DIR
 * (JPEG, TIFF or PDF, e.g. made by `npm run corpus:scans`) and fingerprints them; it is stopped,
 * the settings recorded with its index are put back to those of the version before
 * (`shingleLetters` and `maxInkShift` unknown to it), and it is started again. Prints the time from
 * that start until the queue is empty, the CPU seconds of the server and of its reading process,
 * per file, against the first fingerprinting of the same files; and how long a text file uploaded
 * just after the second start waits until search by content finds it (what the upgrade's backlog
 * makes a new upload wait).
 */
const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    texts: { type: 'string', default: '500' },
    scans: { type: 'string', default: '30' },
  },
});
if (!values.dir) {
  console.error('usage: npm run bench:refingerprint -- --dir DIR [--texts 500 --scans 30]');
  process.exit(1);
}
const scans = scanFiles(values.dir, /\.(jpe?g|tiff?|pdf)$/i, Number(values.scans));
const corpus = loadCorpus();
// Spread over the corpus (poems, sayings, manual pages of both languages), not its first group.
const step = Math.max(1, Math.floor(corpus.length / Number(values.texts)));
// Distinct texts only: a second upload of the same bytes is a duplicate, not a file to fingerprint.
const texts = [...new Map(corpus.filter((_, i) => i % step === 0).map((d) => [d.text, d])).values()].slice(
  0,
  Number(values.texts),
);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-refingerprint-'));
const dataDir = path.join(work, 'data');
const env = {
  ...process.env,
  STORE: 'embedded',
  MONGODB_URI: '',
  DATA_DIR: dataDir,
  NEAR_DUPLICATE_POLL_SECONDS: '1',
  OCR: 'on',
};
const clerk = benchToken(env);
const admin = benchToken(env, { username: 'bench-admin', role: 'admin', unit: 'bench', city: 'Bench' });

interface Status {
  fingerprinted: number;
  skipped: number;
  queued: number;
  running: number;
  failed: number;
}

async function status(server: BenchServer): Promise<Status> {
  const res = await fetch(`${server.url}/api/reports/near-duplicates?limit=1`, {
    headers: { authorization: `Bearer ${admin}` },
  });
  if (res.status !== 200) throw new Error(`near-duplicate report: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { status: Status }).status;
}

async function upload(server: BenchServer, name: string, bytes: Uint8Array): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([bytes]), name);
  const res = await fetch(`${server.url}/api/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${clerk}` },
    body: form,
  });
  if (res.status !== 201 && res.status !== 200) throw new Error(`upload of ${name}: ${res.status} ${await res.text()}`);
}

/** Whether the clerk's search by content finds `word` (the file holding it was read). */
async function found(server: BenchServer, word: string): Promise<boolean> {
  const res = await fetch(`${server.url}/api/files/search?q=${encodeURIComponent(word)}`, {
    headers: { authorization: `Bearer ${clerk}` },
  });
  if (res.status !== 200) throw new Error(`search: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { items: unknown[] }).items.length > 0;
}

/** The server's and its reading process's CPU seconds so far. */
const cpu = (server: BenchServer) => ({
  server: server.cpuSeconds(),
  reader: childrenOf(server.process.pid!).reduce((sum, pid) => sum + cpuSeconds(pid), 0),
});

/** Waits until every file is fingerprinted and nothing is queued or running; returns the seconds since `from`. */
async function emptied(server: BenchServer, files: number, from: number): Promise<number> {
  const deadline = performance.now() + 3_600_000;
  for (;;) {
    const s = await status(server);
    if (s.queued + s.running === 0 && s.fingerprinted + s.skipped + s.failed >= files)
      return (performance.now() - from) / 1000;
    if (performance.now() > deadline) throw new Error(`the queue did not empty in an hour: ${JSON.stringify(s)}`);
    await delay(500);
  }
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const files = texts.length + scans.length;
const perFile = (seconds: number, n: number) => `${((seconds / n) * 1000).toFixed(0)} ms`;
try {
  // The archive as the earlier version left it: every file fingerprinted under its settings.
  let server = await startBenchServer(env);
  let started = performance.now();
  let before = cpu(server);
  try {
    for (const [i, doc] of texts.entries()) await upload(server, `text-${i}.txt`, Buffer.from(doc.text));
    for (const scan of scans) await upload(server, path.basename(scan), fs.readFileSync(scan));
    const seconds = await emptied(server, files, started);
    const used = cpu(server);
    console.log(
      `first fingerprinting: ${texts.length} text files and ${scans.length} scans uploaded and fingerprinted in ${seconds.toFixed(1)} s; ` +
        `server ${(used.server - before.server).toFixed(1)} CPU s, reading process ${(used.reader - before.reader).toFixed(1)} CPU s ` +
        `(load ${load()})`,
    );
    console.log(`        status ${JSON.stringify(await status(server))}`);
  } finally {
    await server.stop();
  }

  // The settings the version before recorded: it knew neither the letters of a Latin shingle nor the ink's place.
  const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
  try {
    const { shingleLetters: _letters, maxInkShift: _ink, ...earlier } = DEFAULT_SETTINGS;
    if (!(await store.jobs.acquire(NEAR_DUPLICATE_SETTINGS_RECORD, 'bench', new Date(), 60_000)))
      throw new Error('the settings record is held');
    await store.jobs.release(NEAR_DUPLICATE_SETTINGS_RECORD, 'bench', earlier);
  } finally {
    await store.close();
  }

  // The first start after the upgrade.
  started = performance.now();
  server = await startBenchServer(env);
  const listening = (performance.now() - started) / 1000;
  before = cpu(server);
  try {
    const word = 'zqvupgradeprobe';
    await upload(server, 'after-upgrade.txt', Buffer.from(`上传于升级之后的文件 ${word} 一份新的通知`));
    const uploaded = performance.now();
    let waited: number | undefined;
    const deadline = performance.now() + 3_600_000;
    while (waited === undefined && performance.now() < deadline) {
      if (await found(server, word)) waited = (performance.now() - uploaded) / 1000;
      else await delay(500);
    }
    const seconds = await emptied(server, files + 1, started);
    const used = cpu(server);
    const logged = server.logLines().find((l) => l.includes('near-duplicate settings changed'));
    const queued = logged ? /"queued":(\d+)/.exec(logged)?.[1] : undefined;
    console.log(
      `after the upgrade: the server answered in ${listening.toFixed(1)} s, queued ${queued ?? 'nothing'} file(s) again, ` +
        `and its queue was empty ${seconds.toFixed(1)} s after the start; server ${(used.server - before.server).toFixed(1)} CPU s, ` +
        `reading process ${(used.reader - before.reader).toFixed(1)} CPU s (${perFile(used.server - before.server + used.reader - before.reader, files)} a file); ` +
        `a text file uploaded just after the start was found by search after ${waited?.toFixed(1) ?? 'never'} s (load ${load()})`,
    );
    console.log(`        status ${JSON.stringify(await status(server))}`);
  } finally {
    await server.stop();
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
