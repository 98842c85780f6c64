import type { Readable } from 'node:stream';
import type { CatalogEntry, NewCatalogEntry } from '../catalog/port.js';

export type CommitOutcome =
  | { status: 'stored'; entry: CatalogEntry }
  /** The catalog already held this content; the staged chunks were removed. */
  | { status: 'duplicate'; entry: CatalogEntry };

/** A small content in memory, as the parts it arrived in, and its catalog entry (storeMany). */
export interface StoredParts {
  parts: readonly Uint8Array[];
  entry: NewCatalogEntry;
}

/** A byte range, `end` exclusive (as Blob.slice). */
export interface ByteRange {
  start: number;
  end: number;
}

/** Bytes, in fixed-size chunks (GridFS layout: chunk n holds bytes [n·size, (n+1)·size)). */
export interface ContentStore {
  /** The chunk size of staging areas opened from now on (each keeps the one it began with). */
  readonly chunkSize: number;
  /** Opens a staging area; its id becomes the file id if the commit stores it. */
  stage(now: Date): Promise<string>;
  /**
   * Writes contiguous bytes at `offset` of a staging area. `offset` need not fall on a chunk
   * edge (a resumed upload continues a partial chunk); bytes already there are replaced, and
   * bytes past the end of this write may still hold an earlier, interrupted write.
   */
  write(stagingId: string, offset: number, parts: readonly Uint8Array[]): Promise<void>;
  /** Streams bytes [0, length) of a staging area (re-hashing a resumed upload). */
  readStaged(stagingId: string, length: number): Readable;
  /**
   * Makes staged chunks a catalogued file, or, when the catalog already holds the same
   * content (a unique index decides, so concurrent commits are safe), removes them. A commit
   * that fails leaves the staging area as it was, for a retry; staged bytes that fall short of
   * the content's length fail it, rather than catalogue a short file. Bytes that may not have
   * reached the disk (a sync of them failed) are the exception: they are dropped, and the commit
   * fails with a StagedBytesLostError saying how many bytes the staging area keeps.
   */
  commit(stagingId: string, entry: NewCatalogEntry): Promise<CommitOutcome>;
  /**
   * Commits many staging areas, as `commit` does each, in order (a later item with the content of
   * an earlier one is its duplicate). The bytes of all are made durable first, together; the
   * embedded store then catalogues them in one transaction. A failure fails the call: items it
   * did not reach stay staged (on MongoDB, earlier items may be committed already; a retry of
   * the same items is safe, as for `commit`).
   */
  commitMany(items: ReadonlyArray<{ stagingId: string; entry: NewCatalogEntry }>): Promise<CommitOutcome[]>;
  /**
   * Stores small contents given whole in memory (a batch upload's files, each as the parts it
   * arrived in: nothing copies them into one buffer), and commits them as
   * `commitMany` would after staging each: in order, a later item with the content of an earlier
   * one its duplicate. The embedded store appends them all to a pack file, synced once, and
   * catalogues them in one transaction; a failure fails the call with nothing catalogued there.
   */
  storeMany(items: ReadonlyArray<StoredParts>): Promise<CommitOutcome[]>;
  /** Removes a staging area and its chunks; harmless if already gone, and never a committed file. */
  discard(stagingId: string): Promise<void>;
  /**
   * Deletes the bytes of a content the catalog no longer offers (its entry being deleted, or gone:
   * `Catalog.beginDeletion`) and their checksums; refuses a live entry's. MongoDB: the GridFS
   * files document, then every chunk; embedded: the content file, or, for a packed content, its
   * place in its pack (the pack's compaction reclaims the bytes). Harmless when done already.
   */
  remove(entry: CatalogEntry): Promise<void>;
  /**
   * Streams a committed file's bytes, or a range of them. Bytes found missing (a chunk, the tail,
   * the whole file) or a chunk that does not match the checksum taken when it was written fail
   * the stream with a ContentDamagedError before any of that chunk is sent, never a short or
   * wrong stream. `unchecked` skips the checksums (and reads only the range's own bytes): for
   * the proof of possession, whose digests are compared with the clerk's bytes anyway.
   */
  read(entry: CatalogEntry, range?: ByteRange, options?: { unchecked?: boolean }): Readable;
  /**
   * The bytes of a few small ranges of a committed file (a proof of possession's, 64 KiB in all),
   * in memory and unchecked, as `read(entry, range, { unchecked: true })` gives them: one call for
   * all, where a stream per range cost a check more than hashing the bytes. Bytes found missing
   * fail it with a ContentDamagedError.
   */
  readRanges(entry: CatalogEntry, ranges: readonly ByteRange[]): Promise<Uint8Array[]>;
  /** Whether some chunk of a committed file has no checksum (it was stored before checksums). */
  lacksChunkSums(entry: CatalogEntry): Promise<boolean>;
  /**
   * For a committed file some of whose chunks have no checksum: something to feed the file's bytes
   * to, in order from the first, that records the missing checksums when told to (the fixity check
   * does, once the file's MD5 and SHA-256 proved the bytes it summed right). Undefined when every
   * chunk has its checksum. Recorded sums stay.
   */
  adoptChunkSums(entry: CatalogEntry): Promise<ChunkSumAdoption | undefined>;
  /**
   * Removes staging areas opened before `before` that no resumable upload owns (abandoned: a
   * request interrupted by a crash), and any bytes that neither a catalog entry nor a staging
   * area owns. Never touches a committed file, a younger staging area or a live upload's.
   */
  collectGarbage(before: Date): Promise<GarbageReport>;
  /**
   * Gives back the disk that bytes no catalog entry locates take where they share a file with
   * live bytes, among the bytes nobody wrote to since `before`, and erases those of contents
   * removed from the catalog: the embedded store compacts its pack files (the live contents
   * copied into a new pack, then the old one removed; docs/decisions/compaction.md). Every
   * catalogued content reads the same before, during and after. MongoDB has nothing to do: GridFS
   * keeps each file's chunks as documents of their own, and a file removed takes its chunks with it.
   */
  compact(before: Date): Promise<CompactionReport>;
}

export interface CompactionReport {
  /** Packs compacted (their live contents moved to a new pack, the old one removed). */
  packs: number;
  /** Disk given back: the removed packs' bytes less what the new packs hold of them. */
  reclaimedBytes: number;
}

/** Checksums being taken of a file's bytes as they pass, to be recorded for chunks that lack one. */
export interface ChunkSumAdoption {
  push(part: Uint8Array): void;
  /** Records the checksums of chunks that have none (after every byte was pushed). */
  adopt(): Promise<void>;
}

export interface GarbageReport {
  stagingAreas: number;
  orphans: number;
}
