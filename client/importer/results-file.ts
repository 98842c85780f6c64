import fs from 'node:fs';
import type { FileResult } from './importer.js';

const COLUMNS = ['path', 'record_id', 'outcome', 'file_id', 'md5', 'size', 'reason'] as const;

/** A CSV field, quoted when it must be (RFC 4180): paths may hold commas, quotes and newlines. */
function field(value: string | number | undefined): string {
  const text = value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The import's results as CSV, one row per file as it ends (UTF-8 with a byte-order mark, so
 * Excel shows the Chinese): what a records system needs to point its records at the archive.
 */
export class ResultsFile {
  readonly #fd: number;

  constructor(file: string) {
    this.#fd = fs.openSync(file, 'w', 0o644);
    fs.writeSync(this.#fd, `\ufeff${COLUMNS.join(',')}\r\n`);
  }

  write(r: FileResult): void {
    fs.writeSync(
      this.#fd,
      `${[r.path, r.recordId, r.outcome, r.fileId, r.md5, r.size, r.reason].map(field).join(',')}\r\n`,
    );
  }

  close(): void {
    fs.closeSync(this.#fd);
  }
}
