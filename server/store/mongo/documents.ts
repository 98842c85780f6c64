import { ObjectId } from 'mongodb';

/** What the MongoDB adapters share: numbers, ids, search patterns and the duplicate-key error. */

export const toNumber = (v: { toNumber(): number } | number): number => (typeof v === 'number' ? v : v.toNumber());

/** Records whose `id` is the document's `_id`, and nothing else changes. */
export function recordFromDoc<T extends { _id: string }>(doc: T): Omit<T, '_id'> & { id: string } {
  const { _id, ...rest } = doc;
  return { id: _id, ...rest };
}

/** Parses a file id; undefined for anything that is not a 24-hex ObjectId. */
export function objectIdOf(fileId: string): ObjectId | undefined {
  return /^[0-9a-f]{24}$/.test(fileId) ? new ObjectId(fileId) : undefined;
}

export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * "Contains `text`", as SQL `LIKE '%text%'` on the embedded store: case-insensitive for ASCII
 * letters only (the `i` option would also fold other scripts, which SQLite does not).
 */
export function containsPattern(text: string): RegExp {
  return new RegExp(escapeRegex(text).replace(/[a-z]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`));
}

export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
