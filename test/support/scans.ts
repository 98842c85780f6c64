import fs from 'node:fs';
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

/** A4 at 150 dpi. */
const PAGE = { width: 1240, height: 1754, margin: 150 };

/** A page of text as a greyscale raster (one byte a pixel), 12 pt, wrapped to the margins. */
async function printedPage(text: string): Promise<Buffer> {
  const body = await sharp({
    text: {
      text: text.replace(/&/g, '&amp;').replace(/</g, '&lt;'),
      font: 'WenQuanYi Micro Hei 12',
      fontfile: CJK_FONT_FILE,
      width: PAGE.width - 2 * PAGE.margin,
      dpi: 150,
      wrap: 'char',
      spacing: 8,
    },
  })
    .png()
    .toBuffer();
  return sharp({ create: { width: PAGE.width, height: PAGE.height, channels: 3, background: 'white' } })
    .composite([
      { input: await sharp(body).negate({ alpha: false }).png().toBuffer(), top: PAGE.margin, left: PAGE.margin },
    ])
    .rotate(0.4, { background: 'white' })
    .resize(PAGE.width, PAGE.height, { fit: 'cover' })
    .greyscale()
    .raw()
    .toBuffer();
}

/** A one-page scan of the text. */
export async function scannedPage(text: string, format: 'jpeg' | 'png' = 'jpeg'): Promise<Buffer> {
  const raw = sharp(await printedPage(text), { raw: { width: PAGE.width, height: PAGE.height, channels: 1 } });
  return format === 'jpeg' ? raw.jpeg({ quality: 70 }).toBuffer() : raw.png().toBuffer();
}

/** A multi-page TIFF scan, a page for each text. */
export async function scannedTiff(texts: readonly string[]): Promise<Buffer> {
  const pages = await Promise.all(texts.map(printedPage));
  return sharp(Buffer.concat(pages), {
    raw: { width: PAGE.width, height: PAGE.height * pages.length, channels: 1, pageHeight: PAGE.height },
  })
    .tiff({ compression: 'lzw' })
    .toBuffer();
}
