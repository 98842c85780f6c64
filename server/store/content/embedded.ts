import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ContentDamagedError, StagedBytesLostError } from '../../errors.js';
import { catalogEntries } from '../catalog/embedded.js';
import { fileNumberOf } from '../embedded/file-numbers.js';
import type { CatalogEntry, NewCatalogEntry } from '../catalog/port.js';
import { addMissingColumns, hasColumn, rebuildTable, type Db, type EmbeddedSchema } from '../embedded/database.js';
import { ChunkSummer, checkedRead, chunkSpan, chunkSumAdoption, uncheckedRead } from './chunk-sums.js';
import { ContentFiles, SyncFailedError, readRangesOf } from './content-files.js';
import { PackCompaction, type CompactionOptions } from './embedded-compaction.js';
import type { PackFiles } from './packs.js';
import type {
  ByteRange,
  ChunkSumAdoption,
  CommitOutcome,
  CompactionReport,
  ContentStore,
  GarbageReport,
  StoredParts,
} from './port.js';

/**
 * Where a packed content's bytes are: its pack, and where its first byte is there (chunk n at
 * pack_offset + n × chunk_size). A content (by its catalog number) without a row has its own
 * content file.
 */
const packedTable = (name: string) => `
CREATE TABLE IF NOT EXISTS ${name} (
  file_no     INTEGER PRIMARY KEY,
  pack_id     TEXT NOT NULL,
  pack_offset INTEGER NOT NULL
);`;
const PACKED_INDEXES = 'CREATE INDEX IF NOT EXISTS packed_by_pack ON packed (pack_id);';

/** CRC-32 of each chunk of a catalogued content (by number), taken as it was written and checked as it is read. */
const chunkSumsTable = (name: string) => `
CREATE TABLE IF NOT EXISTS ${name} (
  file_no INTEGER NOT NULL,
  n       INTEGER NOT NULL,
  crc     INTEGER NOT NULL,
  PRIMARY KEY (file_no, n)
) WITHOUT ROWID;`;

export const contentSchema: EmbeddedSchema = {
  tables: `
-- Content files being written that no catalog entry owns yet. chunk_size: the chunking the area
-- began with (kept when CHUNK_SIZE changes mid-upload). lost_from: a sync of its file failed, so
-- bytes from there on may not be on disk.
CREATE TABLE IF NOT EXISTS staging (
  staging_id TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  chunk_size INTEGER,
  lost_from  INTEGER
);

-- Pack files (content/packs/<pack_id>.pack): the bytes of many small contents back to back, only
-- ever appended to. written_at: when a batch was last catalogued into it (or it was begun); GC
-- removes a pack that locates no content once it is older than the staging TTL.
-- erase: a content located here left the catalog, so compaction must rewrite the pack without it
-- whatever share of the pack is dead (docs/decisions/compaction.md).
CREATE TABLE IF NOT EXISTS packs (
  pack_id    TEXT PRIMARY KEY,
  written_at INTEGER NOT NULL,
  erase      INTEGER NOT NULL DEFAULT 0
);

${packedTable('packed')}

-- Packs holding the dead bytes of a batch's duplicate of a catalogued content (the batch wrote
-- them before it knew): when the content leaves the catalog, those packs are marked for erasure
-- too, so that no byte of it stays readable after compaction. A pack's rows go with the pack.
CREATE TABLE IF NOT EXISTS pack_copies (
  file_no INTEGER NOT NULL,
  pack_id TEXT NOT NULL,
  PRIMARY KEY (file_no, pack_id)
) WITHOUT ROWID;

${chunkSumsTable('chunk_sums')}

-- The same for a staging area's chunks, until it is committed (its sums then move to chunk_sums,
-- in the commit's transaction) or removed.
CREATE TABLE IF NOT EXISTS staged_sums (
  staging_id TEXT NOT NULL,
  n          INTEGER NOT NULL,
  crc        INTEGER NOT NULL,
  PRIMARY KEY (staging_id, n)
) WITHOUT ROWID;
`,
  upgrade(db) {
    // Data directories made before staging areas kept their chunk size and sync failures (their
    // areas read as chunked at the configured size, as they were then).
    addMissingColumns(db, 'staging', { chunk_size: 'INTEGER', lost_from: 'INTEGER' });
    // Packs made before compaction hold no removed content.
    addMissingColumns(db, 'packs', { erase: 'INTEGER NOT NULL DEFAULT 0' });
    // Packed contents and chunk sums by file id (before file numbers): by number, the sums of
    // staging areas apart (sums of neither, left by a crash, were GC's to remove).
    db.transaction(() => {
      if (!hasColumn(db, 'packed', 'file_no'))
        rebuildTable(
          db,
          'packed',
          packedTable('packed_next'),
          `INSERT INTO packed_next (file_no, pack_id, pack_offset)
             SELECT c.file_no, p.pack_id, p.pack_offset FROM packed p LEFT JOIN catalog c USING (file_id)`,
        );
      if (!hasColumn(db, 'chunk_sums', 'file_no'))
        rebuildTable(
          db,
          'chunk_sums',
          chunkSumsTable('chunk_sums_next'),
          `INSERT INTO chunk_sums_next (file_no, n, crc) SELECT c.file_no, s.n, s.crc FROM chunk_sums s JOIN catalog c USING (file_id);
           INSERT OR IGNORE INTO staged_sums (staging_id, n, crc)
             SELECT s.file_id, s.n, s.crc FROM chunk_sums s JOIN staging g ON g.staging_id = s.file_id;`,
        );
    }).immediate();
    db.exec(PACKED_INDEXES);
  },
};

/** A content of a batch as it is catalogued from its pack. */
interface PackedItem {
  fileId: string;
  offset: number;
  entry: NewCatalogEntry;
  sums: ReadonlyArray<readonly [number, number]>;
}

/** A source of bytes that fails at once with `err`. */
async function* failing(err: unknown): AsyncGenerator<Uint8Array> {
  yield* [];
  throw err;
}

/** A 24-hex id, the same shape as a MongoDB ObjectId, so file ids look alike on both stores. */
export function newFileId(): string {
  return newFileIds(1)[0]!;
}

/** `count` new file ids at once (one call for the random bytes of a whole batch). */
export function newFileIds(count: number): string[] {
  const hex = randomBytes(12 * count).toString('hex');
  return Array.from({ length: count }, (_, k) => hex.slice(24 * k, 24 * (k + 1)));
}

/**
 * Records that a sync of a staging area's file failed: bytes from `from` on may not be on disk,
 * whatever a later sync says. Kept in the database, so a commit in any process, also after the
 * file was closed or the server restarted, drops them rather than catalogue them.
 */
export function recordLostBytes(db: Db, stagingId: string, from: number): void {
  db.prepare('UPDATE staging SET lost_from = MIN(COALESCE(lost_from, ?), ?) WHERE staging_id = ?').run(
    from,
    from,
    stagingId,
  );
}

/**
 * Forgets where a packed content is, in the caller's transaction (the one that removes it from
 * the catalog), with its chunk sums, and marks its pack for erasure: the next compaction rewrites
 * the pack without its bytes, whatever share of the pack is dead. Does nothing for a content with
 * a file of its own.
 */
export function forgetPackedContent(db: Db, fileNo: number): void {
  // Packs holding dead copies of it (a batch's duplicates), whether or not it is packed itself.
  db.prepare('UPDATE packs SET erase = 1 WHERE pack_id IN (SELECT pack_id FROM pack_copies WHERE file_no = ?)').run(
    fileNo,
  );
  db.prepare('DELETE FROM pack_copies WHERE file_no = ?').run(fileNo);
  const row = db
    .prepare<[number], { pack_id: string }>('DELETE FROM packed WHERE file_no = ? RETURNING pack_id')
    .get(fileNo);
  if (!row) return;
  db.prepare('DELETE FROM chunk_sums WHERE file_no = ?').run(fileNo);
  db.prepare('UPDATE packs SET erase = 1 WHERE pack_id = ?').run(row.pack_id);
}

/** Records that a pack is owned before its first byte is written (GC removes unrecorded pack files). */
export function recordPack(db: Db, packId: string, now: number): void {
  db.prepare('INSERT INTO packs (pack_id, written_at) VALUES (?, ?)').run(packId, now);
}

/**
 * Content in the embedded store: bytes in content files, bookkeeping in SQLite. A staging row
 * exists from the first byte until the file is committed or removed, so every content file is
 * owned by a catalog entry or a staging row, and nothing else (what GC relies on).
 */
export class EmbeddedContentStore implements ContentStore {
  private readonly insertStaging;
  private readonly deleteStaging;
  private readonly stagingOf;
  private readonly commitTx;
  private readonly commitAllTx;
  private readonly sumsOf;
  private readonly saveSums;
  private readonly dropSums;
  private readonly forgetLostBytes;
  private readonly adoptSums;
  private readonly packedAt;
  private readonly storePackedTx;
  private readonly compaction: PackCompaction;
  private readonly forgetBytes;

  constructor(
    private readonly db: Db,
    private readonly files: ContentFiles,
    private readonly packs: PackFiles,
    readonly chunkSize: number,
    compaction: CompactionOptions = {},
  ) {
    this.compaction = new PackCompaction(db, packs, newFileId, compaction);
    this.packedAt = db.prepare<[number], { pack_id: string; pack_offset: number }>(
      'SELECT pack_id, pack_offset FROM packed WHERE file_no = ?',
    );
    this.insertStaging = db.prepare('INSERT INTO staging (staging_id, created_at, chunk_size) VALUES (?, ?, ?)');
    this.deleteStaging = db.prepare('DELETE FROM staging WHERE staging_id = ?');
    this.stagingOf = db.prepare<[string], { chunk_size: number | null; lost_from: number | null }>(
      'SELECT chunk_size, lost_from FROM staging WHERE staging_id = ?',
    );
    this.sumsOf = db.prepare<[number, number, number], { n: number; crc: number }>(
      'SELECT n, crc FROM chunk_sums WHERE file_no = ? AND n BETWEEN ? AND ?',
    );
    const upsertStagedSum = db.prepare(
      'INSERT INTO staged_sums (staging_id, n, crc) VALUES (?, ?, ?) ON CONFLICT (staging_id, n) DO UPDATE SET crc = excluded.crc',
    );
    this.saveSums = db.transaction((id: string, sums: ReadonlyArray<readonly [number, number]>) => {
      for (const [n, crc] of sums) upsertStagedSum.run(id, n, crc);
    });
    this.dropSums = db.prepare('DELETE FROM staged_sums WHERE staging_id = ?');
    // Sums of chunks with bytes past `kept` (the chunk cut in two is summed again when it continues).
    const dropSumsPast = db.prepare('DELETE FROM staged_sums WHERE staging_id = ? AND (n + 1) * ? > ?');
    const clearLost = db.prepare('UPDATE staging SET lost_from = NULL WHERE staging_id = ?');
    this.forgetLostBytes = db.transaction((id: string, kept: number, chunkSize: number) => {
      dropSumsPast.run(id, chunkSize, kept);
      clearLost.run(id);
    });
    const insertMissingSum = db.prepare(
      'INSERT INTO chunk_sums (file_no, n, crc) VALUES (?, ?, ?) ON CONFLICT (file_no, n) DO NOTHING',
    );
    this.adoptSums = db.transaction((fileId: string, sums: ReadonlyArray<readonly [number, number]>) => {
      const fileNo = fileNumberOf(db, fileId);
      if (fileNo === undefined) throw new Error(`file ${fileId} is not in the catalog`);
      for (const [n, crc] of sums) insertMissingSum.run(fileNo, n, crc);
    });
    const insertSum = db.prepare('INSERT INTO chunk_sums (file_no, n, crc) VALUES (?, ?, ?)');
    // A committed staging area's sums become its content's.
    const commitSums = db.prepare(
      'INSERT INTO chunk_sums (file_no, n, crc) SELECT ?, n, crc FROM staged_sums WHERE staging_id = ?',
    );
    const catalog = catalogEntries(db);
    /** Catalogues a content whose bytes are on disk as `fileId`: its outcome and catalog number. */
    const catalogue = (fileId: string, entry: NewCatalogEntry, chunkSize: number) => {
      const { entry: catalogued, fileNo } = catalog.insert(fileId, entry, chunkSize);
      const outcome: CommitOutcome = { status: 'stored', entry: catalogued };
      return { outcome, fileNo };
    };
    const held = (entry: NewCatalogEntry) => catalog.held(entry.key);

    // One transaction decides: the content becomes a catalog entry, or it is a duplicate. The
    // unique index settles races, also between processes sharing DATA_DIR.
    const commitOne = (stagingId: string, entry: NewCatalogEntry, stagedBytes: number): CommitOutcome => {
      const found = held(entry);
      // Held already: a duplicate, or this very staging area committed by an earlier attempt that
      // did not get to say so. Neither needs the bytes (a retried commit of a duplicate finds its
      // staging area gone); new content must have them all: lost bytes never become a short file.
      if (found) return { status: found.fileId === stagingId ? 'stored' : 'duplicate', entry: found };
      if (stagedBytes < entry.key.length)
        throw new Error(
          `staging area ${stagingId} holds not all of the ${entry.key.length} bytes to commit (${stagedBytes})`,
        );
      // Chunked as its staging area began, whatever CHUNK_SIZE says now: its sums are of those chunks.
      const { outcome, fileNo } = catalogue(stagingId, entry, this.chunkSizeOf(stagingId));
      commitSums.run(fileNo, stagingId);
      this.dropSums.run(stagingId);
      this.deleteStaging.run(stagingId);
      return outcome;
    };
    const insertPacked = db.prepare('INSERT INTO packed (file_no, pack_id, pack_offset) VALUES (?, ?, ?)');
    const rememberCopy = db.prepare(
      'INSERT OR IGNORE INTO pack_copies (file_no, pack_id) SELECT file_no, ? FROM catalog WHERE file_id = ?',
    );
    const touchPack = db.prepare('UPDATE packs SET written_at = ? WHERE pack_id = ?');
    this.storePackedTx = db.transaction(
      (packId: string, now: number, items: ReadonlyArray<PackedItem>): CommitOutcome[] => {
        // GC removes a pack only when no content is in it: one found gone lost its bytes with it.
        if (touchPack.run(now, packId).changes === 0)
          throw new Error(`pack ${packId} was removed before its contents were catalogued`);
        return items.map(({ fileId, offset, entry, sums }) => {
          const found = held(entry);
          if (found) {
            rememberCopy.run(packId, found.fileId);
            return { status: 'duplicate', entry: found };
          }
          const { outcome, fileNo } = catalogue(fileId, entry, this.chunkSize);
          insertPacked.run(fileNo, packId, offset);
          for (const [n, crc] of sums) insertSum.run(fileNo, n, crc);
          return outcome;
        });
      },
    );
    // A packed content's row goes with its sums, and its pack is marked for erasure: its bytes
    // must go at the next compaction, however little of the pack is dead (forgetPackedContent).
    const dropChunkSums = db.prepare('DELETE FROM chunk_sums WHERE file_no = ?');
    this.forgetBytes = db.transaction((fileNo: number) => {
      forgetPackedContent(db, fileNo);
      dropChunkSums.run(fileNo);
    });
    this.commitTx = db.transaction(commitOne);
    this.commitAllTx = db.transaction((items: ReadonlyArray<readonly [string, NewCatalogEntry, number]>) =>
      items.map((item) => commitOne(...item)),
    );
  }

  async stage(now: Date): Promise<string> {
    const stagingId = newFileId();
    // The chunk size is the area's from its first byte: a restart with another CHUNK_SIZE
    // continues an upload in the chunks it began with.
    this.insertStaging.run(stagingId, now.getTime(), this.chunkSize);
    return stagingId;
  }

  /** The chunk size a staging area began with (the configured one for areas made before it was kept). */
  private chunkSizeOf(stagingId: string): number {
    return this.stagingOf.get(stagingId)?.chunk_size ?? this.chunkSize;
  }

  async write(stagingId: string, offset: number, parts: readonly Uint8Array[]): Promise<void> {
    await this.files.write(stagingId, offset, parts);
    // After the bytes: a sum is never ahead of what the file holds. A write that continues a
    // partial chunk sums the chunk's earlier bytes too (one short read, once per request).
    const chunkSize = this.chunkSizeOf(stagingId);
    const into = offset % chunkSize;
    const summer = new ChunkSummer(
      chunkSize,
      offset,
      into > 0 ? this.files.readHead(stagingId, offset - into, into) : undefined,
    );
    for (const part of parts) summer.push(part);
    const sums = summer.finish();
    this.saveSums(stagingId, sums);
  }

  readStaged(stagingId: string, length: number): Readable {
    return this.files.read(stagingId, 0, length);
  }

  async commit(stagingId: string, entry: NewCatalogEntry): Promise<CommitOutcome> {
    // The bytes are durable before the catalog entry that makes them part of the archive. Also
    // for a duplicate: skipping it would answer duplicates measurably faster, which tells a
    // clerk outside the duplicate-reveal scope what the archive holds.
    // On failure the staged bytes stay: a resumable upload retries the commit with them (a direct
    // upload's caller discards them); only bytes a failed sync may have lost are dropped.
    await this.makeDurable(stagingId);
    // IMMEDIATE takes the write lock up front, so two processes committing at once queue
    // instead of failing with SQLITE_BUSY on lock upgrade.
    const outcome = this.commitTx.immediate(stagingId, entry, this.files.size(stagingId));
    if (outcome.status === 'duplicate') await this.discard(stagingId);
    return outcome;
  }

  async commitMany(items: ReadonlyArray<{ stagingId: string; entry: NewCatalogEntry }>): Promise<CommitOutcome[]> {
    // Synced together: the disk takes many syncs at once about as fast as one.
    const synced = await Promise.allSettled(items.map((item) => this.makeDurable(item.stagingId)));
    const failed = synced.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    const outcomes = this.commitAllTx.immediate(
      items.map((item) => [item.stagingId, item.entry, this.files.size(item.stagingId)] as const),
    );
    await Promise.all(
      items.map(async (item, i) => {
        if (outcomes[i]!.status === 'duplicate') await this.discard(item.stagingId);
      }),
    );
    return outcomes;
  }

  async storeMany(items: ReadonlyArray<StoredParts>): Promise<CommitOutcome[]> {
    if (items.length === 0) return [];
    // Every item's bytes are written and synced, a duplicate's too: answering duplicates faster
    // would tell a clerk outside the duplicate-reveal scope what the archive holds. A batch's
    // duplicates (rare: the browser and the importer ask first) are bytes no entry locates.
    for (const { parts, entry } of items) {
      const length = parts.reduce((sum, part) => sum + part.byteLength, 0);
      if (length !== entry.key.length)
        throw new Error(`a content of ${length} bytes was declared as ${entry.key.length}`);
    }
    const { packId, offsets } = await this.packs.append(items.map((item) => item.parts));
    const ids = newFileIds(items.length);
    const packed = items.map(({ parts, entry }, k): PackedItem => {
      const summer = new ChunkSummer(this.chunkSize, 0);
      for (const part of parts) summer.push(part);
      return { fileId: ids[k]!, offset: offsets[k]!, entry, sums: summer.finish() };
    });
    try {
      return this.storePackedTx.immediate(packId, Date.now(), packed);
    } catch (err) {
      // Whatever went wrong (the pack removed under it, the database), the next batch begins a new pack.
      await this.packs.end(packId);
      throw err;
    }
  }

  /**
   * Syncs a staging area's file. When a sync of it failed (this one, or a background one before,
   * in any process), the bytes past what is known to be on disk are not to be trusted: a retried
   * sync may "succeed" over pages the kernel dropped. They are cut off, and the caller is told
   * how many bytes are kept (StagedBytesLostError), so the client sends the rest again.
   */
  private async makeDurable(stagingId: string): Promise<void> {
    let failed: SyncFailedError | undefined;
    try {
      await this.files.seal(stagingId);
    } catch (err) {
      if (!(err instanceof SyncFailedError)) throw err;
      failed = err;
    }
    const lostFrom = this.stagingOf.get(stagingId)?.lost_from ?? null;
    if (!failed && lostFrom === null) return;
    // A committed file (a retried commit) is never cut: its bytes were synced before it was catalogued.
    if (this.isCatalogued(stagingId)) {
      if (failed) throw failed.cause;
      return;
    }
    const kept = Math.min(failed?.durable ?? Infinity, lostFrom ?? Infinity);
    // Recorded before the file is cut, so a crash or a failure in between still drops the bytes next time.
    recordLostBytes(this.db, stagingId, kept);
    await this.files.truncate(stagingId, kept);
    this.forgetLostBytes(stagingId, kept, this.chunkSizeOf(stagingId));
    throw new StagedBytesLostError(
      stagingId,
      kept,
      failed?.cause ?? new Error(`an earlier sync of staging area ${stagingId} failed`),
    );
  }

  async remove(entry: CatalogEntry): Promise<void> {
    const row = this.db
      .prepare<[string], { file_no: number; deleting_at: number | null }>(
        'SELECT file_no, deleting_at FROM catalog WHERE file_id = ?',
      )
      .get(entry.fileId);
    if (row && row.deleting_at === null) throw new Error(`file ${entry.fileId} is live: its bytes are not removed`);
    const at = row && this.packedAt.get(row.file_no);
    // The content file first, then the rows that locate and check it: a crash in between leaves
    // rows of bytes already gone, for a run again (the entry is still being deleted) to drop.
    if (!at) await this.files.remove(entry.fileId);
    if (row) this.forgetBytes(row.file_no);
  }

  async discard(stagingId: string): Promise<void> {
    // File first, then its staging row: a crash in between leaves a row GC can act on. A
    // committed file is never removed, whatever path asks for it.
    if (!this.isCatalogued(stagingId)) {
      await this.files.remove(stagingId);
      this.dropSums.run(stagingId);
    }
    this.deleteStaging.run(stagingId);
  }

  read(
    entry: CatalogEntry,
    range: ByteRange = { start: 0, end: entry.length },
    options: { unchecked?: boolean } = {},
  ): Readable {
    const missing = (err: unknown, offset: number) =>
      (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? new ContentDamagedError(entry.fileId, offset, 'missing', 'its content file is missing')
        : undefined;
    // A packed content's bytes are a range of its pack; the others have their own content file.
    const fileNo = fileNumberOf(this.db, entry.fileId) ?? -1;
    const locate = () => this.packedAt.get(fileNo);
    const bytes = (start: number, end: number, piece?: number): AsyncIterable<Uint8Array> => {
      try {
        return this.packs.read(locate, start, end, piece) ?? this.files.read(entry.fileId, start, end, piece);
      } catch (err) {
        // A pack found gone (and the content in no other): failed as the stream would fail.
        return failing(err);
      }
    };
    if (options.unchecked) return uncheckedRead(bytes(range.start, range.end), entry.fileId, range, missing);
    const span = chunkSpan(entry, range);
    const sums = new Map(this.sumsOf.all(fileNo, span.first, span.last).map((r) => [r.n, r.crc >>> 0]));
    return checkedRead(bytes(span.start, span.end, entry.chunkSize), entry, range, sums, missing);
  }

  async readRanges(entry: CatalogEntry, ranges: readonly ByteRange[]): Promise<Uint8Array[]> {
    const fileNo = fileNumberOf(this.db, entry.fileId) ?? -1;
    // A pack holds more than the content: nothing past the content's end is read from it.
    const within = ranges.map(({ start, end }) => ({ start, end: Math.max(Math.min(end, entry.length), start) }));
    let parts: Buffer[];
    try {
      parts =
        this.packs.readRanges(() => this.packedAt.get(fileNo), within) ??
        readRangesOf(this.files.pathOf(entry.fileId), 0, within);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw new ContentDamagedError(entry.fileId, ranges[0]?.start ?? 0, 'missing', 'its content file is missing');
    }
    return parts.map((part, i) => {
      const { start, end } = ranges[i]!;
      if (part.byteLength < end - start) {
        const from = start + part.byteLength;
        throw new ContentDamagedError(entry.fileId, from, 'missing', `its bytes from byte ${from} on are missing`);
      }
      return part;
    });
  }

  async lacksChunkSums(entry: CatalogEntry): Promise<boolean> {
    const fileNo = fileNumberOf(this.db, entry.fileId);
    const { n } = this.db
      .prepare<[number], { n: number }>('SELECT COUNT(*) AS n FROM chunk_sums WHERE file_no = ?')
      .get(fileNo ?? -1)!;
    return n < entry.chunkCount;
  }

  async adoptChunkSums(entry: CatalogEntry): Promise<ChunkSumAdoption | undefined> {
    return (await this.lacksChunkSums(entry))
      ? chunkSumAdoption(entry.chunkSize, async (sums) => this.adoptSums(entry.fileId, sums))
      : undefined;
  }

  async collectGarbage(before: Date): Promise<GarbageReport> {
    const stale = this.db
      .prepare<[number], { staging_id: string }>(
        'SELECT staging_id FROM staging WHERE created_at < ? AND staging_id NOT IN (SELECT staging_id FROM uploads)',
      )
      .all(before.getTime());
    for (const { staging_id } of stale) {
      // A duplicate's staging row outlives its commit until discard; its id is never catalogued,
      // but check anyway: a catalogued file is never removed.
      if (this.isCatalogued(staging_id)) this.deleteStaging.run(staging_id);
      else await this.discard(staging_id);
    }
    let orphans = 0;
    for await (const id of this.files.ids({ modifiedBefore: before })) {
      if (this.isCatalogued(id) || this.isStaged(id)) continue;
      await this.files.remove(id);
      this.dropSums.run(id);
      orphans++;
    }
    // Packs that locate no content (every batch in them failed or was duplicates), and pack
    // files no row owns; never the pack this process appends to, nor one written to lately.
    const emptyPacks = this.db
      .prepare<[number], { pack_id: string }>(
        'SELECT pack_id FROM packs WHERE written_at < ? AND NOT EXISTS (SELECT 1 FROM packed WHERE packed.pack_id = packs.pack_id)',
      )
      .all(before.getTime());
    const forgetPack = this.db.prepare(
      'DELETE FROM packs WHERE pack_id = ? AND NOT EXISTS (SELECT 1 FROM packed WHERE pack_id = ?)',
    );
    const forgetCopies = this.db.prepare('DELETE FROM pack_copies WHERE pack_id = ?');
    for (const { pack_id } of emptyPacks) {
      if (pack_id === this.packs.appending) continue;
      // The row first: a batch catalogued into the pack meanwhile finds it gone and fails, rather
      // than locate contents in a removed file; a crash before the file goes leaves it to the next run.
      if (forgetPack.run(pack_id, pack_id).changes === 0) continue;
      forgetCopies.run(pack_id);
      await this.packs.remove(pack_id);
      orphans++;
    }
    const packExists = this.db.prepare('SELECT 1 FROM packs WHERE pack_id = ?');
    for await (const id of this.packs.ids({ modifiedBefore: before })) {
      if (packExists.get(id) !== undefined) continue;
      await this.packs.remove(id);
      orphans++;
    }
    // Sums whose staging area is gone (a crash between removing a file and its sums).
    this.db.exec('DELETE FROM staged_sums WHERE staging_id NOT IN (SELECT staging_id FROM staging)');
    return { stagingAreas: stale.length, orphans };
  }

  compact(before: Date): Promise<CompactionReport> {
    return this.compaction.run(before);
  }

  private isCatalogued(id: string): boolean {
    return fileNumberOf(this.db, id) !== undefined;
  }

  private isStaged(id: string): boolean {
    return this.db.prepare('SELECT 1 FROM staging WHERE staging_id = ?').get(id) !== undefined;
  }

  async close(): Promise<void> {
    await this.compaction.stop();
    await this.packs.closeAll();
    await this.files.closeAll();
  }
}
