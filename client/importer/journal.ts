import fs from 'node:fs';
import type { ImportItem } from './sources.js';

/** How a file ended in an import, as the journal keeps it. */
export type FinishedAs = 'uploaded' | 'instant' | 'duplicateInTree';

/**
 * One line of the journal. `sending` is written once an upload has its URL (so a later run
 * resumes it), `done` once the archive has recorded the file. A file counts as the same only
 * while its size, modification time and inode are unchanged.
 */
export type JournalRecord = {
  /** The item's key: its path in a tree; its record (or line) and path in a path table. */
  key: string;
  size: number;
  mtimeMs: number;
  ino: number;
  md5: string;
  sha256: string;
} & ({ state: 'sending'; url: string } | { state: 'done'; as: FinishedAs; fileId: string });

export type SendingRecord = Extract<JournalRecord, { state: 'sending' }>;
export type DoneRecord = Extract<JournalRecord, { state: 'done' }>;

/**
 * The import's local journal (JSON lines, append-only), so a re-run skips finished files and
 * resumes unfinished uploads. Each record is one write(2) to a file opened for appending: a
 * killed importer leaves whole lines (at most the last one torn, which is ignored), and the
 * kernel keeps them without an fsync unless the machine itself goes down.
 */
export class ImportJournal {
  readonly #latest = new Map<string, JournalRecord>();
  readonly #fd: number;

  private constructor(readonly file: string) {
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
      for (const line of text.split('\n')) {
        if (!line) continue;
        try {
          const record = JSON.parse(line) as JournalRecord;
          this.#latest.set(record.key, record);
        } catch {
          // A line torn by a kill: the file it names is simply done again.
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    this.#fd = fs.openSync(file, 'a', 0o600);
    // A torn last line is closed off, so the next record starts a line of its own.
    if (text !== '' && !text.endsWith('\n')) fs.writeSync(this.#fd, '\n');
  }

  static open(file: string): ImportJournal {
    return new ImportJournal(file);
  }

  /** What an earlier run recorded of this file, if it is still the same file. */
  find(item: ImportItem): JournalRecord | undefined {
    const record = this.#latest.get(item.key);
    return record && record.size === item.size && record.mtimeMs === item.mtimeMs && record.ino === item.ino
      ? record
      : undefined;
  }

  write(record: JournalRecord): void {
    fs.writeSync(this.#fd, `${JSON.stringify(record)}\n`);
    this.#latest.set(record.key, record);
  }

  close(): void {
    fs.closeSync(this.#fd);
  }
}
