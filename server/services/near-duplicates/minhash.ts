import type { FeatureHash } from './feature-hash.js';

/** Values in a MinHash signature: 128 permutations, cut into LSH bands below. */
export const SIGNATURE_SIZE = 128;

/** Seeds of the permutations, fixed so signatures stay comparable across processes and versions. */
const SEEDS = Uint32Array.from({ length: SIGNATURE_SIZE }, (_, i) => mix(0x9e3779b9 ^ Math.imul(i + 1, 0x85ebca6b)));

/** MurmurHash3's finaliser: a bijection on 32 bits that mixes every input bit into every output bit. */
function mix(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/**
 * Broder's MinHash: for each of 128 permutations of the shingles' hashes, the least value. Two
 * signatures agree in a position with probability equal to the Jaccard similarity of the sets.
 */
export function minhash(shingles: Iterable<string>, hash: FeatureHash): Uint32Array {
  const signature = new Uint32Array(SIGNATURE_SIZE).fill(0xffffffff);
  for (const shingle of shingles) {
    const x = hash.hash(shingle)[1];
    for (let i = 0; i < SIGNATURE_SIZE; i++) {
      const value = mix(x ^ SEEDS[i]!);
      if (value < signature[i]!) signature[i] = value;
    }
  }
  return signature;
}

/** The Jaccard similarity the signatures estimate: the share of positions where they agree. */
export function estimatedJaccard(a: Uint32Array, b: Uint32Array): number {
  let same = 0;
  for (let i = 0; i < SIGNATURE_SIZE; i++) if (a[i] === b[i]) same++;
  return same / SIGNATURE_SIZE;
}

/** |A ∩ B| / |A ∪ B| of two shingle sets (1 for two empty texts). */
export function exactJaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let common = 0;
  for (const s of small) if (large.has(s)) common++;
  return common / (a.size + b.size - common);
}

/** LSH banding: `bands` × `rows` signature positions (at most SIGNATURE_SIZE). */
export interface Banding {
  bands: number;
  rows: number;
}

/** The chance that a pair exactly at the threshold shares a band (then its exact Jaccard decides). */
export const BAND_DETECTION = 0.98;

/** The chance that a pair of Jaccard similarity `jaccard` shares at least one band. */
export function candidateChance(jaccard: number, { bands, rows }: Banding): number {
  return 1 - (1 - jaccard ** rows) ** bands;
}

/**
 * The banding for `threshold`: for each band width, the fewest bands that make a pair at the
 * threshold a candidate with BAND_DETECTION (every band is a key stored per document, so no more
 * than needed); of those, the one that least often makes pairs at half the threshold candidates
 * (each costs a comparison of two texts).
 */
export function bandingFor(threshold: number): Banding {
  let best: Banding | undefined;
  for (let rows = 1; rows <= SIGNATURE_SIZE; rows++) {
    const bands = Math.ceil(Math.log(1 - BAND_DETECTION) / Math.log(1 - threshold ** rows));
    if (!Number.isFinite(bands) || bands * rows > SIGNATURE_SIZE) continue;
    const banding = { bands: Math.max(1, bands), rows };
    if (!best || candidateChance(threshold / 2, banding) < candidateChance(threshold / 2, best)) best = banding;
  }
  // A threshold too high for any banding of the signature: every position its own band.
  return best ?? { bands: SIGNATURE_SIZE, rows: 1 };
}

/**
 * The band keys of a signature, one per band: the band's position times 2^40 plus a 40-bit hash of
 * its values (integers below 2^47, exact in a JavaScript number, a SQLite INTEGER and a BSON double).
 * A candidate pair shares at least one; two different bands collide by chance once in 2^40.
 */
export function bandKeys(signature: Uint32Array, banding: Banding): number[] {
  const keys: number[] = [];
  for (let band = 0; band < banding.bands; band++) {
    // Two independent 32-bit hashes of the band's values; 8 bits of one and all of the other.
    let high = mix(0x1b873593 + band);
    let low = mix(0xcc9e2d51 ^ band);
    for (let row = band * banding.rows; row < (band + 1) * banding.rows; row++) {
      const value = signature[row]!;
      high = mix(high ^ value);
      low = mix((low + Math.imul(value, 0x9e3779b1)) >>> 0);
    }
    keys.push(band * 2 ** 40 + (high & 0xff) * 2 ** 32 + low);
  }
  return keys;
}
