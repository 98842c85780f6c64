import { createCipheriv, createHash, randomInt } from 'node:crypto';

/**
 * What the fault suites share to make a run replayable: its seed (FAULT_SEED, else a random one,
 * printed by each suite), a seeded generator, and content bytes derived from the seed.
 */

/** The run's seed: FAULT_SEED when given (to replay a printed one), else drawn. */
export function faultSeed(): number {
  return process.env.FAULT_SEED ? Number(process.env.FAULT_SEED) : randomInt(2 ** 31);
}

/** mulberry32: a small seeded generator, so a failing plan can be replayed. */
export function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Deterministic bytes for content `index` of a run (AES-CTR keystream: fast and seed-derived). */
export function contentBytes(seed: number, index: number, size: number, attempt = 0): Buffer {
  const key = createHash('sha256').update(`${seed}/${index}/${attempt}`).digest().subarray(0, 16);
  return createCipheriv('aes-128-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(size));
}
