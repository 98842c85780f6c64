/** Escapes a user's search text for `LIKE … ESCAPE '\\'`. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Rows joined into one text by SQL, and split again by `splitJoinedRows`: a query that returns,
 * per row of its own, a list of small records (a file's units in the cross-unit report) without a
 * query per record. Fields are joined by U+001F and records by U+001E; the columns must not hold
 * either (JSON text escapes both; numbers have neither).
 */
export function joinedRows(columns: readonly string[], orderBy: string): string {
  return `group_concat(${columns.join(' || char(31) || ')}, char(30) ORDER BY ${orderBy})`;
}

/** The records of a `joinedRows` text (none for NULL), each as its fields' text. */
export function splitJoinedRows(text: string | null): string[][] {
  return text === null || text === '' ? [] : text.split('\x1e').map((row) => row.split('\x1f'));
}

/**
 * SQLite's order of two values of one column: numbers by value, text by its UTF-8 bytes (BINARY;
 * JavaScript's `<` compares UTF-16 units, which orders some characters otherwise).
 */
export function sqliteOrder(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return Buffer.compare(Buffer.from(String(a)), Buffer.from(String(b)));
}
