import fs from 'node:fs';
import fontkit, { type Font } from '@pdf-lib/fontkit';
import { Document, Packer, Paragraph, TextRun } from 'docx';
import { PDFDocument, type PDFFont } from 'pdf-lib';
import { extractText } from '../../server/services/near-duplicates/extraction.js';

/**
 * A format change, the edit a clerk makes without touching a word: a text document saved again
 * as Word or PDF. The archive never sees the text itself, only what its extractor reads back
 * from the file: paragraphs spaced out by Word, lines broken where the PDF page wrapped them.
 */
export const SAVED_FORMATS = ['docx', 'pdf'] as const;
export type SavedFormat = (typeof SAVED_FORMATS)[number];

const MEDIA_TYPES: Readonly<Record<SavedFormat, string>> = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pdf: 'application/pdf',
};

/**
 * The CJK font PDFs are typeset in. TrueType outlines, which fontkit subsets reliably (it does
 * not CFF fonts such as Noto CJK); one fixed font, so lines wrap at the same places on every machine.
 */
const CJK_FONT = { file: '/usr/share/fonts/truetype/wqy/wqy-microhei.ttc', debianPackage: 'fonts-wqy-microhei' };

export class FontMissingError extends Error {}

/** The text as the archive would fingerprint it after the document was saved as `format`. */
export async function textAfterSavingAs(text: string, format: SavedFormat): Promise<string> {
  const bytes = format === 'docx' ? await docx(text) : await pdf(text);
  const extracted = await extractText(bytes, { name: `copy.${format}`, contentType: MEDIA_TYPES[format] });
  // Every copy has text, so a skipped file is a fault of the file written here, not an outcome to score.
  if (extracted.status === 'skipped')
    throw new Error(`the extractor skipped a copy saved as ${format}: ${extracted.reason}`);
  return extracted.text;
}

/**
 * A line as a word processor shows it: a tab is a gap, not a character a font has a glyph for,
 * and other control characters (a stray escape in a fortune file) are neither shown nor allowed in XML.
 */
function shown(line: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  return line.replace(/\t/g, ' ').replace(/[\x00-\x1f\x7f]/g, '');
}

/** A Word document with a paragraph per line of the text. */
async function docx(text: string): Promise<Uint8Array> {
  const paragraphs = text.split('\n').map((line) => new Paragraph({ children: [new TextRun(shown(line))] }));
  return new Uint8Array(await Packer.toBuffer(new Document({ sections: [{ children: paragraphs }] })));
}

/** A4 with one-inch margins and 11-point type, as a word processor saves by default. */
const PAGE = { width: 595.28, height: 841.89, margin: 72, size: 11, leading: 15.4 };

/** A PDF with a text layer: the lines wrapped to the page width, as many pages as they fill. */
async function pdf(text: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.registerFontkit({ create: firstFontOf });
  // Subset: only the glyphs used are embedded, as PDF writers do with a font of some 20,000 glyphs.
  const font = await doc.embedFont(cjkFont(), { subset: true });
  const width = characterWidths(font);
  const lines = text.split('\n').flatMap((line) => wrap(shown(line), width, PAGE.width - 2 * PAGE.margin));
  const perPage = Math.floor((PAGE.height - 2 * PAGE.margin) / PAGE.leading);
  for (let first = 0; first < lines.length; first += perPage) {
    const page = doc.addPage([PAGE.width, PAGE.height]);
    lines.slice(first, first + perPage).forEach((line, i) => {
      if (line.trim())
        page.drawText(line, {
          x: PAGE.margin,
          y: PAGE.height - PAGE.margin - PAGE.size - i * PAGE.leading,
          size: PAGE.size,
          font,
        });
    });
  }
  return doc.save();
}

let cjkFontBytes: Uint8Array | undefined;

/**
 * The font file, read once for all the PDFs of a run. Its bytes are shared, not the font fontkit
 * parses from them: a parsed font reused by a second document maps some characters to wrong glyphs.
 */
function cjkFont(): Uint8Array {
  if (!fs.existsSync(CJK_FONT.file)) {
    throw new FontMissingError(
      `${CJK_FONT.file} is missing: PDF copies need a CJK font, install it with \`apt-get install ${CJK_FONT.debianPackage}\``,
    );
  }
  cjkFontBytes ??= fs.readFileSync(CJK_FONT.file);
  return cjkFontBytes;
}

/** pdf-lib hands fontkit the whole file; of a collection (.ttc), the first font is the one to use. */
function firstFontOf(data: Uint8Array): Font {
  const made = fontkit.create(data);
  // fontkit's types leave collections out: one has `fonts`, a single font has not.
  return (made as unknown as { fonts?: Font[] }).fonts?.[0] ?? made;
}

/** Width of a piece of text in the page's type, character by character (kerning aside), each measured once. */
function characterWidths(font: PDFFont): (text: string) => number {
  const known = new Map<string, number>();
  const widthOf = (c: string) => {
    let w = known.get(c);
    if (w === undefined) known.set(c, (w = font.widthOfTextAtSize(c, PAGE.size)));
    return w;
  };
  return (text) => {
    let sum = 0;
    for (const c of text) sum += widthOf(c);
    return sum;
  };
}

/**
 * Where a line may break: after any CJK character or full-width punctuation, else only between
 * words (a word keeps the spaces after it, which vanish at the end of a line).
 */
const PIECES =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]\s*|[^\s\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]+\s*|\s+/gu;

/** The line broken into lines no wider than `max`, greedily; a word wider than a line (a long path) is cut anywhere. */
function wrap(line: string, width: (text: string) => number, max: number): string[] {
  const pieces = (line.match(PIECES) ?? []).flatMap((piece) => (width(piece.trimEnd()) > max ? [...piece] : [piece]));
  const lines: string[] = [];
  let current = '';
  let used = 0;
  for (const piece of pieces) {
    if (current.trim() && used + width(piece.trimEnd()) > max) {
      lines.push(current.trimEnd());
      current = '';
      used = 0;
    }
    current += piece;
    used += width(piece);
  }
  lines.push(current.trimEnd());
  return lines;
}
