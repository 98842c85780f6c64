import { candidateJaccard } from './fingerprint.js';
import type { NearDuplicateSettings, TextFingerprint } from './fingerprint.js';
import { type Banding, bandingFor, bandKeys } from './minhash.js';
import { simhashBlocks } from './simhash.js';

/**
 * Lookup keys are integers below 2^53 (exact in a JavaScript number, a SQLite INTEGER and a BSON
 * double, and compact in an index): the kind of key times 2^47, plus its value.
 */
const KIND = 2 ** 47;
const SIMHASH_BLOCK = 0;
const LONG_BAND = 1;
const SHORT_BAND = 2;

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
