import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CorpusMissingError, loadCorpus } from '../near-duplicates/corpus.js';
import { Random } from '../near-duplicates/edits.js';
import { characterErrors } from './cer.js';
import { pagesToPrint, scanFileName } from './corpus.js';
import { OCR_PAGE_PIXELS } from '../../server/services/near-duplicates/ocr.js';
import { ENGINE_NAMES, loadEngine, pageSize, type EngineName, type OcrEngine } from './engines.js';
import { FontMissingError, printPage } from './page.js';
import { drawSettings, scanPage, scannedImage, type ScanFormat } from './scan.js';

/**
 * `npm run eval:ocr [-- --pages N --dpi 150,300 --engines tesseract,paddle --page 1280x1800 --keep DIR]`: the
 * OCR candidates of issue 44 on scanned pages of the near-duplicate evaluation's real texts.
 * Each page is printed once and scanned at each resolution with the same drawn artefacts;
 * every engine reads every scan, two at a time on the machine's two cores. Prints the character
 * error rate per engine and resolution (Chinese and English apart), pages per second and CPU
 * seconds per page, and the load average before and after: on a shared machine a busy other
 * core halves pages per second, the figures are only worth reading at a quiet moment.
 */

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '4' },
    dpi: { type: 'string', default: '150,300' },
    engines: { type: 'string', default: ENGINE_NAMES.join(',') },
    seed: { type: 'string', default: '20261129' },
    /** Keep the scans in this directory (else a temporary one, removed). */
    keep: { type: 'string' },
    /** Engines read this many scans at once. */
    parallel: { type: 'string', default: String(Math.min(2, os.availableParallelism())) },
    /** Print each scan's CER, and what was read where it is over 20%. */
    verbose: { type: 'boolean', default: false },
    /** The largest page PaddleOCR reads (the server's default unless given). */
    page: { type: 'string', default: `${OCR_PAGE_PIXELS.width}x${OCR_PAGE_PIXELS.height}` },
  },
});
const PAGES = Number(values.pages);
const DPIS = values.dpi.split(',').map(Number);
const ENGINES = values.engines.split(',') as EngineName[];
const SEED = Number(values.seed);
const PARALLEL = Number(values.parallel);

interface ScanToRead {
  page: string;
  language: 'zh' | 'en';
  dpi: number;
  format: ScanFormat;
  file: string;
  text: string;
}

const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function scans(dir: string): Promise<ScanToRead[]> {
  const corpus = loadCorpus();
  const rng = new Random(SEED);
  const pages = pagesToPrint(corpus, PAGES, rng).slice(0, PAGES);
  const out: ScanToRead[] = [];
  for (const page of pages) {
    const printed = await printPage(page.spec);
    // One draw of artefacts per page, the resolution aside: 150 and 300 dpi differ in that alone.
    const seed = rng.int(2 ** 31);
    for (const dpi of DPIS) {
      const settings = drawSettings(new Random(seed), { dpi });
      const file = path.join(dir, scanFileName(`${page.id}-${dpi}dpi`, 1, settings.format));
      fs.writeFileSync(file, await scanPage(printed.png, settings, seed));
      out.push({ page: page.id, language: page.language, dpi, format: settings.format, file, text: printed.text });
    }
  }
  return out;
}

interface Reading {
  errors: number;
  characters: number;
  language: 'zh' | 'en';
}

/** Every scan read by one of `engines`, each reading one scan at a time. */
async function readAll(engines: OcrEngine[], todo: ScanToRead[]): Promise<Reading[]> {
  const readings: Reading[] = [];
  let next = 0;
  await Promise.all(
    engines.map(async (engine) => {
      while (next < todo.length) {
        const scan = todo[next++]!;
        const image = await scannedImage(fs.readFileSync(scan.file), scan.format);
        const text = await engine.recognise(image);
        const reading = { ...characterErrors(scan.text, text), language: scan.language };
        readings.push(reading);
        if (values.verbose) {
          const cer = reading.errors / reading.characters;
          console.log(`    ${path.basename(scan.file)} (${scan.language}): CER ${percent(cer)}`);
          if (cer > 0.2)
            console.log(
              `      printed: ${JSON.stringify(scan.text.slice(0, 300))}\n      read: ${JSON.stringify(text.slice(0, 300))}`,
            );
        }
      }
    }),
  );
  return readings;
}

const rate = (rs: Reading[]) => {
  const characters = rs.reduce((s, r) => s + r.characters, 0);
  return characters ? rs.reduce((s, r) => s + r.errors, 0) / characters : NaN;
};
const percent = (x: number) => (Number.isNaN(x) ? '  –  ' : `${(100 * x).toFixed(1)}%`);

async function main(): Promise<void> {
  const dir = values.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'scans-'));
  fs.mkdirSync(dir, { recursive: true });
  try {
    const started = performance.now();
    const todo = await scans(dir);
    const formats = (f: ScanFormat) => todo.filter((s) => s.format === f).length;
    console.log(
      `corpus: ${PAGES} pages (${todo.filter((s) => s.dpi === DPIS[0] && s.language === 'zh').length} Chinese), ` +
        `scanned at ${DPIS.join(' and ')} dpi: ${formats('jpeg')} JPEG, ${formats('tiff')} TIFF, ${formats('pdf')} PDF ` +
        `(${((performance.now() - started) / 1000).toFixed(1)} s, in ${dir}); seed ${SEED}`,
    );
    console.log(`cores: ${os.availableParallelism()}, engines reading ${PARALLEL} scans at once`);
    for (const name of ENGINES) {
      const loading = performance.now();
      const engines: OcrEngine[] = [];
      for (let i = 0; i < PARALLEL; i++) {
        const engine = await loadEngine(name, pageSize(values.page));
        if (engine) engines.push(engine);
      }
      if (!engines.length) {
        console.log(`${name}: absent (its npm packages are not installed)`);
        continue;
      }
      console.log(`${engines[0]!.name}: loaded ${PARALLEL} in ${((performance.now() - loading) / 1000).toFixed(1)} s`);
      for (const dpi of DPIS) {
        const load = loadAverage();
        const cpu = process.cpuUsage();
        const t0 = performance.now();
        const readings = await readAll(
          engines,
          todo.filter((s) => s.dpi === dpi),
        );
        const seconds = (performance.now() - t0) / 1000;
        const used = process.cpuUsage(cpu);
        const cpuPerPage = (used.user + used.system) / 1e6 / readings.length;
        console.log(
          `  ${String(dpi).padStart(3)} dpi: CER ${percent(rate(readings))} ` +
            `(zh ${percent(rate(readings.filter((r) => r.language === 'zh')))}, en ${percent(rate(readings.filter((r) => r.language === 'en')))}), ` +
            `${(readings.length / seconds).toFixed(2)} pages/s, ${cpuPerPage.toFixed(1)} CPU s/page; load average ${load} → ${loadAverage()}`,
        );
      }
      await Promise.all(engines.map((e) => e.close()));
    }
    console.log('targets (issue 44): CER ≤ 5% at 300 dpi, ≤ 10% at 150 dpi; ≥ 1 page/s on both cores');
  } finally {
    if (!values.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  // A Debian package the corpus needs is missing: exit 2 saying which to install, as eval:neardup does.
  if (err instanceof CorpusMissingError || err instanceof FontMissingError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
});
