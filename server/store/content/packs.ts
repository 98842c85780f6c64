import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { readRangeOfOpen, readRangesOfOpen, syncDirectory } from './content-files.js';
import type { ByteRange } from './port.js';

/** Where a data directory (or a backup of one) keeps its pack files. */
export function packsFolder(root: string): string {
  return path.join(root, 'content', 'packs');
}

/** A pack's file in a packs folder. */
export function packFile(folder: string, packId: string): string {
  return path.join(folder, `${packId}.pack`);
}

/** A pack takes no more appends once it holds this much (a batch never splits across packs). */
export const PACK_MAX_BYTES = 1024 * 1024 * 1024;
/**
 * A pack nobody appended to for this long takes no more appends: a new one is begun. GC may remove
 * a pack that holds no catalogued content once it is older than the staging TTL (an hour at
 * least), so no process ever appends to a pack that old.
 */
const PACK_IDLE_MS = 10 * 60_000;

/** Where a packed content's bytes are: its pack, and its first byte's offset there. */
export interface PackPlace {
  pack_id: string;
  pack_offset: number;
}

/**
 * Bytes per write. One writev of a whole batch (32 MiB) cost the kernel 0.2 to 1 s per 512 MiB,
 * writes of 4 MiB about 0.1 s (this VM, ext4; a batch's bytes are not in the CPU's caches any
 * more either way).
 */
const WRITE_BYTES = 4 * 1024 * 1024;
/** writev takes at most IOV_MAX buffers at once. */
const WRITE_BUFFERS = 1024;

/** `parts` (empty ones left out) in groups of at most WRITE_BYTES (or one larger part) and WRITE_BUFFERS. */
function writeGroups(parts: readonly Uint8Array[]): Uint8Array[][] {
  const groups: Uint8Array[][] = [];
  let group: Uint8Array[] = [];
  let bytes = 0;
  for (const part of parts) {
    if (part.byteLength === 0) continue;
    if (group.length > 0 && (bytes + part.byteLength > WRITE_BYTES || group.length === WRITE_BUFFERS)) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(part);
    bytes += part.byteLength;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

interface CurrentPack {
  id: string;
  handle: FileHandle;
  end: number;
  lastAppend: number;
}

/** Where a batch's bytes went: its pack, and each content's offset in it. */
export interface Appended {
  packId: string;
  offsets: number[];
}

export interface PackFilesOptions {
  /** Called before the first byte goes into a new pack (the store records that the pack is owned). */
  onNewPack: (packId: string) => void;
  newId: () => string;
}

/**
 * Append-only pack files under DATA_DIR/content/packs, one being appended to per process at a time:
 * the bytes of many small contents back to back, where one file per content costs the kernel more
 * than the content (a file made, named and synced per page of a scanned folder). Bytes are only
 * ever appended, each batch's together and synced once, before the catalog entries that locate them
 * exist; what a pack holds beyond its catalogued contents (a batch's duplicates, a batch whose
 * commit failed) is never read. A sync that fails ends the pack: the next batch begins another.
 */
export class PackFiles {
  private current: CurrentPack | undefined;
  /** Appends, one after another. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly options: PackFilesOptions,
  ) {}

  pathOf(packId: string): string {
    return packFile(this.dir, packId);
  }

  /** The pack this process appends to now, if any (GC leaves it alone). */
  get appending(): string | undefined {
    return this.current?.id;
  }

  /** Appends contents (each as its parts) back to back to one pack and makes them durable; one sync for all. */
  append(contents: ReadonlyArray<readonly Uint8Array[]>): Promise<Appended> {
    const next = this.queue.then(() => this.appendNow(contents));
    this.queue = next.catch(() => {});
    return next;
  }

  private async appendNow(contents: ReadonlyArray<readonly Uint8Array[]>): Promise<Appended> {
    const offsets: number[] = [];
    let bytes = 0;
    for (const parts of contents) {
      offsets.push(bytes);
      for (const part of parts) bytes += part.byteLength;
    }
    const pack = await this.packFor(bytes);
    for (const [k, offset] of offsets.entries()) offsets[k] = pack.end + offset;
    const at = pack.end + bytes;
    try {
      let offset = pack.end;
      for (const group of writeGroups(contents.flat())) {
        const want = group.reduce((sum, part) => sum + part.byteLength, 0);
        const { bytesWritten } = await pack.handle.writev(group, offset);
        if (bytesWritten !== want)
          throw Object.assign(
            new Error(`short write to pack ${pack.id}: ${bytesWritten} of ${want} bytes (disk full?)`),
            {
              code: 'ENOSPC',
            },
          );
        offset += want;
      }
      await pack.handle.datasync();
    } catch (err) {
      // Whatever this pack holds past its last good sync is not to be trusted: begin another.
      await this.endCurrent();
      throw err;
    }
    pack.end = at;
    pack.lastAppend = Date.now();
    return { packId: pack.id, offsets };
  }

  /** The pack the next `bytes` go to: the current one, or a new one when it is full or idle. */
  private async packFor(bytes: number): Promise<CurrentPack> {
    const current = this.current;
    if (
      current &&
      (Date.now() - current.lastAppend > PACK_IDLE_MS || (current.end > 0 && current.end + bytes > PACK_MAX_BYTES))
    )
      await this.endCurrent();
    if (this.current) return this.current;
    const id = this.options.newId();
    this.options.onNewPack(id);
    await fs.promises.mkdir(this.dir, { recursive: true });
    const handle = await fs.promises.open(this.pathOf(id), 'wx', 0o640);
    try {
      // The pack's name is made durable once, so its synced bytes are found after a power cut.
      await syncDirectory(this.dir);
    } catch (err) {
      await handle.close();
      throw err;
    }
    this.current = { id, handle, end: 0, lastAppend: Date.now() };
    return this.current;
  }

  /** Takes no more appends into `packId` (a batch written there could not be catalogued). */
  async end(packId: string): Promise<void> {
    await this.queue;
    if (this.current?.id === packId) await this.endCurrent();
  }

  private async endCurrent(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    await current?.handle.close().catch(() => {});
  }

  /**
   * Opens the pack a content is in, where `locate` (read from the database) says it is now. Found
   * and opened in one synchronous step, so this process's compaction cannot move the content and
   * remove the pack in between; a pack another process's compaction removed meanwhile is noticed
   * (ENOENT) and the content located again, in the pack it was moved to. Undefined when the
   * content is in no pack.
   */
  open(locate: () => PackPlace | undefined): { fd: number; place: PackPlace } | undefined {
    let place = locate();
    for (;;) {
      if (!place) return undefined;
      try {
        return { fd: fs.openSync(this.pathOf(place.pack_id), 'r'), place };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        const now = locate();
        if (now?.pack_id === place.pack_id || now === undefined) throw err;
        place = now;
      }
    }
  }

  /** Bytes [start, end) of a content located by `locate`, in pieces of `piece` bytes when given. */
  read(locate: () => PackPlace | undefined, start: number, end: number, piece?: number): Readable | undefined {
    const opened = this.open(locate);
    if (!opened) return undefined;
    const { fd, place } = opened;
    return readRangeOfOpen(fd, place.pack_offset + start, place.pack_offset + end, piece);
  }

  /** Small ranges of a content located by `locate`, in memory (a range past the pack's end comes back short). */
  readRanges(locate: () => PackPlace | undefined, ranges: readonly ByteRange[]): Buffer[] | undefined {
    const opened = this.open(locate);
    if (!opened) return undefined;
    try {
      return readRangesOfOpen(opened.fd, opened.place.pack_offset, ranges);
    } finally {
      fs.closeSync(opened.fd);
    }
  }

  /** Ids of the pack files on disk last modified before a time. */
  async *ids(options: { modifiedBefore: Date }): AsyncGenerator<string> {
    for (const name of await fs.promises.readdir(this.dir).catch(() => [] as string[])) {
      const id = /^([0-9a-f]{24})\.pack$/.exec(name)?.[1];
      if (!id || id === this.current?.id) continue;
      const stat = await fs.promises.stat(path.join(this.dir, name)).catch(() => undefined);
      if (stat && stat.mtime < options.modifiedBefore) yield id;
    }
  }

  async remove(packId: string): Promise<void> {
    if (packId === this.current?.id) throw new Error(`pack ${packId} is being appended to`);
    await fs.promises.rm(this.pathOf(packId), { force: true });
  }

  async closeAll(): Promise<void> {
    await this.queue;
    await this.endCurrent();
  }
}
