import { FeatureHash } from './feature-hash.js';
import { estimatedJaccard, exactJaccard, minhash } from './minhash.js';
import { hammingDistance, simhash, type SimHash } from './simhash.js';
import { features, normalise, shingles, textUnits } from './text.js';

/** What makes two texts near-duplicates, and how texts are cut up to tell. */
export interface NearDuplicateSettings {
  /** Texts with fewer units (CJK characters and words) are short: SimHash is weak there. */
  shortUnits: number;
  /** Shingle size (CJK characters) for MinHash, one for every text, so any two texts compare. */
  shingleSize: number;
  /**
   * The same for other scripts, in letters and digits with the spaces dropped (text.ts, shingles):
   * OCR runs English words together differently on every scan, and a shingle of words would
   * differ each time.
   */
  shingleLetters: number;
  /** SimHash: at most this Hamming distance (long texts only). */
  maxHamming: number;
  /** MinHash: at least this Jaccard similarity of the shingle sets (two long texts). */
  minJaccard: number;
  /**
   * At least this share of the smaller text's shingles in the other, which must be no more than
   * twice as long: a text held in another (a stray line or a note added drowns the Jaccard of a
   * text this short, and a long text's shared part is what matters to the archivist).
   */
  minContainment: number;
  /**
   * A short text and its match: at least this Jaccard similarity. Two copies of a short text each
   * edited its own way (a line added to one, a sentence taken from the other) hold neither the
   * other, yet still share most of their shingles.
   */
  minShortJaccard: number;
  /**
   * A scanned page with fewer units of recognised text than this is paired on its image (a photo,
   * a seal, a drawing); one with more only on its text: pages cut from one template (a 红头文件's
   * letterhead and layout) have nearly the same image, and their letterhead alone is more text.
   */
  imageMaxUnits: number;
  /** Two such pages' image fingerprints: at most this many of their 64 bits differ. */
  maxImageHamming: number;
  /**
   * And their ink lies in the same place on the page: each edge of the box holding it at most
   * this share of the page's width or height from the other's. A scanner moves and scales the
   * sheet by a few millimetres; a seal stamped again on another sheet lands elsewhere, and one
   * design of seal looks the same wherever it is.
   */
  maxInkShift: number;
}

export const DEFAULT_SETTINGS: NearDuplicateSettings = {
  shortUnits: 500,
  shingleSize: 3,
  shingleLetters: 9,
  maxHamming: 3,
  minJaccard: 0.8,
  minContainment: 0.85,
  minShortJaccard: 0.5,
  imageMaxUnits: 20,
  maxImageHamming: 8,
  maxInkShift: 0.05,
};

/** A text field and how much its features count (the body by its term frequencies; short structured fields may count more). */
export interface TextField {
  text: string;
  weight?: number;
}

export interface TextFingerprint {
  /** Units of the normalised text (CJK characters and words of other scripts). */
  units: number;
  short: boolean;
  simhash: SimHash;
  minhash: Uint32Array;
  /** The shingles themselves, for the exact Jaccard of a candidate pair. */
  shingles: Set<string>;
}

export class Fingerprinter {
  private constructor(
    private readonly hash: FeatureHash,
    readonly settings: NearDuplicateSettings,
  ) {}

  static async create(settings: Partial<NearDuplicateSettings> = {}): Promise<Fingerprinter> {
    return new Fingerprinter(await FeatureHash.create(), { ...DEFAULT_SETTINGS, ...settings });
  }

  /** Its settings now, the fingerprinter itself when first asked for (see FingerprinterOnFirstUse). */
  static onFirstUse(settings: Partial<NearDuplicateSettings> = {}): FingerprinterOnFirstUse {
    return new FingerprinterOnFirstUse({ ...DEFAULT_SETTINGS, ...settings });
  }

  /** The fingerprints of a document: its body, and optionally weighted fields (title, record number). */
  fingerprint(body: string, fields: readonly TextField[] = []): TextFingerprint {
    const units = textUnits(normalise(body));
    const weights = new Map<string, number>();
    const add = (own: readonly string[], weight: number) => {
      for (const feature of features(own)) weights.set(feature, (weights.get(feature) ?? 0) + weight);
    };
    add(units, 1);
    for (const field of fields) add(textUnits(normalise(field.text)), field.weight ?? 1);
    const short = units.length < this.settings.shortUnits;
    const set = shingles(units, this.settings.shingleSize, this.settings.shingleLetters);
    return {
      units: units.length,
      short,
      simhash: simhash(weights, this.hash),
      minhash: minhash(set, this.hash),
      shingles: set,
    };
  }
}

/** How alike two fingerprinted texts are. */
export interface Similarity {
  hamming: number;
  estimatedJaccard: number;
  jaccard: number;
  /** The share of the smaller shingle set found in the other. */
  containment: number;
}

export function similarity(a: TextFingerprint, b: TextFingerprint): Similarity {
  const jaccard = exactJaccard(a.shingles, b.shingles);
  const [small, large] = a.shingles.size <= b.shingles.size ? [a.shingles, b.shingles] : [b.shingles, a.shingles];
  // |A ∩ B| from the Jaccard: J·(|A| + |B|) / (1 + J).
  const common = small.size === 0 ? 0 : Math.round((jaccard * (small.size + large.size)) / (1 + jaccard));
  return {
    hamming: hammingDistance(a.simhash, b.simhash),
    estimatedJaccard: estimatedJaccard(a.minhash, b.minhash),
    jaccard,
    containment: small.size === 0 ? (large.size === 0 ? 1 : 0) : common / small.size,
  };
}

/**
 * A fingerprinter made when a text is first fingerprinted. Its hash is WebAssembly (hash-wasm),
 * and its text normalisation loads opencc-js: a server's main thread, which fingerprints no text
 * (documents are read in a process of their own) and needs only the settings, never loads them.
 */
export class FingerprinterOnFirstUse {
  private made: Promise<Fingerprinter> | undefined;

  constructor(readonly settings: NearDuplicateSettings) {}

  /** Made once; a failure to make it is every caller's (each fingerprinting job fails with it). */
  get(): Promise<Fingerprinter> {
    return (this.made ??= Fingerprinter.create(this.settings));
  }
}

/** Why two texts are near-duplicates, or null when they are not. */
export type NearDuplicateMethod = 'simhash' | 'jaccard' | 'containment';

/**
 * The rule per length. Two long texts: their shingles overlap enough (Jaccard), their SimHashes
 * are close, or one is held in the other. Where a text is short (one changed word moves many
 * SimHash bits, and a stray line changes much of its Jaccard): the other holds nearly all of it,
 * or they share most of their shingles at the lower Jaccard for short texts. A text held in
 * another counts only where the other is at most twice its size.
 */
export function nearDuplicateMethod(
  a: TextFingerprint,
  b: TextFingerprint,
  settings: NearDuplicateSettings = DEFAULT_SETTINGS,
): NearDuplicateMethod | null {
  const s = similarity(a, b);
  const [small, large] = a.shingles.size <= b.shingles.size ? [a, b] : [b, a];
  const held = s.containment >= settings.minContainment && large.shingles.size <= 2 * small.shingles.size;
  if (a.short || b.short) return held ? 'containment' : s.jaccard >= settings.minShortJaccard ? 'jaccard' : null;
  if (s.jaccard >= settings.minJaccard) return 'jaccard';
  if (s.hamming <= settings.maxHamming) return 'simhash';
  return held ? 'containment' : null;
}

export function areNearDuplicates(
  a: TextFingerprint,
  b: TextFingerprint,
  settings: NearDuplicateSettings = DEFAULT_SETTINGS,
): boolean {
  return nearDuplicateMethod(a, b, settings) !== null;
}

/**
 * Where LSH must find candidates: the Jaccard similarity below which no pair can pass the rule.
 * A short text's pairs: the lower of its Jaccard and what containment c with the other at most
 * twice as large allows, J ≥ c·|A| / (|A| + 2|A| − c·|A|) = c / (3 − c). Long texts are found at
 * the Jaccard threshold and by their SimHash blocks; a long text held in another is reported when
 * those find the pair.
 */
export function candidateJaccard(settings: NearDuplicateSettings = DEFAULT_SETTINGS): { short: number; long: number } {
  return {
    short: Math.min(settings.minShortJaccard, settings.minContainment / (3 - settings.minContainment)),
    long: settings.minJaccard,
  };
}
