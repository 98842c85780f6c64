import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CorpusMissingError, loadCorpus } from '../near-duplicates/corpus.js';
import { generateCorpus, type Manifest } from './corpus.js';
import { FontMissingError } from './page.js';
import { scannedImage } from './scan.js';
import { closestPages, littleTextScan } from '../../server/services/near-duplicates/detection.js';
import {
  DEFAULT_SETTINGS,
  Fingerprinter,
  FingerprinterOnFirstUse,
  nearDuplicateMethod,
} from '../../server/services/near-duplicates/fingerprint.js';
import { PageRecogniser } from '../../server/services/near-duplicates/ocr.js';
import { InProcessTextReader, type Read } from '../../server/services/near-duplicates/text-reader.js';

/**
 * `npm run eval:scans [-- --dir DIR --originals N --figures N --seed S --max-image-hamming B --max-ink-shift S]`: the pairing of scanned
 * pages (issue 44, part 2) on the scanned corpus (bench/scans/corpus.ts): every scan is read as the
 * server reads it (OCR and the page's image fingerprint, in the reading process's code), and every
 * two scans are put to the server's rule at the default settings: their texts agree, or, for
 * pages with little text, their images do. Prints precision and recall of the re-scan pairs
 * (targets 0.95 and 0.90), with the template negatives (different pages under one letterhead)
 * and the pages of little text counted among the negatives; pairs of a page and its edited copy
 * are near-duplicates, not re-scans, and are counted apart.
 *
 * A scanned PDF is read as the JPEG it wraps: the server reads a PDF's scanned pages with OCR, but
 * does not yet keep their image fingerprints. The readings are kept in DIR/readings.json (by the scan's SHA-256), so a
 * second run with other thresholds reads nothing again.
 */
const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    originals: { type: 'string', default: '12' },
    figures: { type: 'string', default: '9' },
    seed: { type: 'string', default: '20261129' },
    /** Another image threshold than the default (bits of 64), to see what it would do. */
    'max-image-hamming': { type: 'string' },
    /** Another tolerance for where the ink lies (a share of the page's side). */
    'max-ink-shift': { type: 'string' },
  },
});

interface Reading {
  sha256: string;
  text: string | null;
  pages: Read['pageImages'];
}

async function main(): Promise<void> {
  const dir = values.dir ?? path.join(os.tmpdir(), `scans-eval-${values.seed}`);
  const manifestFile = path.join(dir, 'manifest.json');
  let manifest: Manifest;
  if (fs.existsSync(manifestFile)) manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest;
  else {
    console.log(`making the corpus in ${dir}…`);
    manifest = await generateCorpus(loadCorpus(), {
      dir,
      originals: Number(values.originals),
      figures: Number(values.figures),
      seed: Number(values.seed),
    });
  }
  const fingerprinter = await Fingerprinter.create();
  const reader = new InProcessTextReader(new FingerprinterOnFirstUse(DEFAULT_SETTINGS), new PageRecogniser());
  const cacheFile = path.join(dir, 'readings.json');
  const cache = new Map<string, Reading>(
    fs.existsSync(cacheFile)
      ? (JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as Reading[]).map((r) => [r.sha256, r])
      : [],
  );
  const scans = manifest.pages.flatMap((page) => page.scans.map((scan) => ({ page, scan })));
  const reads = new Map<string, { page: string; read: Read }>();
  let cpu = 0;
  let fresh = 0;
  for (const { page, scan } of scans) {
    let reading = cache.get(scan.sha256);
    // Read before pages kept the box of their ink: read again.
    if (reading?.pages.some((p) => p.box === undefined)) reading = undefined;
    if (!reading) {
      const started = process.cpuUsage();
      const image = await scannedImage(fs.readFileSync(path.join(dir, scan.file)), scan.format);
      const name = scan.format === 'tiff' ? 'scan.tif' : 'scan.jpg';
      const read = await reader.read(image, { name, contentType: '' });
      const used = process.cpuUsage(started);
      cpu += (used.user + used.system) / 1e6;
      fresh++;
      reading = { sha256: scan.sha256, text: 'skipped' in read ? null : read.text, pages: read.pageImages };
      cache.set(scan.sha256, reading);
      fs.writeFileSync(cacheFile, JSON.stringify([...cache.values()]));
    }
    reads.set(scan.file, {
      page: page.id,
      read:
        reading.text === null
          ? { skipped: 'no text', pageImages: reading.pages }
          : {
              text: reading.text,
              format: scan.format,
              fingerprint: fingerprinter.fingerprint(reading.text),
              recognised: true,
              pageImages: reading.pages,
              terms: [], // the evaluation pairs; it does not search
            },
    });
  }

  const byId = new Map(manifest.pages.map((p) => [p.id, p]));
  const settings = {
    ...DEFAULT_SETTINGS,
    ...(values['max-image-hamming'] ? { maxImageHamming: Number(values['max-image-hamming']) } : {}),
    ...(values['max-ink-shift'] ? { maxInkShift: Number(values['max-ink-shift']) } : {}),
  };
  const tally = {
    rescans: { all: 0, byText: 0, byImage: 0, zh: 0, zhFound: 0 },
    edited: { all: 0, paired: 0 },
    negatives: { all: 0, template: 0, figures: 0, paired: 0, templatePaired: 0, figuresPaired: 0, sealsPaired: 0 },
  };
  const falsePairs: string[] = [];
  const missed: string[] = [];
  const files = [...reads.keys()];
  for (let i = 0; i < files.length; i++)
    for (let j = i + 1; j < files.length; j++) {
      const [a, b] = [reads.get(files[i]!)!, reads.get(files[j]!)!];
      const [p, q] = [byId.get(a.page)!, byId.get(b.page)!];
      // The server's rule: texts first, then the images of pages with little text; two scans
      // with little text, on their images alone.
      const units = (r: Read) => ('skipped' in r ? 0 : r.fingerprint.units);
      const imagesDecide =
        littleTextScan(units(a.read), a.read.pageImages, settings) &&
        littleTextScan(units(b.read), b.read.pageImages, settings);
      const byText =
        !imagesDecide &&
        !('skipped' in a.read) &&
        !('skipped' in b.read) &&
        nearDuplicateMethod(a.read.fingerprint, b.read.fingerprint, settings) !== null;
      const byImage = !byText && closestPages(a.read.pageImages, b.read.pageImages, settings) !== null;
      const paired = byText || byImage;
      const label = `${files[i]} – ${files[j]}`;
      if (p.id === q.id) {
        tally.rescans.all++;
        if (p.language === 'zh') {
          tally.rescans.zh++;
          if (paired) tally.rescans.zhFound++;
        }
        if (byText) tally.rescans.byText++;
        else if (byImage) tally.rescans.byImage++;
        else missed.push(label);
      } else if (p.cluster === q.cluster) {
        tally.edited.all++;
        if (paired) tally.edited.paired++;
      } else {
        tally.negatives.all++;
        const template = p.template !== undefined && p.template === q.template;
        const figures = p.figure !== undefined && q.figure !== undefined;
        if (template) tally.negatives.template++;
        if (figures) tally.negatives.figures++;
        if (paired) {
          tally.negatives.paired++;
          if (template) tally.negatives.templatePaired++;
          if (figures) tally.negatives.figuresPaired++;
          if (p.figure === 'seal' && q.figure === 'seal') tally.negatives.sealsPaired++;
          falsePairs.push(`${label} (${byText ? 'text' : 'image'})`);
        }
      }
    }
  const found = tally.rescans.byText + tally.rescans.byImage;
  const precision = found / (found + tally.negatives.paired);
  const recall = found / tally.rescans.all;
  const figurePages = manifest.pages.filter((p) => p.figure).length;
  console.log(
    `corpus: ${manifest.pages.length} pages (${figurePages} with little text: photographs, seals, drawings), ${files.length} scans in ${dir}` +
      (fresh ? `; read ${fresh} scans, ${(cpu / fresh).toFixed(1)} CPU s a scan` : '; every scan read before'),
  );
  console.log(
    `settings: image pairing for pages under ${settings.imageMaxUnits} text units, within ${settings.maxImageHamming} of 64 bits, ` +
      `their ink's box within ${settings.maxInkShift} of the page; text shingles of ${settings.shingleSize} CJK characters or ${settings.shingleLetters} letters`,
  );
  console.log(
    `re-scan pairs: ${tally.rescans.all}, found ${found} (${tally.rescans.byText} by text, ${tally.rescans.byImage} by image); ` +
      `of pages in Chinese ${tally.rescans.zhFound} of ${tally.rescans.zh}, in English ${found - tally.rescans.zhFound} of ${tally.rescans.all - tally.rescans.zh}`,
  );
  console.log(
    `negatives: ${tally.negatives.all} pairs of different pages (${tally.negatives.template} template negatives, ${tally.negatives.figures} of two pages with little text); ` +
      `paired: ${tally.negatives.paired} (${tally.negatives.templatePaired} template, ${tally.negatives.figuresPaired} little text, of which ${tally.negatives.sealsPaired} two seals of one design)`,
  );
  console.log(`precision ${precision.toFixed(3)} (target >= 0.95), recall ${recall.toFixed(3)} (target >= 0.90)`);
  console.log(
    `precision without the pairs of two seals of one design (alike to any eye on a blank page): ${(found / (found + tally.negatives.paired - tally.negatives.sealsPaired)).toFixed(3)}`,
  );
  console.log(
    `edited-text pairs (near-duplicates, not re-scans): ${tally.edited.paired} of ${tally.edited.all} paired`,
  );
  for (const pair of falsePairs) console.log(`  paired, different pages: ${pair}`);
  for (const pair of missed) console.log(`  missed re-scan: ${pair}`);
}

try {
  await main();
} catch (err) {
  if (err instanceof CorpusMissingError || err instanceof FontMissingError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}
