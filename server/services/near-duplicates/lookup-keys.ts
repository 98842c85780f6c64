import { candidateJaccard } from './fingerprint.js';
import type { NearDuplicateSettings, TextFingerprint } from './fingerprint.js';
import { type Banding, bandingFor, bandKeys } from './minhash.js';
import { simhashBlocks } from './simhash.js';
import type { PageFingerprint } from '../../store/near-duplicates/port.js';

/**
 * Lookup keys are integers below 2^53 (exact in a JavaScript number, a SQLite INTEGER and a BSON
 * double, and compact in an index): the kind of key times 2^47, plus its value.
 */
const KIND = 2 ** 47;
const SIMHASH_BLOCK = 0;
const LONG_BAND = 1;
const SHORT_BAND = 2;
const PAGE_IMAGE_BLOCK = 3;

/**
 * The keys a fingerprint is found by: the SimHash's four 16-bit blocks (long texts: two SimHashes
 * within Hamming distance 3 agree on at least one whole block), the LSH bands of its MinHash for
 * the Jaccard threshold, and, for texts a short one could be held in, the bands for the lower
 * Jaccard such a pair can have.
 */
export function lookupKeys(fp: TextFingerprint, settings: NearDuplicateSettings): number[] {
  const bands = bandingsFor(settings);
  const keys: number[] = [];
  if (!fp.short)
    simhashBlocks(fp.simhash).forEach((value, block) => keys.push(SIMHASH_BLOCK * KIND + block * 2 ** 16 + value));
  for (const key of bandKeys(fp.minhash, bands.long)) keys.push(LONG_BAND * KIND + key);
  if (fp.units < 2 * settings.shortUnits)
    for (const key of bandKeys(fp.minhash, bands.short)) keys.push(SHORT_BAND * KIND + key);
  return keys;
}

/** The bandings of a fingerprinter's settings, worked out once (a search over every band width). */
const bandings = new WeakMap<NearDuplicateSettings, { long: Banding; short: Banding }>();
function bandingsFor(settings: NearDuplicateSettings): { long: Banding; short: Banding } {
  let found = bandings.get(settings);
  if (!found) {
    const lsh = candidateJaccard(settings);
    bandings.set(settings, (found = { long: bandingFor(lsh.long), short: bandingFor(lsh.short) }));
  }
  return found;
}

/** The pages paired on their images: those with a fingerprint (not blank) and little text. */
export function imagePages<Page extends PageFingerprint>(
  pages: readonly Page[],
  settings: NearDuplicateSettings,
): Page[] {
  return pages.filter((p) => p.hash !== null && p.units < settings.imageMaxUnits);
}

/** The four 16-bit blocks of each such page's image fingerprint: the keys it is found by. */
export function pageImageKeys(pages: readonly PageFingerprint[], settings: NearDuplicateSettings): number[] {
  const keys = new Set<number>();
  for (const page of imagePages(pages, settings))
    pageBlocks(page.hash!).forEach((value, block) => keys.add(pageBlockKey(block, value)));
  return [...keys];
}

/**
 * The keys to look such pages' matches up by: each block, and each block with one or two of its
 * bits flipped. Two fingerprints within 11 bits differ in at most two bits of one of their four
 * blocks (pigeonhole), so every pair within maxImageHamming ≤ 11 is found; a block and its 136
 * neighbours are 137 of 65,536 values, so about 0.8% of little-text pages come up per page.
 */
export function pageImageProbes(pages: readonly PageFingerprint[], settings: NearDuplicateSettings): number[] {
  if (settings.maxImageHamming > 11) throw new Error('maxImageHamming above 11: pages so far apart would not be found');
  const keys = new Set<number>();
  for (const page of imagePages(pages, settings))
    pageBlocks(page.hash!).forEach((value, block) => {
      keys.add(pageBlockKey(block, value));
      for (let i = 0; i < 16; i++) {
        keys.add(pageBlockKey(block, value ^ (1 << i)));
        for (let j = i + 1; j < 16; j++) keys.add(pageBlockKey(block, value ^ (1 << i) ^ (1 << j)));
      }
    });
  return [...keys];
}

const pageBlocks = (hash: string) => [0, 4, 8, 12].map((at) => parseInt(hash.slice(at, at + 4), 16));
const pageBlockKey = (block: number, value: number) => PAGE_IMAGE_BLOCK * KIND + block * 2 ** 16 + value;
