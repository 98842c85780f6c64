/**
 * An entry's count, first and last upload once one of its uploads no longer counts, or counts
 * again: the same rule on both stores (docs/decisions/counts.md).
 */

/** An entry's count and its first and last upload, in the ledger's terms. */
export interface EntryUploads {
  uploadCount: number;
  firstTime: number;
  firstName: string;
  lastTime: number;
  lastName: string;
  lastType: string;
}

/** An upload of an entry that still counts, as the ledger recorded it. */
export interface KnownUpload {
  at: number;
  fileName: string;
  contentType: string;
}

/**
 * The entry `before` less one upload, given its uploads that still count (`known`, by time): see
 * `entryOf`.
 */
export function entryWithout(before: EntryUploads, known: readonly KnownUpload[]): EntryUploads {
  return entryOf(before.uploadCount - 1, before, known);
}

/**
 * The entry `before` once it counts `uploadCount` uploads, given those of them the ledger recorded
 * (`known`, by time): its first and last upload are the earliest and the latest of them, by time
 * (a count keeps them in the order uploads were counted, which is their time order but for a late
 * retry). Uploads counted before the ledger recorded each one's details are known only by number
 * (the count less the known): they came before the recorded ones, so the first upload is then the
 * entry's own, and the last, if none recorded is left, is known only as that first.
 */
export function entryOf(uploadCount: number, before: EntryUploads, known: readonly KnownUpload[]): EntryUploads {
  const earliest = known[0];
  const latest = known.at(-1);
  const first =
    uploadCount > known.length || !earliest
      ? { firstTime: before.firstTime, firstName: before.firstName }
      : { firstTime: earliest.at, firstName: earliest.fileName };
  const last = latest
    ? { lastTime: latest.at, lastName: latest.fileName, lastType: latest.contentType }
    : { lastTime: first.firstTime, lastName: first.firstName, lastType: before.lastType };
  return { uploadCount, ...first, ...last };
}
