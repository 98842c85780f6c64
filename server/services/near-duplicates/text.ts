import { createRequire } from 'node:module';

/**
 * Text as the near-duplicate fingerprints see it: what two copies of one document keep in
 * common whatever was done to them on the way (another encoding of the same characters,
 * traditional or simplified script, case, spacing and punctuation).
 */

/**
 * Traditional characters (of Taiwan, Hong Kong or the standard set) to simplified: opencc-js,
 * loaded and made when a text is first normalised. Its dictionaries and the tables built from
 * them take about 15 MB of a process's memory, and the server's main thread, which loads this
 * module, normalises no text unless a near-duplicate pair is shown (documents are read in a
 * process of their own).
 */
let toSimplified: ((text: string) => string) | undefined;

function simplifier(): (text: string) => string {
  // opencc-js's bundled types do not resolve under NodeNext (the checker sees an error type): its
  // one function used here, typed.
  const { Converter } = createRequire(import.meta.url)('opencc-js') as {
    Converter: (o: { from: string; to: string }) => (text: string) => string;
  };
  return Converter({ from: 't', to: 'cn' });
}

/** Han characters (CJK ideographs, the extensions included) and the other scripts written without spaces. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
/**
 * A unit of text: one CJK character, or a run of other letters and digits (a word or a number).
 * CJK characters are letters too: the run stops before them, or "rtc中存储" would be one unit.
 */
const UNIT =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|(?:(?![\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])[\p{L}\p{N}])+/gu;

/** NFKC (full-width forms, compatibility characters), simplified script, lower case. */
export function normalise(text: string): string {
  toSimplified ??= simplifier();
  return toSimplified(text.normalize('NFKC')).toLowerCase();
}

/**
 * The text's units in order: each CJK character, and each word or number of the scripts that
 * separate words; punctuation, symbols and spacing dropped.
 */
export function textUnits(normalised: string): string[] {
  return normalised.match(UNIT) ?? [];
}

export function isCjk(unit: string): boolean {
  return CJK.test(unit);
}

/**
 * Common English words and Chinese function characters that say little about which document a
 * text is; SimHash features made of them only would be noise shared by every document.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  // English
  ...'a an and are as at be been but by can do does for from had has have he her his i if in into is it its may more most no not of on or our she so such than that the their them then there these they this those to was we were what when which who will with would you your'.split(
    ' ',
  ),
  // Chinese function characters
  ...'的 了 和 是 在 也 与 及 或 而 之 其 于 以 为 这 那 就 都 并 但 等 个 着 把 被 对 从 向 到 将 所 由'.split(' '),
]);

/**
 * SimHash features: for CJK text, character bigrams (two characters in a row: Chinese words are
 * mostly one or two characters, and bigrams need no dictionary); for other scripts, words. Stop
 * words are left out (a bigram only when both its characters are stop characters).
 */
export function features(units: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < units.length; i++) {
    const unit = units[i]!;
    if (!isCjk(unit)) {
      if (!STOP_WORDS.has(unit)) out.push(unit);
      continue;
    }
    const next = units[i + 1];
    if (next !== undefined && isCjk(next)) {
      if (!(STOP_WORDS.has(unit) && STOP_WORDS.has(next))) out.push(unit + next);
    } else if (!(i > 0 && isCjk(units[i - 1]!)) && !STOP_WORDS.has(unit)) out.push(unit); // a lone CJK character
  }
  return out;
}

/**
 * The shingles of a text: every run of units that says as much as `k` CJK characters, cut from
 * the text with its word breaks dropped. A run of another script counts by its letters and
 * digits, `letters` of them a shingle, whatever its spacing: OCR runs English words together or
 * splits them differently on every scan ("The countdownhadstalled", "The countdown hadstalled"),
 * as a CJK text has no spaces to lose. A CJK character counts `letters / k` letters (a character
 * says about as much as three letters of an English word: two pages' 3-character shingles and
 * their 9-letter shingles are about as rare in common). A text shorter than one shingle is one.
 */
export function shingles(units: readonly string[], k: number, letters: number): Set<string> {
  const out = new Set<string>();
  const stream: string[] = [];
  const weights: number[] = [];
  for (const unit of units)
    if (isCjk(unit)) {
      stream.push(unit);
      weights.push(letters / k);
    } else
      for (const letter of unit) {
        stream.push(letter);
        weights.push(1);
      }
  if (stream.length === 0) return out;
  // A float sum of thirds: what a shingle holds is compared with a little slack.
  const full = letters - 1e-9;
  let end = 0;
  let held = 0;
  // The shingle of least hash: kept when no other is, so that no text with letters has none.
  let least: { shingle: string; hash: number } | undefined;
  for (let start = 0; start < stream.length; start++) {
    while (end < stream.length && held < full) held += weights[end++]!;
    if (held < full) {
      if (start === 0) out.add(stream.join('')); // the whole text is less than one shingle
      break;
    }
    const shingle = stream.slice(start, end).join('');
    // One shingle starting at a letter in five is kept (chosen by its content, so two copies keep
    // the same ones): about one a word, as when words were the units, or English runs would
    // outweigh the Chinese around them (a Chinese manual page's options, copyright and addresses).
    const hash = weights[start] === 1 ? fnv1a(shingle) : 0;
    if (weights[start] !== 1 || hash % LETTERS_A_SHINGLE === 0) out.add(shingle);
    else if (!least || hash < least.hash) least = { shingle, hash };
    held -= weights[start]!;
  }
  if (out.size === 0 && least) out.add(least.shingle);
  return out;
}

/** Letters a kept shingle stands for: English words are about five letters long. */
const LETTERS_A_SHINGLE = 5;

/** A shingle's FNV-1a hash: which shingles starting at a letter are kept, the same in every text. */
function fnv1a(shingle: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < shingle.length; i++) hash = Math.imul(hash ^ shingle.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
