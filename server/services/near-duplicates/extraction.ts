import { extname } from 'node:path';
// html-to-text: built on htmlparser2 (tolerant of broken markup, decodes entities), drops <script>
// and <style>, and turns block elements into line breaks, which is exactly this job; it is widely
// used and maintained. node-html-parser would need the block/inline rules written by hand.
import type { PageImage } from './page-image.js';
import { normalise, textUnits } from './text.js';
import type { SelectorDefinition } from 'html-to-text';

// The libraries are loaded when a document first needs them (PDF.js and mammoth weigh tens of
// megabytes): the server reads documents on a thread of its own, and its main thread never does.

export type TextFormat = 'txt' | 'md' | 'csv' | 'html' | 'docx' | 'pdf';

export type ExtractedText =
  | {
      status: 'text';
      text: string;
      format: TextFormat;
      /** Some of it was recognised in a PDF's scanned pages (OCR), not read from a text layer. */
      recognised?: true;
      /**
       * The pages' image fingerprints (page-image.ts), in page order from the first: a typed
       * page's has no hash; pages past those read (MAX_SCANNED_PDF_PAGES) are left out.
       */
      pageImages?: PageImage[];
      /** The text of each of those pages (recognised, or its text layer). */
      pageTexts?: string[];
    }
  | { status: 'skipped'; reason: string; pageImages?: PageImage[] };

/**
 * Recognises the text of a PDF's pages that have no text layer (scanned pages, by OCR): the texts
 * of `pages` (indexes from 0), in that order, with the pages' image fingerprints, or why there
 * are none.
 */
export type ScannedPagesReader = (
  bytes: Uint8Array,
  pages: readonly number[],
) => Promise<{ status: 'text'; texts: string[]; pageImages: PageImage[] } | { status: 'skipped'; reason: string }>;

/** Larger documents are not read: their text would cost too much memory for what it adds. */
export const EXTRACTABLE_MAX_BYTES = 64 * 1024 * 1024;

const BY_EXTENSION: Readonly<Record<string, TextFormat>> = {
  '.txt': 'txt',
  '.text': 'txt',
  '.md': 'md',
  '.markdown': 'md',
  '.csv': 'csv',
  '.htm': 'html',
  '.html': 'html',
  '.docx': 'docx',
  '.pdf': 'pdf',
};

const BY_MEDIA_TYPE: Readonly<Record<string, TextFormat>> = {
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/csv': 'csv',
  'text/html': 'html',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/pdf': 'pdf',
};

/** The format, by extension first (clients often send application/octet-stream), else by media type. */
export function textFormat(file: { name: string; contentType: string }): TextFormat | undefined {
  const mediaType = file.contentType.split(';')[0]!.trim().toLowerCase();
  return BY_EXTENSION[extname(file.name).toLowerCase()] ?? BY_MEDIA_TYPE[mediaType];
}

/**
 * Text of a document, by its media type and name (extension), from its bytes. Never throws for
 * bad documents: a damaged or unsupported file is 'skipped' with a reason a person can read.
 */
export async function extractText(
  bytes: Uint8Array,
  file: { name: string; contentType: string },
  scannedPages?: ScannedPagesReader,
): Promise<ExtractedText> {
  const format = textFormat(file);
  if (!format) return skipped(`not a text document (${file.contentType || extname(file.name) || 'unknown type'})`);
  if (bytes.byteLength > EXTRACTABLE_MAX_BYTES) {
    return skipped(
      `too large to extract (${mebibytes(bytes.byteLength)} MiB, at most ${mebibytes(EXTRACTABLE_MAX_BYTES)} MiB)`,
    );
  }
  try {
    if (format === 'pdf') return await pdfText(await extractPdfPages(bytes), bytes, scannedPages);
    const text = await EXTRACTORS[format](bytes);
    return text.trim() ? { status: 'text', text, format } : skipped('no text');
  } catch (error) {
    return skipped(`unreadable ${format}: ${summary(error)}`);
  }
}

const EXTRACTORS: Readonly<Record<Exclude<TextFormat, 'pdf'>, (bytes: Uint8Array) => Promise<string> | string>> = {
  txt: (bytes) => decodeText(bytes),
  md: (bytes) => markdownText(decodeText(bytes)),
  csv: async (bytes) => csvText(decodeText(bytes)),
  html: async (bytes) => htmlText(decodeHtml(bytes)),
  docx: docxText,
};

async function docxText(bytes: Uint8Array): Promise<string> {
  // A .docx is a zip; an encrypted one is an OLE compound file, which JSZip would only call "not a zip".
  if (bytes[0] !== 0x50 || bytes[1] !== 0x4b) throw new Error('not a zip package (encrypted, or an old .doc renamed?)');
  const { default: mammoth } = await import('mammoth');
  return (await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) }))
    .value;
}

/**
 * Plain text in the encodings an archive of Chinese documents holds: UTF-8 when the bytes are valid
 * UTF-8 (a stray GB18030 file rarely is), UTF-16 when a BOM says so, else GB18030 (a superset of
 * GB2312 and GBK, the usual legacy encodings). TextDecoder drops a BOM of its own encoding.
 */
export function decodeText(bytes: Uint8Array): string {
  const utf8 = tryDecode('utf-8', bytes);
  if (utf8 !== undefined) return utf8;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  return new TextDecoder('gb18030').decode(bytes);
}

function tryDecode(encoding: string, bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Markdown keeps its words; links and images keep their text, not their addresses. */
function markdownText(markdown: string): string {
  return markdown
    .replace(/^ {0,3}\[[^\]\n]+\]:[ \t]*\S+.*$/gm, '') // reference definitions: [id]: url "title"
    .replace(/!?\[([^\]\n]*)\]\([^)\n]*\)/g, '$1') // inline links and images
    .replace(/!?\[([^\]\n]*)\]\[[^\]\n]*\]/g, '$1') // reference links and images
    .replace(/<(?:https?|ftp|mailto):[^>\s]*>/gi, ''); // autolinks
}

/** Cells joined by spaces, rows by newlines; a file csv-parse rejects keeps its raw text. */
async function csvText(text: string): Promise<string> {
  const { parse: parseCsv } = await import('csv-parse/sync');
  try {
    const rows = parseCsv(text, { relax_column_count: true, skip_empty_lines: true });
    return rows.map((row) => row.join(' ')).join('\n');
  } catch {
    return text;
  }
}

/**
 * HTML bytes in the charset a <meta> declares (looked for, as browsers do, near the start), else
 * UTF-8 when valid, else GB18030. TextDecoder knows the WHATWG labels (gb2312 and gbk decode as GB18030).
 */
export function decodeHtml(bytes: Uint8Array): string {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return decodeText(bytes);
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 4096));
  const declared = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)?.[1];
  if (declared) {
    try {
      // A <meta> readable as ASCII cannot be in UTF-16 (browsers read it as UTF-8 too).
      const decoder = new TextDecoder(declared);
      if (!['utf-8', 'utf-16le', 'utf-16be', 'replacement'].includes(decoder.encoding)) return decoder.decode(bytes);
    } catch {
      // an unknown label: guess as for plain text
    }
  }
  return decodeText(bytes);
}

const HTML_SELECTORS: SelectorDefinition[] = [
  { selector: 'a', options: { ignoreHref: true } },
  { selector: 'img', format: 'skip' },
  { selector: 'template', format: 'skip' },
  // Each table cell on a line of its own: the default layout runs cells of a row together.
  { selector: 'table', format: 'block' },
  { selector: 'tr', format: 'block' },
  { selector: 'td', format: 'block' },
  { selector: 'th', format: 'block' },
  ...(['h1', 'h2', 'h3', 'h4', 'h5', 'h6'] as const).map((selector) => ({ selector, options: { uppercase: false } })),
];

async function htmlText(html: string): Promise<string> {
  const { convert: htmlToText } = await import('html-to-text');
  return htmlToText(html, { wordwrap: false, selectors: HTML_SELECTORS });
}

/**
 * A PDF's text: its text layer, page by page, with the pages that have none (scans) recognised by
 * `scannedPages` where it is given (OCR on). A PDF with no text at all is skipped, saying why.
 */
async function pdfText(
  layers: string[],
  bytes: Uint8Array,
  scannedPages: ScannedPagesReader | undefined,
): Promise<ExtractedText> {
  const scanned = layers.flatMap((text, page) => (text.trim() ? [] : [page]));
  if (scanned.length === 0 || !scannedPages) {
    const text = mergePages(layers);
    return text.trim() ? { status: 'text', text, format: 'pdf' } : skipped('no text layer (a scan?)');
  }
  const recognised = await scannedPages(bytes, scanned);
  if (recognised.status === 'skipped') {
    // The text layer's pages still count; a scan of nothing but photos has none.
    const text = mergePages(layers);
    return text.trim() ? { status: 'text', text, format: 'pdf' } : skipped(recognised.reason);
  }
  const pages = [...layers];
  scanned.forEach((page, i) => (pages[page] = recognised.texts[i] ?? ''));
  const text = mergePages(pages);
  // Every page in its place, so that a page's number is its place in the list: a typed page with
  // no image fingerprint (never paired on its image), up to the last page whose image was read.
  const images = new Map(scanned.map((page, i) => [page, recognised.pageImages[i]]));
  const unread = scanned[recognised.pageImages.length];
  const count = unread ?? layers.length;
  const pageImages = layers
    .slice(0, count)
    .map((layer, page) => images.get(page) ?? { hash: null, units: textUnits(normalise(layer)).length, box: null });
  const pageTexts = pages.slice(0, count);
  // A scan of photos, seals or drawings has no text, and is still compared on its pages' images.
  return text.trim()
    ? { status: 'text', text, format: 'pdf', recognised: true, pageImages, pageTexts }
    : { status: 'skipped', reason: 'no text recognised (a photo or a drawing?)', pageImages };
}

/** Pages joined as PDF.js's own merge does (unpdf's mergePages): one space for runs of blanks, a blank line at most. */
function mergePages(pages: readonly string[]): string {
  return pages
    .join('\n')
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n');
}

/** The text layer of each page of a PDF ('' for a page that has none). */
async function extractPdfPages(bytes: Uint8Array): Promise<string[]> {
  // PDF.js looks for the header in the first 1,024 bytes too; without one it would search the
  // whole file for objects to rebuild (about a millisecond per 64 KiB) before giving up.
  if (!Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).includes('%PDF-'))
    throw new Error('not a PDF (no %PDF- header)');
  // A copy: PDF.js may take over (detach) the buffer it is given, and the caller keeps its bytes.
  const { extractText: layerText, getDocumentProxy } = await import('unpdf');
  const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isEvalSupported: false });
  try {
    return (await layerText(pdf, { mergePages: false })).text;
  } finally {
    await pdf.destroy();
  }
}

function skipped(reason: string): ExtractedText {
  return { status: 'skipped', reason };
}

function mebibytes(n: number): string {
  return (n / 1024 / 1024).toFixed(n % (1024 * 1024) === 0 ? 0 : 1);
}

/** A library's error in a line: PDF.js names a missing password; others say what broke. */
function summary(error: unknown): string {
  if (error instanceof Error && error.name === 'PasswordException') return 'encrypted (it needs a password)';
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0]!.trim() || (error instanceof Error ? error.name : 'unknown error');
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
