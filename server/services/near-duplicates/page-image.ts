/**
 * A scanned page's perceptual fingerprint (docs/decisions/page-image-fingerprint.md): a DCT hash
 * (pHash) of the page's printed area, which a rescan of the same paper changes by a few bits
 * (turned ±2°, moved, scaled, lit unevenly, noisy, saved at another JPEG quality or resolution)
 * and a different page by about half of them.
 *
 * Before the transform the page is made independent of the scan: the paper's brightness is
 * estimated cell by cell (the lamp's fall-off across the glass) and divided out, and the page is
 * cut to the box that holds its ink, so the margins, the shift on the glass and the scale are
 * gone. What is left is resized to 32 × 32 and its 64 lowest frequencies after the mean, in
 * zigzag order, are compared with their median: one bit each.
 */

import type { InkBox, PageFingerprint } from '../../store/near-duplicates/port.js';
import type { NearDuplicateSettings } from './fingerprint.js';

/** One page of an image: its fingerprint, and the units of text recognised on it (a page with few is paired on its image). */
export type PageImage = PageFingerprint;

/** A greyscale raster, one byte a pixel, row by row. */
export interface GreyPage {
  data: Uint8Array;
  width: number;
  height: number;
}

const SIDE = 32;
/** Ink darker than this (0 paper, 1 black) is clear ink; lighter is noise, JPEG ringing or dust. */
const CLEAR_INK = 0.25;
/** A page with less clear ink than this share of its area is blank (a line of 12 pt text on A4 is about 0.3%). */
const BLANK_INK = 0.0005;

function clearInk(ink: Float32Array): number {
  let total = 0;
  for (const v of ink) if (v >= CLEAR_INK) total += v;
  return total;
}
/** Cells a side of the grid the paper's brightness is estimated on. */
const LIGHT_CELLS = 8;

/**
 * The page's fingerprint (16 hexadecimal digits), or null for a blank page: blank pages (the back
 * of a sheet, a separator) would all have the same one, and a pair of them says nothing.
 */
export function pageHash(page: GreyPage): string | null {
  return pageImageOf(page).hash;
}

/**
 * The page's fingerprint and where its ink lies on it (both null for a blank page): the box's
 * left, top, right and bottom edges in thousandths of the page's width and height.
 */
export function pageImageOf(page: GreyPage): Pick<PageFingerprint, 'hash' | 'box'> {
  const ink = levelled(page);
  if (clearInk(ink) < BLANK_INK * ink.length) return { hash: null, box: null };
  const box = inkBox(ink, page.width, page.height);
  const small = resized(ink, page.width, box, SIDE);
  const share = (at: number, side: number) => Math.round((1000 * at) / side);
  return {
    hash: hashOf(lowFrequencies(small, SIDE)),
    box: [
      share(box.left, page.width),
      share(box.top, page.height),
      share(box.right, page.width),
      share(box.bottom, page.height),
    ],
  };
}

/** Bits that differ between two page fingerprints (0 to 64). */
export function pageHashDistance(a: string, b: string): number {
  if (a.length !== 16 || b.length !== 16) throw new Error('a page fingerprint is 16 hexadecimal digits');
  let bits = 0;
  for (let i = 0; i < 16; i += 8) {
    let x = (parseInt(a.slice(i, i + 8), 16) ^ parseInt(b.slice(i, i + 8), 16)) >>> 0;
    while (x) {
      x &= x - 1;
      bits++;
    }
  }
  return bits;
}

/**
 * Ink darkness 0 (paper) to 1 (black), the paper's own brightness divided out. The paper is
 * measured in each cell of an 8 × 8 grid as its 90th percentile (text covers far less than a
 * tenth of a page), and a plane is fitted through the cells that are paper (within 25% of the
 * brightest): a lamp darker on one side leaves the paper at 0, and a photograph's dark cells,
 * which are not paper, do not bend it.
 */
function levelled({ data, width, height }: GreyPage): Float32Array {
  const cellW = width / LIGHT_CELLS;
  const cellH = height / LIGHT_CELLS;
  const cells: Array<{ x: number; y: number; level: number }> = [];
  const histogram = new Uint32Array(256);
  for (let cy = 0; cy < LIGHT_CELLS; cy++)
    for (let cx = 0; cx < LIGHT_CELLS; cx++) {
      histogram.fill(0);
      const [x0, x1, y0, y1] = [cx * cellW, (cx + 1) * cellW, cy * cellH, (cy + 1) * cellH].map(Math.round) as [
        number,
        number,
        number,
        number,
      ];
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) histogram[data[y * width + x]!]!++;
      const count = (x1 - x0) * (y1 - y0);
      let seen = 0;
      let level = 255;
      for (let v = 0; v < 256; v++) {
        seen += histogram[v]!;
        if (seen >= 0.9 * count) {
          level = v;
          break;
        }
      }
      cells.push({ x: (cx + 0.5) / LIGHT_CELLS, y: (cy + 0.5) / LIGHT_CELLS, level });
    }
  const brightest = Math.max(...cells.map((c) => c.level));
  const light = paperPlane(cells.filter((c) => c.level >= 0.75 * brightest)) ?? { a: brightest, b: 0, c: 0 };
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const paper = Math.max(16, light.a + (light.b * x) / width + (light.c * y) / height);
      out[y * width + x] = Math.min(1, Math.max(0, 1 - data[y * width + x]! / paper));
    }
  return out;
}

/** The least-squares plane level = a + b·x + c·y through the cells (x, y in 0..1), or null when they cannot fix one. */
function paperPlane(
  cells: ReadonlyArray<{ x: number; y: number; level: number }>,
): { a: number; b: number; c: number } | null {
  if (cells.length < 3) return null;
  // The normal equations, solved by Cramer's rule.
  let [n, sx, sy, sxx, syy, sxy, sz, sxz, syz] = [0, 0, 0, 0, 0, 0, 0, 0, 0];
  for (const { x, y, level: z } of cells) {
    n++;
    sx += x;
    sy += y;
    sxx += x * x;
    syy += y * y;
    sxy += x * y;
    sz += z;
    sxz += x * z;
    syz += y * z;
  }
  const det3 = (m: number[]) =>
    m[0]! * (m[4]! * m[8]! - m[5]! * m[7]!) -
    m[1]! * (m[3]! * m[8]! - m[5]! * m[6]!) +
    m[2]! * (m[3]! * m[7]! - m[4]! * m[6]!);
  const d = det3([n, sx, sy, sx, sxx, sxy, sy, sxy, syy]);
  if (Math.abs(d) < 1e-9) return null;
  return {
    a: det3([sz, sx, sy, sxz, sxx, sxy, syz, sxy, syy]) / d,
    b: det3([n, sz, sy, sx, sxz, sxy, sy, syz, syy]) / d,
    c: det3([n, sx, sz, sx, sxx, sxz, sy, sxy, syz]) / d,
  };
}

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/**
 * The box holding the page's ink: rows and columns cut where 1% of the ink lies beyond them, so
 * a speck of dust or the sensor's noise in a margin does not widen it. A blank page is kept whole.
 */
function inkBox(ink: Float32Array, width: number, height: number): Box {
  const rows = new Float64Array(height);
  const columns = new Float64Array(width);
  let total = 0;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      // Noise and JPEG ringing lift the paper a little: only clear ink counts.
      const v = ink[y * width + x]!;
      if (v < CLEAR_INK) continue;
      rows[y]! += v;
      columns[x]! += v;
      total += v;
    }
  if (total === 0) return { left: 0, top: 0, right: width, bottom: height };
  const cut = (mass: Float64Array): [number, number] => {
    let seen = 0;
    let first = 0;
    while (first < mass.length - 1 && (seen += mass[first]!) < 0.01 * total) first++;
    seen = 0;
    let last = mass.length - 1;
    while (last > first && (seen += mass[last]!) < 0.01 * total) last--;
    return [first, last + 1];
  };
  const [top, bottom] = cut(rows);
  const [left, right] = cut(columns);
  return { left, top, right, bottom };
}

/** The box resized to side × side by averaging (each output pixel the mean of the area it covers). */
function resized(ink: Float32Array, width: number, box: Box, side: number): Float64Array {
  const out = new Float64Array(side * side);
  const counts = new Float64Array(side * side);
  const w = box.right - box.left;
  const h = box.bottom - box.top;
  for (let y = box.top; y < box.bottom; y++) {
    const oy = Math.min(side - 1, Math.floor(((y - box.top) * side) / h));
    for (let x = box.left; x < box.right; x++) {
      const ox = Math.min(side - 1, Math.floor(((x - box.left) * side) / w));
      out[oy * side + ox]! += ink[y * width + x]!;
      counts[oy * side + ox]!++;
    }
  }
  for (let i = 0; i < out.length; i++) out[i] = counts[i] ? out[i]! / counts[i]! : 0;
  return out;
}

/** The 2-D DCT-II's 64 lowest frequencies after the mean (0, 0), in zigzag order. */
function lowFrequencies(pixels: Float64Array, side: number): Float64Array {
  const cos = new Float64Array(side * side);
  for (let k = 0; k < side; k++)
    for (let n = 0; n < side; n++) cos[k * side + n] = Math.cos((Math.PI * (2 * n + 1) * k) / (2 * side));
  const order = zigzag(65).slice(1);
  const span = Math.max(...order.map(([u, v]) => Math.max(u, v))) + 1;
  // Rows first (only the frequencies needed), then columns.
  const rows = new Float64Array(side * span);
  for (let y = 0; y < side; y++)
    for (let u = 0; u < span; u++) {
      let sum = 0;
      for (let x = 0; x < side; x++) sum += pixels[y * side + x]! * cos[u * side + x]!;
      rows[y * span + u] = sum;
    }
  return Float64Array.from(order, ([u, v]) => {
    let sum = 0;
    for (let y = 0; y < side; y++) sum += rows[y * span + u]! * cos[v * side + y]!;
    return sum;
  });
}

/** The first `count` (horizontal, vertical) frequencies in JPEG's zigzag order. */
function zigzag(count: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let s = 0; out.length < count; s++)
    for (let i = 0; i <= s && out.length < count; i++) out.push(s % 2 === 0 ? [s - i, i] : [i, s - i]);
  return out;
}

/** One bit per coefficient: above the median. */
function hashOf(coefficients: Float64Array): string {
  const median = [...coefficients].sort((a, b) => a - b)[coefficients.length >> 1]!;
  let hex = '';
  for (let nibble = 0; nibble < coefficients.length / 4; nibble++) {
    let value = 0;
    for (let bit = 0; bit < 4; bit++) value = (value << 1) | (coefficients[nibble * 4 + bit]! > median ? 1 : 0);
    hex += value.toString(16);
  }
  return hex;
}

/**
 * How far apart two pages are when they pair on their images (within maxImageHamming bits, their
 * ink in the same place), else null. Whether their text is little enough to be judged on images
 * is the caller's: files (detection.ts) and the pages of two scans (document-pairs.ts) alike.
 */
export function imageDistance(
  p: Pick<PageFingerprint, 'hash' | 'box'>,
  q: Pick<PageFingerprint, 'hash' | 'box'>,
  settings: NearDuplicateSettings,
): number | null {
  if (!p.hash || !q.hash) return null;
  const d = pageHashDistance(p.hash, q.hash);
  return d <= settings.maxImageHamming && samePlace(p.box, q.box, settings) ? d : null;
}

/**
 * Whether two pages' ink lies in the same place: every edge of one's box within maxInkShift of
 * the page from the other's. The fingerprint is of the ink cut out (so that a scanner's shift and
 * scale change nothing), and is the same for every page stamped with one seal, or carrying one
 * printed form, wherever on the sheet it is; a page scanned again keeps it where it was. A page
 * recorded without its box cannot be placed, and is not paired on its image.
 */
export function samePlace(a: InkBox | null, b: InkBox | null, settings: NearDuplicateSettings): boolean {
  if (!a || !b) return false;
  const slack = 1000 * settings.maxInkShift;
  return a.every((edge, i) => Math.abs(edge - b[i]!) <= slack);
}
