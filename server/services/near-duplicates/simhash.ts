import type { FeatureHash } from './feature-hash.js';

/** A 64-bit SimHash as 16 hexadecimal digits (the form it is stored and compared in). */
export type SimHash = string;

/**
 * Charikar's SimHash: each feature votes on every bit with its weight (+ where its hash has a 1,
 * − where a 0); the fingerprint keeps the sign of each sum. Similar texts share most weighted
 * features, so their fingerprints differ in few bits.
 */
export function simhash(weights: ReadonlyMap<string, number>, hash: FeatureHash): SimHash {
  const sums = new Float64Array(64);
  for (const [feature, weight] of weights) {
    const [hi, lo] = hash.hash(feature);
    for (let bit = 0; bit < 32; bit++) {
      sums[bit]! += (hi >>> (31 - bit)) & 1 ? weight : -weight;
      sums[32 + bit]! += (lo >>> (31 - bit)) & 1 ? weight : -weight;
    }
  }
  let hex = '';
  for (let nibble = 0; nibble < 16; nibble++) {
    let value = 0;
    for (let bit = 0; bit < 4; bit++) value = (value << 1) | (sums[nibble * 4 + bit]! > 0 ? 1 : 0);
    hex += value.toString(16);
  }
  return hex;
}

/** Bits in which two SimHashes differ. */
export function hammingDistance(a: SimHash, b: SimHash): number {
  let distance = 0;
  for (let i = 0; i < 16; i += 8) {
    let x = (parseInt(a.slice(i, i + 8), 16) ^ parseInt(b.slice(i, i + 8), 16)) >>> 0;
    while (x) {
      x &= x - 1;
      distance++;
    }
  }
  return distance;
}

/**
 * The fingerprint cut into 4 blocks of 16 bits (the pigeonhole index): two fingerprints within
 * Hamming distance 3 agree on at least one whole block.
 */
export function simhashBlocks(hash: SimHash): [number, number, number, number] {
  return [0, 1, 2, 3].map((i) => parseInt(hash.slice(i * 4, i * 4 + 4), 16)) as [number, number, number, number];
}
