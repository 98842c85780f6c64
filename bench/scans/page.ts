import fs from 'node:fs';
import sharp, { type OverlayOptions } from 'sharp';

/**
 * A printed A4 page, rendered at 300 dpi as a laser printer would put it on paper: the text
 * wrapped to the margins in a CJK font, some pages under a 红头文件 letterhead (the issuing
 * office's name in red, the document number, a red rule). The scans are made from this raster.
 */

/** The CJK font the pages are set in: Debian's, as for the PDFs of `npm run eval:neardup`. */
export const CJK_FONT = { file: '/usr/share/fonts/truetype/wqy/wqy-microhei.ttc', debianPackage: 'fonts-wqy-microhei' };
const FONT_FAMILY = 'WenQuanYi Micro Hei';

export class FontMissingError extends Error {}

export function fontFile(): string {
  if (!fs.existsSync(CJK_FONT.file))
    throw new FontMissingError(
      `${CJK_FONT.file} is missing: the scanned pages are set in a CJK font, install it with \`apt-get install ${CJK_FONT.debianPackage}\``,
    );
  return CJK_FONT.file;
}

/** The resolution pages are printed at; scans resample from it. */
export const PRINT_DPI = 300;
/** A4 at PRINT_DPI, with 2.5 cm margins. */
export const A4 = { width: 2480, height: 3508, margin: 295 };
const BODY_PT = 12;
const TEXT_WIDTH = A4.width - 2 * A4.margin;

/** The shared head of a 红头文件: every page cut from one template carries it unchanged. */
export interface Letterhead {
  /** The issuing office, printed in red across the top ("某某县人民政府办公室文件"). */
  office: string;
  /** The document number under it ("某政办发〔2019〕12号"): differs from page to page. */
  number: string;
}

export interface PageSpec {
  body: string;
  letterhead?: Letterhead;
}

/** A page as printed: its raster and the text on it, in reading order (the truth OCR is scored against). */
export interface PrintedPage {
  png: Buffer;
  text: string;
}

/** Characters Pango's markup would read as markup, and control characters a printer does not print. */
function markupSafe(text: string): string {
  return (
    text
      .replace(/\t/g, ' ')
      // eslint-disable-next-line no-control-regex -- control characters are what is removed
      .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
  );
}

interface Block {
  png: Buffer;
  width: number;
  height: number;
}

async function textBlock(markup: string, size: number, align: 'left' | 'centre'): Promise<Block> {
  const { data, info } = await sharp({
    text: {
      text: markup,
      fontfile: fontFile(),
      font: `${FONT_FAMILY} ${size}`,
      width: TEXT_WIDTH,
      dpi: PRINT_DPI,
      rgba: true,
      align,
      wrap: 'word-char',
      spacing: Math.round((size * PRINT_DPI) / 72 / 2),
    },
  })
    .png()
    .toBuffer({ resolveWithObject: true });
  return { png: data, width: info.width, height: info.height };
}

/**
 * The body, cut to what fits under the head: a long manual page is printed as its first page,
 * and the truth is what was printed. Cut at a line break or sentence where one is near.
 */
async function fittedBody(body: string, room: number): Promise<{ block: Block; text: string }> {
  let text = body.trim();
  for (;;) {
    const block = await textBlock(markupSafe(text), BODY_PT, 'left');
    if (block.height <= room || text.length < 20) return { block, text };
    const keep = Math.floor(text.length * (room / block.height) * 0.97);
    const cut = text.slice(0, keep);
    const at = Math.max(cut.lastIndexOf('\n'), cut.lastIndexOf('。'), cut.lastIndexOf('. '));
    text = (at > keep * 0.8 ? cut.slice(0, at + 1) : cut).trim();
  }
}

export async function printPage(spec: PageSpec): Promise<PrintedPage> {
  const layers: OverlayOptions[] = [];
  const truth: string[] = [];
  let top = A4.margin;
  if (spec.letterhead) {
    const head = await textBlock(
      `<span foreground="#d40000" weight="bold">${markupSafe(spec.letterhead.office)}</span>`,
      30,
      'centre',
    );
    layers.push({ input: head.png, left: A4.margin + Math.round((TEXT_WIDTH - head.width) / 2), top });
    top += head.height + 60;
    const number = await textBlock(markupSafe(spec.letterhead.number), BODY_PT + 2, 'centre');
    layers.push({ input: number.png, left: A4.margin + Math.round((TEXT_WIDTH - number.width) / 2), top });
    top += number.height + 20;
    // The red rule under the number: part of the template, as much as the office's name.
    const rule = await sharp({
      create: { width: TEXT_WIDTH, height: 12, channels: 4, background: { r: 212, g: 0, b: 0, alpha: 1 } },
    })
      .png()
      .toBuffer();
    layers.push({ input: rule, left: A4.margin, top });
    top += 12 + 80;
    truth.push(spec.letterhead.office, spec.letterhead.number);
  }
  const { block, text } = await fittedBody(spec.body, A4.height - A4.margin - top);
  layers.push({ input: block.png, left: A4.margin, top });
  truth.push(text);
  const png = await sharp({ create: { width: A4.width, height: A4.height, channels: 3, background: '#ffffff' } })
    .composite(layers)
    .png({ compressionLevel: 1 })
    .toBuffer();
  return { png, text: truth.join('\n') };
}
