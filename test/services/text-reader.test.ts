import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { Fingerprinter } from '../../server/services/near-duplicates/fingerprint.js';
import { InProcessTextReader, ThreadTextReader, type Read } from '../../server/services/near-duplicates/text-reader.js';
import { NOTICE, POEM } from '../support/texts.js';

async function onePagePdf(line: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc
    .addPage([595, 842])
    .drawText(line, { x: 50, y: 780, size: 14, font: await doc.embedFont(StandardFonts.Helvetica) });
  return doc.save();
}

/** What a read tells the service, with the shingles in order (a Set compares by identity). */
const plain = (read: Read) =>
  'skipped' in read
    ? read
    : { ...read, fingerprint: { ...read.fingerprint, shingles: [...read.fingerprint.shingles].sort() } };

describe('reading documents on a thread of their own', () => {
  let reader: ThreadTextReader;
  afterEach(() => reader.close());

  it('reads and fingerprints exactly as on the calling thread, and skips what it cannot read with the same reason', async () => {
    reader = new ThreadTextReader({ minJaccard: 0.7 });
    const here = new InProcessTextReader(Fingerprinter.create({ minJaccard: 0.7 }));
    const documents: Array<[Uint8Array, { name: string; contentType: string }]> = [
      [Buffer.from(NOTICE), { name: '通知.txt', contentType: 'text/plain' }],
      [Buffer.from(`<p>${POEM}</p>`), { name: '静夜思.html', contentType: 'text/html' }],
      [
        await onePagePdf('Notice on filing the archive records of 2023'),
        { name: 'notice.pdf', contentType: 'application/pdf' },
      ],
      [Buffer.from('not a pdf at all'), { name: 'scan.pdf', contentType: 'application/pdf' }],
      [Buffer.from([0x89, 0x50, 0x4e, 0x47]), { name: 'seal.png', contentType: 'image/png' }],
    ];
    for (const [bytes, file] of documents) {
      const expected = plain(await here.read(Uint8Array.from(bytes), file));
      assert.deepEqual(plain(await reader.read(Uint8Array.from(bytes), file)), expected, file.name);
    }
    const [notice, poem] = await Promise.all([
      reader.read(Buffer.from(NOTICE), documents[0]![1]),
      reader.read(Buffer.from(POEM), documents[0]![1]),
    ]);
    assert.ok('fingerprint' in notice && 'fingerprint' in poem, 'two reads at once');
    assert.ok(notice.fingerprint.shingles instanceof Set && notice.fingerprint.shingles.size > 0);
    assert.notDeepEqual(
      notice.fingerprint.simhash,
      poem.fingerprint.simhash,
      'each read answered with its own document',
    );
  });

  it('fails the reads under way when its thread stops, and starts another for the next read', async () => {
    reader = new ThreadTextReader({});
    const text = Buffer.from(NOTICE.repeat(2000));
    const cut = reader.read(text, { name: 'long.txt', contentType: 'text/plain' });
    await reader.close();
    await assert.rejects(cut, /thread stopped/);
    const read = await reader.read(Buffer.from(POEM), { name: 'poem.txt', contentType: 'text/plain' });
    assert.ok('fingerprint' in read && read.fingerprint.units > 0);
  });
});
