/** A run of a text, and whether the other text lacks it. */
export interface DiffPart {
  text: string;
  differs: boolean;
}

/**
 * The words of a text for comparing: Chinese has no spaces, so each Han character (or other
 * symbol) is a word of its own; Latin letters and digits in a row are one word (2023, PDF).
 */
const tokens = (text: string): string[] => text.match(/[A-Za-z0-9]+|\s+|[\s\S]/gu) ?? [];

/** Longer texts are marked whole: the table below has |a|·|b| cells (snippets are at most 160 characters). */
const MAX_TOKENS = 2_000;

/**
 * Where two short texts differ, word by word: each text as runs, those the other text does not
 * have marked. A longest common subsequence over words, computed here: no library for ~30 lines
 * (the near-duplicate snippets are a sentence or two; a diff package would add weight to every
 * administrator's download for this one use).
 */
export function textDifferences(a: string, b: string): [DiffPart[], DiffPart[]] {
  const x = tokens(a);
  const y = tokens(b);
  if (x.length > MAX_TOKENS || y.length > MAX_TOKENS) return [runs(x, () => true), runs(y, () => true)];
  // common[i][j]: the length of the longest common subsequence of x[i..] and y[j..].
  const width = y.length + 1;
  const common = new Uint16Array((x.length + 1) * width);
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--)
      common[i * width + j] =
        x[i] === y[j]
          ? common[(i + 1) * width + j + 1]! + 1
          : Math.max(common[(i + 1) * width + j]!, common[i * width + j + 1]!);
  const keptX = new Set<number>();
  const keptY = new Set<number>();
  for (let i = 0, j = 0; i < x.length && j < y.length;) {
    if (x[i] === y[j]) {
      keptX.add(i++);
      keptY.add(j++);
    } else if (common[(i + 1) * width + j]! >= common[i * width + j + 1]!) i++;
    else j++;
  }
  return [runs(x, (i) => !keptX.has(i)), runs(y, (j) => !keptY.has(j))];
}

/** Words joined into runs of the same kind (differing or shared). */
function runs(words: readonly string[], differs: (i: number) => boolean): DiffPart[] {
  const parts: DiffPart[] = [];
  words.forEach((text, i) => {
    const d = differs(i);
    const last = parts[parts.length - 1];
    if (last && last.differs === d) last.text += text;
    else parts.push({ text, differs: d });
  });
  return parts;
}
