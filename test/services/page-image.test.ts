import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { closestPages } from '../../server/services/near-duplicates/detection.js';
import { DEFAULT_SETTINGS } from '../../server/services/near-duplicates/fingerprint.js';
import { pageImageKeys, pageImageProbes } from '../../server/services/near-duplicates/lookup-keys.js';
import { OCR_PAGE_PIXELS } from '../../server/services/near-duplicates/ocr.js';
import {
  pageHash,
  pageHashDistance,
  pageImageOf,
  samePlace,
} from '../../server/services/near-duplicates/page-image.js';
import type { InkBox, PageFingerprint } from '../../server/store/near-duplicates/port.js';
import { movedRight, printFigure, rescanned, type FigureSpec } from '../support/figures.js';
import { cannotPrintPages, scannedPage } from '../support/scans.js';

const { maxImageHamming } = DEFAULT_SETTINGS;

/** A scan's page as the reading process takes it: greyscale, fitted to the OCR's size. */
async function greyPageOf(scan: Buffer) {
  const { data, info } = await sharp(scan)
    .resize({ ...OCR_PAGE_PIXELS, fit: 'inside', withoutEnlargement: true })
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** The fingerprint of a scan's page. */
async function fingerprintOf(scan: Buffer): Promise<string | null> {
  return pageHash(await greyPageOf(scan));
}

/** A scan's page as it is recorded, with no text on it. */
async function pageOf(scan: Buffer): Promise<PageFingerprint> {
  return { ...pageImageOf(await greyPageOf(scan)), units: 0 };
}

describe('perceptual fingerprint of a scanned page', { skip: cannotPrintPages() }, () => {
  const figures: FigureSpec[] = [
    { kind: 'photo', seed: 11, caption: '图1 县档案馆新馆外景' },
    { kind: 'photo', seed: 12 },
    { kind: 'drawing', seed: 21 },
    { kind: 'drawing', seed: 22 },
    { kind: 'seal', seed: 31 },
  ];

  it(
    'survives scanning the same page again, at 150 dpi as JPEG and at 300 dpi as TIFF, and tells different pictures apart',
    { timeout: 300_000 },
    async () => {
      const prints = await Promise.all(figures.map((f) => printFigure(f)));
      const first = await Promise.all(prints.map((p, i) => rescanned(p.png, 100 + i, { dpi: 150, format: 'jpeg' })));
      const again = await Promise.all(prints.map((p, i) => rescanned(p.png, 200 + i, { dpi: 300, format: 'tiff' })));
      const a = await Promise.all(first.map(fingerprintOf));
      const b = await Promise.all(again.map(fingerprintOf));
      for (let i = 0; i < figures.length; i++) {
        const kind = `${figures[i]!.kind} ${figures[i]!.seed}`;
        assert.ok(
          pageHashDistance(a[i]!, b[i]!) <= maxImageHamming,
          `${kind} scanned again: ${pageHashDistance(a[i]!, b[i]!)} bits`,
        );
        for (let j = 0; j < figures.length; j++)
          if (j !== i)
            assert.ok(
              pageHashDistance(a[i]!, b[j]!) > maxImageHamming,
              `${kind} and ${figures[j]!.kind} ${figures[j]!.seed}: ${pageHashDistance(a[i]!, b[j]!)} bits`,
            );
      }
    },
  );

  it('gives a blank page none (all blank pages would look the same), and a page of text one', async () => {
    const blank = await sharp({ create: { width: 2480, height: 3508, channels: 3, background: '#ffffff' } })
      .png()
      .toBuffer();
    assert.equal(await fingerprintOf(await rescanned(blank, 5, { dpi: 150, format: 'jpeg' })), null);
    const text = await scannedPage('关于做好二〇一九年度档案移交工作的通知。');
    assert.match((await fingerprintOf(text))!, /^[0-9a-f]{16}$/);
  });

  it(
    'tells a page stamped with a seal from another sheet stamped with the same seal elsewhere, and finds it scanned again',
    { timeout: 300_000 },
    async () => {
      // One impression of the seal, and the same impression 2.5 cm (12% of A4's width) further right
      // on another sheet: the most alike two stampings of one seal can be. Each scan may move the
      // sheet 2% of the page on the glass, and maxInkShift allows 5% more.
      const { png } = await printFigure({ kind: 'seal', seed: 31 });
      const there = await movedRight(png, 300);
      const scanned = await pageOf(await rescanned(png, 1, { dpi: 150, format: 'jpeg' }));
      const again = await pageOf(await rescanned(png, 2, { dpi: 300, format: 'tiff' }));
      const elsewhere = await pageOf(await rescanned(there, 3, { dpi: 300, format: 'jpeg' }));
      assert.ok(
        pageHashDistance(scanned.hash!, elsewhere.hash!) <= maxImageHamming,
        'the seal cut out looks the same wherever it was stamped',
      );
      assert.equal(closestPages([scanned], [elsewhere], DEFAULT_SETTINGS), null);
      assert.equal(closestPages([scanned], [again], DEFAULT_SETTINGS), pageHashDistance(scanned.hash!, again.hash!));
    },
  );

  it('records where the ink lies, in thousandths of the page, and nothing for a blank page', async () => {
    const { png } = await printFigure({ kind: 'photo', seed: 12 });
    // The photograph: 295 pixels from the left of 2480 (119‰) to 2185 (881‰), from 495 of 3508 (141‰) down 1500 (569‰).
    const { box } = await pageOf(png);
    const expected = [119, 141, 881, 569];
    assert.ok(
      box!.every((edge, i) => Math.abs(edge - expected[i]!) <= 10),
      `${JSON.stringify(box)} against ${JSON.stringify(expected)}`,
    );
    const blank = await sharp({ create: { width: 2480, height: 3508, channels: 3, background: '#ffffff' } })
      .png()
      .toBuffer();
    assert.deepEqual(await pageOf(blank), { hash: null, box: null, units: 0 });
  });

  it('counts the bits two fingerprints differ in', () => {
    assert.equal(pageHashDistance('0000000000000000', '0000000000000000'), 0);
    assert.equal(pageHashDistance('0000000000000000', 'ffffffffffffffff'), 64);
    assert.equal(pageHashDistance('8000000000000001', '0000000000000000'), 2);
    assert.throws(() => pageHashDistance('00', '00'));
  });
});

describe('pages paired on their images', () => {
  const settings = DEFAULT_SETTINGS;
  const little = settings.imageMaxUnits - 1;
  const hash = '3a5f0c91e7b24d68';
  const near = '3a5f0c91e7b24d6b'; // two bits apart
  const far = 'c5a0f36e184db297'; // every bit apart
  const box: InkBox = [229, 152, 548, 378];
  const page = (hash: string | null, units = 0, at: InkBox | null = hash !== null ? box : null): PageFingerprint => ({
    hash,
    units,
    box: at,
  });

  it('pairs two files on their closest pages with little text, within maxImageHamming bits', () => {
    assert.equal(closestPages([page(hash, little)], [page(near)], settings), 2);
    assert.equal(
      closestPages([page(far), page(hash, 3)], [page(near, 3)], settings),
      2,
      'the second page of a multi-page scan',
    );
    assert.equal(closestPages([page(hash)], [page(far)], settings), null);
  });

  it('never pairs pages with much text on their images (pages cut from one template look alike), nor blank pages', () => {
    assert.equal(closestPages([page(hash, settings.imageMaxUnits)], [page(hash)], settings), null);
    assert.equal(closestPages([page(hash)], [page(hash, 400)], settings), null);
    assert.equal(closestPages([page(null)], [page(null)], settings), null);
  });

  it("pairs them only where their ink lies in the same place on the page, within maxInkShift of the page's side", () => {
    const slack = 1000 * settings.maxInkShift;
    const moved = (by: number, edge: number): InkBox => box.map((e, i) => (i === edge ? e + by : e)) as InkBox;
    for (let edge = 0; edge < 4; edge++) {
      assert.equal(closestPages([page(hash)], [page(near, 0, moved(slack, edge))], settings), 2, `edge ${edge}`);
      assert.equal(
        closestPages([page(hash)], [page(near, 0, moved(-slack - 1, edge))], settings),
        null,
        `edge ${edge}`,
      );
    }
    assert.equal(samePlace(box, box.map((e) => e + slack) as InkBox, settings), true, 'moved on the glass');
    assert.equal(closestPages([page(hash, 0, null)], [page(hash)], settings), null, 'recorded without its place');
  });
});

describe('lookup keys of page images', () => {
  const page = (hash: string | null, units = 0): PageFingerprint => ({
    hash,
    units,
    box: hash !== null ? [0, 0, 1000, 1000] : null,
  });
  const flip = (hash: string, ...bits: number[]) => {
    let value = BigInt(`0x${hash}`);
    for (const bit of bits) value ^= 1n << BigInt(bit);
    return value.toString(16).padStart(16, '0');
  };

  it('finds every page within 11 bits: the probes of one page meet a key of the other', () => {
    const hash = '3a5f0c91e7b24d68';
    let state = 44;
    const bit = () => {
      // xorshift32: a fixed draw of bit positions
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % 64;
    };
    for (let trial = 0; trial < 200; trial++) {
      // 11 bits flipped anywhere: some block has at most two of them (pigeonhole).
      const bits = new Set<number>();
      while (bits.size < 11) bits.add(bit());
      const other = flip(hash, ...bits);
      const found = pageImageProbes([page(hash)], DEFAULT_SETTINGS).some((k) =>
        pageImageKeys([page(other)], DEFAULT_SETTINGS).includes(k),
      );
      assert.ok(found, `${hash} and ${other}`);
    }
  });

  it('gives no keys to a page with much text or a blank page: those are never paired on their image', () => {
    assert.deepEqual(pageImageKeys([page('3a5f0c91e7b24d68', DEFAULT_SETTINGS.imageMaxUnits)], DEFAULT_SETTINGS), []);
    assert.deepEqual(pageImageKeys([page(null)], DEFAULT_SETTINGS), []);
    assert.deepEqual(pageImageProbes([page(null), page('3a5f0c91e7b24d68', 500)], DEFAULT_SETTINGS), []);
    assert.equal(
      pageImageKeys([page('3a5f0c91e7b24d68', DEFAULT_SETTINGS.imageMaxUnits - 1)], DEFAULT_SETTINGS).length,
      4,
    );
  });

  it('refuses a threshold its probes cannot find', () => {
    assert.throws(() => pageImageProbes([page('3a5f0c91e7b24d68')], { ...DEFAULT_SETTINGS, maxImageHamming: 12 }));
  });
});
