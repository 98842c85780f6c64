import type { CellValue, SheetData } from 'read-excel-file/universal';
import {
  IMPORT_COLUMNS,
  IMPORT_COLUMNS_ZH,
  IMPORT_EXAMPLE_MARK,
  IMPORT_MAX_ROWS,
  type ImportFileReason,
} from '../../shared/accounts.js';
import { ValidationError } from '../errors.js';
import { zipBounds, ZipTooLarge } from './zip-bounds.js';

/**
 * The table of an account import's file, as rows of trimmed text cells: a CSV in UTF-8 (with or
 * without a BOM) or, when its bytes are not UTF-8, in GB18030 (the GBK that Excel and WPS save a
 * plain "CSV" in on a Chinese Windows); or the first sheet of an Excel workbook (.xlsx).
 * Why read-excel-file: docs/decisions/xlsx-import.md.
 */

/** At most this many entries in a workbook's zip (a real one of accounts has about a dozen). */
export const XLSX_MAX_ENTRIES = 200;
/**
 * At most this many bytes of XML, unpacked, in a workbook: a sheet of 1,000 accounts takes about
 * 0.3 MB. Each entry is unpacked no further than it declares (zip-bounds.ts).
 */
export const XLSX_MAX_XML_BYTES = 16 * 1024 * 1024;

const ZIP_SIGNATURE = [0x50, 0x4b, 0x03, 0x04];
/** An Excel 97–2003 workbook (.xls), a compound document: not read, but told apart from a CSV. */
const XLS_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0];

const startsWith = (bytes: Uint8Array, signature: number[]) => signature.every((b, i) => bytes[i] === b);

/** A refusal of the file as a whole: the English message for scripts, and its reason for the page. */
export function fileRefused(message: string, reason: ImportFileReason): ValidationError {
  return new ValidationError(message, { ...reason });
}

/** The rows of an import's file (see above); a file that is no table of cells is refused with its reason. */
export async function importTable(bytes: Uint8Array): Promise<string[][]> {
  if (startsWith(bytes, ZIP_SIGNATURE)) return workbookRows(bytes);
  if (startsWith(bytes, XLS_SIGNATURE))
    throw fileRefused(
      'This is an Excel 97–2003 workbook (.xls), which is not read: save it as "Excel 工作簿 (*.xlsx)" or as "CSV UTF-8", then import it again.',
      { reason: 'old_excel' },
    );
  return csvRows(decodeText(bytes));
}

// The readers of CSV and workbooks are loaded on the first import, not at start: imports are
// rare, and the two with their zip reader hold about 3 MB of the server's heap.
const csvParser = () => import('csv-parse/sync');
const sheetReader = () => import('read-excel-file/universal');

/** UTF-8 when the bytes are UTF-8; else GB18030, which every GBK (and GB2312) file is. */
export function decodeText(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // A BOM-less GBK file; GB18030 decodes any byte sequence, so a binary file reads as noise
    // and is refused by its rows.
    return new TextDecoder('gb18030').decode(bytes);
  }
}

async function csvRows(text: string): Promise<string[][]> {
  const { parse } = await csvParser();
  try {
    const rows: string[][] = parse(text, {
      bom: true,
      skip_empty_lines: false,
      relax_column_count: true,
      trim: true,
    });
    return rows;
  } catch (err) {
    const problem = (err as Error).message;
    throw fileRefused(`The file is not a CSV table: ${problem}`, { reason: 'not_a_table', problem });
  }
}

/** The first sheet of a workbook, each cell as text; the zip is checked before the library unpacks it. */
async function workbookRows(bytes: Uint8Array): Promise<string[][]> {
  try {
    zipBounds(bytes, (name) => /\.xml(\.rels)?$/.test(name), {
      maxEntries: XLSX_MAX_ENTRIES,
      maxBytes: XLSX_MAX_XML_BYTES,
    });
  } catch (err) {
    if (!(err instanceof ZipTooLarge)) throw notWorkbook();
    throw fileRefused(
      `The workbook unpacks to more than this import reads (${XLSX_MAX_XML_BYTES / 1024 / 1024} MB of sheets, ${XLSX_MAX_ENTRIES} parts): keep only the accounts' sheet, or save it as "CSV UTF-8".`,
      { reason: 'sheet_too_large', maxBytes: XLSX_MAX_XML_BYTES },
    );
  }
  const { readSheet } = await sheetReader();
  let sheet: SheetData;
  try {
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    sheet = await readSheet(buffer);
  } catch {
    throw notWorkbook();
  }
  return sheet.map((row) => row.map(cellText));
}

const notWorkbook = () =>
  fileRefused(
    'The file is neither a CSV table nor an Excel workbook (.xlsx) that can be read: save it again from Excel or WPS as .xlsx or "CSV UTF-8".',
    { reason: 'not_a_workbook' },
  );

/** A cell as the CSV would have it: a unit code typed as a number reads as its digits. */
function cellText(cell: CellValue | null): string {
  if (cell === null) return '';
  if (typeof cell === 'number') return Number.isInteger(cell) ? cell.toFixed(0) : String(cell);
  if (typeof cell === 'string') return cell.trim();
  if (typeof cell === 'boolean') return String(cell);
  // A date cell (the library's types say the constructor; it gives a Date).
  const date: unknown = cell;
  return date instanceof Date ? date.toISOString().slice(0, 10) : '';
}

/** What an import skipped: the lines of its example rows, and how many rows of empty cells. */
export interface SkippedRows {
  examples: number[];
  blank: number;
}

/**
 * The example row of the template earlier versions offered, unmarked: files filled in from it
 * still carry it.
 */
const EARLIER_EXAMPLE = ['zhangsan', '档案员', '130922100', '张三'];

/** An example row: marked as one (IMPORT_EXAMPLE_MARK or "#" first), or the earlier template's. */
function isExample(cells: string[]): boolean {
  const first = cells[0] ?? '';
  if (first.startsWith(IMPORT_EXAMPLE_MARK) || first.startsWith('#')) return true;
  return EARLIER_EXAMPLE.every((c, i) => cells[i] === c) && cells.slice(4).every((c) => c === '');
}

/**
 * The rows of accounts in a file's table, each with its line (from 1, the header included): the
 * header, rows of empty cells (Excel leaves `,,,` behind) and example rows are left out and
 * counted; a file with no accounts, or too many, is refused.
 */
export function importRows(table: string[][]): {
  rows: Array<{ line: number; cells: string[] }>;
  skipped: SkippedRows;
} {
  const header = table[0]?.map((c) => c.toLowerCase());
  // A header names the first three columns, or all four (files made for the three-column import still read).
  const names = (columns: readonly string[]) =>
    header !== undefined &&
    columns.slice(0, 3).every((c, i) => header[i] === c) &&
    (header[3] === undefined || header[3] === '' || header[3] === columns[3]);
  const skip = names(IMPORT_COLUMNS) || names(IMPORT_COLUMNS_ZH) ? 1 : 0;
  const skipped: SkippedRows = { examples: [], blank: 0 };
  const rows: Array<{ line: number; cells: string[] }> = [];
  table.slice(skip).forEach((cells, i) => {
    const line = i + 1 + skip;
    if (cells.every((c) => c === '')) skipped.blank++;
    else if (isExample(cells)) skipped.examples.push(line);
    else rows.push({ line, cells });
  });
  if (rows.length === 0)
    throw fileRefused(
      `The file has no accounts${skipped.examples.length > 0 ? ' besides the example row, which is never imported' : ''}: one row per account, "username,role,unit code" and, if you like, ",name".`,
      { reason: 'no_accounts', examples: skipped.examples.length },
    );
  if (rows.length > IMPORT_MAX_ROWS)
    throw fileRefused(`A file holds at most ${IMPORT_MAX_ROWS} accounts; this one has ${rows.length}. Split it.`, {
      reason: 'too_many_rows',
      rows: rows.length,
      max: IMPORT_MAX_ROWS,
    });
  return { rows, skipped };
}
