import fs from 'node:fs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import sharp from 'sharp';

/**
 * Scanned pages for the OCR tests: a text printed on an A4 page at 150 dpi in Debian's CJK font
 * (the one the scanned evaluation corpus is set in), turned a little as on a scanner's glass,
 * saved as JPEG, PNG or a multi-page TIFF.
 */

export const CJK_FONT_FILE = '/usr/share/fonts/truetype/wqy/wqy-microhei.ttc';

/** Why the OCR tests cannot print their pages here, or undefined when they can. */
export function cannotPrintPages(): string | undefined {
  return fs.existsSync(CJK_FONT_FILE)
    ? undefined
    : `${CJK_FONT_FILE} is missing: install it with \`apt-get install fonts-wqy-microhei\``;
}

/** Where a text is printed: an A4 page at 150 dpi, or a slip just tall enough for a few lines (fast to read). */
export type Paper = 'a4' | 'slip';
const PAPER = {
  a4: { width: 1240, height: 1754, margin: 150 },
  slip: { width: 560, height: 0, margin: 24 },
} as const;

interface Printed {
  raw: Buffer;
  width: number;
  height: number;
}

/** A text printed as a greyscale raster (one byte a pixel), 12 pt, wrapped to the margins; a slip's height is the text's. */
async function printedPage(text: string, paper: Paper = 'a4', minHeight = 0): Promise<Printed> {
  const { width, margin } = PAPER[paper];
  const body = await sharp({
    text: {
      text: text.replace(/&/g, '&amp;').replace(/</g, '&lt;'),
      font: 'WenQuanYi Micro Hei 12',
      fontfile: CJK_FONT_FILE,
      width: width - 2 * margin,
      dpi: 150,
      wrap: 'char',
      spacing: 8,
    },
  })
    .png()
    .toBuffer();
  const bodyHeight = (await sharp(body).metadata()).height;
  const height = Math.max(paper === 'a4' ? PAPER.a4.height : bodyHeight + 2 * margin, minHeight);
  const raw = await sharp({ create: { width, height, channels: 3, background: 'white' } })
    .composite([{ input: await sharp(body).negate({ alpha: false }).png().toBuffer(), top: margin, left: margin }])
    .rotate(0.4, { background: 'white' })
    .resize(width, height, { fit: 'cover' })
    .greyscale()
    .raw()
    .toBuffer();
  return { raw, width, height };
}

/** A one-page scan of the text. */
export async function scannedPage(text: string, format: 'jpeg' | 'png' = 'jpeg', paper: Paper = 'a4'): Promise<Buffer> {
  const { raw, width, height } = await printedPage(text, paper);
  const image = sharp(raw, { raw: { width, height, channels: 1 } });
  return format === 'jpeg' ? image.jpeg({ quality: 70 }).toBuffer() : image.png().toBuffer();
}

/** A multi-page TIFF scan, a page for each text (slips as tall as the tallest). */
export async function scannedTiff(texts: readonly string[], paper: Paper = 'a4'): Promise<Buffer> {
  const tallest = Math.max(...(await Promise.all(texts.map((t) => printedPage(t, paper)))).map((p) => p.height));
  const pages = await Promise.all(texts.map((t) => printedPage(t, paper, tallest)));
  const { width } = pages[0]!;
  return sharp(Buffer.concat(pages.map((p) => p.raw)), {
    raw: { width, height: tallest * pages.length, channels: 1, pageHeight: tallest },
  })
    .tiff({ compression: 'lzw' })
    .toBuffer();
}

/**
 * A PDF as a scanner's "scan to PDF" writes it: each page one JPEG of the text, no text layer. A
 * page given as `{ layer }` is typed instead (a text layer in Helvetica: Latin letters only); one
 * given as `{ jpeg }` is that scan, at 150 dpi.
 */
export async function scannedPdf(
  pages: ReadonlyArray<string | { layer: string } | { jpeg: Buffer }>,
  paper: Paper = 'a4',
): Promise<Buffer> {
  const doc = await PDFDocument.create();
  for (const page of pages) {
    if (typeof page !== 'string' && 'layer' in page) {
      doc
        .addPage([595, 842])
        .drawText(page.layer, { x: 50, y: 780, size: 14, font: await doc.embedFont(StandardFonts.Helvetica) });
      continue;
    }
    let scan: Buffer;
    if (typeof page === 'string') {
      const { raw, width, height } = await printedPage(page, paper);
      scan = await sharp(raw, { raw: { width, height, channels: 1 } })
        .jpeg({ quality: 70 })
        .toBuffer();
    } else scan = page.jpeg;
    const jpeg = await doc.embedJpg(scan);
    // Scanned at 150 dpi: 72 points an inch.
    const size = { width: (jpeg.width * 72) / 150, height: (jpeg.height * 72) / 150 };
    doc.addPage([size.width, size.height]).drawImage(jpeg, { x: 0, y: 0, ...size });
  }
  return Buffer.from(await doc.save());
}
