import type { PDFiumDocument, PDFiumLibrary } from '@hyzyla/pdfium';

/** A page drawn: one grey byte a pixel, or four (red, green, blue, alpha), row by row. */
export interface DrawnPdfPage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 4;
}

/** An open PDF whose pages are drawn one at a time; closed when its pages are read. */
export interface OpenPdf {
  readonly pages: number;
  /** The page (index from 0) drawn to fit `box`, its aspect kept: in grey (what OCR reads) unless `colour`. */
  draw(page: number, box: { width: number; height: number }, colour?: boolean): Promise<DrawnPdfPage>;
  close(): void;
}

/**
 * Draws PDF pages as images for OCR with PDFium, Chromium's PDF engine compiled to WebAssembly
 * (@hyzyla/pdfium): no native library, the same on every processor, and it draws in grey, what
 * OCR reads (docs/decisions/ocr-engine.md has the comparison with PDF.js on a canvas). Loaded when
 * the first scanned PDF comes, in the reading process only.
 */
export class PdfPageDrawer {
  private library: Promise<PDFiumLibrary> | undefined;

  async open(bytes: Uint8Array): Promise<OpenPdf> {
    const library = await (this.library ??= this.start());
    // PDFium copies the bytes into its own memory.
    const doc: PDFiumDocument = await library.loadDocument(bytes);
    return {
      pages: doc.getPageCount(),
      async draw(index, box, colour = false) {
        const page = doc.getPage(index);
        const { originalWidth, originalHeight } = page.getOriginalSize();
        const scale = Math.min(box.width / originalWidth, box.height / originalHeight);
        const drawn = await page.render({ scale, colorSpace: colour ? 'BGRA' : 'Gray', render: 'bitmap' });
        // In colour, @hyzyla/pdfium hands PDFium's blue-green-red-alpha over as red first (RGBA).
        return { data: drawn.data, width: drawn.width, height: drawn.height, channels: colour ? 4 : 1 };
      },
      close: () => doc.destroy(),
    };
  }

  private start(): Promise<PDFiumLibrary> {
    const started = import('@hyzyla/pdfium').then(({ PDFiumLibrary }) => PDFiumLibrary.init());
    started.catch(() => (this.library = undefined)); // the next PDF tries again
    return started;
  }
}
