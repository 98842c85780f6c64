import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Fingerprinter, type TextFingerprint } from '../server/services/near-duplicates/fingerprint.js';
import { lookupKeys } from '../server/services/near-duplicates/lookup-keys.js';
import { SIGNATURE_SIZE } from '../server/services/near-duplicates/minhash.js';
import { hammingDistance } from '../server/services/near-duplicates/simhash.js';
import { openEmbeddedStore } from '../server/store/embedded.js';
import type { NearFingerprint } from '../server/store/near-duplicates/port.js';
import { Random } from './near-duplicates/edits.js';

export interface TimeSummary {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface NearDuplicateIndexResult {
  fingerprints: number;
  keys: number;
  /** Texts by length: long (SimHash blocks and bands), mid-length (a short text may be held in them: short bands too), short (bands only). */
  mix: { long: number; mid: number; short: number };
  batch: number;
  buildSeconds: number;
  /** The process's CPU time (user + system) of the build: what it costs whatever else the machine runs. */
  buildCpuSeconds: number;
  databaseMb: number;
  /** Rounds of the background service's size put on top of the full index. */
  incremental: { rounds: number; perRound: number; msPerRound: number };
  queries: number;
  index: TimeSummary;
  bruteForce: TimeSummary;
  /** The same queries' CPU time (user + system), each: a loaded machine's waits left out. */
  indexCpu: TimeSummary;
  bruteForceCpu: TimeSummary;
  /** Queries near a stored SimHash: what the index found within Hamming 3, and what a scan of all found. */
  simhash: { queries: number; foundByIndex: number; foundByScan: number; same: boolean };
  /** Queries whose signature agrees with a stored one in 85% of positions: found through the LSH bands. */
  lsh: { queries: number; found: number };
}

/** The background service's round: fingerprints of up to this many files are recorded together. */
const ROUND = 8;
const HAMMING = 3;

/**
 * The near-duplicate index of the embedded store with `count` fingerprints: built through
 * `nearDuplicates.put` in batches of `batch`, then candidate queries (the pigeonhole SimHash
 * blocks and the LSH bands, as the service asks them) against a brute-force Hamming scan of every
 * SimHash held in memory, in the same run. Fingerprints are drawn at random (uniform SimHashes and
 * signatures: the keys of real texts are as spread); queries are planted near stored ones.
 */
export async function benchNearDuplicateIndex(
  count: number,
  batch = 5000,
  queries = 1000,
): Promise<NearDuplicateIndexResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-neardup-'));
  const fingerprinter = await Fingerprinter.create();
  const rng = new Random(20261124);
  // What a scan needs, kept as compactly as a real one would: each SimHash as two 32-bit halves.
  const high = new Uint32Array(count);
  const low = new Uint32Array(count);
  const units = new Uint32Array(count);
  const mix = { long: 0, mid: 0, short: 0 };
  let keys = 0;
  try {
    const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
    // Only the store's work is timed: drawing the fingerprints and their keys is not the index's.
    let buildMs = 0;
    let buildCpuUs = 0;
    for (let first = 0; first < count; first += batch) {
      const fps: NearFingerprint[] = [];
      for (let i = first; i < Math.min(count, first + batch); i++) {
        high[i] = rng.next() * 2 ** 32;
        low[i] = rng.next() * 2 ** 32;
        units[i] = documentUnits(rng);
        const fp = textFingerprint(units[i]!, simhashOf(high[i]!, low[i]!), signatureOf(i), fingerprinter);
        if (fp.short) mix.short++;
        else if (fp.units < 2 * fingerprinter.settings.shortUnits) mix.mid++;
        else mix.long++;
        fps.push(stored(i, fp, fingerprinter));
        keys += fps.at(-1)!.keys.length;
      }
      const started = performance.now();
      const cpu = process.cpuUsage();
      await store.nearDuplicates.put(fps);
      buildMs += performance.now() - started;
      const used = process.cpuUsage(cpu);
      buildCpuUs += used.user + used.system;
    }
    const buildSeconds = buildMs / 1000;

    // Rounds of the service's size on top of the full index, as files keep arriving.
    const rounds = 200;
    let roundsMs = 0;
    for (let r = 0; r < rounds; r++) {
      const fps: NearFingerprint[] = [];
      for (let k = 0; k < ROUND; k++) {
        const id = count + r * ROUND + k;
        fps.push(
          stored(
            id,
            textFingerprint(
              documentUnits(rng),
              simhashOf(rng.next() * 2 ** 32, rng.next() * 2 ** 32),
              signatureOf(id),
              fingerprinter,
            ),
            fingerprinter,
          ),
        );
      }
      const started = performance.now();
      await store.nearDuplicates.put(fps);
      roundsMs += performance.now() - started;
    }
    const msPerRound = roundsMs / rounds;

    const indexTimes: number[] = [];
    const scanTimes: number[] = [];
    const indexCpu: number[] = [];
    const scanCpu: number[] = [];
    const cpuMs = (since: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(since);
      return (used.user + used.system) / 1000;
    };
    const simhash = { queries: 0, foundByIndex: 0, foundByScan: 0, same: true };
    const lsh = { queries: 0, found: 0 };
    for (let q = 0; q < queries; q++) {
      // Half near a stored fingerprint (a few SimHash bits flipped, 15% of the signature changed), half new.
      const near = q % 2 === 0;
      const base = rng.int(count);
      const [qHigh, qLow] = near
        ? flipBits(high[base]!, low[base]!, 1 + rng.int(HAMMING), rng)
        : [rng.next() * 2 ** 32, rng.next() * 2 ** 32];
      const signature = near ? perturb(signatureOf(base), 0.15, rng) : signatureOf(count * 2 + q);
      const fp = textFingerprint(
        near ? units[base]! : documentUnits(rng),
        simhashOf(qHigh, qLow),
        signature,
        fingerprinter,
      );
      const queryKeys = lookupKeys(fp, fingerprinter.settings);

      let t = performance.now();
      let cpu = process.cpuUsage();
      const candidates = await store.nearDuplicates.candidates('f'.repeat(24), queryKeys, 200);
      const close = fp.short
        ? []
        : candidates.filter((c) => c.simhash !== null && hammingDistance(c.simhash, fp.simhash) <= HAMMING);
      indexTimes.push(performance.now() - t);
      indexCpu.push(cpuMs(cpu));

      t = performance.now();
      cpu = process.cpuUsage();
      const scanned = fp.short
        ? []
        : scan(high, low, qHigh >>> 0, qLow >>> 0, units, fingerprinter.settings.shortUnits);
      scanTimes.push(performance.now() - t);
      scanCpu.push(cpuMs(cpu));

      if (!fp.short) {
        simhash.queries++;
        simhash.foundByIndex += close.length;
        simhash.foundByScan += scanned.length;
        const byIndex = close.map((c) => c.fileId).sort();
        const byScan = scanned.map(fileIdOf).sort();
        if (byIndex.join() !== byScan.join()) simhash.same = false;
      }
      if (near) {
        lsh.queries++;
        if (candidates.some((c) => c.fileId === fileIdOf(base))) lsh.found++;
      }
    }
    await store.close();
    return {
      fingerprints: count,
      keys,
      mix,
      batch,
      buildSeconds,
      buildCpuSeconds: buildCpuUs / 1e6,
      databaseMb: fs.statSync(path.join(dataDir, 'archive.sqlite')).size / 1e6,
      incremental: { rounds, perRound: ROUND, msPerRound },
      queries,
      index: summary(indexTimes),
      bruteForce: summary(scanTimes),
      indexCpu: summary(indexCpu),
      bruteForceCpu: summary(scanCpu),
      simhash,
      lsh,
    };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const fileIdOf = (i: number) => i.toString(16).padStart(24, '0');

/**
 * A document's length in units, as an archive's might be spread: mostly letters and reports of a
 * page or more (1,000-20,000 units), a tenth of 500-999 units, a twentieth short notes.
 */
function documentUnits(rng: Random): number {
  const x = rng.next();
  if (x < 0.05) return 50 + rng.int(450);
  if (x < 0.15) return 500 + rng.int(500);
  return 1000 + rng.int(19000);
}

function simhashOf(high: number, low: number): string {
  return (high >>> 0).toString(16).padStart(8, '0') + (low >>> 0).toString(16).padStart(8, '0');
}

/** A stored fingerprint's MinHash signature, made again from its number (1M signatures would not fit in memory). */
function signatureOf(i: number): Uint32Array {
  const rng = new Random(i * 7919 + 17);
  return Uint32Array.from({ length: SIGNATURE_SIZE }, () => rng.next() * 2 ** 32);
}

function perturb(signature: Uint32Array, share: number, rng: Random): Uint32Array {
  const out = Uint32Array.from(signature);
  for (let i = 0; i < out.length; i++) if (rng.next() < share) out[i] = rng.next() * 2 ** 32;
  return out;
}

function flipBits(high: number, low: number, bits: number, rng: Random): [number, number] {
  const positions = new Set<number>();
  while (positions.size < bits) positions.add(rng.int(64));
  for (const p of positions) {
    if (p < 32) high = (high ^ (1 << p)) >>> 0;
    else low = (low ^ (1 << (p - 32))) >>> 0;
  }
  return [high, low];
}

function textFingerprint(
  unitCount: number,
  simhash: string,
  minhash: Uint32Array,
  fingerprinter: Fingerprinter,
): TextFingerprint {
  return {
    units: unitCount,
    short: unitCount < fingerprinter.settings.shortUnits,
    simhash,
    minhash,
    shingles: new Set(),
  };
}

function stored(i: number, fp: TextFingerprint, fingerprinter: Fingerprinter): NearFingerprint {
  return {
    fileId: fileIdOf(i),
    format: 'txt',
    skipped: null,
    units: fp.units,
    short: fp.short,
    simhash: fp.short ? null : fp.simhash,
    keys: lookupKeys(fp, fingerprinter.settings),
    pages: [],
    at: new Date(),
  };
}

/** Every long text's SimHash within Hamming distance 3 of the query: the brute-force reference. */
function scan(
  high: Uint32Array,
  low: Uint32Array,
  qHigh: number,
  qLow: number,
  units: Uint32Array,
  shortUnits: number,
): number[] {
  const found: number[] = [];
  for (let i = 0; i < high.length; i++) {
    if (popcount(high[i]! ^ qHigh) + popcount(low[i]! ^ qLow) <= HAMMING && units[i]! >= shortUnits) found.push(i);
  }
  return found;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

function summary(times: number[]): TimeSummary {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted[sorted.length - 1]! };
}
