import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { seedReportData, type ReportSeed } from '../../bench/seed.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { Batches } from '../../server/store/reports/port.js';
import { CROSS_UNIT_SORTS, REPEAT_SORTS } from '../../shared/reports.js';
import { openEmbeddedAt, tempDir } from '../support/stores.js';

/**
 * Pages of `query` at the top, across the partitions' boundary and past the end: each is that part
 * of the export's rows (the single statement), with its total.
 */
async function pagesAreTheExport<Row>(
  query: object,
  exported: Batches<Row>,
  page: (paging: { offset: number; limit: number }) => Promise<{ items: Row[]; total: number }>,
): Promise<void> {
  const whole = await all(exported);
  assert.ok(whole.total > 30, `${JSON.stringify(query)}: ${whole.total} rows`);
  for (const offset of [0, 13, whole.total - 20, whole.total + 5]) {
    const found = await page({ offset, limit: 50 });
    const label = `${JSON.stringify(query)} at ${offset}`;
    assert.equal(found.total, whole.total, label);
    assert.deepEqual(found.items, whole.rows.slice(offset, offset + 50), label);
  }
}

const all = async <Row>(batches: Batches<Row>) => {
  const rows: Row[] = [];
  let total = 0;
  for await (const batch of batches) {
    rows.push(...batch.items);
    total = batch.total;
  }
  return { rows, total };
};

/**
 * A cross-unit page filtered by time, unit or file name, a filtered page of repeat uploads and a
 * file name's space saved are summed or picked on read threads, a partition of the files each
 * (blocks or stripes of file numbers in turn), and merged: they must be the rows and totals of the single
 * statement an export reads, in its order, at every offset. 6,000 files: two partitions hold files.
 */
describe('report pages summed in partitions of the files', () => {
  let dir: string;
  let seed: ReportSeed;
  let store: ArchiveStore;
  before(async () => {
    dir = tempDir();
    seed = await seedReportData(dir, 30_000, 'Asia/Shanghai');
    store = openEmbeddedAt(dir);
  });
  after(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('are seeded over more than one partition', async () => {
    assert.ok(seed.files > 4096, `${seed.files} files`);
  });

  it('cross-unit duplicates in a date window, a unit subtree or of a file name: every sort, both orders, at the top, across the partitions’ boundary and past the end', async () => {
    const windows = [
      { from: new Date('2025-02-28T16:00:00Z'), to: new Date('2025-05-31T16:00:00Z') },
      { from: new Date('2025-10-01T00:00:00Z') },
      { to: new Date('2025-06-01T00:00:00Z'), fileName: seed.fileWord },
      { unit: { city: seed.city } },
      { unit: { city: seed.city, county: seed.county }, from: new Date('2025-01-01T00:00:00Z') },
      { unit: { city: seed.city }, fileName: seed.fileWord },
      { fileName: seed.fileWord },
    ];
    for (const window of windows)
      for (const sort of CROSS_UNIT_SORTS)
        for (const order of ['asc', 'desc'] as const) {
          const query = { ...window, min: 2, sort, order };
          await pagesAreTheExport(query, store.reports.crossUnitBatches(query, 1000), (paging) =>
            store.reports.crossUnit({ ...query, ...paging }),
          );
        }
  });

  it('repeat uploads picked by the filters: every sort, both orders, at the top, across the partitions’ boundary and past the end', async () => {
    const filters = [
      { unit: { city: seed.city } },
      { from: new Date('2025-02-28T16:00:00Z'), to: new Date('2025-05-31T16:00:00Z') },
      { fileName: seed.fileWord },
      { copies: 'exclude' as const },
      {},
    ];
    for (const filter of filters)
      for (const sort of REPEAT_SORTS.entry)
        for (const order of ['asc', 'desc'] as const) {
          const query = { ...filter, group: 'entry' as const, min: 2, sort, order };
          await pagesAreTheExport(query, store.reports.repeatUploaderBatches(query, 1000), (paging) =>
            store.reports.repeatUploaders({ ...query, ...paging }),
          );
        }
  });

  it('the space saved by a file name: per unit level and per period, with days and a unit', async () => {
    const queries = [
      { group: 'unit' as const, sort: 'savedBytes' },
      { group: 'unit' as const, sort: 'unit', unit: { city: seed.city } },
      { group: 'unit' as const, sort: 'uploads', unit: { city: seed.city, county: seed.county } },
      { group: 'day' as const, sort: 'period', fromDay: '2025-03-01', toDay: '2025-05-31' },
      { group: 'week' as const, sort: 'savedUploads' },
      { group: 'month' as const, sort: 'period' },
    ];
    for (const q of queries) {
      for (const order of ['asc', 'desc'] as const) {
        const query = { ...q, order, fileName: seed.fileWord };
        const whole = await all(store.reports.savingsBatches(query, 1000));
        assert.ok(whole.total >= 3, `${JSON.stringify(query)}: ${whole.total} rows`);
        const page = await store.reports.savings({ ...query, offset: 1, limit: 20 });
        assert.equal(page.total, whole.total, JSON.stringify(query));
        assert.deepEqual(page.items, whole.rows.slice(1, 21), JSON.stringify(query));
        const sum = (k: 'uploads' | 'savedUploads' | 'savedBytes') => whole.rows.reduce((s, r) => s + r[k], 0);
        assert.deepEqual(page.summary, {
          uploads: sum('uploads'),
          savedUploads: sum('savedUploads'),
          savedBytes: sum('savedBytes'),
        });
      }
    }
  });
});
