import { extname } from 'node:path';
import type { ScannedPagesReader } from './extraction.js';
import { pageImageOf, type GreyPage, type PageImage } from './page-image.js';
import { type OpenPdf, PdfPageDrawer } from './pdf-pages.js';
import { normalise, textUnits } from './text.js';

// sharp, PDFium and the OCR engine (onnxruntime's native library, 16 MB of models) are loaded when
// the first image or scanned PDF is read, in the reading process (text-reader-process.ts) only.

export const IMAGE_FORMATS = ['jpeg', 'png', 'tiff'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

const BY_EXTENSION: Readonly<Record<string, ImageFormat>> = {
  '.jpg': 'jpeg',
  '.jpeg': 'jpeg',
  '.jpe': 'jpeg',
  '.png': 'png',
  '.tif': 'tiff',
  '.tiff': 'tiff',
};

const BY_MEDIA_TYPE: Readonly<Record<string, ImageFormat>> = {
  'image/jpeg': 'jpeg',
  'image/pjpeg': 'jpeg',
  'image/png': 'png',
  'image/tiff': 'tiff',
};

/** The image format whose text is recognised, by extension first (as textFormat), else by media type. */
export function imageFormat(file: { name: string; contentType: string }): ImageFormat | undefined {
  const mediaType = file.contentType.split(';')[0]!.trim().toLowerCase();
  return BY_EXTENSION[extname(file.name).toLowerCase()] ?? BY_MEDIA_TYPE[mediaType];
}

/**
 * Every page is read with its longer side at most 1024 pixels (an A4 page at about 88 dpi,
 * 724 × 1024), whatever it was scanned at: detection runs at the size it is given (two engines
 * reading 300 dpi pages grew to 7.3 GB), and its CPU time with it. On the evaluation's scans
 * (12 pt text) the error rate was the same from 1280 × 1800 down to 800 pixels (0.6-1.0 %), the
 * CPU a page 6.1-6.5 s there against 3.3-3.6 s here; 1024 keeps a margin below which 12 pt
 * text was still read well, for print down to about 9 pt (docs/decisions/ocr-engine.md).
 */
export const OCR_PAGE_PIXELS = { width: 1024, height: 1024 } as const;

/** Decoded images larger than this (pixels of one page) are not read: a bomb, not a scan. */
const MAX_INPUT_PIXELS = 200_000_000;

/**
 * The scanned pages of one PDF that are read at most (about an hour of one core): a PDF of many
 * thousand empty pages is a few kilobytes. Past it, the first ones stand for the document.
 */
export const MAX_SCANNED_PDF_PAGES = 1000;

/** How onnxruntime runs the models (docs/decisions/ocr-engine.md has the measurements). */
export interface OcrSessionOptions {
  /** Threads one model run uses. */
  intraOpThreads: number;
  graphOptimization: 'disabled' | 'basic' | 'extended' | 'all';
  /** The largest page read: a larger one is scaled down to fit first. */
  pagePixels: { width: number; height: number };
}

export const DEFAULT_OCR_SESSION: OcrSessionOptions = {
  intraOpThreads: 1,
  graphOptimization: 'all',
  pagePixels: OCR_PAGE_PIXELS,
};

/**
 * Called after each page but the last, with the page's milliseconds: it may wait (uploads are
 * arriving) or throw (the reader is stopping), and the next page is read only after it returns.
 */
export type BetweenPages = (pageMs: number) => Promise<void>;

/**
 * An image's text and each page's fingerprint; an image with no text recognised is skipped for
 * the text comparison but keeps its pages' fingerprints (a photo, a seal, a drawing).
 */
export type Recognised =
  | {
      status: 'text';
      text: string;
      format: ImageFormat;
      pages: number;
      pageImages: PageImage[];
      /** Each page's text, in page order (a multi-page scan's pages are compared one by one). */
      pageTexts: string[];
    }
  | { status: 'skipped'; reason: string; pageImages?: PageImage[] };

interface PaddleLine {
  text: string;
  box?: number[][];
}
interface PaddleOcr {
  detect(image: Buffer): Promise<PaddleLine[]>;
}

/**
 * Recognises the text of images with PaddleOCR's PP-OCRv4 mobile models (simplified Chinese and
 * English) through @gutenye/ocr-node on onnxruntime-node's CPU provider: one page at a time,
 * each scaled down to fit OCR_PAGE_PIXELS first, and one image at a time (a second waits for the
 * first), so memory stays that of one page. The engine is made when first needed.
 */
export class PageRecogniser {
  private engine: Promise<PaddleOcr> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly pdfs = new PdfPageDrawer();

  constructor(private readonly session: OcrSessionOptions = DEFAULT_OCR_SESSION) {}

  /** The text of an image file's pages in reading order. A damaged image is 'skipped' with the reason; a failing engine throws. */
  recognise(bytes: Uint8Array, format: ImageFormat, betweenPages?: BetweenPages): Promise<Recognised> {
    return this.inTurn(() => this.recogniseImage(bytes, format, betweenPages));
  }

  /**
   * The text of a PDF's scanned pages (`pages`, indexes from 0; those without a text layer), each
   * drawn and read as an image page is, with its image fingerprint; at most MAX_SCANNED_PDF_PAGES
   * of them (the rest give '' and no fingerprint).
   */
  recognisePdfPages(
    bytes: Uint8Array,
    pages: readonly number[],
    betweenPages?: BetweenPages,
  ): ReturnType<ScannedPagesReader> {
    return this.inTurn(() => this.recognisePdfNow(bytes, pages, betweenPages));
  }

  /** One document at a time (a second waits for the first), so memory stays that of one page. */
  private inTurn<T>(read: () => Promise<T>): Promise<T> {
    const turn = this.queue.then(read);
    this.queue = turn.catch(() => {});
    return turn;
  }

  private async recogniseImage(
    bytes: Uint8Array,
    format: ImageFormat,
    betweenPages?: BetweenPages,
  ): Promise<Recognised> {
    const sharp = await loadSharp();
    const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let pages: number;
    try {
      // What the bytes are decides, not the name: a scan saved as .jpg in PNG is read all the same.
      const meta = await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
      if (!(IMAGE_FORMATS as readonly string[]).includes(meta.format))
        throw new Error(`the bytes are ${meta.format}, not a JPEG, PNG or TIFF image`);
      format = meta.format as ImageFormat;
      pages = meta.pages ?? 1;
    } catch (error) {
      return { status: 'skipped', reason: `unreadable ${format} image: ${summary(error)}` };
    }
    const read = await this.readPages(
      pages,
      async (page) => {
        const { data, info } = await sharp(input, { page, limitInputPixels: MAX_INPUT_PIXELS })
          .rotate() // a camera's EXIF orientation
          .resize({ ...this.session.pagePixels, fit: 'inside', withoutEnlargement: true })
          .greyscale()
          .raw()
          .toBuffer({ resolveWithObject: true });
        return { data, width: info.width, height: info.height };
      },
      (page, error) => `unreadable ${format} image (page ${page + 1}): ${summary(error)}`,
      betweenPages,
    );
    if (read.status === 'skipped') return read;
    const { pageImages } = read;
    const text = read.texts.join('\n\n');
    return text.trim()
      ? { status: 'text', text, format, pages, pageImages, pageTexts: read.texts }
      : { status: 'skipped', reason: 'no text recognised (a photo or a drawing?)', pageImages };
  }

  private async recognisePdfNow(bytes: Uint8Array, pages: readonly number[], betweenPages?: BetweenPages) {
    const sharp = await loadSharp();
    let pdf: OpenPdf;
    try {
      pdf = await this.pdfs.open(bytes);
    } catch (error) {
      return { status: 'skipped' as const, reason: `unreadable pdf: ${summary(error)}` };
    }
    try {
      const read = pages.slice(0, MAX_SCANNED_PDF_PAGES).filter((page) => page < pdf.pages);
      const recognised = await this.readPages(
        read.length,
        async (i) => {
          const { data, ...raw } = await pdf.draw(read[i]!, this.session.pagePixels);
          const grey = await sharp(data, { raw })
            .flatten({ background: '#ffffff' })
            .greyscale()
            .raw()
            .toBuffer({ resolveWithObject: true });
          return { data: grey.data, width: grey.info.width, height: grey.info.height };
        },
        (i, error) => `unreadable pdf (page ${read[i]! + 1}): ${summary(error)}`,
        betweenPages,
      );
      if (recognised.status === 'skipped') return recognised;
      return {
        status: 'text' as const,
        texts: pages.map((_, i) => recognised.texts[i] ?? ''),
        pageImages: recognised.pageImages,
      };
    } finally {
      pdf.close();
    }
  }

  /**
   * Reads `count` pages, each decoded to greyscale by `page`, awaiting `betweenPages` after each but
   * the last; each page is fingerprinted (page-image.ts) from the same decoded pixels the engine reads.
   */
  private async readPages(
    count: number,
    page: (index: number) => Promise<GreyPage>,
    unreadable: (index: number, error: unknown) => string,
    betweenPages?: BetweenPages,
  ): Promise<{ status: 'text'; texts: string[]; pageImages: PageImage[] } | { status: 'skipped'; reason: string }> {
    const sharp = await loadSharp();
    const engine = await (this.engine ??= this.start());
    const texts: string[] = [];
    const pageImages: PageImage[] = [];
    for (let index = 0; index < count; index++) {
      const started = performance.now();
      let png: Buffer;
      let image: Pick<PageImage, 'hash' | 'box'>;
      try {
        const grey = await page(index);
        image = pageImageOf(grey);
        png = await sharp(grey.data, { raw: { width: grey.width, height: grey.height, channels: 1 } })
          .png({ compressionLevel: 1 })
          .toBuffer();
      } catch (error) {
        return { status: 'skipped', reason: unreadable(index, error) };
      }
      const text = readingOrder(await engine.detect(png));
      texts.push(text);
      pageImages.push({ ...image, units: textUnits(normalise(text)).length });
      if (index < count - 1) await betweenPages?.(performance.now() - started);
    }
    return { status: 'text', texts, pageImages };
  }

  private async start(): Promise<PaddleOcr> {
    const { default: Ocr } = await import('@gutenye/ocr-node');
    const started = Ocr.create({
      onnxOptions: {
        intraOpNumThreads: this.session.intraOpThreads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: this.session.graphOptimization,
        // The arena keeps the largest page's tensors for ever (1.4 GB resident after three pages).
        enableCpuMemArena: false,
        enableMemPattern: false,
      },
    }) as Promise<PaddleOcr>;
    started.catch(() => (this.engine = undefined)); // the next image tries again
    return started;
  }
}

/** PaddleOCR's lines come in no particular order: top to bottom, then left to right; one printed line may come as two boxes. */
function readingOrder(lines: readonly PaddleLine[]): string {
  const top = (l: PaddleLine) => (l.box ? Math.min(...l.box.map((p) => p[1]!)) : 0);
  const left = (l: PaddleLine) => (l.box ? Math.min(...l.box.map((p) => p[0]!)) : 0);
  const height = (l: PaddleLine) => (l.box ? Math.max(...l.box.map((p) => p[1]!)) - top(l) : 0);
  return [...lines]
    .sort((a, b) =>
      Math.abs(top(a) - top(b)) < Math.min(height(a), height(b)) / 2 ? left(a) - left(b) : top(a) - top(b),
    )
    .map((l) => l.text)
    .join('\n');
}

async function loadSharp() {
  const { default: sharp } = await import('sharp');
  sharp.cache(false); // each page is decoded once: a cache would only hold memory
  return sharp;
}

function summary(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0]!.trim() || 'unknown error';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
