import type { PDFiumDocument, PDFiumLibrary } from '@hyzyla/pdfium';

/** A page drawn for reading: one grey byte a pixel, row by row. */
export interface GreyPage {
  data: Uint8Array;
  width: number;
  height: number;
}

/** An open PDF whose pages are drawn one at a time; closed when its pages are read. */
export interface OpenPdf {
  readonly pages: number;
  /** The page (index from 0) drawn to fit `box`, its aspect kept. */
  draw(page: number, box: { width: number; height: number }): Promise<GreyPage>;
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
      async draw(index, box) {
        const page = doc.getPage(index);
        const { originalWidth, originalHeight } = page.getOriginalSize();
        const scale = Math.min(box.width / originalWidth, box.height / originalHeight);
        const drawn = await page.render({ scale, colorSpace: 'Gray', render: 'bitmap' });
        return { data: drawn.data, width: drawn.width, height: drawn.height };
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
