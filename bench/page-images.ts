import { randomFillSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';
import { PageImages } from '../server/services/page-images.js';
import { openEmbeddedStore } from '../server/store/embedded.js';
import { commitBytes } from '../test/support/content.js';

/**
 * `npm run bench:pages -- [--pages 40 --paged 10 --rounds 3]`: paging through a scanned
 * PDF in the viewer (GET /api/files/:id/pages/:n, PageImages), its bytes read from an embedded
 * store. Each round pages through the first `paged` pages twice, alternated: as the viewer does
 * (one file, so the drawing thread keeps it open after the first page), and as every page was
 * drawn before (a new key each page: the whole file read, sent to the thread and opened again).
 * The scan: `pages` A4 pages of grey noise as JPEGs at 150 dpi (about 1 MiB a page, as a colour
 * scan). Prints milliseconds per `paged` pages, and the load average (a shared machine's other
 * work slows both).
 */
const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '40' },
    paged: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
  },
});
const [pages, paged, rounds] = [Number(values.pages), Number(values.paged), Number(values.rounds)];

async function scannedPdf(count: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const [width, height] = [1240, 1754];
  for (let n = 0; n < count; n++) {
    const noise = randomFillSync(Buffer.alloc(width * height));
    for (let i = 0; i < noise.length; i++) noise[i] = 200 + (noise[i]! % 56);
    const jpeg = await doc.embedJpg(
      await sharp(noise, { raw: { width, height, channels: 1 } })
        .jpeg({ quality: 85 })
        .toBuffer(),
    );
    doc.addPage([595, 842]).drawImage(jpeg, { x: 0, y: 0, width: 595, height: 842 });
  }
  return Buffer.from(await doc.save());
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-page-images-'));
const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
const images = new PageImages();
try {
  const bytes = await scannedPdf(pages);
  const { entry } = await commitBytes(store, bytes, 'scan.pdf');
  console.log(
    `a scanned PDF of ${pages} pages, ${(bytes.byteLength / 2 ** 20).toFixed(1)} MiB; load ${os.loadavg()[0]!.toFixed(1)}`,
  );
  let fresh = 0;
  const pageThrough = async (keyOf: () => string): Promise<number> => {
    const started = performance.now();
    for (let n = 1; n <= paged; n++)
      await images.draw(
        { key: keyOf(), name: 'scan.pdf', length: entry.length, read: () => store.content.read(entry) },
        n,
        800,
      );
    return performance.now() - started;
  };
  await pageThrough(() => 'warm-up'); // the thread and PDFium started
  for (let round = 1; round <= rounds; round++) {
    const kept = await pageThrough(() => `kept:${round}`);
    const reopened = await pageThrough(() => `page:${fresh++}`);
    console.log(
      `round ${round}: ${paged} pages, kept open ${kept.toFixed(0)} ms; read and opened each page ${reopened.toFixed(0)} ms`,
    );
  }
  console.log(`load ${os.loadavg()[0]!.toFixed(1)}`);
} finally {
  await images.close();
  await store.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
