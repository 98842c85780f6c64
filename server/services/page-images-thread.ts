import { parentPort, workerData } from 'node:worker_threads';
import sharp from 'sharp';
import { PdfPageDrawer } from './near-duplicates/pdf-pages.js';
import type { KeptFiles, PageAnswer, PageAsked } from './page-images.js';

/**
 * The thread of PageImages: draws one page of a PDF (PDFium) or of an image (sharp: JPEG, PNG,
 * TIFF with its pages, WebP, GIF, AVIF) as a JPEG at most `width` pixels wide. Drawing a scanned
 * page takes up to a second of CPU, which must not stop the server's event loop; PDFium's memory
 * goes with the thread when it ends.
 */
const pdfs = new PdfPageDrawer();
sharp.cache(false);

/** Decoded images larger than this are not drawn: a bomb, not a scan (as OCR's limit). */
const MAX_INPUT_PIXELS = 200_000_000;
// Full colour resolution: a document's thin red or blue lines (a 红头, a seal) keep their colour.
const JPEG = { quality: 82, chromaSubsampling: '4:4:4' } as const;

/** A file opened: its pages, drawn one at a time as asked. */
interface OpenFile {
  pages: number;
  /** The file's length: what keeping it open costs, about (PDFium's copy of a PDF, an image's bytes). */
  length: number;
  draw(page: number, box: { width: number; height: number }): Promise<Buffer>;
  close(): void;
}

/**
 * The files last drawn from, the latest last: a viewer pages through one file, so its next page
 * is drawn from the document opened for the last one, its bytes neither read nor sent again. At
 * most `limits.files` of them, `limits.bytes` together; all go with the thread when it is idle.
 */
const limits = workerData as KeptFiles;
const kept = new Map<string, OpenFile>();

parentPort!.on('message', (asked: PageAsked) => {
  void answer(asked).then((answer) =>
    parentPort!.postMessage(answer, answer.kind === 'page' ? [answer.jpeg.buffer as ArrayBuffer] : []),
  );
});

async function answer(asked: PageAsked): Promise<PageAnswer> {
  const { id, file, bytes, page, width } = asked;
  let open = kept.get(file);
  try {
    if (open)
      kept.delete(file); // the latest again
    else if (bytes) open = await opened(bytes);
    else return { id, kind: 'unopened', kept: [...kept.keys()] };
  } catch (error) {
    return { id, kind: 'unreadable', reason: reasonOf(error), kept: [...kept.keys()] };
  }
  kept.set(file, open);
  if (page > open.pages) return { id, kind: 'missing', pages: open.pages, kept: [...kept.keys()] };
  try {
    // Tall enough for any page; a page wider than tall still fits the width.
    const jpeg = await open.draw(page, { width, height: width * 3 });
    return { id, kind: 'page', jpeg: new Uint8Array(jpeg), pages: open.pages, kept: [...kept.keys()] };
  } catch (error) {
    return { id, kind: 'unreadable', reason: reasonOf(error), kept: [...kept.keys()] };
  }
}

/** The file opened, room made for it first: the files drawn from longest ago are closed. */
async function opened(bytes: Uint8Array): Promise<OpenFile> {
  let length = bytes.byteLength;
  for (const open of kept.values()) length += open.length;
  for (const [key, open] of kept) {
    if (kept.size < limits.files && length <= limits.bytes) break;
    kept.delete(key);
    length -= open.length;
    open.close();
  }
  return isPdf(bytes) ? openPdf(bytes) : openImage(bytes);
}

async function openPdf(bytes: Uint8Array): Promise<OpenFile> {
  const pdf = await pdfs.open(bytes);
  return {
    pages: pdf.pages,
    length: bytes.byteLength,
    async draw(page, box) {
      const { data, ...raw } = await pdf.draw(page - 1, box, true);
      return sharp(data, { raw }).flatten({ background: 'white' }).jpeg(JPEG).toBuffer();
    },
    close: () => pdf.close(),
  };
}

async function openImage(bytes: Uint8Array): Promise<OpenFile> {
  const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const meta = await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
  return {
    pages: meta.pages ?? 1,
    length: bytes.byteLength,
    draw: (page, box) =>
      sharp(input, { page: page - 1, limitInputPixels: MAX_INPUT_PIXELS })
        .rotate() // a camera's EXIF orientation
        .resize({ ...box, fit: 'inside', withoutEnlargement: true })
        .flatten({ background: 'white' })
        .jpeg(JPEG)
        .toBuffer(),
    close: () => {},
  };
}

function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 200);
}

function isPdf(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).includes('%PDF-');
}
