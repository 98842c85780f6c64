/**
 * Character error rate: the edits (insertions, deletions, substitutions) that turn the
 * recognised text into the printed one, per printed character. Both sides are compared as the
 * fingerprints and search will read them: NFKC (full-width ，and ASCII , are one character),
 * whitespace left out (Tesseract spaces out Chinese characters; line breaks are layout).
 */
export function comparable(text: string): string[] {
  return [...text.normalize('NFKC').replace(/\s+/gu, '')];
}

/** Levenshtein distance, two rows. */
export function editDistance(a: readonly string[], b: readonly string[]): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}

/** Errors and printed characters of one page: summed over pages, their ratio is the corpus's CER. */
export function characterErrors(printed: string, recognised: string): { errors: number; characters: number } {
  const truth = comparable(printed);
  return { errors: editDistance(truth, comparable(recognised)), characters: truth.length };
}
