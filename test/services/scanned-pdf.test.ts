import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Fingerprinter, nearDuplicateMethod } from '../../server/services/near-duplicates/fingerprint.js';
import { PageRecogniser } from '../../server/services/near-duplicates/ocr.js';
import { InProcessTextReader, type Read } from '../../server/services/near-duplicates/text-reader.js';
import { cannotPrintPages, scannedPdf } from '../support/scans.js';
import { NOTICE, POEM } from '../support/texts.js';

const SPRING = '春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。';
const TYPED = 'Notice on filing the archive records of 2023';
const PDF = { name: '扫描件.pdf', contentType: 'application/pdf' };

/** The share of the expected text's character pairs (punctuation and spaces left out) found in what was read. */
function found(expected: string, read: string): number {
  const bare = (s: string) => s.replace(/[\s\p{P}]/gu, '');
  const pairs = (s: string) =>
    Array.from({ length: Math.max(bare(s).length - 1, 0) }, (_, i) => bare(s).slice(i, i + 2));
  const have = new Set(pairs(read));
  const want = pairs(expected);
  return want.filter((p) => have.has(p)).length / want.length;
}

function textOf(read: Read): string {
  assert.ok(!('skipped' in read), `read, not skipped: ${'skipped' in read ? read.skipped : ''}`);
  return read.text;
}

describe('scanned PDF pages (no text layer) are recognised', { skip: cannotPrintPages() }, () => {
  const fingerprinter = Fingerprinter.onFirstUse();
  const ocr = new InProcessTextReader(fingerprinter, new PageRecogniser());
  const noOcr = new InProcessTextReader(fingerprinter, null);

  it(
    'reads every page of a scanned PDF in order, as recognised text, and it pairs with the typed text',
    { timeout: 300_000 },
    async () => {
      const read = await ocr.read(await scannedPdf([POEM, SPRING], 'slip'), PDF);
      const text = textOf(read);
      assert.ok(found(POEM, text) >= 0.8, `the first page's text: ${text}`);
      assert.ok(found(SPRING, text) >= 0.8, `the second page's text: ${text}`);
      assert.ok(text.indexOf('明月') < text.indexOf('春眠'), 'pages in order');
      assert.deepEqual(
        ['skipped' in read ? '' : read.format, 'skipped' in read ? false : read.recognised],
        ['pdf', true],
      );
      assert.equal(
        'skipped' in read ? 0 : read.pageImages.filter((p) => p.hash).length,
        2,
        "each page's image fingerprint",
      );
      const typed = (await fingerprinter.get()).fingerprint(`${POEM}\n${SPRING}`);
      assert.ok(
        !('skipped' in read) && nearDuplicateMethod(read.fingerprint, typed),
        'a near-duplicate of the typed text',
      );
    },
  );

  it(
    'reads a PDF whose first page is typed and second scanned: the typed layer, then the scan',
    { timeout: 300_000 },
    async () => {
      const bytes = await scannedPdf([{ layer: TYPED }, NOTICE.slice(0, 60)], 'slip');
      const text = textOf(await ocr.read(bytes, PDF));
      assert.ok(text.startsWith(TYPED), text);
      assert.ok(found(NOTICE.slice(0, 60), text.slice(TYPED.length)) >= 0.8, text);
      // Without OCR the typed page alone is the text; a typed PDF is never recognised.
      const typedOnly = await noOcr.read(bytes, PDF);
      assert.equal(textOf(typedOnly).trim(), TYPED);
      assert.equal('skipped' in typedOnly ? true : typedOnly.recognised, false);
    },
  );

  it('with OCR off, a PDF of scans alone is skipped as having no text layer', async () => {
    assert.deepEqual(await noOcr.read(await scannedPdf([POEM], 'slip'), PDF), {
      skipped: 'no text layer (a scan?)',
      pageImages: [],
    });
  });
});
