import { parentPort } from 'node:worker_threads';
import sharp from 'sharp';
import { PdfPageDrawer } from './near-duplicates/pdf-pages.js';
import type { PageAnswer, PageAsked } from './page-images.js';

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

parentPort!.on('message', (asked: PageAsked) => {
  void draw(asked).then((answer) =>
    parentPort!.postMessage(answer, answer.kind === 'page' ? [answer.jpeg.buffer as ArrayBuffer] : []),
  );
});

async function draw({ id, bytes, page, width }: PageAsked): Promise<PageAnswer> {
  // Tall enough for any page; a page wider than tall still fits the width.
  const box = { width, height: width * 3 };
  try {
    if (isPdf(bytes)) {
      const pdf = await pdfs.open(bytes);
      try {
        if (page > pdf.pages) return { id, kind: 'missing', pages: pdf.pages };
        const { data, ...raw } = await pdf.draw(page - 1, box, true);
        const jpeg = await sharp(data, { raw }).flatten({ background: 'white' }).jpeg(JPEG).toBuffer();
        return { id, kind: 'page', jpeg: new Uint8Array(jpeg), pages: pdf.pages };
      } finally {
        pdf.close();
      }
    }
    const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const meta = await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    const pages = meta.pages ?? 1;
    if (page > pages) return { id, kind: 'missing', pages };
    const jpeg = await sharp(input, { page: page - 1, limitInputPixels: MAX_INPUT_PIXELS })
      .rotate() // a camera's EXIF orientation
      .resize({ ...box, fit: 'inside', withoutEnlargement: true })
      .flatten({ background: 'white' })
      .jpeg(JPEG)
      .toBuffer();
    return { id, kind: 'page', jpeg: new Uint8Array(jpeg), pages };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { id, kind: 'unreadable', reason: message.split('\n')[0]!.slice(0, 200) };
  }
}

function isPdf(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).includes('%PDF-');
}
