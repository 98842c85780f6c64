import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ByteRange } from './port.js';

/** Once this much is written to a file without a sync, a background sync starts (by default). */
const SYNC_EVERY_BYTES = 64 * 1024 * 1024;
const SMALL_READ_BYTES = 256 * 1024;

/** A file nobody wrote to for this long is closed (a resumable upload may continue in another process). */
const IDLE_CLOSE_MS = 30_000;

interface OpenFile {
  handle: FileHandle;
  unsynced: number;
  /** The background syncs, one after another; never rejects (a failure is kept in `failure`). */
  syncing: Promise<void>;
  lastUsed: number;
  /** Where the writes under way start: a sync covers only what was written before it began. */
  writing: number[];
  /** The end of the bytes written (the file's size when it was opened, at first). */
  end: number;
  /** Bytes [0, durable) are on disk: a sync through this handle covered them, and nothing rewrote them since. */
  durable: number;
  /** The lowest offset written since the running sync began. */
  rewrittenFrom: number;
  /** A background sync failed: bytes past `durable` may be lost, whatever a later sync says. */
  failure?: unknown;
}

export interface ContentFilesOptions {
  /** Once this much is written to a file without a sync, a background sync starts. */
  syncEveryBytes?: number;
  /** A background sync failed: only bytes [0, durable) of the file are known to be on disk. */
  onSyncFailed?: (id: string, durable: number) => void;
}

/**
 * A sync of a file failed, so only its bytes [0, durable) are known to be on disk. (After a failed
 * fsync, Linux may drop the pages it could not write and mark them clean: a second fsync then
 * succeeds, and the file reads back what the disk held before.)
 */
export class SyncFailedError extends Error {
  override name = 'SyncFailedError';
  constructor(
    readonly id: string,
    readonly durable: number,
    cause: unknown,
  ) {
    super(`a sync of content file ${id} failed: ${(cause as Error)?.message ?? cause}`, { cause });
  }
}

/**
 * The embedded store's bytes: one file per content under DATA_DIR/content, holding its
 * fixed-size chunks back to back (chunk n at offset n × chunkSize), so each byte is written
 * once and served with plain file reads. Which files count is decided in SQLite: a file is
 * part of the archive only once its catalog entry is committed.
 */
export class ContentFiles {
  /** Files being written by this process, opened once per staging area. */
  private readonly open = new Map<string, Promise<OpenFile>>();
  /**
   * Fan-out folders known to exist, one bit per folder (the id's first four hex digits): 8 KiB
   * for all 65,536, where a set of their paths kept growing for days as uploads met new ones.
   */
  private readonly folders = new Uint8Array(65_536 / 8);
  /** The same files once opened, for the idle sweep. */
  private readonly ready = new Map<string, OpenFile>();

  private readonly sweeper: NodeJS.Timeout;

  private readonly syncEveryBytes: number;

  constructor(
    private readonly dir: string,
    private readonly options: ContentFilesOptions = {},
  ) {
    this.syncEveryBytes = options.syncEveryBytes ?? SYNC_EVERY_BYTES;
    fs.mkdirSync(dir, { recursive: true });
    this.sweeper = setInterval(() => void this.closeIdle(Date.now() - IDLE_CLOSE_MS), IDLE_CLOSE_MS).unref();
  }

  pathOf(id: string): string {
    // Two levels of fan-out keep directories small with millions of files.
    return path.join(this.dir, id.slice(0, 2), id.slice(2, 4), id);
  }

  private handle(id: string): Promise<OpenFile> {
    let file = this.open.get(id);
    if (!file) {
      const p = this.pathOf(id);
      file = (async () => {
        // Created if missing, never truncated: a resumed writer continues the same file. Its folder
        // is made once per process (a system call less per file, which small files feel), and
        // again should it have gone.
        const folder = path.dirname(p);
        const open = () => fs.promises.open(p, fs.constants.O_WRONLY | fs.constants.O_CREAT, 0o640);
        // Ids are hex; anything else (never made by the archive) just makes its folder each time.
        const bit = /^[0-9a-f]{4}/.test(id) ? Number.parseInt(id.slice(0, 4), 16) : -1;
        const made = async () => {
          await fs.promises.mkdir(folder, { recursive: true });
          if (bit >= 0) this.folders[bit >> 3]! |= 1 << (bit & 7);
        };
        if (bit < 0 || !(this.folders[bit >> 3]! & (1 << (bit & 7)))) await made();
        const handle = await open().catch(async (err: unknown) => {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
          await made();
          return open();
        });
        const { size } = await handle.stat();
        // Bytes written before (by another process, or before a restart) count as written, not as on disk.
        const opened: OpenFile = {
          handle,
          unsynced: 0,
          syncing: Promise.resolve(),
          lastUsed: Date.now(),
          writing: [],
          end: size,
          durable: 0,
          rewrittenFrom: Infinity,
        };
        this.ready.set(id, opened);
        return opened;
      })();
      this.open.set(id, file);
      file.catch(() => this.open.delete(id));
    }
    return file;
  }

  /** Writes contiguous bytes at `offset`, each byte once (positional writes, no read-back). */
  async write(id: string, offset: number, parts: readonly Uint8Array[]): Promise<void> {
    if (parts.length === 0) return;
    const file = await this.handle(id);
    let bytes = 0;
    for (const part of parts) bytes += part.byteLength;
    file.writing.push(offset);
    file.durable = Math.min(file.durable, offset);
    file.rewrittenFrom = Math.min(file.rewrittenFrom, offset);
    file.lastUsed = Date.now();
    const { bytesWritten } = await file.handle
      .writev(parts as Uint8Array[], offset)
      .finally(() => file.writing.splice(file.writing.indexOf(offset), 1));
    file.end = Math.max(file.end, offset + bytesWritten);
    // A file system writes short when it runs out of space (the next write would fail with ENOSPC).
    if (bytesWritten !== bytes)
      throw Object.assign(
        new Error(`short write to content file ${id}: ${bytesWritten} of ${bytes} bytes (disk full?)`),
        { code: 'ENOSPC' },
      );
    file.unsynced += bytes;
    if (file.unsynced >= this.syncEveryBytes) {
      // Flush in the background while more bytes arrive, so the sync at commit is short. A failure
      // is recorded at once (the file may be closed idle before the commit) and surfaces at seal().
      file.unsynced = 0;
      file.syncing = file.syncing
        .then(() => this.sync(file))
        .catch((err: unknown) => {
          file.failure ??= err;
          try {
            this.options.onSyncFailed?.(id, file.durable);
          } catch {
            // Not recorded in the database: this process still knows, and seal() says so.
          }
        });
    }
  }

  /** Syncs an open file; on success, the bytes written before it began are on disk, unless rewritten since. */
  private async sync(file: OpenFile): Promise<void> {
    const covered = Math.min(file.end, ...file.writing);
    file.rewrittenFrom = Infinity;
    await file.handle.datasync();
    if (file.failure === undefined) file.durable = Math.min(covered, file.rewrittenFrom);
  }

  /**
   * Makes everything written to `id` durable, and closes it. When a sync fails (this one or a
   * background one before it), throws a SyncFailedError saying which bytes are known to be on disk.
   */
  async seal(id: string): Promise<void> {
    const opened = this.open.get(id);
    if (opened) {
      this.open.delete(id);
      this.ready.delete(id);
      const file = await opened;
      try {
        await file.syncing;
        // The background sync's own error, rethrown as it was caught.
        // eslint-disable-next-line @typescript-eslint/only-throw-error
        if (file.failure !== undefined) throw file.failure;
        await this.sync(file);
      } catch (err) {
        throw new SyncFailedError(id, file.durable, err);
      } finally {
        await file.handle.close();
      }
      return;
    }
    // Written by another process, or nothing written at all (a 0-byte file): sync what is there.
    // Nothing is known to be on disk before this sync succeeds.
    await fs.promises.mkdir(path.dirname(this.pathOf(id)), { recursive: true });
    const handle = await fs.promises.open(this.pathOf(id), fs.constants.O_WRONLY | fs.constants.O_CREAT, 0o640);
    try {
      await handle.datasync();
    } catch (err) {
      throw new SyncFailedError(id, 0, err);
    } finally {
      await handle.close();
    }
  }

  /** Cuts a file (not open for writing) back to its first `length` bytes, durably. */
  async truncate(id: string, length: number): Promise<void> {
    const handle = await fs.promises.open(this.pathOf(id), 'r+').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!handle) return;
    try {
      if ((await handle.stat()).size > length) await handle.truncate(length);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async remove(id: string): Promise<void> {
    const opened = this.open.get(id);
    if (opened) {
      this.open.delete(id);
      this.ready.delete(id);
      const file = await opened.catch(() => undefined);
      await file?.syncing;
      await file?.handle.close();
    }
    await fs.promises.rm(this.pathOf(id), { force: true });
  }

  /**
   * Bytes [start, end) of a file, also one still being written; in pieces of `piece` bytes (a
   * chunk) when given, so a reader checking chunks rarely has to join pieces.
   */
  read(id: string, start: number, end: number, piece?: number): Readable {
    return readRange(this.pathOf(id), start, end, piece);
  }

  /** The bytes a content file holds (0 when it does not exist). */
  size(id: string): number {
    return fs.statSync(this.pathOf(id), { throwIfNoEntry: false })?.size ?? 0;
  }

  /** The first bytes of a chunk a write continues, read back to sum the whole chunk. */
  readHead(id: string, start: number, length: number): Uint8Array {
    const fd = fs.openSync(this.pathOf(id), 'r');
    try {
      const buffer = Buffer.allocUnsafe(length);
      const bytesRead = fs.readSync(fd, buffer, 0, length, start);
      if (bytesRead !== length) throw new Error(`content file ${id} has fewer bytes than an upload continues from`);
      return buffer;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Ids of the content files last modified before a time (for garbage collection). */
  async *ids(options: { modifiedBefore: Date }): AsyncGenerator<string> {
    for (const top of await fs.promises.readdir(this.dir)) {
      // Fan-out folders only (packs/ holds pack files, which PackFiles lists).
      if (!/^[0-9a-f]{2}$/.test(top)) continue;
      for (const middle of await fs.promises.readdir(path.join(this.dir, top)).catch(() => [] as string[])) {
        const folder = path.join(this.dir, top, middle);
        for (const name of await fs.promises.readdir(folder).catch(() => [] as string[])) {
          if (!/^[0-9a-f]{24}$/.test(name) || this.open.has(name)) continue;
          const stat = await fs.promises.stat(path.join(folder, name)).catch(() => undefined);
          if (stat && stat.mtime < options.modifiedBefore) yield name;
        }
      }
    }
  }

  /**
   * Closes files not written to since `before`; what they hold stays. Synchronous up to the
   * close, so no write can pick up a file between the check and its removal from the map.
   */
  private closeIdle(before: number): void {
    for (const [id, file] of this.ready) {
      if (file.writing.length > 0 || file.lastUsed >= before) continue;
      this.ready.delete(id);
      this.open.delete(id);
      void file.syncing.then(() => file.handle.close().catch(() => {}));
    }
  }

  /** Closes open files; what they hold stays (an interrupted writer may resume). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    const files = [...this.open.values()];
    this.open.clear();
    this.ready.clear();
    await Promise.all(
      files.map(async (opened) => {
        const file = await opened.catch(() => undefined);
        await file?.syncing;
        await file?.handle.close();
      }),
    );
  }
}

/**
 * Bytes [start, end) of a file on disk, in pieces of `piece` bytes when given (a chunk, so a reader
 * checking chunks rarely has to join pieces).
 */
export function readRange(file: string, start: number, end: number, piece = 256 * 1024): Readable {
  if (end <= start) return Readable.from([]);
  // Small ranges (proofs of possession) in one positional read: a file stream costs more to set up.
  if (end - start <= SMALL_READ_BYTES) return Readable.from(readSmall(file, start, end));
  return fs.createReadStream(file, { start, end: end - 1, highWaterMark: piece });
}

/**
 * The same from a file opened already (`fd`, closed when the stream ends or is destroyed): a pack
 * opened before compaction removed it is still read whole (POSIX keeps an unlinked file's bytes
 * while a descriptor holds it).
 */
export function readRangeOfOpen(fd: number, start: number, end: number, piece = 256 * 1024): Readable {
  if (end <= start || end - start <= SMALL_READ_BYTES) {
    let bytes: Buffer[];
    try {
      bytes = end <= start ? [] : readRangesOfOpen(fd, 0, [{ start, end }]);
    } finally {
      fs.closeSync(fd);
    }
    return Readable.from(bytes.filter((b) => b.byteLength > 0));
  }
  return fs.createReadStream('', { fd, start, end: end - 1, highWaterMark: piece, autoClose: true });
}

async function* readSmall(file: string, start: number, end: number): AsyncGenerator<Buffer> {
  const [bytes] = readRangesOf(file, 0, [{ start, end }]);
  // A short file ends the read early, as a file stream does; the reader judges it.
  if (bytes!.byteLength > 0) yield bytes!;
}

/**
 * Small ranges of a file in memory, `base` bytes into it, opened once and read positionally. A
 * range past the file's end comes back short.
 *
 * Synchronous on purpose: open, read and close of a small range cost about 30 µs together from
 * the page cache, while each asynchronous file operation is a thread-pool round trip of
 * 100-300 µs here; with 64 clients proving at once, those round trips queued up and a check
 * took 160 ms (p50) instead of 2 ms. A cold read blocks the event loop for one disk read.
 */
export function readRangesOf(file: string, base: number, ranges: readonly ByteRange[]): Buffer[] {
  const fd = fs.openSync(file, 'r');
  try {
    return readRangesOfOpen(fd, base, ranges);
  } finally {
    fs.closeSync(fd);
  }
}

/** The same from a file opened already (left open). */
export function readRangesOfOpen(fd: number, base: number, ranges: readonly ByteRange[]): Buffer[] {
  return ranges.map(({ start, end }) => {
    const buffer = Buffer.allocUnsafe(Math.max(end - start, 0));
    let read = 0;
    while (read < buffer.length) {
      const n = fs.readSync(fd, buffer, read, buffer.length - read, base + start + read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  });
}

/** Makes the names in a directory (files renamed or made in it) durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
