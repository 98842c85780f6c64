import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../embedded/database.js';
import { syncDirectory } from './content-files.js';
import { PACK_MAX_BYTES, type PackFiles } from './packs.js';
import type { CompactionReport } from './port.js';

/**
 * A pack is compacted once at least this share of its bytes is dead (no catalog entry locates
 * them: a batch's duplicates, a batch that failed, contents removed from the catalog). At a half,
 * every byte copied gives back at least one byte of disk, and a pack is rewritten at most once
 * for each halving of what it holds. A pack holding a removed content's bytes is compacted
 * whatever its dead share: those bytes must be erased, not just left unread.
 */
export const COMPACT_DEAD_SHARE = 0.5;

/** Bytes read at once (two buffers: one is read while the other is written). */
const COPY_BYTES = 8 * 1024 * 1024;
/** writev takes at most IOV_MAX buffers at once. */
const WRITE_BUFFERS = 1024;

/** The steps of a pack's compaction, in order (tests crash the process after each). */
export type CompactionStep = 'begun' | 'copied' | 'switched' | 'removed';

export interface CompactionOptions {
  /** Tests: called after each step of each pack's compaction (a test kills the process there). */
  afterStep?: (step: CompactionStep, packId: string) => void;
}

interface Candidate {
  pack_id: string;
  written_at: number;
  /** Bytes of the contents the catalog holds. */
  live: number;
  /** Contents the catalog holds located here: 0-byte ones too, which add nothing to `live`. */
  catalogued: number;
  /** 1: a content was removed from the catalog here; its bytes must go. */
  erase: number;
  /** Rows locating contents the catalog no longer holds (bytes to erase as well). */
  uncatalogued: number;
}

/** A pack's bytes end before a content it locates: damage, for the fixity check to report; the pack is left as it is. */
class ShortPackError extends Error {
  override name = 'ShortPackError';
}

interface Live {
  file_no: number;
  pack_offset: number;
  length: number;
}

/** The pack compaction writes into: new, owned by its row, appended to by this compaction alone. */
interface Output {
  id: string;
  handle: FileHandle;
  end: number;
}

/**
 * Compaction of the embedded store's pack files: a pack's live contents are copied into a new
 * pack, then located there, then the old pack is removed. Each step leaves every content
 * readable, if the process dies after it:
 * 1. begun: the new pack is recorded (a row, as every pack is before its first byte) and made;
 *    nothing locates anything in it: GC removes it (a pack that locates no content) after the
 *    staging TTL.
 * 2. copied: the live contents' bytes are in the new pack and synced; nothing locates them yet.
 * 3. switched: one transaction, synced before the old pack may go, moves the contents' rows to
 *    the new pack and forgets the old one; it checks that the old pack took no batch since it
 *    was chosen, and that the new one is still recorded (else it changes nothing).
 * 4. removed: the old pack's file is unlinked; a reader that opened it keeps reading it (POSIX),
 *    one that locates a content afterwards finds it in the new pack. Killed before this, the old
 *    file is a pack file no row owns, which GC removes.
 * Chunk checksums are kept by content (file number and chunk), not by place: they hold as they are.
 */
export class PackCompaction {
  private readonly candidates;
  private readonly liveOf;
  private readonly writtenAt;
  private readonly packRecorded;
  private readonly movePacked;
  private readonly forgetUncatalogued;
  private readonly forgetPack;
  private readonly forgetCopies;
  private readonly stillPacked;
  private readonly markErase;
  private readonly recordOutput;
  private running: Promise<CompactionReport> | undefined;
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly packs: PackFiles,
    private readonly newId: () => string,
    private readonly options: CompactionOptions = {},
  ) {
    // Live: located by a packed row whose content the catalog still holds (the catalog's length
    // is the content's). A packed row whose catalog entry is gone marks bytes to erase.
    this.candidates = db.prepare<[number], Candidate>(
      `SELECT p.pack_id, p.written_at, p.erase,
              COALESCE(SUM(c.length), 0) AS live,
              COUNT(c.file_no) AS catalogued,
              COUNT(k.file_no) - COUNT(c.file_no) AS uncatalogued
         FROM packs p
         LEFT JOIN packed k ON k.pack_id = p.pack_id
         LEFT JOIN catalog c ON c.file_no = k.file_no
        WHERE p.written_at < ?
        GROUP BY p.pack_id`,
    );
    this.liveOf = db.prepare<[string], Live>(
      `SELECT k.file_no, k.pack_offset, c.length
         FROM packed k JOIN catalog c ON c.file_no = k.file_no
        WHERE k.pack_id = ? ORDER BY k.pack_offset`,
    );
    this.writtenAt = db.prepare<[string], { written_at: number }>('SELECT written_at FROM packs WHERE pack_id = ?');
    this.packRecorded = db.prepare<[string], { one: number }>('SELECT 1 AS one FROM packs WHERE pack_id = ?');
    this.movePacked = db.prepare(
      'UPDATE packed SET pack_id = ?, pack_offset = ? WHERE file_no = ? AND pack_id = ? AND pack_offset = ?',
    );
    this.forgetUncatalogued = db.prepare(
      'DELETE FROM packed WHERE pack_id = ? AND NOT EXISTS (SELECT 1 FROM catalog c WHERE c.file_no = packed.file_no)',
    );
    this.stillPacked = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM packed WHERE pack_id = ?');
    this.forgetPack = db.prepare('DELETE FROM packs WHERE pack_id = ?');
    this.forgetCopies = db.prepare('DELETE FROM pack_copies WHERE pack_id = ?');
    this.markErase = db.prepare('UPDATE packs SET erase = 1 WHERE pack_id = ?');
    this.recordOutput = db.prepare('INSERT INTO packs (pack_id, written_at) VALUES (?, ?)');
  }

  /**
   * Compacts the packs nobody appended to since `before` (the staging TTL: no process appends
   * to a pack idle that long) that are at least COMPACT_DEAD_SHARE dead or hold bytes to erase.
   * One run at a time in a process; runs in several processes are safe (the switch checks).
   */
  run(before: Date): Promise<CompactionReport> {
    this.running ??= this.runNow(before).finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops after the step under way (the store is closing); what is done stays done. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running?.catch(() => {});
  }

  private async runNow(before: Date): Promise<CompactionReport> {
    const report: CompactionReport = { packs: 0, reclaimedBytes: 0 };
    const chosen: Array<Candidate & { size: number }> = [];
    for (const candidate of this.candidates.all(before.getTime())) {
      if (candidate.pack_id === this.packs.appending) continue;
      const size = fs.statSync(this.packs.pathOf(candidate.pack_id), { throwIfNoEntry: false })?.size;
      // A pack without its file is damage for the fixity check to report; one that locates
      // nothing is GC's to remove.
      if (size === undefined || (candidate.catalogued === 0 && candidate.uncatalogued === 0)) continue;
      const dead = size - candidate.live;
      if (candidate.erase === 1 || candidate.uncatalogued > 0 || (dead > 0 && dead >= size * COMPACT_DEAD_SHARE))
        chosen.push({ ...candidate, size });
    }
    let output: Output | undefined;
    try {
      for (const pack of chosen) {
        if (this.stopping) break;
        // Several packs' live contents go into one new pack, up to the size a pack takes.
        if (output && output.end + pack.live > PACK_MAX_BYTES) {
          await output.handle.close();
          output = undefined;
        }
        // A 0-byte content needs a pack to be located in too (its bytes: none).
        if (pack.catalogued > 0) output ??= await this.begin();
        const kept = await this.compact(pack, output).catch((err: unknown) => {
          if (err instanceof ShortPackError) return undefined;
          throw err;
        });
        if (kept !== undefined) {
          report.packs += 1;
          report.reclaimedBytes += pack.size - kept;
        }
      }
    } finally {
      await output?.handle.close().catch(() => {});
    }
    return report;
  }

  /** A new pack to compact into, recorded before its file exists (a crash leaves GC a pack that locates nothing). */
  private async begin(): Promise<Output> {
    const id = this.newId();
    this.recordOutput.run(id, Date.now());
    const dir = path.dirname(this.packs.pathOf(id));
    await fs.promises.mkdir(dir, { recursive: true });
    const handle = await fs.promises.open(this.packs.pathOf(id), 'wx', 0o640);
    try {
      await syncDirectory(dir);
    } catch (err) {
      await handle.close();
      throw err;
    }
    return { id, handle, end: 0 };
  }

  /**
   * Compacts one pack into `output` (none when it holds no live content): the bytes the new pack
   * holds of it, or undefined when it changed meanwhile and was left as it was.
   */
  private async compact(pack: Candidate & { size: number }, output: Output | undefined): Promise<number | undefined> {
    this.options.afterStep?.('begun', pack.pack_id);
    const live = this.liveOf.all(pack.pack_id);
    const moves: Array<{ fileNo: number; was: number; at: number }> = [];
    if (live.length > 0) {
      if (!output) throw new Error(`no pack to compact ${pack.pack_id} into`);
      const from = output.end;
      const source = await fs.promises.open(this.packs.pathOf(pack.pack_id), 'r');
      try {
        // Contents that lie back to back make one run; the runs go back to back into the new pack.
        const runs: Run[] = [];
        let at = output.end;
        for (const content of live) {
          const last = runs.at(-1);
          if (last && last.end === content.pack_offset) last.end += content.length;
          else runs.push({ start: content.pack_offset, end: content.pack_offset + content.length });
          moves.push({ fileNo: content.file_no, was: content.pack_offset, at });
          at += content.length;
        }
        output.end += await copyRuns(source, output.handle, runs, output.end, () => this.stopping);
        if (this.stopping) return undefined;
      } catch (err) {
        // What was written of this pack is overwritten by the next.
        output.end = from;
        throw err;
      } finally {
        await source.close();
      }
      await output.handle.datasync();
    }
    this.options.afterStep?.('copied', pack.pack_id);
    if (!this.switchTo(pack, output?.id, moves)) return undefined;
    this.options.afterStep?.('switched', pack.pack_id);
    await fs.promises.rm(this.packs.pathOf(pack.pack_id), { force: true });
    this.options.afterStep?.('removed', pack.pack_id);
    return live.reduce((sum, content) => sum + content.length, 0);
  }

  /**
   * Locates the moved contents in `outputId` and forgets the old pack, in one transaction, synced
   * (synchronous = NORMAL would let a power cut undo it after the old pack's file is gone).
   * False, changing nothing, when the old pack took a batch since it was chosen.
   */
  private switchTo(
    pack: Candidate,
    outputId: string | undefined,
    moves: ReadonlyArray<{ fileNo: number; was: number; at: number }>,
  ): boolean {
    const switched = this.db.transaction(() => {
      if (this.writtenAt.get(pack.pack_id)?.written_at !== pack.written_at) return false;
      if (outputId !== undefined && this.packRecorded.get(outputId) === undefined)
        throw new Error(`pack ${outputId} was removed while ${pack.pack_id} was compacted into it`);
      let gone = false;
      for (const { fileNo, was, at } of moves)
        if (this.movePacked.run(outputId, at, fileNo, pack.pack_id, was).changes === 0) gone = true;
      // A content removed from the catalog while it was copied: its copy must be erased in turn.
      if (gone && outputId !== undefined) this.markErase.run(outputId);
      this.forgetUncatalogued.run(pack.pack_id);
      if (this.stillPacked.get(pack.pack_id)!.n > 0) throw new Error(`pack ${pack.pack_id} changed while compacted`);
      this.forgetPack.run(pack.pack_id);
      // Its dead copies went with it: the new pack holds live contents only.
      this.forgetCopies.run(pack.pack_id);
      return true;
    });
    this.db.pragma('synchronous = FULL');
    try {
      return switched.immediate();
    } finally {
      this.db.pragma('synchronous = NORMAL');
    }
  }
}

/** Bytes [start, end) of a pack. */
interface Run {
  start: number;
  end: number;
}

/**
 * Copies `runs` (in offset order) of `source` back to back into `target` from `at`: the bytes they
 * hold. The source is read in windows of up to COPY_BYTES, dead bytes between runs included (a
 * read of them from the page cache costs less than a system call per run, and live and dead
 * contents alternate in a pack of batches), each window's live parts written with one writev
 * while the next window is read. A gap larger than a window is skipped.
 */
async function copyRuns(
  source: FileHandle,
  target: FileHandle,
  runs: readonly Run[],
  at: number,
  stopping: () => boolean,
): Promise<number> {
  const buffers = [Buffer.allocUnsafe(COPY_BYTES), Buffer.allocUnsafe(COPY_BYTES)];
  let writing: Promise<unknown> = Promise.resolve();
  let written = at;
  let k = 0;
  let position = runs[0]?.start ?? 0;
  for (let b = 0; k < runs.length && !stopping(); b ^= 1) {
    const windowStart = position;
    let windowEnd = windowStart;
    const parts: Array<{ from: number; to: number }> = [];
    while (k < runs.length && parts.length < WRITE_BUFFERS) {
      const run = runs[k]!;
      const from = Math.max(position, run.start);
      if (from - windowStart >= COPY_BYTES) break;
      const to = Math.min(run.end, windowStart + COPY_BYTES);
      if (to > from) parts.push({ from: from - windowStart, to: to - windowStart });
      windowEnd = Math.max(windowEnd, to);
      if (to < run.end) {
        position = to;
        break;
      }
      k += 1;
      position = runs[k]?.start ?? position;
    }
    if (parts.length === 0) continue;
    const buffer = buffers[b]!;
    const want = windowEnd - windowStart;
    let bytesRead = 0;
    for (let n = -1; bytesRead < want && n !== 0; bytesRead += n)
      ({ bytesRead: n } = await source.read(buffer, bytesRead, want - bytesRead, windowStart + bytesRead));
    if (bytesRead < want)
      throw new ShortPackError(`a pack ends at ${windowStart + bytesRead}, before a content it locates`);
    await writing;
    const pieces = parts.map(({ from, to }) => buffer.subarray(from, to));
    const bytes = parts.reduce((sum, { from, to }) => sum + to - from, 0);
    const writeAt = written;
    written += bytes;
    writing = target.writev(pieces, writeAt).then(({ bytesWritten }) => {
      if (bytesWritten !== bytes)
        throw Object.assign(new Error(`short write to a pack: ${bytesWritten} of ${bytes} bytes (disk full?)`), {
          code: 'ENOSPC',
        });
    });
  }
  await writing;
  return written - at;
}
