import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../../errors.js';
import { ContentFiles } from './content-files.js';
import { connect, databaseFile } from './database.js';

const MANIFEST = 'backup.json';

export interface BackupReport {
  directory: string;
  createdAt: string;
  files: number;
  bytes: number;
  /** Content files copied this time; the others were in the backup already (files never change). */
  copiedFiles: number;
  copiedBytes: number;
  /** Files whose content file was already short or missing in DATA_DIR: copied as they are. */
  damaged: string[];
}

interface Manifest {
  format: 1;
  store: 'embedded';
  createdAt: string;
  files: number;
  bytes: number;
  damaged: string[];
}

/**
 * An online, consistent backup of an embedded store into `target`, while the service runs: the
 * database as of one moment (VACUUM INTO reads one snapshot; writers go on), then the content
 * file of every file catalogued at that moment. Committed content files never change and are
 * made durable before their catalog entry exists, so every file of the snapshot is complete on
 * disk. Content already in `target` (an earlier backup) is not copied again. Unfinished uploads
 * are left out: their bytes are still arriving.
 */
export async function backupEmbedded(dataDir: string, target: string, onProgress?: (done: number, total: number) => void): Promise<BackupReport> {
  const source = databaseFile(dataDir);
  if (!fs.existsSync(source)) throw new ConfigError(`DATA_DIR ${dataDir} holds no archive (no ${path.basename(source)})`);
  fs.mkdirSync(target, { recursive: true });
  const snapshot = path.join(target, 'archive.sqlite.partial');
  fs.rmSync(snapshot, { force: true });
  const db = connect(source);
  try {
    db.prepare('VACUUM INTO ?').run(snapshot);
  } finally {
    db.close();
  }

  // Unfinished uploads would resume onto bytes the backup does not hold; counters are of the moment.
  const files = cataloguedFiles(snapshot, `DELETE FROM uploads WHERE outcome IS NULL; DELETE FROM staging;
    DELETE FROM chunk_sums WHERE file_id NOT IN (SELECT file_id FROM catalog); DELETE FROM rate_counts;`);

  const from = new ContentFiles(path.join(dataDir, 'content'));
  const to = new ContentFiles(path.join(target, 'content'));
  let copiedFiles = 0;
  let copiedBytes = 0;
  let bytes = 0;
  const damaged: string[] = [];
  try {
      for (const [i, file] of files.entries()) {
      bytes += file.length;
      const destination = to.pathOf(file.file_id);
      if (fs.statSync(destination, { throwIfNoEntry: false })?.size !== file.length) {
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
        if (size < file.length) damaged.push(file.file_id);
        if (size > file.length) fs.truncateSync(partial, file.length);
        await durable(partial);
        fs.renameSync(partial, destination);
        copiedFiles += 1;
        copiedBytes += Math.min(size, file.length);
      }
      if (i % 1000 === 999) onProgress?.(i + 1, files.length);
    }
  } finally {
    await from.closeAll();
    await to.closeAll();
  }
  // The database last: until it is in place, the backup directory keeps its previous, complete state.
  await durable(snapshot);
  fs.renameSync(snapshot, path.join(target, 'archive.sqlite'));
  const manifest: Manifest = { format: 1, store: 'embedded', createdAt: new Date().toISOString(), files: files.length, bytes, damaged };
  fs.writeFileSync(path.join(target, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return { directory: target, createdAt: manifest.createdAt, files: files.length, bytes, copiedFiles, copiedBytes, damaged };
}

/**
 * Restores a backup into `dataDir`, which must not hold an archive. Content first, the database
 * last, so an interrupted restore never looks like an archive. The service must not run on
 * `dataDir` meanwhile.
 */
export async function restoreEmbedded(backup: string, dataDir: string): Promise<{ files: number; bytes: number; damaged: string[] }> {
  const manifestFile = path.join(backup, MANIFEST);
  if (!fs.existsSync(manifestFile) || !fs.existsSync(path.join(backup, 'archive.sqlite'))) {
    throw new ConfigError(`${backup} is not a complete archive backup (no ${MANIFEST} or archive.sqlite)`);
  }
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest;
  if (manifest.format !== 1 || manifest.store !== 'embedded') throw new ConfigError(`${backup} is not a backup of an embedded store this version can restore`);
  const destination = databaseFile(dataDir);
  if (fs.existsSync(destination)) throw new ConfigError(`DATA_DIR ${dataDir} already holds an archive; restore into an empty directory and point DATA_DIR at it`);
  fs.mkdirSync(dataDir, { recursive: true });

  const files = cataloguedFiles(path.join(backup, 'archive.sqlite'));
  const from = new ContentFiles(path.join(backup, 'content'));
  const to = new ContentFiles(path.join(dataDir, 'content'));
  let bytes = 0;
  try {
    for (const file of files) {
      const source = from.pathOf(file.file_id);
      const size = fs.statSync(source, { throwIfNoEntry: false })?.size;
      const knownDamage = manifest.damaged.includes(file.file_id) && size !== undefined && size < file.length;
      if (size !== file.length && !knownDamage) throw new ConfigError(`the backup's content file of ${file.file_id} is ${size === undefined ? 'missing' : `${size} bytes, not ${file.length}`}: the backup is damaged`);
      fs.mkdirSync(path.dirname(to.pathOf(file.file_id)), { recursive: true });
      await fs.promises.copyFile(source, to.pathOf(file.file_id), fs.constants.COPYFILE_FICLONE);
      await durable(to.pathOf(file.file_id));
      bytes += file.length;
    }
  } finally {
    await from.closeAll();
    await to.closeAll();
  }
  const partial = `${destination}.partial`;
  await fs.promises.copyFile(path.join(backup, 'archive.sqlite'), partial);
  await durable(partial);
  fs.renameSync(partial, destination);
  return { files: files.length, bytes, damaged: manifest.damaged };
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

/** The files a database file catalogues, after `prepare` (SQL run on it first, if any). */
function cataloguedFiles(file: string, prepare?: string): Array<{ file_id: string; length: number }> {
  const db = new Database(file, { readonly: prepare === undefined });
  try {
    if (prepare) db.exec(prepare);
    return db.prepare<[], { file_id: string; length: number }>('SELECT file_id, length FROM catalog ORDER BY file_id').all();
  } finally {
    db.close();
  }
}
