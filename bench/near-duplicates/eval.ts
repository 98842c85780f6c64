import { Jieba } from '@node-rs/jieba';
import { dict } from '@node-rs/jieba/dict.js';
import { FeatureHash } from '../../server/services/near-duplicates/feature-hash.js';
import {
  areNearDuplicates,
  candidateJaccard,
  DEFAULT_SETTINGS,
  Fingerprinter,
} from '../../server/services/near-duplicates/fingerprint.js';
import type { NearDuplicateSettings, TextFingerprint } from '../../server/services/near-duplicates/fingerprint.js';
import { bandingFor, bandKeys, exactJaccard, minhash } from '../../server/services/near-duplicates/minhash.js';
import { hammingDistance, simhash } from '../../server/services/near-duplicates/simhash.js';
import { normalise, STOP_WORDS, textUnits } from '../../server/services/near-duplicates/text.js';
import { lookupKeys } from '../../server/services/near-duplicates/lookup-keys.js';
import { CorpusMissingError, loadCorpus, type CorpusDoc } from './corpus.js';
import { EDITS, Random, variant, type EditKind } from './edits.js';
import { FontMissingError, SAVED_FORMATS, textAfterSavingAs, type SavedFormat } from './formats.js';

/**
 * `npm run eval:neardup`: a labelled corpus of real text (Debian's Chinese and English poems,
 * sayings and manual pages) with edited copies as positives and other documents on the same
 * topics as negatives; precision, recall and F1 of SimHash and MinHash at several thresholds,
 * for short and long texts, and of the default rule. Some copies are also saved as Word or PDF
 * and read back as the archive reads them.
 */

/** Saved as another format after its text edits: the archive sees the text extracted from the file. */
type FormatChange = `format-${SavedFormat}`;

interface PoolDoc {
  id: string;
  /** The original a copy was made from (itself for an original): one cluster of near-duplicates. */
  cluster: string;
  group: string;
  language: 'zh' | 'en';
  text: string;
  edits: Array<EditKind | FormatChange>;
}

/** `EVAL_SEED` draws other copies and edits from the same corpus: the defaults were chosen on the first draw, others check them. */
const SEED = Number(process.env.EVAL_SEED ?? 20261123);
/** Format changes draw from a generator of their own: the copies and their text edits stay those of SEED alone. */
const FORMAT_SEED = 20261124;
/** About one edited copy in five is saved as docx or PDF (half each): enough pairs to read their recall. */
const FORMAT_CHANGE_SHARE = 0.2;

function buildPool(corpus: CorpusDoc[], rng: Random): PoolDoc[] {
  const byKind = (prefix: string) => corpus.filter((d) => d.id.startsWith(prefix));
  const sample = (docs: CorpusDoc[], n: number) => {
    const copy = [...docs];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy.slice(0, n);
  };
  const originals = [
    ...byKind('tang300/'),
    ...byKind('song100/'),
    ...sample(byKind('chinese/'), 500),
    ...byKind('zh-man/'),
    ...byKind('en-literature/'),
    ...byKind('en-riddles/'),
    ...byKind('en-fortunes/'),
    ...byKind('en-man/'),
  ];
  const pool: PoolDoc[] = [];
  for (const doc of originals) {
    pool.push({ ...doc, cluster: doc.id, edits: [] });
    if (rng.next() < 0.3) {
      const copies = 1 + rng.int(2);
      for (let c = 0; c < copies; c++) {
        const { text, edits } = variant(doc, originals, rng);
        pool.push({
          id: `${doc.id}#copy${c + 1}`,
          cluster: doc.id,
          group: doc.group,
          language: doc.language,
          text,
          edits,
        });
      }
    }
  }
  return pool;
}

/**
 * Some edited copies saved as docx or PDF, their text replaced by what the extractor reads back
 * from the file. Originals stay plain text, so each such copy pairs a text with a converted file.
 */
async function changeSomeFormats(pool: PoolDoc[], rng: Random): Promise<void> {
  for (const doc of pool) {
    if (doc.edits.length === 0 || rng.next() >= FORMAT_CHANGE_SHARE) continue;
    const format = rng.pick(SAVED_FORMATS);
    doc.text = await textAfterSavingAs(doc.text, format);
    doc.edits.push(`format-${format}`);
  }
}

interface Counts {
  tp: number;
  fp: number;
  positives: number;
}

const pairKey = (i: number, j: number) => (i < j ? `${i},${j}` : `${j},${i}`);

function scores(c: Counts): { precision: number; recall: number; f1: number } {
  const precision = c.tp + c.fp === 0 ? 1 : c.tp / (c.tp + c.fp);
  const recall = c.positives === 0 ? 1 : c.tp / c.positives;
  return { precision, recall, f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall) };
}

const fmt = (x: number) => x.toFixed(3);

/** The step's result; when a Debian package it needs is missing, exit 2 saying which to install. */
async function exitingIfMissing<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof CorpusMissingError || err instanceof FontMissingError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const corpus = await exitingIfMissing(loadCorpus);
  const pool = buildPool(corpus, new Random(SEED));
  const formatsStarted = performance.now();
  await exitingIfMissing(() => changeSomeFormats(pool, new Random(FORMAT_SEED)));
  const formatSeconds = (performance.now() - formatsStarted) / 1000;
  const started = performance.now();

  // Originals of the corpus that overlap by half or more may be one page under two names, or two
  // pages cut from one template (GNU coreutils' manual pages share their closing sections): a
  // person would judge each such pair. Pairs across two such originals' clusters are left out of
  // the scores, neither hits nor misses. (Merging the clusters, as this did before, chained
  // dozens of man pages into one cluster, and e.g. factor(1) and printenv(1) counted as a pair to find.)
  // Measured on shingles of 4 units (CJK characters or words), as when the pairs left out were
  // chosen, whatever shingles the rule itself cuts: the pairs scored stay the same.
  const base = await Fingerprinter.create();
  const unitHash = await FeatureHash.create();
  const baseFp = pool.map((d) => {
    const set = unitShingles(textUnits(normalise(d.text)), 4);
    return { ...base.fingerprint(d.text), shingles: set, minhash: minhash(set, unitHash) };
  });
  const overlapping = overlappingOriginals(pool, baseFp);
  const undecided = (i: number, j: number) => overlapping.has(clusterPair(pool[i]!.cluster, pool[j]!.cluster));

  // Truth: pairs within a cluster, by length class (short when either text is short).
  const positives = { short: 0, long: 0 };
  const clusters = new Map<string, number[]>();
  pool.forEach((d, i) => clusters.set(d.cluster, [...(clusters.get(d.cluster) ?? []), i]));
  const lengthClass = (fps: TextFingerprint[], i: number, j: number) =>
    fps[i]!.short || fps[j]!.short ? 'short' : 'long';
  for (const members of clusters.values())
    for (let a = 0; a < members.length; a++)
      for (let b = a + 1; b < members.length; b++) positives[lengthClass(baseFp, members[a]!, members[b]!)]++;
  const shortDocs = baseFp.filter((f) => f.short).length;
  console.log(
    `corpus: ${pool.length} documents (${pool.filter((d) => d.edits.length === 0).length} originals, ${pool.filter((d) => d.edits.length > 0).length} edited copies; ` +
      `${pool.filter((d) => d.language === 'zh').length} Chinese, ${pool.filter((d) => d.language === 'en').length} English; ${shortDocs} short, ${pool.length - shortDocs} long (${DEFAULT_SETTINGS.shortUnits} units)); ` +
      `${positives.short + positives.long} near-duplicate pairs (${positives.short} short, ${positives.long} long); ${overlapping.size} pairs of originals overlapping by half or more (4-unit shingles), pairs across them left out`,
  );
  const changed = (format: SavedFormat) => pool.filter((d) => d.edits.includes(`format-${format}`)).length;
  console.log(
    `format changes: ${changed('docx')} edited copies saved as docx and ${changed('pdf')} as PDF (CJK font embedded), their text read back by the archive's extractor (${formatSeconds.toFixed(1)} s)`,
  );
  const same = (i: number, j: number) => pool[i]!.cluster === pool[j]!.cluster;

  const report = (label: string, flagged: Iterable<[number, number]>, fps: TextFingerprint[]) => {
    const counts = {
      short: { tp: 0, fp: 0, positives: positives.short },
      long: { tp: 0, fp: 0, positives: positives.long },
    };
    for (const [i, j] of flagged) if (!undecided(i, j)) counts[lengthClass(fps, i, j)][same(i, j) ? 'tp' : 'fp']++;
    const all = {
      tp: counts.short.tp + counts.long.tp,
      fp: counts.short.fp + counts.long.fp,
      positives: positives.short + positives.long,
    };
    const line = (c: Counts) => {
      const s = scores(c);
      return `P=${fmt(s.precision)} R=${fmt(s.recall)} F1=${fmt(s.f1)}`;
    };
    console.log(`  ${label.padEnd(34)} short ${line(counts.short)}   long ${line(counts.long)}   all ${line(all)}`);
    return scores(all);
  };

  // SimHash, all pairs by brute force (the index is tested on its own; here the measure itself).
  const hash = await FeatureHash.create();
  const jieba = Jieba.withDict(dict);
  const simhashWith = (tokenise: (text: string) => string[]) =>
    pool.map((d) => {
      const weights = new Map<string, number>();
      for (const t of tokenise(d.text)) weights.set(t, (weights.get(t) ?? 0) + 1);
      return simhash(weights, hash);
    });
  const jiebaWords = (text: string) =>
    jieba
      .cut(normalise(text), false)
      .map((w) => w.trim())
      .filter((w) => /[\p{L}\p{N}]/u.test(w) && !STOP_WORDS.has(w));
  const hashes = { 'character bigrams': baseFp.map((f) => f.simhash), 'jieba words': simhashWith(jiebaWords) };
  const distances = new Map<string, Uint8Array>();
  for (const [name, list] of Object.entries(hashes)) {
    const d = new Uint8Array((pool.length * (pool.length - 1)) / 2);
    let k = 0;
    for (let i = 0; i < pool.length; i++)
      for (let j = i + 1; j < pool.length; j++) d[k++] = hammingDistance(list[i]!, list[j]!);
    distances.set(name, d);
  }
  const pairsWithin = function* (d: Uint8Array, max: number, onlyLong: boolean): Generator<[number, number]> {
    let k = 0;
    for (let i = 0; i < pool.length; i++)
      for (let j = i + 1; j < pool.length; j++, k++)
        if (d[k]! <= max && (!onlyLong || (!baseFp[i]!.short && !baseFp[j]!.short))) yield [i, j];
  };
  if (!process.env.EVAL_DEFAULT_ONLY)
    for (const [name, d] of distances) {
      console.log(`SimHash, 64 bits, features: ${name} (term frequency)`);
      for (const max of [1, 2, 3, 4, 5, 6]) report(`Hamming distance <= ${max}`, pairsWithin(d, max, false), baseFp);
    }

  // MinHash: LSH candidates, then the exact Jaccard of each candidate pair.
  if (!process.env.EVAL_DEFAULT_ONLY)
    for (const k of [2, 3, 4, 5]) {
      const fper = await Fingerprinter.create({ shingleSize: k, shingleLetters: 3 * k });
      const fps = k === 4 ? baseFp : pool.map((d) => fper.fingerprint(d.text));
      console.log(`MinHash, 128 permutations, ${k}-unit shingles (LSH bands, then exact Jaccard)`);
      for (const threshold of [0.5, 0.6, 0.7, 0.8, 0.9]) {
        const banding = bandingFor(threshold);
        const flagged = minhashPairs(
          fps,
          banding,
          (i, j) => exactJaccard(fps[i]!.shingles, fps[j]!.shingles) >= threshold,
        );
        report(`Jaccard >= ${threshold} (${banding.bands}x${banding.rows} bands)`, flagged, fps);
      }
    }

  // Short texts: the share of the shorter text's shingles found in the other (containment), which
  // stray lines and annotations added to a short text do not drown; all pairs with a short text.
  if (!process.env.EVAL_DEFAULT_ONLY)
    for (const k of [2, 3]) {
      const fper = await Fingerprinter.create({ shingleSize: k, shingleLetters: 3 * k });
      const fps = pool.map((d) => fper.fingerprint(d.text));
      console.log(`Containment of the shorter text's ${k}-unit shingles (all pairs with a short text)`);
      const shortOnes = fps.map((f, i) => [f, i] as const).filter(([f]) => f.short);
      for (const threshold of [0.6, 0.7, 0.8, 0.9]) {
        const flagged: Array<[number, number]> = [];
        for (let a = 0; a < shortOnes.length; a++) {
          for (let b = a + 1; b < shortOnes.length; b++) {
            const [fa, i] = shortOnes[a]!;
            const [fb, j] = shortOnes[b]!;
            if (containment(fa.shingles, fb.shingles) >= threshold) flagged.push([i, j]);
          }
        }
        report(`containment >= ${threshold}`, flagged, fps);
      }
    }

  // The default rule, through the pigeonhole index and the LSH bands as the archive will run it.
  const settings: NearDuplicateSettings = DEFAULT_SETTINGS;
  const fper = await Fingerprinter.create(settings);
  const fps = pool.map((d) => fper.fingerprint(d.text));
  // Pairs sharing a lookup key, the product's own (SimHash blocks of long texts, LSH bands).
  const candidates = pairsSharingAKey(
    fps,
    (f) => lookupKeys(f, fper.settings),
    () => true,
  );
  const lsh = candidateJaccard(settings);
  const flagged = candidates.filter(([i, j]) => areNearDuplicates(fps[i]!, fps[j]!, settings));
  console.log(
    `Default rule: two long texts Jaccard >= ${settings.minJaccard} or SimHash <= ${settings.maxHamming}, or one held in the other; a short text (< ${settings.shortUnits} units) held in the other or Jaccard >= ${settings.minShortJaccard}; ` +
      `held = containment >= ${settings.minContainment} in a text at most twice its size; ${settings.shingleSize}-character or ${settings.shingleLetters}-letter shingles; ` +
      `candidates from the 4x16-bit SimHash blocks and the LSH bands (${bandingFor(lsh.short).bands}x${bandingFor(lsh.short).rows} for short texts, ${bandingFor(lsh.long).bands}x${bandingFor(lsh.long).rows} for long)`,
  );
  const result = report('default', flagged, fps);
  console.log(
    `  (${flagged.filter(([i, j]) => undecided(i, j)).length} pairs found across originals overlapping by half or more, not scored)`,
  );
  printRecallByEdit(pool, clusters, flagged);
  console.log(
    `(${pool.length} documents, ${candidates.length} candidate pairs, ${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
  console.log(`default: precision=${fmt(result.precision)} recall=${fmt(result.recall)} f1=${fmt(result.f1)}`);
}

/** Of the near-duplicate pairs with a copy that had each edit, how many the default rule found. */
function printRecallByEdit(pool: PoolDoc[], clusters: Map<string, number[]>, flagged: Array<[number, number]>): void {
  const found = new Set(flagged.map(([i, j]) => pairKey(i, j)));
  const kinds: Array<EditKind | FormatChange> = [...EDITS, ...SAVED_FORMATS.map((f) => `format-${f}` as const)];
  const byKind = new Map(kinds.map((kind) => [kind, { pairs: 0, found: 0 }]));
  for (const members of clusters.values()) {
    for (let a = 0; a < members.length; a++) {
      for (let b = a + 1; b < members.length; b++) {
        const [i, j] = [members[a]!, members[b]!];
        for (const kind of new Set([...pool[i]!.edits, ...pool[j]!.edits])) {
          const counts = byKind.get(kind)!;
          counts.pairs++;
          if (found.has(pairKey(i, j))) counts.found++;
        }
      }
    }
  }
  console.log('  recall by edit (near-duplicate pairs with a copy so edited):');
  for (const [kind, c] of byKind)
    console.log(
      `    ${kind.padEnd(14)} ${String(c.pairs).padStart(5)} pairs, ${String(c.found).padStart(5)} found   R=${fmt(c.pairs === 0 ? 1 : c.found / c.pairs)}`,
    );
}

function containment(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  if (small.size === 0) return large.size === 0 ? 1 : 0;
  let common = 0;
  for (const s of small) if (large.has(s)) common++;
  return common / small.size;
}

/** Pairs sharing an LSH band that pass `keep`. */
function minhashPairs(
  fps: TextFingerprint[],
  banding: { bands: number; rows: number },
  keep: (i: number, j: number) => boolean,
): Array<[number, number]> {
  return pairsSharingAKey(fps, (f) => bandKeys(f.minhash, banding), keep);
}

/** Pairs of fingerprints sharing at least one key that pass `keep`, each once. */
function pairsSharingAKey(
  fps: TextFingerprint[],
  keysOf: (f: TextFingerprint) => number[],
  keep: (i: number, j: number) => boolean,
): Array<[number, number]> {
  const buckets = new Map<number, number[]>();
  const seen = new Set<string>();
  const out: Array<[number, number]> = [];
  fps.forEach((f, i) => {
    for (const key of keysOf(f)) {
      const bucket = buckets.get(key);
      if (!bucket) {
        buckets.set(key, [i]);
        continue;
      }
      for (const j of bucket) {
        const pk = pairKey(i, j);
        if (seen.has(pk)) continue;
        seen.add(pk);
        if (keep(j, i)) out.push([j, i]);
      }
      bucket.push(i);
    }
  });
  return out;
}

const clusterPair = (a: string, b: string) => (a < b ? `${a}\n${b}` : `${b}\n${a}`);

/** Pairs of originals whose shingles overlap by half or more (copies or shared templates within the corpus), as `clusterPair` keys. */
/** Every run of k units (CJK characters or words), one string each; a text shorter than k is one. */
function unitShingles(units: readonly string[], k: number): Set<string> {
  const out = new Set<string>();
  if (units.length === 0) return out;
  if (units.length <= k) return out.add(units.join('\u0001'));
  for (let i = 0; i + k <= units.length; i++) out.add(units.slice(i, i + k).join('\u0001'));
  return out;
}

function overlappingOriginals(pool: PoolDoc[], fps: TextFingerprint[]): Set<string> {
  const originals = pool.map((d, i) => [d, i] as const).filter(([d]) => d.edits.length === 0);
  const subset = originals.map(([, i]) => fps[i]!);
  const pairs = minhashPairs(
    subset,
    bandingFor(0.5),
    (x, y) => exactJaccard(subset[x]!.shingles, subset[y]!.shingles) >= 0.5,
  );
  return new Set(pairs.map(([a, b]) => clusterPair(originals[a]![0].cluster, originals[b]![0].cluster)));
}

await main();
