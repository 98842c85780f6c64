import type { TextSnippet } from '../../shared/schemas.js';
import { normalise, STOP_WORDS } from './near-duplicates/text.js';

/**
 * Search terms: the words of a normalised text (NFKC, simplified script, lower case), Chinese
 * segmented by jieba's dictionary (no HMM: the same characters are cut the same way in a text and
 * in a query). A text is cut in search mode (a long word also yields the shorter words in it:
 * 人民政府 gives 人民, 政府 and 人民政府), a query as plainly as possible (each of its words must be
 * in the text), so a query word found anywhere in a text's words finds the text.
 */

/** A text is indexed up to this many characters (a segmentation of 200,000 takes about 50 ms). */
export const MAX_INDEXED_CHARACTERS = 200_000;
/** A query has at most this many terms (more would say nothing a search could use). */
export const MAX_QUERY_TERMS = 12;
/** Words longer than this are not terms (a run of digits or letters with no meaning as a word). */
const MAX_TERM_LENGTH = 40;

const WORD = /^[\p{L}\p{N}]+$/u;

interface Segmenter {
  cut(text: string, hmm: boolean): string[];
  cutForSearch(text: string, hmm: boolean): string[];
}

/**
 * The segmenter, loaded when first used: jieba's dictionary takes about 0.3 s and 60 MB of a
 * process, which a server that never searches or reads a text should not pay at start.
 */
export class SearchTerms {
  private segmenter: Promise<Segmenter> | undefined;

  private load(): Promise<Segmenter> {
    this.segmenter ??= (async () => {
      const [{ Jieba }, { dict }] = await Promise.all([import('@node-rs/jieba'), import('@node-rs/jieba/dict.js')]);
      return Jieba.withDict(dict);
    })();
    return this.segmenter;
  }

  /** A text's distinct terms, for the index. */
  async ofText(text: string): Promise<string[]> {
    const segmenter = await this.load();
    return distinctTerms(segmenter.cutForSearch(normalise(text.slice(0, MAX_INDEXED_CHARACTERS)), false));
  }

  /** A query's distinct terms (at most MAX_QUERY_TERMS): a file matches when it holds them all. */
  async ofQuery(query: string): Promise<string[]> {
    const segmenter = await this.load();
    return distinctTerms(segmenter.cut(normalise(query), false)).slice(0, MAX_QUERY_TERMS);
  }
}

function distinctTerms(words: readonly string[]): string[] {
  const terms = new Set<string>();
  for (const word of words)
    if (word.length <= MAX_TERM_LENGTH && WORD.test(word) && !STOP_WORDS.has(word)) terms.add(word);
  return [...terms];
}

/** Characters of context shown before the first word found, and the snippet's length at most. */
const BEFORE = 30;
const SNIPPET_LENGTH = 160;
/** The snippet looks for the words in this much of a text (a word further on: the text's beginning, unmarked). */
const SNIPPET_SEARCH_CHARACTERS = 50_000;

/**
 * The text around the first place a term occurs, spaces and line breaks collapsed, with every
 * occurrence of a term in it marked; the text's beginning when none is found. Terms are found in
 * the normalised text and marked in the text as written (traditional script, capitals, full-width
 * forms stay as they are).
 */
export function snippetOf(text: string, terms: readonly string[]): TextSnippet {
  const source = text.slice(0, SNIPPET_SEARCH_CHARACTERS);
  const { normalised, origin } = normalisedWithOrigin(source);
  const found: Array<[number, number]> = [];
  for (const term of terms) {
    if (term === '') continue;
    for (let at = normalised.indexOf(term); at >= 0; at = normalised.indexOf(term, at + term.length))
      found.push([origin[at]!, endOf(source, origin[at + term.length - 1]!)]);
  }
  found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const first = found[0]?.[0] ?? 0;
  const start = Math.max(0, first - BEFORE);
  // Collapse spacing, keeping where each character of the window went.
  let out = start > 0 ? '…' : '';
  const at = new Map<number, number>();
  let i = start;
  for (; i < source.length && out.length < SNIPPET_LENGTH; i++) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      if (!out.endsWith(' ') && out !== '' && out !== '…') out += ' ';
      at.set(i, out.length);
      continue;
    }
    at.set(i, out.length);
    out += ch;
  }
  const end = i;
  const snippet = end < text.length ? `${out.trimEnd()}…` : out.trimEnd();
  const marks: Array<[number, number]> = [];
  for (const [s, e] of found) {
    if (s < start || e > end) continue;
    const from = at.get(s)!;
    const to = at.get(e - 1)! + 1;
    if (marks.length > 0 && from < marks[marks.length - 1]![1]) continue; // overlaps the one before
    marks.push([from, to]);
  }
  return { text: snippet, marks };
}

/** Where the character at `i` ends (after both halves of a surrogate pair). */
const endOf = (text: string, i: number) => i + (text.codePointAt(i)! > 0xffff ? 2 : 1);

/**
 * The normalised text and, for each of its code units, the index of the character of `text` it
 * came from. Normalisation mostly keeps a text's length (then the mapping is the identity); where
 * it does not (a ligature, a character NFKC spells as several), each character is normalised alone.
 */
function normalisedWithOrigin(text: string): { normalised: string; origin: number[] } {
  const whole = normalise(text);
  if (whole.length === text.length)
    return { normalised: whole, origin: Array.from({ length: text.length }, (_, i) => i) };
  let normalised = '';
  const origin: number[] = [];
  for (let i = 0; i < text.length;) {
    const codePoint = text.codePointAt(i)!;
    const ch = String.fromCodePoint(codePoint);
    const n = normalise(ch);
    normalised += n;
    for (let k = 0; k < n.length; k++) origin.push(i);
    i += ch.length;
  }
  return { normalised, origin };
}
