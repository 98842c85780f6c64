import os from 'node:os';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { OCR_PAGE_PIXELS, type OcrSessionOptions } from '../../server/services/near-duplicates/ocr.js';
import { pageSize } from './engines.js';
import { nextReply } from './worker-reply.js';
import { scanFiles } from './scan-files.js';

/**
 * `npm run bench:ocr -- --dir DIR [--threads 2 --intra 1 --optimization all --pages N --page 1280x1800]`: how fast
 * the server's OCR (server/services/near-duplicates/ocr.ts, pages scaled to about 150 dpi) reads
 * the JPEG and TIFF scans of a corpus made by `npm run corpus:scans -- --out DIR`, with `threads`
 * worker threads each running one engine (one onnxruntime session pair) of `intra` intra-op
 * threads. Prints pages per second, CPU seconds per page (all threads of the process), the peak
 * resident memory and the load average before and after (a shared machine's other work slows it).
 * Each page is read once after a warm-up page per thread (the models' loading is not counted).
 */
const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    threads: { type: 'string', default: '2' },
    intra: { type: 'string', default: '1' },
    optimization: { type: 'string', default: 'all' },
    pages: { type: 'string', default: '1000' },
    page: { type: 'string', default: `${OCR_PAGE_PIXELS.width}x${OCR_PAGE_PIXELS.height}` },
  },
});
if (!values.dir) {
  console.error(
    'usage: npm run bench:ocr -- --dir DIR [--threads N] [--intra N] [--optimization all|extended|basic|disabled]',
  );
  process.exit(1);
}
const session: OcrSessionOptions = {
  intraOpThreads: Number(values.intra),
  graphOptimization: values.optimization as OcrSessionOptions['graphOptimization'],
  pagePixels: pageSize(values.page),
};
const files = scanFiles(values.dir, /\.(jpe?g|tiff?|png)$/i, Number(values.pages));
const threads = Number(values.threads);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const loadBefore = load();
const workers = Array.from(
  { length: threads },
  () => new Worker(new URL('./ocr-speed-thread.js', import.meta.url), { workerData: { session, warmUp: files[0] } }),
);
await Promise.all(workers.map((w) => nextReply(w)));
const cpuBefore = process.cpuUsage();
const started = performance.now();
let next = 0;
let characters = 0;
await Promise.all(
  workers.map(async (w) => {
    for (let i; (i = next++) < files.length;) {
      const answer = nextReply<{ chars: number }>(w);
      w.postMessage(files[i]);
      const { chars } = await answer; // awaited first: `characters += await …` would add to a stale sum
      characters += chars;
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
await Promise.all(workers.map((w) => w.terminate()));
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
console.log(
  `${files.length} pages, ${threads} thread(s) × intra-op ${session.intraOpThreads}, optimisation ${session.graphOptimization}, pages ≤ ${values.page}: ` +
    `${(files.length / seconds).toFixed(2)} pages/s, ${(cpuSeconds / files.length).toFixed(2)} CPU s/page, ` +
    `${characters} characters, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB; ` +
    `load average ${loadBefore} before, ${load()} after`,
);
