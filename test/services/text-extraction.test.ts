import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fontkit from '@pdf-lib/fontkit';
import { Document, Packer, Paragraph, TextRun } from 'docx';
import { PDFDocument, PDFHexString, rgb, StandardFonts, type PDFFont } from 'pdf-lib';
import { EXTRACTABLE_MAX_BYTES, extractText } from '../../server/services/near-duplicates/extraction.js';
import type { ExtractedText } from '../../server/services/near-duplicates/extraction.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** Words in GB18030 (the same bytes as in GB2312 and GBK), written out: Node has no GB18030 encoder. */
const GB = {
  档案: [0xb5, 0xb5, 0xb0, 0xb8],
  通知: [0xcd, 0xa8, 0xd6, 0xaa],
  整理: [0xd5, 0xfb, 0xc0, 0xed],
};

/** Bytes of ASCII strings and raw byte runs, in order. */
function bytes(...parts: (string | number[])[]): Uint8Array {
  return Buffer.concat(
    parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'ascii') : Buffer.from(part))),
  );
}

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function textOf(result: ExtractedText): string {
  assert.equal(result.status, 'text', result.status === 'skipped' ? `skipped: ${result.reason}` : '');
  return result.status === 'text' ? result.text : '';
}

function reasonOf(result: ExtractedText): string {
  assert.equal(result.status, 'skipped', 'expected the document to be skipped');
  return result.status === 'skipped' ? result.reason : '';
}

async function docx(paragraphs: string[]): Promise<Uint8Array> {
  const doc = new Document({
    sections: [{ children: paragraphs.map((text) => new Paragraph({ children: [new TextRun(text)] })) }],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

/** A PDF with one page per list of lines, drawn in the font `embed` gives (Helvetica by default). */
async function pdf(
  pages: string[][],
  embed: (doc: PDFDocument) => Promise<PDFFont> = (doc) => doc.embedFont(StandardFonts.Helvetica),
): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await embed(doc);
  for (const lines of pages) {
    const page = doc.addPage([595, 842]);
    lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 24, size: 14, font }));
  }
  return doc.save();
}

/**
 * A CJK font with TrueType outlines, if the machine has one (Debian fonts-wqy-microhei, fonts-wqy-zenhei,
 * fonts-droid-fallback). CFF fonts such as Noto CJK are left out: fontkit's CFF subsetting is not to be relied on.
 */
function cjkFontPath(): string | undefined {
  const wanted = /^(wqy-microhei\.ttc|wqy-zenhei\.ttc|DroidSansFallbackFull\.ttf)$/i;
  try {
    const files = readdirSync('/usr/share/fonts', { recursive: true, encoding: 'utf8' });
    const found = files.find((file) => wanted.test(file.split('/').pop() ?? ''));
    return found && join('/usr/share/fonts', found);
  } catch {
    return undefined;
  }
}

describe('text extraction for near-duplicate detection', () => {
  describe('plain text', () => {
    it('reads UTF-8 and drops its byte order mark', async () => {
      const text = textOf(
        await extractText(utf8('\uFEFF档案整理 archive notice'), { name: 'notice.txt', contentType: 'text/plain' }),
      );
      assert.equal(text, '档案整理 archive notice');
    });

    it('reads GB18030 (GB2312, GBK) when the bytes are not UTF-8', async () => {
      const result = await extractText(bytes(GB.档案, GB.整理, ' 2023 ', GB.通知), {
        name: '通知.txt',
        contentType: 'text/plain',
      });
      assert.deepEqual(result, { status: 'text', text: '档案整理 2023 通知', format: 'txt' });
    });

    it('reads UTF-16 when it starts with a UTF-16 byte order mark', async () => {
      const le = Buffer.from('\uFEFF档案 notice', 'utf16le');
      assert.equal(textOf(await extractText(le, { name: 'a.txt', contentType: 'text/plain' })), '档案 notice');
      const be = Buffer.from(le).swap16();
      assert.equal(textOf(await extractText(be, { name: 'a.txt', contentType: 'text/plain' })), '档案 notice');
    });

    it('keeps the words of Markdown but not the addresses of its links and images', async () => {
      const markdown =
        '# 档案通知\n\nSee [the rules](https://example.org/rules) and ![seal](seal.png).\n\n[ref]: https://example.org/ref\n';
      const text = textOf(await extractText(utf8(markdown), { name: 'README.md', contentType: 'text/markdown' }));
      assert.match(text, /档案通知/);
      assert.match(text, /See the rules and seal\./);
      assert.doesNotMatch(text, /example\.org|seal\.png/);
    });

    it('joins CSV cells with spaces and rows with newlines, quoted cells whole', async () => {
      const csv = '编号,题名,年度\n1,"关于档案整理的通知, 第一号",2023\n2,"Two\nlines",2024\n';
      const result = await extractText(utf8(csv), { name: 'catalogue.csv', contentType: 'text/csv' });
      assert.deepEqual(result, {
        status: 'text',
        text: '编号 题名 年度\n1 关于档案整理的通知, 第一号 2023\n2 Two\nlines 2024',
        format: 'csv',
      });
    });

    it('keeps the raw text of a CSV file the parser rejects', async () => {
      const csv = 'a,b\n1,"never closed\n';
      assert.equal(textOf(await extractText(utf8(csv), { name: 'broken.csv', contentType: 'text/csv' })), csv);
    });
  });

  describe('HTML', () => {
    it('gives the text without tags, scripts or styles, entities decoded, in the charset its <meta> declares', async () => {
      const page = bytes(
        '<!DOCTYPE html><html><head><meta charset="gb2312"><title>t</title>',
        '<style>body { color: red }</style><script>document.write("<p>hidden</p>")</script></head><body>',
        '<h1>',
        GB.档案,
        '</h1><p>',
        GB.整理,
        ' &amp; ',
        GB.通知,
        ' &lt;2023&gt; &#26723;&#x6848;</p>',
        '<div>Second <b>block</b> <a href="https://example.org/x">link</a><img src="seal.png" alt="seal"></div>',
        '<table><tr><td>A1</td><td>B1</td></tr></table></body></html>',
      );
      const text = textOf(await extractText(page, { name: 'notice.html', contentType: 'text/html' }));
      assert.deepEqual(
        text.split('\n').filter((line) => line.trim()),
        ['档案', '整理 & 通知 <2023> 档案', 'Second block link', 'A1', 'B1'],
      );
    });

    it('falls back to GB18030 when an undeclared page is not UTF-8', async () => {
      const page = bytes('<html><body><p>', GB.档案, '</p></body></html>');
      assert.equal(textOf(await extractText(page, { name: 'page.htm', contentType: 'text/html' })), '档案');
    });
  });

  describe('Word (.docx)', () => {
    it('gives the text of Chinese and English paragraphs', async () => {
      const file = await docx(['关于做好档案整理归档工作的通知', 'Notice on filing the archive records of 2023.']);
      const text = textOf(await extractText(file, { name: 'notice.docx', contentType: DOCX }));
      assert.deepEqual(
        text.split('\n').filter((line) => line.trim()),
        ['关于做好档案整理归档工作的通知', 'Notice on filing the archive records of 2023.'],
      );
    });

    it('skips a truncated file with the reason, and does not throw', async () => {
      const file = await docx(['关于做好档案整理归档工作的通知']);
      const reason = reasonOf(
        await extractText(file.subarray(0, file.length / 2), { name: 'notice.docx', contentType: DOCX }),
      );
      assert.match(reason, /^unreadable docx: \S/);
    });

    it('skips an encrypted file (an OLE compound file, not a zip)', async () => {
      const ole = bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], 'x'.repeat(504));
      assert.match(
        reasonOf(await extractText(ole, { name: 'secret.docx', contentType: DOCX })),
        /^unreadable docx: not a zip package/,
      );
    });
  });

  describe('PDF', () => {
    it('gives the text layer of every page', async () => {
      const file = await pdf([['Notice on filing the archive', 'records of 2023'], ['Second page']]);
      const text = textOf(await extractText(file, { name: 'notice.pdf', contentType: 'application/pdf' }));
      assert.match(text, /Notice on filing the archive/);
      assert.match(text, /records of 2023/);
      assert.match(text, /Second page/);
      assert.equal(file.byteLength > 0, true, 'the caller keeps its bytes');
    });

    const fontPath = cjkFontPath();
    it(
      'gives Chinese text drawn in an embedded CJK font',
      { skip: fontPath ? false : 'no CJK font under /usr/share/fonts' },
      async () => {
        const font = await readFile(fontPath!);
        const file = await pdf([['关于做好档案整理归档工作的通知', 'Archive 2023']], (doc) => {
          // pdf-lib hands fontkit the whole file; of a collection (.ttc), take its first font.
          doc.registerFontkit({
            create: (data) => {
              const made = fontkit.create(data);
              // fontkit's types leave collections out: one has `fonts`, a single font has not.
              return (made as unknown as { fonts?: (typeof made)[] }).fonts?.[0] ?? made;
            },
          });
          return doc.embedFont(font, { subset: true });
        });
        const text = textOf(await extractText(file, { name: 'notice.pdf', contentType: 'application/pdf' }));
        assert.match(text, /关于做好档案整理归档工作的通知/);
        assert.match(text, /Archive 2023/);
      },
    );

    it('skips a PDF without a text layer, as a scan would be', async () => {
      const doc = await PDFDocument.create();
      doc.addPage([595, 842]).drawRectangle({ x: 50, y: 50, width: 300, height: 200, color: rgb(0.2, 0.2, 0.2) });
      const result = await extractText(await doc.save(), { name: 'scan.pdf', contentType: 'application/pdf' });
      assert.deepEqual(result, { status: 'skipped', reason: 'no text layer (a scan?)' });
    });

    it('skips a PDF that needs a password to open', async () => {
      const doc = await PDFDocument.create();
      doc.addPage([595, 842]).drawText('Secret', { x: 50, y: 780, font: await doc.embedFont(StandardFonts.Helvetica) });
      // The standard security handler with a user password: /U is not what the empty password gives.
      const key = PDFHexString.of('ab'.repeat(32));
      doc.context.trailerInfo.Encrypt = doc.context.register(
        doc.context.obj({ Filter: 'Standard', V: 1, R: 2, O: key, U: key, P: -4 }),
      );
      doc.context.trailerInfo.ID = doc.context.obj([
        PDFHexString.of('cd'.repeat(16)),
        PDFHexString.of('cd'.repeat(16)),
      ]);
      const result = await extractText(await doc.save(), { name: 'secret.pdf', contentType: 'application/pdf' });
      assert.deepEqual(result, { status: 'skipped', reason: 'unreadable pdf: encrypted (it needs a password)' });
    });

    it('skips a truncated file with the reason, and does not throw', async () => {
      const file = await pdf([['Notice on filing the archive']]);
      const reason = reasonOf(
        await extractText(file.subarray(0, 400), { name: 'notice.pdf', contentType: 'application/pdf' }),
      );
      assert.match(reason, /^unreadable pdf: \S/);
    });

    it('skips a file named .pdf that is no PDF at once, and reads one whose header comes after some stray bytes', async () => {
      const noise = new Uint8Array(256 * 1024).map((_, i) => (i * 7919) % 251);
      assert.deepEqual(await extractText(noise, { name: 'scan.pdf', contentType: 'application/pdf' }), {
        status: 'skipped',
        reason: 'unreadable pdf: not a PDF (no %PDF- header)',
      });
      const file = await pdf([['Notice on filing the archive']]);
      const prefixed = Buffer.concat([Buffer.alloc(100, 0x20), file]);
      assert.match(
        textOf(await extractText(prefixed, { name: 'notice.pdf', contentType: 'application/pdf' })),
        /Notice on filing/,
      );
    });
  });

  describe('which documents are read', () => {
    it('skips an image, naming its type', async () => {
      const png = bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      assert.deepEqual(await extractText(png, { name: 'seal.png', contentType: 'image/png' }), {
        status: 'skipped',
        reason: 'not a text document (image/png)',
      });
    });

    it('skips other office and archive formats', async () => {
      for (const [name, contentType] of [
        ['old.doc', 'application/msword'],
        ['sheet.xls', 'application/vnd.ms-excel'],
        ['bundle.zip', 'application/zip'],
      ] as const) {
        assert.equal(
          reasonOf(await extractText(bytes('data'), { name, contentType })),
          `not a text document (${contentType})`,
        );
      }
    });

    it('goes by the extension first, then by the media type', async () => {
      const octet = 'application/octet-stream';
      assert.equal((await extractText(utf8('# 档案'), { name: 'NOTES.MD', contentType: octet })).status, 'text');
      assert.deepEqual(await extractText(utf8('a,b'), { name: 'upload', contentType: 'text/csv; charset=utf-8' }), {
        status: 'text',
        text: 'a b',
        format: 'csv',
      });
      assert.equal(
        reasonOf(await extractText(utf8('档案'), { name: 'upload', contentType: octet })),
        `not a text document (${octet})`,
      );
    });

    it(`skips documents over ${EXTRACTABLE_MAX_BYTES / 1024 / 1024} MiB`, async () => {
      const reason = reasonOf(
        await extractText(new Uint8Array(EXTRACTABLE_MAX_BYTES + 1), { name: 'huge.txt', contentType: 'text/plain' }),
      );
      assert.match(reason, /^too large to extract/);
    });

    it('skips a document with no text in it', async () => {
      assert.deepEqual(await extractText(utf8(' \n\t'), { name: 'empty.txt', contentType: 'text/plain' }), {
        status: 'skipped',
        reason: 'no text',
      });
    });
  });
});
