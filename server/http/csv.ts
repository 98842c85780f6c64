import type { Response } from 'express';
import contentDisposition from 'content-disposition';

/**
 * CSV for spreadsheet users: UTF-8 with a byte-order mark (so Excel reads Chinese text right),
 * CRLF line ends, a header row, fields quoted where needed. A cell that a spreadsheet would run
 * as a formula (starting with =, +, -, @, tab or carriage return) gets a leading apostrophe:
 * file names and user names come from users.
 */
export function csvDocument(
  header: readonly string[],
  rows: Iterable<ReadonlyArray<string | number | null | undefined>>,
): string {
  let text = `\uFEFF${csvLine(header)}`;
  for (const row of rows) text += csvLine(row);
  return text;
}

/** One CSV line, with its CRLF. */
export function csvLine(row: ReadonlyArray<string | number | null | undefined>): string {
  return `${row.map(csvField).join(',')}\r\n`;
}

function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Sends a CSV download named `<name>-<date>.csv`. */
export function sendCsv(
  res: Response,
  name: string,
  header: readonly string[],
  rows: Iterable<ReadonlyArray<string | number | null | undefined>>,
): void {
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', contentDisposition(`${name}-${new Date().toISOString().slice(0, 10)}.csv`));
  res.send(csvDocument(header, rows));
}
