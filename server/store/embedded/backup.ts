import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import { ConfigError } from '../../errors.js';
import { ChunkSummer } from '../content/chunk-sums.js';
import { ContentFiles, syncDirectory } from '../content/content-files.js';
import { packFile, packsFolder } from '../content/packs.js';
import { connect, databaseFile, hasColumn, type Db } from './database.js';

const MANIFEST = 'backup.json';

/** A chunk of a file found damaged while it was backed up (the file is backed up as it is). */
export interface BackupDamage {
  fileId: string;
  /** The chunk's number: the first one with bytes missing, or one that does not match its checksum. */
  chunk: number;
  kind: 'missing' | 'corrupted';
}

export interface BackupReport {
  directory: string;
  createdAt: string;
  files: number;
  bytes: number;
  /** Content files copied this time; the others were in the backup already (files never change). */
  copiedFiles: number;
  copiedBytes: number;
  /** Chunks already damaged in DATA_DIR (bytes missing, or not matching their checksum): copied as they are. */
  damaged: BackupDamage[];
}

/** backup.json. Format 1 (earlier versions) named damaged files only, and not the database. */
type Manifest = {
  store: 'embedded';
  createdAt: string;
  files: number;
  bytes: number;
} & ({ format: 1; damaged: string[] } | { format: 2; damaged: BackupDamage[]; database: { sha256: string } });

/** Content files copied at the same time. */
const COPIES_AT_ONCE = 16;

/**
 * Works on the items COPIES_AT_ONCE at a time: each file's sync waits on the disk, and small
 * files are mostly that wait (20,000 files of 20 KiB took 14 s one by one). Every worker stops
 * before a failure is reported, so none still writes when the caller cleans up.
 */
async function eachAtOnce<T>(
  items: readonly T[],
  work: (item: T) => Promise<void>,
  onDone?: (done: number) => void,
  atOnce = COPIES_AT_ONCE,
): Promise<void> {
  let next = 0;
  let done = 0;
  let failed = false;
  const workers = Array.from({ length: Math.min(atOnce, items.length) }, async () => {
    while (next < items.length && !failed) {
      try {
        await work(items[next++]!);
      } catch (err) {
        failed = true;
        throw err;
      }
      onDone?.(++done);
    }
  });
  const settled = await Promise.allSettled(workers);
  const failure = settled.find((w): w is PromiseRejectedResult => w.status === 'rejected');
  if (failure) throw failure.reason;
}

/**
 * An online, consistent backup of an embedded store into `target`, while the service runs: the
 * database as of one moment (VACUUM INTO reads one snapshot; writers go on), then the bytes of
 * every file catalogued at that moment: its content file, or its range of a pack file. Committed
 * bytes never change (packs are only appended to) and are made durable before their catalog entry
 * exists, so every file of the snapshot is complete on disk. Each copy is checked against the
 * chunk checksums, so damage already in the archive (bytes missing or changed) is named, file and
 * chunk, in the report and the manifest; the copy goes on. What an earlier backup in `target`
 * already holds is not copied again (save files it found damaged). Unfinished uploads are left
 * out: their bytes are still arriving.
 */
export async function backupEmbedded(
  dataDir: string,
  target: string,
  onProgress?: (done: number, total: number) => void,
  /** Benchmarks: how many files to copy at once (one measures the way it was). */
  copiesAtOnce = COPIES_AT_ONCE,
): Promise<BackupReport> {
  const source = databaseFile(dataDir);
  if (!fs.existsSync(source))
    throw new ConfigError(`DATA_DIR ${dataDir} holds no archive (no ${path.basename(source)})`);
  fs.mkdirSync(target, { recursive: true });
  // Files an earlier backup here found damaged are copied and checked again, so this one names them too.
  const previous = readManifest(target);
  const recheck = new Set(previous?.damaged.map((d) => (typeof d === 'string' ? d : d.fileId)));
  const snapshot = path.join(target, 'archive.sqlite.partial');
  fs.rmSync(snapshot, { force: true });
  const db = connect(source);
  try {
    db.prepare('VACUUM INTO ?').run(snapshot);
  } finally {
    db.close();
  }

  // Unfinished uploads would resume onto bytes the backup does not hold; counters are of the moment.
  const snapshotDb = new Database(snapshot);
  const from = new ContentFiles(path.join(dataDir, 'content'));
  const to = new ContentFiles(path.join(target, 'content'));
  const written = new Set<string>();
  let files: CataloguedFile[];
  let copiedFiles = 0;
  let copiedBytes = 0;
  let bytes: number;
  const damaged: BackupDamage[] = [];
  try {
    files = cataloguedFiles(
      snapshotDb,
      `DELETE FROM uploads WHERE outcome IS NULL; DELETE FROM staging;
      ${
        // A data directory this version has not opened yet keeps staging areas' sums with the others.
        hasColumn(snapshotDb, 'chunk_sums', 'file_no')
          ? 'DELETE FROM staged_sums;'
          : 'DELETE FROM chunk_sums WHERE file_id NOT IN (SELECT file_id FROM catalog);'
      } DELETE FROM rate_counts;`,
    );
    bytes = files.reduce((sum, file) => sum + file.length, 0);
    const copyOne = async (file: CataloguedFile) => {
      const destination = to.pathOf(file.file_id);
      if (fs.statSync(destination, { throwIfNoEntry: false })?.size === file.length && !recheck.has(file.file_id))
        return;
      fs.mkdirSync(path.dirname(destination), { recursive: true });
      const partial = `${destination}.partial`;
      // A copy-on-write clone where the file system offers one, a plain copy otherwise.
      const copied = await fs.promises.copyFile(from.pathOf(file.file_id), partial, fs.constants.COPYFILE_FICLONE).then(
        () => true,
        (err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
          return false;
        },
      );
      // Damage already in the archive is kept as it is (an empty file for a missing one) and
      // reported: the backup is of the archive as it is, and "archive verify" tells the rest.
      if (!copied) fs.writeFileSync(partial, '');
      const size = fs.statSync(partial).size;
      if (size > file.length) fs.truncateSync(partial, file.length);
      damaged.push(...(await damageIn(partial, file, snapshotDb)));
      await durable(partial);
      fs.renameSync(partial, destination);
      written.add(path.dirname(destination));
      copiedFiles += 1;
      copiedBytes += Math.min(size, file.length);
    };
    await eachAtOnce(
      files.filter((file) => file.pack_id === null),
      copyOne,
      (done) => {
        if (done % 1000 === 0) onProgress?.(done, files.length);
      },
      copiesAtOnce,
    );
    // Packs are only appended to: the bytes an earlier backup copied of one are still its bytes, so
    // only what its catalogued contents need beyond them is copied (and a content found damaged
    // before, again), each such content checked against its chunk checksums.
    const packsDir = packsFolder(target);
    for (const [packId, pack] of packsOf(files)) {
      const source = packFile(packsFolder(dataDir), packId);
      const destination = packFile(packsDir, packId);
      fs.mkdirSync(packsDir, { recursive: true });
      if (!fs.existsSync(destination)) {
        fs.writeFileSync(destination, '');
        written.add(packsDir);
      }
      const had = fs.statSync(destination).size;
      const again = pack.files.filter((file) => recheck.has(file.file_id));
      const copied = await copyRange(source, destination, had, pack.needed);
      for (const file of again) await copyRange(source, destination, file.pack_offset, file.pack_offset + file.length);
      const checked = pack.files
        .filter((file) => file.pack_offset + file.length > had || recheck.has(file.file_id))
        .sort((a, b) => a.pack_offset - b.pack_offset);
      damaged.push(...(await damageInPack(destination, checked, snapshotDb)));
      copiedFiles += checked.length;
      copiedBytes += copied;
    }
    damaged.sort((a, b) => a.fileId.localeCompare(b.fileId) || a.chunk - b.chunk);
  } finally {
    snapshotDb.close();
    await from.closeAll();
    await to.closeAll();
  }
  // The order that keeps an interrupted backup from passing for a complete one (restore needs the
  // manifest, and a format-2 manifest names its database by SHA-256):
  // 1. content files: each synced under a temporary name, renamed, their directories synced;
  // 2. the database, synced and renamed into place, the directory synced: interrupted before
  //    this, the directory still holds the previous backup whole (plus content it does not need);
  //    after it, the previous manifest names another database, and restore refuses it;
  // 3. the manifest, last: written under a temporary name, synced, renamed, the directory synced.
  await syncDirectories(written, path.join(target, 'content'));
  await durable(snapshot);
  const database = { sha256: await sha256Of(snapshot) };
  fs.renameSync(snapshot, path.join(target, 'archive.sqlite'));
  await syncDirectory(target);
  const manifest: Manifest = {
    format: 2,
    store: 'embedded',
    createdAt: new Date().toISOString(),
    files: files.length,
    bytes,
    database,
    damaged,
  };
  const manifestPartial = path.join(target, `${MANIFEST}.partial`);
  fs.writeFileSync(manifestPartial, `${JSON.stringify(manifest, null, 2)}\n`);
  await durable(manifestPartial);
  fs.renameSync(manifestPartial, path.join(target, MANIFEST));
  await syncDirectory(target);
  return {
    directory: target,
    createdAt: manifest.createdAt,
    files: files.length,
    bytes,
    copiedFiles,
    copiedBytes,
    damaged,
  };
}

/** Per database, how its chunk sums are read: by file number, or by id in one of an earlier version. */
const sumsQueries = new WeakMap<Db, string>();

/** The chunk checksums taken when a file's chunks were stored. */
function storedSums(db: Db, fileId: string): Map<number, number> {
  let sql = sumsQueries.get(db);
  if (sql === undefined)
    sumsQueries.set(
      db,
      (sql = hasColumn(db, 'chunk_sums', 'file_no')
        ? 'SELECT s.n, s.crc FROM catalog c JOIN chunk_sums s USING (file_no) WHERE c.file_id = ?'
        : 'SELECT n, crc FROM chunk_sums WHERE file_id = ?'),
    );
  return new Map(
    db
      .prepare<[string], { n: number; crc: number }>(sql)
      .all(fileId)
      .map((r) => [r.n, r.crc >>> 0]),
  );
}

/**
 * A file's damage, from the `size` bytes of it a copy holds and their chunk sums: bytes missing
 * from its end (named by the first chunk they are missing from), and chunks whose bytes do not
 * match the checksum taken when they were stored. Files stored before chunk checksums have none:
 * the fixity check's MD5 and SHA-256 judge them.
 */
function judged(
  file: CataloguedFile,
  size: number,
  summed: ReadonlyArray<readonly [number, number]>,
  stored: ReadonlyMap<number, number>,
): BackupDamage[] {
  const corrupted = summed
    // Only whole chunks: the one cut short is missing bytes, not changed ones.
    .filter(
      ([n, crc]) =>
        Math.min((n + 1) * file.chunk_size, file.length) <= size && stored.has(n) && stored.get(n) !== crc >>> 0,
    )
    .map(([n]): BackupDamage => ({ fileId: file.file_id, chunk: n, kind: 'corrupted' }));
  const missing: BackupDamage[] =
    size < file.length ? [{ fileId: file.file_id, chunk: Math.floor(size / file.chunk_size), kind: 'missing' }] : [];
  return [...corrupted, ...missing];
}

/** The damage in a file's copy of its own. */
async function damageIn(copy: string, file: CataloguedFile, db: Db): Promise<BackupDamage[]> {
  const size = Math.min(fs.statSync(copy).size, file.length);
  const stored = storedSums(db, file.file_id);
  const summer = new ChunkSummer(file.chunk_size, 0);
  if (stored.size > 0 && size > 0)
    for await (const part of fs.createReadStream(copy, { start: 0, end: size - 1, highWaterMark: file.chunk_size }))
      summer.push(part as Buffer);
  return judged(file, size, summer.finish(), stored);
}

/**
 * The damage in the copies of packed files, all in one pack copy and sorted by offset: the pack
 * is read once, from the first of them to the last one's end, each file's bytes summed as they pass.
 */
async function damageInPack(copy: string, files: readonly PackedFile[], db: Db): Promise<BackupDamage[]> {
  if (files.length === 0) return [];
  const packSize = fs.statSync(copy).size;
  const from = files[0]!.pack_offset;
  const to = Math.min(
    packSize,
    files.reduce((end, f) => Math.max(end, f.pack_offset + f.length), 0),
  );
  const summers = files.map((file) => new ChunkSummer(file.chunk_size, 0));
  let position = from;
  let first = 0;
  if (to > from)
    for await (const piece of fs.createReadStream(copy, { start: from, end: to - 1, highWaterMark: 1024 * 1024 })) {
      const part = piece as Buffer;
      const end = position + part.length;
      while (first < files.length && files[first]!.pack_offset + files[first]!.length <= position) first++;
      for (let i = first; i < files.length && files[i]!.pack_offset < end; i++) {
        const file = files[i]!;
        const start = Math.max(file.pack_offset, position);
        const stop = Math.min(file.pack_offset + file.length, end);
        if (stop > start) summers[i]!.push(part.subarray(start - position, stop - position));
      }
      position = end;
    }
  return files.flatMap((file, i) =>
    judged(
      file,
      Math.max(0, Math.min(packSize - file.pack_offset, file.length)),
      summers[i]!.finish(),
      storedSums(db, file.file_id),
    ),
  );
}

/**
 * Restores a backup into `dataDir`, which must not hold an archive. Content first, the database
 * last, so an interrupted restore never looks like an archive. The service must not run on
 * `dataDir` meanwhile.
 */
export async function restoreEmbedded(
  backup: string,
  dataDir: string,
): Promise<{ files: number; bytes: number; damaged: string[] }> {
  const manifest = readManifest(backup);
  const databaseCopy = path.join(backup, 'archive.sqlite');
  if (!manifest || !fs.existsSync(databaseCopy)) {
    throw new ConfigError(`${backup} is not a complete archive backup (no ${MANIFEST} or archive.sqlite)`);
  }
  if (manifest.store !== 'embedded' || (manifest.format !== 1 && manifest.format !== 2))
    throw new ConfigError(`${backup} is not a backup of an embedded store this version can restore`);
  if (manifest.format === 2 && manifest.database.sha256 !== (await sha256Of(databaseCopy))) {
    throw new ConfigError(
      `${backup} is not a complete archive backup (its archive.sqlite is not the database its ${MANIFEST} describes: a backup into it was interrupted; run the backup again)`,
    );
  }
  const damagedIds = [...new Set(manifest.damaged.map((d) => (typeof d === 'string' ? d : d.fileId)))];
  const destination = databaseFile(dataDir);
  if (fs.existsSync(destination))
    throw new ConfigError(
      `DATA_DIR ${dataDir} already holds an archive; restore into an empty directory and point DATA_DIR at it`,
    );
  fs.mkdirSync(dataDir, { recursive: true });

  const backupDb = new Database(databaseCopy, { readonly: true });
  let files: CataloguedFile[];
  try {
    files = cataloguedFiles(backupDb);
  } finally {
    backupDb.close();
  }
  const from = new ContentFiles(path.join(backup, 'content'));
  const to = new ContentFiles(path.join(dataDir, 'content'));
  let bytes = 0;
  try {
    const packs = packsOf(files);
    await eachAtOnce([...packs], async ([packId, pack]) => {
      const source = packFile(packsFolder(backup), packId);
      const size = fs.statSync(source, { throwIfNoEntry: false })?.size ?? 0;
      const short = pack.files.filter((file) => file.pack_offset + file.length > size);
      const unexplained = short.find((file) => !damagedIds.includes(file.file_id));
      if (unexplained)
        throw new ConfigError(
          `the backup's pack ${packId} is ${size} bytes, too short for ${unexplained.file_id}: the backup is damaged`,
        );
      const destination = packFile(packsFolder(dataDir), packId);
      fs.mkdirSync(path.dirname(destination), { recursive: true });
      if (fs.existsSync(source)) await fs.promises.copyFile(source, destination, fs.constants.COPYFILE_FICLONE);
      else fs.writeFileSync(destination, '');
      await durable(destination);
      for (const file of pack.files) bytes += file.length;
    });
    if (packs.size > 0) await syncDirectory(packsFolder(dataDir));
    await eachAtOnce(
      files.filter((file) => file.pack_id === null),
      async (file) => {
        const source = from.pathOf(file.file_id);
        const size = fs.statSync(source, { throwIfNoEntry: false })?.size;
        const knownDamage = damagedIds.includes(file.file_id) && size !== undefined && size < file.length;
        if (size !== file.length && !knownDamage)
          throw new ConfigError(
            `the backup's content file of ${file.file_id} is ${size === undefined ? 'missing' : `${size} bytes, not ${file.length}`}: the backup is damaged`,
          );
        fs.mkdirSync(path.dirname(to.pathOf(file.file_id)), { recursive: true });
        await fs.promises.copyFile(source, to.pathOf(file.file_id), fs.constants.COPYFILE_FICLONE);
        await durable(to.pathOf(file.file_id));
        bytes += file.length;
      },
    );
  } finally {
    await from.closeAll();
    await to.closeAll();
  }
  const partial = `${destination}.partial`;
  await fs.promises.copyFile(databaseCopy, partial);
  await durable(partial);
  fs.renameSync(partial, destination);
  return { files: files.length, bytes, damaged: damagedIds };
}

/** A backup directory's manifest, if it has one that reads. */
function readManifest(dir: string): Manifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

/** On disk before it is renamed into place, so a power cut cannot leave a named but empty file. */
async function durable(file: string): Promise<void> {
  const handle = await fs.promises.open(file, 'r+');
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/** Syncs content directories files were renamed into, and the fan-out directories above them up to `top`. */
async function syncDirectories(dirs: Iterable<string>, top: string): Promise<void> {
  const all = new Set<string>();
  for (const dir of dirs) for (let d = dir; d.startsWith(top); d = path.dirname(d)) all.add(d);
  for (const dir of all) await syncDirectory(dir);
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

interface CataloguedFile {
  file_id: string;
  length: number;
  chunk_size: number;
  /** A packed content's pack and where its bytes begin there (null for a content file of its own). */
  pack_id: string | null;
  pack_offset: number | null;
}

interface PackedFile extends CataloguedFile {
  pack_id: string;
  pack_offset: number;
}

/** The packs packed files are in, each with its files and the bytes of it they need. */
function packsOf(files: readonly CataloguedFile[]): Map<string, { needed: number; files: PackedFile[] }> {
  const packs = new Map<string, { needed: number; files: PackedFile[] }>();
  for (const file of files) {
    if (file.pack_id === null) continue;
    const pack = packs.get(file.pack_id) ?? { needed: 0, files: [] };
    pack.files.push(file as PackedFile);
    pack.needed = Math.max(pack.needed, file.pack_offset! + file.length);
    packs.set(file.pack_id, pack);
  }
  return packs;
}

/** Copies bytes [start, end) of `from` to the same place in `to` (which exists); returns how many the source had. */
async function copyRange(from: string, to: string, start: number, end: number): Promise<number> {
  if (end <= start) return 0;
  const source = await fs.promises.open(from, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!source) return 0;
  const target = await fs.promises.open(to, 'r+');
  try {
    const buffer = Buffer.allocUnsafe(Math.min(end - start, 4 * 1024 * 1024));
    let at = start;
    while (at < end) {
      const { bytesRead } = await source.read(buffer, 0, Math.min(buffer.length, end - at), at);
      if (bytesRead === 0) break;
      await target.write(buffer, 0, bytesRead, at);
      at += bytesRead;
    }
    await target.datasync();
    return at - start;
  } finally {
    await source.close();
    await target.close();
  }
}

/** The files a database catalogues, after `prepare` (SQL run on it first, if any). */
function cataloguedFiles(db: Db, prepare?: string): CataloguedFile[] {
  if (prepare) db.exec(prepare);
  // Databases of earlier versions have no packs, or packed contents by file id, not number.
  const packed = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'packed'").get() !== undefined;
  const key = packed && hasColumn(db, 'packed', 'file_no') ? 'file_no' : 'file_id';
  return db
    .prepare<[], CataloguedFile>(
      packed
        ? `SELECT file_id, length, chunk_size, pack_id, pack_offset FROM catalog LEFT JOIN packed USING (${key}) ORDER BY file_id`
        : 'SELECT file_id, length, chunk_size, NULL AS pack_id, NULL AS pack_offset FROM catalog ORDER BY file_id',
    )
    .all();
}
