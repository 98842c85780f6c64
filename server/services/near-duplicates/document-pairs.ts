import { similarityOf } from '../../../shared/reports.js';
import type { InkBox, NearDuplicatePair, PageFingerprint, PageMatch } from '../../store/near-duplicates/port.js';
import { nearDuplicateMethod, similarity, type NearDuplicateSettings, type TextFingerprint } from './fingerprint.js';
import { lookupKeys } from './lookup-keys.js';
import { imageDistance } from './page-image.js';
import { differences } from './snippets.js';
import type { Read } from './text-reader.js';

/**
 * A multi-page scan that repeats pages of another scan is one pair of documents, not a pair per
 * page (issue 44): the two scans' pages are compared one by one, matched one to one, and the pair
 * records how many pages each has and which match. Two scans of one page each are compared as
 * before, as whole files.
 */

/** One page of a scan as it is compared: its image fingerprint, its text's units and its text's fingerprint (if read). */
export interface ScanPage {
  hash: string | null;
  units: number;
  box: InkBox | null;
  text: { text: string; fingerprint: TextFingerprint } | null;
}

/** A page match with the measures that found it. */
interface Found extends PageMatch {
  hamming: number | null;
  jaccard: number;
  containment: number;
  snippets: [string, string];
}

/** Whether two files are compared page by page: both scans (pages fingerprinted), one of them of several pages. */
export function comparedByPage(a: readonly PageFingerprint[], b: readonly PageFingerprint[]): boolean {
  return a.length > 0 && b.length > 0 && Math.max(a.length, b.length) > 1;
}

/**
 * A scan's pages with their texts: those of `read` where it has them (a scan of one page: its
 * whole text), else only the stored images (a scan with no text, or one not read again).
 */
export function scanPages(pages: readonly PageFingerprint[], read: Read | undefined): ScanPage[] {
  const texts = !read || 'skipped' in read ? undefined : read.pageTexts;
  return pages.map((page, i) => ({
    ...page,
    text:
      texts?.[i] ??
      (pages.length === 1 && read && !('skipped' in read) ? { text: read.text, fingerprint: read.fingerprint } : null),
  }));
}

/**
 * The keys a multi-page scan is also found by: each page's own text keys (lookup-keys.ts), so
 * that another scan repeating some of its pages, whose whole text differs, is a candidate.
 * Pages with little text are found by their images' keys already.
 */
export function pageTextKeys(read: Read, settings: NearDuplicateSettings): number[] {
  if ('skipped' in read || !read.pageTexts) return [];
  const keys = new Set<number>();
  for (const page of read.pageTexts)
    if (page.fingerprint.units >= settings.imageMaxUnits)
      for (const key of lookupKeys(page.fingerprint, settings)) keys.add(key);
  return [...keys];
}

/**
 * The pages of `a` and `b` that are the same page, one to one, in a's page order. Two pages
 * match by the rule two files do (detection.ts): both with little text, on their images; else on
 * their texts. Only pages sharing a text lookup key are compared on their texts (as files are
 * found), so two scans of a thousand pages cost no million comparisons. Where a page matches
 * several, the most alike pairs are kept first.
 */
export function matchingPages(
  a: readonly ScanPage[],
  b: readonly ScanPage[],
  settings: NearDuplicateSettings,
): Found[] {
  const little = (p: ScanPage) => p.units < settings.imageMaxUnits;
  const byKey = new Map<number, number[]>();
  b.forEach((q, j) => {
    if (q.text && q.text.fingerprint.units > 0)
      for (const key of lookupKeys(q.text.fingerprint, settings)) byKey.set(key, [...(byKey.get(key) ?? []), j]);
  });
  const found: Found[] = [];
  a.forEach((p, i) => {
    if (p.text && p.text.fingerprint.units > 0) {
      const compared = new Set<number>();
      for (const key of lookupKeys(p.text.fingerprint, settings))
        for (const j of byKey.get(key) ?? []) {
          const q = b[j]!;
          if (compared.has(j) || (little(p) && little(q))) continue;
          compared.add(j);
          const method = nearDuplicateMethod(p.text.fingerprint, q.text!.fingerprint, settings);
          if (method) found.push(textMatch(i, j, p.text, q.text!, method));
        }
    }
    if (little(p))
      b.forEach((q, j) => {
        const d = little(q) ? imageDistance(p, q, settings) : null;
        if (d !== null)
          found.push({
            a: i + 1,
            b: j + 1,
            method: 'image',
            similarity: 1 - d / 64,
            hamming: d,
            jaccard: 0,
            containment: 0,
            snippets: ['', ''],
          });
      });
  });
  // One to one: the most alike first; ties by page order, so the same scans always match alike.
  found.sort((x, y) => y.similarity - x.similarity || x.a - y.a || x.b - y.b);
  const usedA = new Set<number>();
  const usedB = new Set<number>();
  return found
    .filter((m) => {
      if (usedA.has(m.a) || usedB.has(m.b)) return false;
      usedA.add(m.a);
      usedB.add(m.b);
      return true;
    })
    .sort((x, y) => x.a - y.a);
}

function textMatch(
  i: number,
  j: number,
  p: NonNullable<ScanPage['text']>,
  q: NonNullable<ScanPage['text']>,
  method: NonNullable<ReturnType<typeof nearDuplicateMethod>>,
): Found {
  const s = similarity(p.fingerprint, q.fingerprint);
  const measures = {
    hamming: p.fingerprint.short || q.fingerprint.short ? null : s.hamming,
    jaccard: round(s.jaccard),
    containment: round(s.containment),
  };
  return {
    a: i + 1,
    b: j + 1,
    method,
    similarity: round(similarityOf(measures)),
    ...measures,
    snippets: differences(p.text, q.text),
  };
}

/**
 * The pair of two scans compared page by page: `whole` where their whole texts agree (its method
 * and measures stand), else the most alike matching page's; null when neither.
 * `matches` are of own (`idA`'s) pages against the other's.
 */
export function documentPair(
  idA: string,
  idB: string,
  counts: { a: number; b: number },
  matches: readonly Found[],
  whole: NearDuplicatePair | null,
  foundAt: Date,
): NearDuplicatePair | null {
  if (!whole && matches.length === 0) return null;
  const flip = idA > idB;
  const oriented = matches.map((m) => ({ ...m, a: flip ? m.b : m.a, b: flip ? m.a : m.b }));
  const pages = {
    a: flip ? counts.b : counts.a,
    b: flip ? counts.a : counts.b,
    matches: oriented
      .map(({ a, b, method, similarity: s }) => ({ a, b, method, similarity: s }))
      .sort((x, y) => x.a - y.a),
  };
  if (whole) return { ...whole, pages };
  const best = oriented.reduce((x, y) => (y.similarity > x.similarity ? y : x));
  const [snippetA, snippetB] = flip ? [best.snippets[1], best.snippets[0]] : best.snippets;
  return {
    fileA: flip ? idB : idA,
    fileB: flip ? idA : idB,
    method: best.method,
    hamming: best.hamming,
    jaccard: best.jaccard,
    containment: best.containment,
    snippetA,
    snippetB,
    foundAt,
    pages,
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
