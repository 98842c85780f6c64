import { normalise } from './text.js';

const SNIPPET_CHARS = 160;

/** Sentences and lines of a text, trimmed, with what normalisation folds as their identity. */
function sentences(text: string): Array<{ text: string; key: string }> {
  return (text.match(/[^。！？!?；;\n]+[。！？!?；;]*/g) ?? [])
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => ({ text: s, key: normalise(s).replace(/[\s\p{P}\p{S}]/gu, '') }))
    .filter((s) => s.key !== '');
}

const cut = (s: string) => (s.length > SNIPPET_CHARS ? `${s.slice(0, SNIPPET_CHARS - 1)}…` : s);

/**
 * Where two near-duplicate texts differ, side by side: the first sentence of each that the other
 * does not have (after normalisation: script, case, spacing, punctuation), with the sentence
 * before it for context; empty for a text with nothing of its own.
 */
export function differences(a: string, b: string): [string, string] {
  const sa = sentences(a);
  const sb = sentences(b);
  const own = (mine: typeof sa, theirs: typeof sb) => {
    const keys = new Set(theirs.map((s) => s.key));
    const i = mine.findIndex((s) => !keys.has(s.key));
    if (i < 0) return '';
    return cut(i > 0 ? `${mine[i - 1]!.text} ${mine[i]!.text}` : mine[i]!.text);
  };
  return [own(sa, sb), own(sb, sa)];
}
