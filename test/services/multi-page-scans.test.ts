import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ReportCalendar } from '../../server/services/calendar.js';
import { NearDuplicateService } from '../../server/services/near-duplicates/detection.js';
import {
  documentPair,
  matchingPages,
  pageTextKeys,
  type ScanPage,
} from '../../server/services/near-duplicates/document-pairs.js';
import { DEFAULT_SETTINGS, Fingerprinter } from '../../server/services/near-duplicates/fingerprint.js';
import { lookupKeys } from '../../server/services/near-duplicates/lookup-keys.js';
import { ProcessTextReader, type Read } from '../../server/services/near-duplicates/text-reader.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { InkBox } from '../../server/store/near-duplicates/port.js';
import { nearDuplicateKind, similarityOf, type NearDuplicateRow } from '../../shared/reports.js';
import { commitBytes } from '../support/content.js';
import { MATCHING_PAGES, scansSharingPages } from '../support/multi-page-scans.js';
import { cannotPrintPages } from '../support/scans.js';
import { storeTargets, type OpenedStore } from '../support/stores.js';
import { NOTICE, OTHER_NOTICE, POEM } from '../support/texts.js';

/**
 * A multi-page scan that repeats pages of another scan is one pair of documents in the
 * near-duplicate report (issue 44 §2), with both documents' page counts and the pages that match.
 */

describe('the pages of two scans are matched one to one', () => {
  const settings = DEFAULT_SETTINGS;
  let fingerprinter: Fingerprinter;
  beforeEach(async () => (fingerprinter ??= await Fingerprinter.create()));
  const page = (text: string, hash: string | null = null): ScanPage => {
    const fingerprint = fingerprinter.fingerprint(text);
    return { hash, units: fingerprint.units, box: null, text: { text, fingerprint } };
  };
  const [first, second] = NOTICE.split('\n').slice(1, 3);
  const other = OTHER_NOTICE.split('\n')[1]!;

  it('matches each page with the same page of the other, in the first scan’s page order, whatever the other’s order', () => {
    const a = [page(first!), page(second!), page(other)];
    const b = [page(POEM.repeat(3)), page(second!), page(`${first!}（复印件）`)];
    assert.deepEqual(
      matchingPages(a, b, settings).map((m) => [m.a, m.b, m.method]),
      [
        [1, 3, 'containment'],
        [2, 2, 'containment'],
      ],
    );
  });

  it('a page repeated in one scan matches one page of the other, the most alike first', () => {
    const a = [page(first!.replace('规范', '加强')), page(first!)];
    const b = [page(first!)];
    const matches = matchingPages(a, b, settings);
    assert.deepEqual(
      matches.map((m) => [m.a, m.b, m.similarity]),
      [[2, 1, 1]],
    );
  });

  it('pages with little text match on their images, within the image threshold only', () => {
    const blank = (hash: string, box: InkBox = [300, 400, 700, 600]): ScanPage => ({ hash, units: 2, box, text: null });
    const a = [blank('ffff0000ffff0000'), blank('0123456789abcdef')];
    const b = [blank('fedcba9876543210'), blank('ffff0000ffff00ff')]; // 8 bits from a's first
    assert.deepEqual(
      matchingPages(a, b, settings).map((m) => [m.a, m.b, m.method, m.similarity]),
      [[1, 2, 'image', 1 - 8 / 64]],
    );
    // The same seal stamped elsewhere on another sheet is another page, as between two files.
    const moved = [blank('ffff0000ffff0000', [300, 100, 700, 300])];
    assert.deepEqual(matchingPages(a, moved, settings), []);
  });

  it('a multi-page scan is also found by each page’s text: another repeating one of its pages is a candidate, though their whole texts share no key', () => {
    const notice = NOTICE.split('\n');
    const read = (pages: string[]): Read => ({
      text: pages.join('\n\n'),
      format: 'tiff',
      fingerprint: fingerprinter.fingerprint(pages.join('\n\n')),
      recognised: true,
      pageImages: pages.map(() => ({ hash: null, units: 100, box: null })),
      pageTexts: pages.map((text) => ({ text, fingerprint: fingerprinter.fingerprint(text) })),
      terms: [],
    });
    // Pages of their own: 250 characters each, different in each scan (the whole texts are long).
    const own = (seed: number) =>
      Array.from({ length: 250 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919 + seed * 104729) % 20000))).join(
        '',
      );
    const shared = notice.slice(3, 5).join('');
    const a = read([own(1), shared, own(2), own(3), own(4)]);
    const b = read([own(5), own(6), own(7), shared, own(8)]);
    const common = (x: number[], y: number[]) => x.filter((key) => y.includes(key)).length;
    const whole = (r: Read) => ('skipped' in r ? [] : lookupKeys(r.fingerprint, settings));
    assert.equal(common(whole(a), whole(b)), 0, 'the whole texts are no candidates of each other');
    assert.ok(
      common(pageTextKeys(a, settings), pageTextKeys(b, settings)) > 0,
      'their shared page makes them candidates',
    );
  });

  it('the document pair is oriented as the pair is (fileA < fileB): counts and page numbers swap with the files', () => {
    const a = [page(first!), page(second!), page(other)];
    const b = [page(POEM.repeat(3)), page(first!)];
    const matches = matchingPages(a, b, settings);
    const at = new Date(0);
    const ids = ['b'.repeat(24), 'a'.repeat(24)];
    const pair = documentPair(ids[0]!, ids[1]!, { a: 3, b: 2 }, matches, null, at)!;
    assert.deepEqual([pair.fileA, pair.fileB], [ids[1], ids[0]]);
    assert.deepEqual(pair.pages, {
      a: 2,
      b: 3,
      matches: [{ a: 2, b: 1, method: 'containment', similarity: 1 }],
    });
    assert.equal(documentPair(ids[0]!, ids[1]!, { a: 3, b: 2 }, [], null, at), null, 'no page matches, no pair');
  });
});

for (const target of storeTargets) {
  describe(
    `two multi-page scans sharing pages (${target.name} store)`,
    { skip: target.skip ?? cannotPrintPages() },
    () => {
      let opened: OpenedStore;
      let store: ArchiveStore;
      let reader: ProcessTextReader;
      const now = Date.UTC(2026, 10, 29, 9);
      beforeEach(async () => {
        opened = await target.open();
        store = opened.store;
        reader = new ProcessTextReader({ settings: {}, ocr: true, heapMb: 512 });
      });
      afterEach(async () => {
        await reader.close();
        await opened.dispose();
      });
      const stored = async (name: string, bytes: Uint8Array, contentType: string) =>
        (await commitBytes(store, bytes, name, { contentType, uploadDate: new Date(now) })).entry.fileId;

      it(
        'a 3-page TIFF and a 3-page scanned PDF sharing 2 pages are one document pair: 2 matching pages, each with its similarity, handled as one',
        { timeout: 600_000 },
        async () => {
          const near = new NearDuplicateService({
            store,
            fingerprinter: Fingerprinter.onFirstUse(),
            calendar: new ReportCalendar('Asia/Shanghai'),
            holder: 'pages-test',
            clock: () => new Date(now),
            reader,
          });
          const { tiff, pdf } = await scansSharingPages();
          const ids = [
            await stored('移交通知（清州镇）.tif', tiff, 'image/tiff'),
            await stored('移交通知（金牛镇）.pdf', pdf, 'application/pdf'),
          ];
          await near.enqueue(ids);
          while ((await near.runDue()) > 0);

          const report = await near.report({ sort: 'foundAt', limit: 10, offset: 0 });
          assert.equal(report.total, 1, 'one row for the two documents, not one per page');
          assert.equal(report.status.pairs, 1);
          const row = report.items[0]!;
          assert.equal(nearDuplicateKind(row), 'pages');
          const tiffIsA = row.a.fileName.endsWith('.tif');
          const pages = row.pages!;
          assert.deepEqual([pages.a, pages.b], [3, 3]);
          assert.deepEqual(
            pages.matches
              .map((m) => (tiffIsA ? { tiff: m.a, pdf: m.b } : { tiff: m.b, pdf: m.a }))
              .sort((x, y) => x.tiff - y.tiff),
            MATCHING_PAGES,
          );
          for (const m of pages.matches)
            assert.ok(m.similarity >= 0.5 && m.similarity <= 1, `similarity ${m.similarity}`);
          // The whole texts differ (a page of each is its own): the pair stands on its pages, and
          // its figure is its most alike page's.
          assert.equal(similarityOf(row), Math.max(...pages.matches.map((m) => m.similarity)));

          // 标记为已处理: the document pair is handled as one.
          await store.nearDuplicates.review({
            fileA: row.a.fileId,
            fileB: row.b.fileId,
            at: new Date(now),
            userId: 'u1',
            userName: 'county',
            note: '同一批文件重复扫描',
          });
          assert.equal((await near.report({ sort: 'foundAt', limit: 10, offset: 0 })).total, 0);
          const reviewed = await near.report({ sort: 'foundAt', limit: 10, offset: 0, status: 'reviewed' });
          assert.deepEqual(
            reviewed.items.map((r: NearDuplicateRow) => [r.review?.note, r.pages?.matches.length]),
            [['同一批文件重复扫描', 2]],
          );
          // The export carries the same rows.
          const rows: NearDuplicateRow[] = [];
          for await (const batch of near.reportRows({ sort: 'foundAt', status: 'all' }, 100)) rows.push(...batch.items);
          assert.deepEqual(
            rows.map((r) => r.pages),
            [pages],
          );
        },
      );
    },
  );
}
