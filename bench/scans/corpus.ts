import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { CorpusDoc } from '../near-duplicates/corpus.js';
import { Random, variant, type EditKind } from '../near-duplicates/edits.js';
import { printPage, type Letterhead, type PageSpec } from './page.js';
import { printFigure, type FigureKind } from '../../test/support/figures.js';
import { drawSettings, scanPage, type ScanFormat, type ScanSettings } from './scan.js';

/**
 * The scanned evaluation corpus (issue 44, part 4): real texts of `npm run eval:neardup` printed
 * on A4 and scanned two or three times each. Labels: the scans of one page are re-scans of each
 * other; a page printed from an edited copy of another's text is an edited pair; different pages
 * under one letterhead are template negatives, which must not be paired on the letterhead alone.
 * Written to a directory with a manifest; images are never committed, the seed makes them again.
 */

export interface ScannedPage {
  id: string;
  /** The document the page's text came from: pages of one cluster are near-duplicates. */
  cluster: string;
  language: 'zh' | 'en';
  /** The letterhead's office, for pages printed under one. */
  template?: string;
  /** The edits made to the text before printing, for a page printed from an edited copy. */
  edits: EditKind[];
  /** A page with little text (a photograph, a seal, a drawing): paired on its image. */
  figure?: FigureKind;
  /** The printed text, in reading order. */
  text: string;
  scans: Scan[];
}

export interface Scan {
  /** Relative to the corpus directory. */
  file: string;
  format: ScanFormat;
  settings: ScanSettings;
  sha256: string;
}

export interface Manifest {
  seed: number;
  pages: ScannedPage[];
}

/** Two offices' letterheads: several pages are cut from each. */
const OFFICES = [
  { office: '某某县人民政府办公室文件', prefix: '某政办发' },
  { office: '某某县档案局文件', prefix: '某档发' },
];

export interface CorpusOptions {
  dir: string;
  /** Originals drawn from the documents; edited copies come on top (about one in three). */
  originals: number;
  seed: number;
  /** Scans of each page: two, or three for about one page in three. */
  minScans?: number;
  /** Pages with little text, on top of the text pages: photographs, seals and drawings in turn (none unless given). */
  figures?: number;
}

/** Chinese mostly (the archive's language), some English; short poems and long manual pages. */
function drawOriginals(documents: readonly CorpusDoc[], count: number, rng: Random): CorpusDoc[] {
  const zh = documents.filter((d) => d.language === 'zh');
  const en = documents.filter((d) => d.language === 'en');
  const drawn: CorpusDoc[] = [];
  const seen = new Set<string>();
  while (drawn.length < Math.min(count, documents.length)) {
    const from = (rng.next() < 0.75 && zh.length) || !en.length ? zh : en;
    const doc = rng.pick(from);
    if (seen.has(doc.id)) continue;
    seen.add(doc.id);
    drawn.push(doc);
  }
  return drawn;
}

/** A page to print, with its labels. */
export type PageToPrint = Omit<ScannedPage, 'text' | 'scans'> & { spec: PageSpec };

const FIGURE_KINDS: readonly FigureKind[] = ['photo', 'seal', 'drawing'];
/** Captions some figures carry: a few characters, as under a photograph in a report. */
const CAPTIONS = ['图1 县档案馆新馆外景', '二〇一九年三月', '附图 库房平面示意图'];

/** The figures' pages: a kind each in turn, drawn from their own seed so the text pages stay as they were. */
function figuresToPrint(
  count: number,
  seed: number,
): Array<Omit<ScannedPage, 'text' | 'scans'> & { figureSeed: number; caption?: string }> {
  const rng = new Random(seed ^ 0xf16);
  return Array.from({ length: count }, (_, i) => ({
    id: `f${i}`,
    cluster: `figure-${i}`,
    language: 'zh' as const,
    edits: [],
    figure: FIGURE_KINDS[i % FIGURE_KINDS.length]!,
    figureSeed: rng.int(2 ** 31),
    caption: rng.next() < 0.4 ? rng.pick(CAPTIONS) : undefined,
  }));
}

/**
 * The pages drawn from the documents: each original, and for about one in three an edited copy
 * printed after it; every other original under one of two letterheads.
 */
export function pagesToPrint(documents: readonly CorpusDoc[], originals: number, rng: Random): PageToPrint[] {
  const specs: PageToPrint[] = [];
  const drawn = drawOriginals(documents, originals, rng);
  let number = 1;
  drawn.forEach((doc, i) => {
    // Every other original is a 红头文件: two of one office, then two of the other.
    const office = i % 2 === 1 ? OFFICES[(i >> 2) % 2]! : undefined;
    const head: Letterhead | undefined = office && {
      office: office.office,
      number: `${office.prefix}〔2019〕${number++}号`,
    };
    specs.push({
      id: `p${i}`,
      cluster: doc.id,
      language: doc.language,
      template: office?.office,
      edits: [],
      spec: { body: doc.text, letterhead: head },
    });
    if (rng.next() < 0.35) {
      const edited = variant(doc, drawn, rng);
      specs.push({
        id: `p${i}e`,
        cluster: doc.id,
        language: doc.language,
        template: office?.office,
        edits: edited.edits,
        // The same document number: the edited copy is the same document printed again.
        spec: { body: edited.text, letterhead: head },
      });
    }
  });
  return specs;
}

/** The file name of a scan, by its format. */
export const scanFileName = (page: string, k: number, format: ScanFormat) =>
  `${page}-scan${k}.${format === 'jpeg' ? 'jpg' : format === 'tiff' ? 'tif' : 'pdf'}`;

export async function generateCorpus(documents: readonly CorpusDoc[], options: CorpusOptions): Promise<Manifest> {
  const rng = new Random(options.seed);
  fs.mkdirSync(options.dir, { recursive: true });
  const specs = pagesToPrint(documents, options.originals, rng);
  const pages: ScannedPage[] = [];
  /** Two or three scans of a printed page, written to the directory. */
  const scanned = async (png: Buffer, id: string): Promise<Scan[]> => {
    const scans: Scan[] = [];
    const count = (options.minScans ?? 2) + (rng.next() < 0.33 ? 1 : 0);
    for (let k = 0; k < count; k++) {
      const settings = drawSettings(rng);
      const seed = rng.int(2 ** 31);
      const bytes = await scanPage(png, settings, seed);
      const file = scanFileName(id, k + 1, settings.format);
      fs.writeFileSync(path.join(options.dir, file), bytes);
      scans.push({
        file,
        format: settings.format,
        settings,
        sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
      });
    }
    return scans;
  };
  for (const { spec, ...page } of specs) {
    const printed = await printPage(spec);
    const scans = await scanned(printed.png, page.id);
    pages.push({ ...page, text: printed.text, scans });
  }
  for (const { figureSeed, caption, ...page } of figuresToPrint(options.figures ?? 0, options.seed)) {
    const printed = await printFigure({ kind: page.figure!, seed: figureSeed, caption });
    pages.push({ ...page, text: printed.text, scans: await scanned(printed.png, page.id) });
  }
  const manifest: Manifest = { seed: options.seed, pages };
  fs.writeFileSync(path.join(options.dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** Pairs of scans by label: re-scans of one page, scans of a page and its edited copy, and template negatives. */
export function labelledPairs(manifest: Manifest): {
  rescans: Array<[string, string]>;
  edited: Array<[string, string]>;
  templateNegatives: Array<[string, string]>;
} {
  const rescans: Array<[string, string]> = [];
  const edited: Array<[string, string]> = [];
  const templateNegatives: Array<[string, string]> = [];
  const pages = manifest.pages;
  for (const page of pages)
    for (let a = 0; a < page.scans.length; a++)
      for (let b = a + 1; b < page.scans.length; b++) rescans.push([page.scans[a]!.file, page.scans[b]!.file]);
  for (let i = 0; i < pages.length; i++)
    for (let j = i + 1; j < pages.length; j++) {
      const [p, q] = [pages[i]!, pages[j]!];
      const into =
        p.cluster === q.cluster ? edited : p.template && p.template === q.template ? templateNegatives : null;
      if (into) for (const s of p.scans) for (const t of q.scans) into.push([s.file, t.file]);
    }
  return { rescans, edited, templateNegatives };
}
