import type { Unit } from '../../../shared/schemas.js';
import type { UploadRecord } from './port.js';

/**
 * Fills an empty ledger in bulk: what the benchmarks seed a store with (a million entries counted
 * one by one through `Ledger.count` take too long), and nothing else. Not part of `ArchiveStore`:
 * no service seeds. The uploads are taken as counted in the order given, and leave the ledger and
 * every total derived from them (entries with their UploadCount, day tallies, per-file sums, names,
 * which upload stored a file) as `Ledger.count` of each would, without the count's record of each
 * action: no upload key (a seeded upload is never retried) and no audit event. The ledger's
 * conformance suite checks exactly that, on both stores. For a store no other process writes
 * meanwhile (the embedded one rebuilds the ledger's indexes and per-file sums around the rows).
 */
export interface LedgerSeeding {
  /**
   * Throws if the ledger has entries already (the embedded store also if an upload's file is not
   * catalogued: it keys its rows by the catalog's file numbers).
   */
  seed(uploads: Iterable<SeededUpload>): Promise<SeededLedger>;
}

/**
 * An upload to seed. With a `key`, the action is also recorded as `Ledger.count` records it (its
 * details, its answer, its entry: embedded `upload_keys`, MongoDB its audit event), so that it can
 * be reversed and restored (withdrawn, in the benchmarks) like one counted; without, it only counts.
 * With a `withdrawal` too (a change key), it is withdrawn once every upload is seeded: its action
 * reversed under that key, every total left as `Ledger.reverseMany` of the withdrawn uploads, in
 * the order given, after counting them all leaves it. (Reversals of different files touch no
 * total in common, so a store may reverse them file by file, each file's in the order given.)
 */
export type SeededUpload = UploadRecord & { key?: string; withdrawal?: string };

/** What a seeding wrote. */
export interface SeededLedger {
  uploads: number;
  /** Of them, recorded under their keys. */
  recorded: number;
  /** Of them, withdrawn after the seeding (reversed under their `withdrawal` keys). */
  withdrawn: number;
  entries: number;
  uploadDays: number;
  names: number;
}

/** A ledger entry as counting its uploads in order leaves it. */
export interface SeededEntry {
  /**
   * Its first upload counted: the entry's account, unit, file, first name and time (only these: a
   * province's ten million entries holding their whole uploads would take a gigabyte more).
   */
  first: Pick<UploadRecord, 'account' | 'fileId' | 'fileName' | 'at'>;
  uploadCount: number;
  lastUploadTime: Date;
  /** Of the upload counted last (not the latest in time: as `Ledger.count` keeps them). */
  lastUploadFileName: string;
  lastContentType: string;
}

/** A day's tally of a file in a unit. */
export interface SeededDay {
  fileId: string;
  /** The unit of its first upload counted (its levels are the tally's). */
  unit: Unit;
  day: string;
  fileLength: number;
  uploads: number;
  /** Uploads that did not store the file. */
  savedUploads: number;
}

/** A name a unit uploaded a file under, first used by its first upload counted. */
export interface SeededName {
  unit: Unit;
  fileId: string;
  name: string;
  firstUsed: Date;
}

/** What counting `uploads` in order into an empty ledger makes, whatever the store. */
export interface SeededTotals {
  uploads: number;
  /** In the order each was first counted (the order entries are made in). */
  entries: SeededEntry[];
  days: SeededDay[];
  names: SeededName[];
  /** The files, each once, in the order their first upload was counted; with whether it stored the file. */
  files: Map<string, { storedBy: UploadRecord | undefined; first: SeededUpload }>;
  /** The uploads seeded with a key, in order, as `Ledger.count` would have answered each. */
  actions: SeededAction[];
}

/** An upload seeded under its key: what its count answered and which entry it counted in. */
export interface SeededAction {
  upload: SeededUpload & { key: string };
  stored: boolean;
  /** Its entry's UploadCount once it was counted. */
  uploadCount: number;
  /** Its entry's place in `SeededTotals.entries`. */
  entry: number;
}

/**
 * Counts uploads in memory as `Ledger.count` counts each into an empty ledger: the first upload of
 * a file counted stored it if it carried the bytes; an entry keeps its first upload's account,
 * unit, name and time, the latest time, and the name and type of the upload counted last; a day's
 * tally and a name keep their first upload's unit levels (and length, time).
 */
export function countInMemory(
  uploads: Iterable<SeededUpload>,
  /**
   * Takes each action as it is counted, in place of `SeededTotals.actions` (left empty): a store
   * that writes them at once keeps none of a province's millions in memory.
   */
  onAction?: (action: SeededAction) => void,
): SeededTotals {
  const entries: SeededEntry[] = [];
  const actions: SeededAction[] = [];
  const days: SeededDay[] = [];
  const names: SeededName[] = [];
  const files = new Map<string, { storedBy: UploadRecord | undefined; first: SeededUpload }>();
  // Each file's entries, tallies and names, looked through one by one: a file has a few, and
  // keys made of strings joined would cost more than the rest of the count (millions of them).
  const byFile = new Map<string, FileCounts>();
  let count = 0;
  for (const r of uploads) {
    count++;
    const { unit } = r.account;
    let stored = false;
    let file = byFile.get(r.fileId);
    if (!file) {
      stored = r.carriedBytes;
      files.set(r.fileId, { storedBy: stored ? r : undefined, first: r });
      byFile.set(r.fileId, (file = { entries: [], places: [], days: [], names: [] }));
    }
    let at = file.entries.findIndex((e) => e.first.account.id === r.account.id && e.first.account.unit.id === unit.id);
    let entry = file.entries[at];
    if (entry) {
      entry.uploadCount++;
      if (r.at > entry.lastUploadTime) entry.lastUploadTime = r.at;
      entry.lastUploadFileName = r.fileName;
      entry.lastContentType = r.contentType;
    } else {
      entry = {
        first: { account: r.account, fileId: r.fileId, fileName: r.fileName, at: r.at },
        uploadCount: 1,
        lastUploadTime: r.at,
        lastUploadFileName: r.fileName,
        lastContentType: r.contentType,
      };
      at = file.entries.length;
      file.entries.push(entry);
      file.places.push(entries.length);
      entries.push(entry);
    }
    if (r.key !== undefined) {
      const action = {
        upload: r as SeededUpload & { key: string },
        stored,
        uploadCount: entry.uploadCount,
        entry: file.places[at]!,
      };
      if (onAction) onAction(action);
      else actions.push(action);
    } else if (r.withdrawal !== undefined) throw new Error('a seeded upload is withdrawn under its key: it has none');
    const day = file.days.find((d) => d.day === r.day && d.unit.id === unit.id);
    if (day) {
      day.uploads++;
      day.savedUploads += stored ? 0 : 1;
    } else {
      const made: SeededDay = {
        fileId: r.fileId,
        unit,
        day: r.day,
        fileLength: r.fileLength,
        uploads: 1,
        savedUploads: stored ? 0 : 1,
      };
      file.days.push(made);
      days.push(made);
    }
    if (!file.names.some((n) => n.name === r.fileName && n.unit.id === unit.id)) {
      const made: SeededName = { unit, fileId: r.fileId, name: r.fileName, firstUsed: r.at };
      file.names.push(made);
      names.push(made);
    }
  }
  return { uploads: count, entries, days, names, files, actions };
}

interface FileCounts {
  entries: SeededEntry[];
  /** Each of `entries`' place in `SeededTotals.entries` (a Map of ten million entries would not do). */
  places: number[];
  days: SeededDay[];
  names: SeededName[];
}
