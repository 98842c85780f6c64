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

/**
 * The banding whose S-curve crosses 1/2 just below `threshold`, with every position used when it
 * can: pairs at the threshold become candidates with high probability (then their exact Jaccard
 * decides), pairs well below it rarely.
 */
export function bandingFor(threshold: number): Banding {
  let best: Banding = { bands: SIGNATURE_SIZE, rows: 1 };
  let bestScore = Infinity;
  for (let rows = 1; rows <= SIGNATURE_SIZE; rows++) {
    const bands = Math.floor(SIGNATURE_SIZE / rows);
    // Probability that a pair at the threshold becomes a candidate, and at 0.75 of it.
    const atThreshold = 1 - (1 - threshold ** rows) ** bands;
    const below = 1 - (1 - (0.75 * threshold) ** rows) ** bands;
    if (atThreshold < 0.97) continue;
    const score = below;
    if (score < bestScore) {
      bestScore = score;
      best = { bands, rows };
    }
  }
  return best;
}

/** The band keys of a signature: a candidate pair shares at least one. */
export function bandKeys(signature: Uint32Array, banding: Banding): string[] {
  const keys: string[] = [];
  for (let band = 0; band < banding.bands; band++) {
    const rows = signature.subarray(band * banding.rows, (band + 1) * banding.rows);
    keys.push(`${band}:${Array.from(rows, (v) => v.toString(36)).join('.')}`);
  }
  return keys;
}
