import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { afterEach, describe, it } from 'node:test';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { Fingerprinter } from '../../server/services/near-duplicates/fingerprint.js';
import {
  InProcessTextReader,
  ProcessTextReader,
  READING_NICENESS,
  type Read,
} from '../../server/services/near-duplicates/text-reader.js';
import { cannotPrintPages, scannedPage, scannedTiff } from '../support/scans.js';
import { NOTICE, POEM } from '../support/texts.js';
import { until } from '../support/until.js';

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

describe('reading documents in a process of their own', () => {
  let reader: ProcessTextReader;
  afterEach(() => reader.close());

  it('reads and fingerprints exactly as on the calling thread, and skips what it cannot read with the same reason', async () => {
    reader = new ProcessTextReader({ settings: { minJaccard: 0.7 }, ocr: true, heapMb: 256 });
    const here = new InProcessTextReader(Fingerprinter.onFirstUse({ minJaccard: 0.7 }));
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

  it('reads below the web server, every thread it starts for a page niced, with the OCR threads it is given', async (t) => {
    const missing = cannotPrintPages();
    if (missing) return t.skip(missing);
    reader = new ProcessTextReader({ settings: {}, ocr: true, ocrThreads: 2, heapMb: 256 });
    await reader.read(Buffer.from(POEM), { name: 'poem.txt', contentType: 'text/plain' });
    const pid = reader.pid!;
    assert.equal(os.getPriority(pid), READING_NICENESS);
    assert.equal(os.getPriority(), 0, 'the server itself is not niced');
    assert.match(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'), /"ocrThreads":2/);
    const before = new Set(threadsOf(pid).keys());
    const read = await reader.read(await scannedPage(NOTICE, 'jpeg', 'slip'), {
      name: 'scan.jpg',
      contentType: 'image/jpeg',
    });
    assert.ok('fingerprint' in read && read.fingerprint.units > 0, 'the scan is read');
    const started = [...threadsOf(pid)].filter(([id]) => !before.has(id));
    assert.ok(started.length > 0, 'the engine started threads of its own');
    assert.deepEqual(
      started.filter(([, nice]) => nice !== READING_NICENESS),
      [],
      'no thread started for the page runs at the priority of the server',
    );
  });

  it('fails the reads under way when it is closed, and starts another process for the next read', async () => {
    reader = new ProcessTextReader({ settings: {}, ocr: true, heapMb: 256 });
    const text = Buffer.from(NOTICE.repeat(2000));
    const cut = assert.rejects(
      reader.read(text, { name: 'long.txt', contentType: 'text/plain' }),
      /the text reader was closed/,
    );
    const first = reader.pid;
    await reader.close();
    await cut;
    assert.equal(alive(first!), false, 'the process is gone');
    const read = await reader.read(Buffer.from(POEM), { name: 'poem.txt', contentType: 'text/plain' });
    assert.ok('fingerprint' in read && read.fingerprint.units > 0);
    assert.notEqual(reader.pid, first);
  });

  it('ends a process that has been idle, and starts another for the next read', async () => {
    reader = new ProcessTextReader({ settings: {}, ocr: true, heapMb: 256, idleMs: 0 });
    await reader.read(Buffer.from(POEM), { name: 'poem.txt', contentType: 'text/plain' });
    const first = reader.pid!;
    await until(() => !alive(first), 'the idle reading process has ended');
    const read = await reader.read(Buffer.from(NOTICE), { name: '通知.txt', contentType: 'text/plain' });
    assert.ok('fingerprint' in read);
  });

  it(
    'fails the image under way when the kernel kills its process (out of memory), and reads the next in a new one',
    { skip: cannotPrintPages(), timeout: 300_000 },
    async () => {
      reader = new ProcessTextReader({ settings: {}, ocr: true, heapMb: 256 });
      const tiff = await scannedTiff([POEM, POEM], 'slip');
      const cut = reader.read(tiff, { name: '两页.tif', contentType: 'image/tiff' }, async () => {
        process.kill(reader.pid!, 'SIGKILL'); // between the pages: in the middle of the image
      });
      await assert.rejects(cut, /^Error: the text reading process ended: signal SIGKILL \(out of memory\?\)$/);
      const read = await reader.read(await scannedPage(POEM, 'png', 'slip'), {
        name: '静夜思.png',
        contentType: 'image/png',
      });
      assert.equal('fingerprint' in read && read.format, 'png');
    },
  );

  it(
    'fails the image whose reading runs out of the process’s heap, and reads the next in a new one',
    { skip: cannotPrintPages(), timeout: 300_000 },
    async () => {
      // A full page needs about 200 MB of heap (docs/decisions/ocr-engine.md); 32 MB is too little.
      reader = new ProcessTextReader({ settings: {}, ocr: true, heapMb: 32 });
      const page = await scannedPage(NOTICE, 'jpeg', 'a4');
      await assert.rejects(
        reader.read(page, { name: '通知.jpg', contentType: 'image/jpeg' }),
        /the text reading process ended: .*\(out of memory\?\)/,
      );
      const read = await reader.read(Buffer.from(POEM), { name: 'poem.txt', contentType: 'text/plain' });
      assert.ok('fingerprint' in read);
    },
  );
});

/** Whether a process of this id still exists (a zombie is reaped by this process's event loop). */
/** A process's threads and the niceness of each (Linux: the 19th field of a thread's stat). */
function threadsOf(pid: number): Map<string, number> {
  return new Map(
    fs.readdirSync(`/proc/${pid}/task`).map((task) => {
      const stat = fs.readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      return [task, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    }),
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
