import { once } from 'node:events';
import type { Response } from 'express';
import contentDisposition from 'content-disposition';
import { csvLine } from './csv.js';

export type Cell = string | number | null | undefined;
export type ExportLanguage = 'zh-CN' | 'en';

/** Rows in the table's order, a batch at a time, each batch with the number of rows in all. */
export type RowBatches<Row> = AsyncIterable<{ items: readonly Row[]; total: number }>;

/**
 * How many rows an export holds at once. Its batches are read through one statement or cursor
 * (the stores' `…Batches`), so a small batch costs no re-reading: 1,000 rows of the widest table
 * (cross-unit files with their units) are a few MB of live heap.
 */
export const EXPORT_BATCH_ROWS = 1_000;

/** Characters of CSV written at once: well below V8's large-object size (128 KiB), so each dies young. */
const WRITE_PIECE_CHARS = 16_384;

/**
 * A whole table as CSV, streamed: every row the filters select (not one page), a batch at a time,
 * each written as the client takes it before the next is read, so memory stays bounded whatever
 * the table's size. The first batch is read before anything is sent (a failure there is an
 * ordinary error answer, and X-Total-Count tells the number of rows); after that a failure can
 * only cut the download short: the response is destroyed (the browser reports a failed download)
 * rather than ending as if complete. However it ends, the batches are let go (their statement or
 * cursor closed).
 */
export async function streamCsv<Row>(
  res: Response,
  name: string,
  header: readonly string[],
  batches: RowBatches<Row>,
  row: (r: Row) => readonly Cell[],
): Promise<void> {
  const reader = batches[Symbol.asyncIterator]();
  try {
    let batch = await reader.next();
    res.setHeader('X-Total-Count', String(batch.done ? 0 : batch.value.total));
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', contentDisposition(`${name}-${new Date().toISOString().slice(0, 10)}.csv`));
    // The byte-order mark makes Excel read UTF-8 (Chinese names) right.
    res.write(`\uFEFF${csvLine(header)}`);
    try {
      while (!batch.done && !res.destroyed) {
        // Written a piece at a time: a whole batch as one text (200–350 KB) would be allocated
        // straight into V8's old generation, where it waits for a full collection.
        let text = '';
        for (const r of batch.value.items) {
          text += csvLine(row(r));
          if (text.length < WRITE_PIECE_CHARS) continue;
          if (!res.write(text)) await drained(res);
          text = '';
          if (res.destroyed) break;
        }
        if (text !== '' && !res.destroyed && !res.write(text)) await drained(res);
        if (res.destroyed) break;
        // The event loop turns between batches: a client taking every row at once never makes a
        // write wait, and the embedded store's batches are read at once, so an export of a
        // province's 1,400,000 rows otherwise held the server for its whole five minutes.
        await new Promise((resolve) => setImmediate(resolve));
        batch = await reader.next();
      }
    } catch (err) {
      res.destroy(err as Error);
      return;
    }
    res.end();
  } finally {
    await reader.return?.();
  }
}

/**
 * Until the client has taken what was written, or is gone. The wait that did not end it is called
 * off: its listeners would otherwise stay on the response, two more for every page of an export
 * (Node warns past ten).
 */
export async function drained(res: Response): Promise<void> {
  const done = new AbortController();
  try {
    await Promise.race([once(res, 'drain', { signal: done.signal }), once(res, 'close', { signal: done.signal })]);
  } finally {
    done.abort();
  }
}

/**
 * A table's columns for people (`lang` given): its headers in their language, sizes in bytes and
 * times in REPORT_TIME_ZONE, each header saying which (a number column Excel can add up, one time
 * zone for the whole file), and the columns only a program needs (account ids, the near-duplicate
 * methods' own measures) left out. Without `lang`, exports stay as scripts read them: column ids,
 * bytes, ISO 8601.
 */
export interface ReadableColumns {
  header: string[];
  /** Turns a raw row (as the machine export has it) into the readable one. */
  cells: (row: readonly Cell[]) => Cell[];
}

const HEADER_WORDS: Record<string, string> = {
  time: '时间',
  action: '操作',
  user: '用户',
  name: '姓名',
  'unit id': '单位代码',
  city: '市',
  county: '县（市、区）',
  town: '乡（镇、街道）',
  street: '村（社区）',
  address: '网络地址',
  'file id': '文件编号',
  'file name': '文件名',
  detail: '详情',
  'size (bytes)': '大小（字节）',
  uploads: '上传次数',
  'first upload': '首次上传',
  'last upload': '最近上传',
  files: '文件数',
  'repeat uploads': '重复上传次数',
  'copies within one upload': '其中同批重复次数',
  're-sends': '其中重复发送次数',
  'repeat bytes': '重复上传的大小（字节）',
  users: '用户数',
  units: '单位数',
  'uploading units': '上传单位',
  uploaders: '上传者',
  day: '日',
  week: '周',
  month: '月',
  'saved uploads': '秒传次数',
  'saved bytes': '节省的空间（字节）',
  md5: 'MD5',
  sha256: 'SHA-256',
  'first stored': '首次上传',
  'files with this md5': '校验码相同的文件数',
  found: '发现时间',
  similarity: '相似度（%）',
  'differs in': '不同之处',
  pages: '页数',
  'matching pages': '相同的页数',
  'page pairs': '相同的页（A 页-B 页）',
  'handled at': '处理时间',
  'handled by': '处理人',
  note: '处理说明',
};
const ENGLISH_HEADERS: Record<string, string> = {
  'repeat bytes': 'repeated size (bytes)',
  'saved bytes': 'saved size (bytes)',
  similarity: 'similarity (%)',
  'page pairs': 'matching pages (A page-B page)',
  'matching pages': 'number of matching pages',
};
/** Ids and measures for programs (the machine export has them): people get names and one similarity. */
const PROGRAM_COLUMNS = new Set(['user id', 'method', 'hamming distance', 'jaccard', 'containment']);
const TIME_COLUMNS = new Set(['time', 'first upload', 'last upload', 'first stored', 'found', 'handled at']);

/** "A: file name" → its side and the column id. */
function sideOf(id: string): { side: string; column: string } {
  const m = /^([AB]):\s*(.*)$/.exec(id);
  return m ? { side: m[1]!, column: m[2]! } : { side: '', column: id };
}

/** Zones that China calls 北京时间 (the IANA names of the one zone, past and present). */
const BEIJING = new Set(['Asia/Shanghai', 'Asia/Chongqing', 'Asia/Chungking', 'Asia/Harbin', 'PRC']);

/**
 * The report time zone as a header says it: "北京时间 UTC+8" / "Beijing time, UTC+8", or another
 * zone's name with its offset now.
 */
export function timeZoneLabel(language: ExportLanguage, timeZone: string, at = new Date()): string {
  const offset =
    new Intl.DateTimeFormat('en', { timeZone, timeZoneName: 'shortOffset' })
      .formatToParts(at)
      .find((p) => p.type === 'timeZoneName')
      ?.value.replace(/^GMT/, 'UTC') ?? '';
  const utc = offset === 'UTC' ? 'UTC+0' : offset;
  if (BEIJING.has(timeZone)) return language === 'zh-CN' ? `北京时间 ${utc}` : `Beijing time, ${utc}`;
  return language === 'zh-CN' ? `${timeZone} ${utc}` : `${timeZone}, ${utc}`;
}

export function readableColumns(language: ExportLanguage, timeZone: string, ids: readonly string[]): ReadableColumns {
  // sv-SE writes "2026-11-27 09:05:00": sortable, and read the same way in both languages.
  const times = new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const zone = timeZoneLabel(language, timeZone);
  const columns = ids.map(sideOf);
  const kept = columns.flatMap((c, i) => (PROGRAM_COLUMNS.has(c.column) ? [] : [i]));
  const header = kept.map((i) => {
    const { side, column } = columns[i]!;
    let words = language === 'zh-CN' ? (HEADER_WORDS[column] ?? column) : (ENGLISH_HEADERS[column] ?? column);
    if (TIME_COLUMNS.has(column)) words = language === 'zh-CN' ? `${words}（${zone}）` : `${words} (${zone})`;
    return side ? `${side}${language === 'zh-CN' ? '：' : ': '}${words}` : words;
  });
  const cells = (row: readonly Cell[]) =>
    kept.map((i) => {
      const value = row[i];
      const { column } = columns[i]!;
      if (TIME_COLUMNS.has(column) && typeof value === 'string' && !Number.isNaN(Date.parse(value)))
        return times.format(new Date(value));
      // A share (0–1) as a whole percentage.
      if (column === 'similarity' && typeof value === 'number') return Math.round(value * 100);
      return value;
    });
  return { header, cells };
}
