import fs from 'node:fs';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { describeFsError } from './file-errors.js';

/**
 * What an import reads: the files of a directory tree, or of a path table exported from a
 * legacy records system. Both become one list of regular files to import and a list of
 * problems (what cannot be imported, and why), so the rest of the importer never meets a
 * FIFO, a dangling link or a bad manifest row.
 */

/** A regular file to import, as it was when the source was read. */
export interface ImportItem {
  /** How the file is named to the user: relative to the tree, or the path table's text. */
  label: string;
  /**
   * What the journal knows it by: the label in a tree; in a path table also the record (or
   * line), since two records may name one file and each is an upload of its own.
   */
  key: string;
  /** What to open: raw bytes when the name on disk is not UTF-8. */
  fsPath: string | Buffer;
  /** The file name the archive records. */
  name: string;
  /** The manifest's record id, carried to the results. */
  recordId?: string;
  size: number;
  mtimeMs: number;
  ino: number;
}

export interface SourceProblem {
  label: string;
  recordId?: string;
  reason: string;
}

export interface ImportSource {
  items: ImportItem[];
  problems: SourceProblem[];
  /** Names on disk that were not UTF-8 and were read as GB18030 (common on old Windows shares). */
  legacyNames: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const gb18030 = new TextDecoder('gb18030');

/** A name on disk as text: UTF-8 if it is, else GB18030, the encoding of Chinese Windows. */
function decodeName(raw: Buffer): { text: string; legacy: boolean } {
  try {
    return { text: utf8.decode(raw), legacy: false };
  } catch {
    return { text: gb18030.decode(raw), legacy: true };
  }
}

const KINDS: Array<[(s: fs.Stats) => boolean, string]> = [
  [(s) => s.isFIFO(), 'a named pipe (FIFO)'],
  [(s) => s.isSocket(), 'a socket'],
  [(s) => s.isCharacterDevice(), 'a character device'],
  [(s) => s.isBlockDevice(), 'a block device'],
];

function notRegular(stats: fs.Stats): string {
  return `not a regular file: ${KINDS.find(([is]) => is(stats))?.[1] ?? 'a special file'}; skipped`;
}

function itemOf(
  label: string,
  key: string,
  fsPath: string | Buffer,
  name: string,
  stats: fs.Stats,
  recordId?: string,
): ImportItem {
  return {
    label,
    key,
    fsPath,
    name,
    ...(recordId !== undefined ? { recordId } : {}),
    size: stats.size,
    mtimeMs: stats.mtimeMs,
    ino: stats.ino,
  };
}

const SEP = Buffer.from('/');

/**
 * Every regular file under `root`, in a stable order (by name bytes, depth first). Symbolic
 * links are followed; a link to a directory already on the way down is a loop and reported,
 * as are dangling links, special files and directories that cannot be read.
 */
export async function walkTree(root: string): Promise<ImportSource> {
  const source: ImportSource = { items: [], problems: [], legacyNames: 0 };
  const rootStats = await fs.promises.stat(root);
  if (!rootStats.isDirectory())
    throw new SourceError(`${root} is not a directory: name a folder, or a path table with --manifest`);

  const visit = async (dir: Buffer, label: string, ancestors: Set<string>): Promise<void> => {
    let entries: fs.Dirent<Buffer>[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true, encoding: 'buffer' });
    } catch (err) {
      source.problems.push({ label: label || '.', reason: `folder not read: ${describeFsError(err)}` });
      return;
    }
    entries.sort((a, b) => Buffer.compare(a.name, b.name));
    const children = entries.map((entry) => Buffer.concat([dir, SEP, entry.name]));
    // stat follows links: a dangling one fails here, a looping one with ELOOP.
    const looks = await statEach(children);
    for (const [i, entry] of entries.entries()) {
      const { text, legacy } = decodeName(entry.name);
      if (legacy) source.legacyNames++;
      const childLabel = label ? `${label}/${text}` : text;
      const child = children[i]!;
      const look = looks[i]!;
      let stats: fs.Stats;
      if ('stats' in look) stats = look.stats;
      else {
        const err = look.error;
        const code = (err as NodeJS.ErrnoException).code;
        if (entry.isSymbolicLink() && code === 'ENOENT') {
          const target = await fs.promises.readlink(child, { encoding: 'buffer' }).then(
            (t) => decodeName(t).text,
            () => '?',
          );
          source.problems.push({
            label: childLabel,
            reason: `broken symbolic link: its target ${target} does not exist; skipped`,
          });
        } else source.problems.push({ label: childLabel, reason: `${describeFsError(err)}; skipped` });
        continue;
      }
      if (stats.isDirectory()) {
        const id = `${stats.dev}:${stats.ino}`;
        if (ancestors.has(id)) {
          source.problems.push({
            label: childLabel,
            reason: 'symbolic link loop: it leads back to a folder above it; skipped',
          });
          continue;
        }
        await visit(child, childLabel, new Set(ancestors).add(id));
      } else if (stats.isFile()) {
        source.items.push(
          itemOf(childLabel, childLabel, legacy || !isUtf8Path(child) ? child : child.toString('utf8'), text, stats),
        );
      } else {
        source.problems.push({ label: childLabel, reason: notRegular(stats) });
      }
    }
  };
  await visit(Buffer.from(path.resolve(root)), '', new Set([`${rootStats.dev}:${rootStats.ino}`]));
  return source;
}

/** Stats asked of the file system at once: one after another, a folder of 10,000 files took 0.7 s to list. */
const STATS_AT_ONCE = 64;

/** Each path's stats (or why there are none), in order; several asked at a time (a network share answers them in parallel). */
async function statEach(paths: readonly Buffer[]): Promise<Array<{ stats: fs.Stats } | { error: unknown }>> {
  const looks = new Array<{ stats: fs.Stats } | { error: unknown }>(paths.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(STATS_AT_ONCE, paths.length) }, async () => {
      while (next < paths.length) {
        const i = next++;
        looks[i] = await fs.promises.stat(paths[i]!).then(
          (stats) => ({ stats }),
          (error: unknown) => ({ error }),
        );
      }
    }),
  );
  return looks;
}

function isUtf8Path(p: Buffer): boolean {
  try {
    utf8.decode(p);
    return true;
  } catch {
    return false;
  }
}

/** Column names a manifest may use, by meaning (compared without case, spaces, "_" or "-"). */
const COLUMNS = {
  path: ['path', 'filepath', 'file', 'realpath', '路径', '文件路径'],
  recordId: ['recordid', 'record', 'id', '记录号', '档号'],
  name: ['name', 'filename', 'originalname', '文件名', '名称'],
} as const;

function columnIndex(header: string[], names: readonly string[]): number {
  return header.findIndex((h) => names.includes(h.toLowerCase().replace(/[\s_-]/g, '')));
}

/**
 * The rows of a path table (CSV with a header row; UTF-8, or GB18030 as Chinese Excel writes
 * it). Relative paths are taken from `base`. Each bad row is a problem of its own.
 */
export async function readManifest(file: string, base: string): Promise<ImportSource> {
  const source: ImportSource = { items: [], problems: [], legacyNames: 0 };
  const raw = await fs.promises.readFile(file);
  const { text, legacy } = decodeName(raw);
  if (legacy) source.legacyNames++;
  const label = path.basename(file);
  // A row csv-parse cannot read (a stray quote) is skipped and named; an unclosed quote takes
  // the rest of the table with it, which the problem says.
  const rows = parseCsv(text, {
    bom: true,
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_skip: (err: Error | undefined) =>
      void source.problems.push({ label, reason: `${err?.message ?? 'unreadable row'}; skipped` }),
  }) as unknown as Array<{ record: string[]; info: { lines: number } }>;
  const header = rows[0]?.record;
  if (!header) throw new SourceError(`${label} is empty: it needs a header row with a "path" column`);
  const at = {
    path: columnIndex(header, COLUMNS.path),
    recordId: columnIndex(header, COLUMNS.recordId),
    name: columnIndex(header, COLUMNS.name),
  };
  if (at.path < 0) throw new SourceError(`${label} has no "path" column in its header row (${header.join(', ')})`);
  for (let i = 1; i < rows.length; i++) {
    const { record: row, info } = rows[i]!;
    const line = `${label} line ${info.lines}`;
    const recordId = at.recordId >= 0 ? row[at.recordId]?.trim() || undefined : undefined;
    const given = row[at.path]?.trim() ?? '';
    if (row.length !== header.length) {
      source.problems.push({
        label: line,
        ...(recordId ? { recordId } : {}),
        reason: `${line}: ${row.length} columns where the header has ${header.length}; row skipped`,
      });
      continue;
    }
    if (given === '') {
      source.problems.push({ label: line, ...(recordId ? { recordId } : {}), reason: `${line}: no path; row skipped` });
      continue;
    }
    const fsPath = path.resolve(base, given);
    const name = (at.name >= 0 ? row[at.name]?.trim() : '') || path.basename(given);
    try {
      const stats = await fs.promises.stat(fsPath);
      if (stats.isFile())
        source.items.push(
          itemOf(
            given,
            `${recordId ? `record ${recordId}` : `line ${info.lines}`}\t${given}`,
            fsPath,
            name,
            stats,
            recordId,
          ),
        );
      else
        source.problems.push({
          label: given,
          ...(recordId ? { recordId } : {}),
          reason: `${line}: ${stats.isDirectory() ? 'a folder, not a file; row skipped' : notRegular(stats)}`,
        });
    } catch (err) {
      source.problems.push({
        label: given,
        ...(recordId ? { recordId } : {}),
        reason: `${line}: ${describeFsError(err)}; row skipped`,
      });
    }
  }
  return source;
}

/** A source that cannot be read at all (not a folder; a path table without a header or path column). */
export class SourceError extends Error {
  override name = 'SourceError';
}
