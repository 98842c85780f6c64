import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CatalogEntry } from '../catalog/port.js';
import type { Account } from '../accounts/port.js';
import type { Unit } from '../../../shared/schemas.js';
import {
  collisionsQuery,
  CROSS_UNIT_SORTS,
  crossUnitQuery,
  defaultOrder,
  repeatUploadersQuery,
  savingsQuery,
  REPEAT_SORTS,
  UPLOADERS_PER_ROW,
  type RepeatEntryRow,
  type RepeatUnitRow,
  type RepeatUserRow,
} from '../../../shared/reports.js';
import {
  commitBytes,
  countUpload,
  randomContent,
  stageBytes,
  testAccount,
  uploadAction,
  uploadRecord,
} from '../../../test/support/content.js';
import { FILES, PEOPLE, REPORT_TIME_ZONE, seedReportArchive, UNITS } from '../../../test/support/report-dataset.js';
import type { FileKey } from '../../../test/support/report-dataset.js';
import { ReportCalendar, ReportService } from '../../../test/support/services.js';
import type { OpenedStore, StoreTarget } from '../../../test/support/stores.js';

const t = (utc: string) => new Date(utc).toISOString();

/**
 * The reports over the hand-computed archive of test/support/report-dataset.ts (see the table
 * there), the same answers from every store adapter.
 */
export function reportsConformance(target: StoreTarget): void {
  describe(`reports conformance: ${target.name}`, { skip: target.skip }, () => {
    let opened: OpenedStore;
    let reports: ReportService;
    let files: Record<FileKey, CatalogEntry>;
    const id = (key: FileKey) => files[key].fileId;

    before(async () => {
      opened = await target.open();
      files = await seedReportArchive(opened.store);
      reports = new ReportService(opened.store.reports, new ReportCalendar(REPORT_TIME_ZONE), opened.store.accounts);
    });
    after(async () => {
      await opened.dispose();
    });

    const repeat = (q: Record<string, unknown> = {}) => reports.repeatUploaders(repeatUploadersQuery.parse(q));
    const cross = (q: Record<string, unknown> = {}) => reports.crossUnit(crossUnitQuery.parse(q));
    const savings = (q: Record<string, unknown> = {}) => reports.savings(savingsQuery.parse(q));
    const collisions = (q: Record<string, unknown> = {}) => reports.collisions(collisionsQuery.parse(q));
    /** Compact rows for comparing. */
    const entries = (rows: unknown[]) =>
      (rows as Array<{ userName: string; fileId: string; uploadCount: number }>).map(
        (r) => `${r.userName} ${fileKey(r.fileId)} ${r.uploadCount}`,
      );
    const fileKey = (fileId: string) => (Object.keys(files) as FileKey[]).find((k) => files[k].fileId === fileId);

    describe('repeat uploaders', () => {
      it('lists ledger entries uploaded twice or more, most uploads first, with the uploader, unit, file and dates', async () => {
        const page = await repeat();
        assert.equal(page.total, 5);
        assert.deepEqual(entries(page.items), ['alice F1 3', 'bob F3 3', 'dave F1 2', 'erin F2 2', 'carol C2 2']);
        assert.deepEqual(page.items[0], {
          userId: 'a-alice',
          userName: 'alice',
          userDisplayName: '艾丽',
          unit: UNITS.dong,
          fileId: id('F1'),
          fileName: '通知.pdf',
          fileLength: 1000,
          uploadCount: 3,
          copies: 0,
          resends: 2,
          firstUploadTime: t('2026-03-02T02:00:00Z'),
          lastUploadTime: t('2026-03-10T02:00:00Z'),
        });
      });

      it('names each uploader by its account’s display name now, looked up once for the page', async () => {
        let lookups = 0;
        const counted = new ReportService(opened.store.reports, new ReportCalendar(REPORT_TIME_ZONE), {
          displayNames: (logins) => {
            lookups++;
            return opened.store.accounts.displayNames(logins);
          },
        });
        const page = await counted.repeatUploaders(repeatUploadersQuery.parse({}));
        assert.deepEqual(
          (page.items as RepeatEntryRow[]).map((r) => [r.userName, r.userDisplayName]),
          [
            ['alice', '艾丽'],
            ['bob', '鲍勃'],
            ['dave', null],
            ['erin', '尔琳'],
            ['carol', '柯萝'],
          ],
          'dave’s account has no name',
        );
        assert.equal(lookups, 1, 'one lookup for the five rows');
        const alice = PEOPLE.alice.id;
        await opened.store.accounts.update(alice, { displayName: '艾丽丝' });
        try {
          const renamed = await counted.repeatUploaders(repeatUploadersQuery.parse({ group: 'user', user: 'alice' }));
          assert.equal((renamed.items[0] as RepeatUserRow).userDisplayName, '艾丽丝', 'the name of now');
        } finally {
          await opened.store.accounts.update(alice, { displayName: '艾丽' });
        }
        await counted.repeatUploaders(repeatUploadersQuery.parse({ group: 'unit' }));
        await counted.crossUnit(crossUnitQuery.parse({}));
        assert.equal(lookups, 4, 'one a page, whatever its rows');
      });

      it('filters by minimum count, unit subtree, user, file name and days with an upload', async () => {
        assert.deepEqual(entries((await repeat({ min: '3' })).items), ['alice F1 3', 'bob F3 3']);
        assert.deepEqual(entries((await repeat({ city: '江城市', county: '西县' })).items), ['dave F1 2', 'erin F2 2']);
        assert.deepEqual(entries((await repeat({ user: 'bob' })).items), ['bob F3 3']);
        // One unit, not its subtree: carol's C2 is 东县/城关镇's.
        assert.deepEqual(entries((await repeat({ unitId: 'u-dong' })).items), ['alice F1 3', 'bob F3 3']);
        assert.deepEqual(entries((await repeat({ city: '江城市', county: '东县' })).items), [
          'alice F1 3',
          'bob F3 3',
          'carol C2 2',
        ]);
        assert.deepEqual(entries((await repeat({ q: '通知' })).items), ['alice F1 3', 'dave F1 2']);
        // Bob's own name for F1 is searched, but he uploaded it once.
        assert.equal((await repeat({ q: '副本' })).total, 0);
        // Entries active in the range (first upload on or before its last day, last upload on or
        // after its first), with their total counts; dave's last upload was 03-05 13:00 local.
        assert.deepEqual(entries((await repeat({ from: '2026-03-06', to: '2026-03-08' })).items), [
          'alice F1 3',
          'bob F3 3',
          'erin F2 2',
          'carol C2 2',
        ]);
        assert.equal((await repeat({ city: '河市' })).total, 0);
      });

      it('sorts by any column either way and pages without overlap', async () => {
        assert.deepEqual(entries((await repeat({ sort: 'fileLength', order: 'asc' })).items), [
          'carol C2 2',
          'bob F3 3',
          'alice F1 3',
          'dave F1 2',
          'erin F2 2',
        ]);
        assert.deepEqual(entries((await repeat({ sort: 'userName' })).items), [
          'alice F1 3',
          'bob F3 3',
          'carol C2 2',
          'dave F1 2',
          'erin F2 2',
        ]);
        assert.deepEqual(entries((await repeat({ sort: 'lastUploadTime' })).items), [
          'erin F2 2',
          'alice F1 3',
          'carol C2 2',
          'bob F3 3',
          'dave F1 2',
        ]);
        const second = await repeat({ limit: '2', offset: '2' });
        assert.deepEqual([entries(second.items), second.total], [['dave F1 2', 'erin F2 2'], 5]);
        const past = await repeat({ offset: '10' });
        assert.deepEqual([past.items, past.total], [[], 5]);
      });

      it('totals repeats per user and per unit', async () => {
        const users = await repeat({ group: 'user' });
        assert.equal(users.total, 5);
        assert.deepEqual(
          users.items
            .map(
              (r) =>
                r as { userName: string; files: number; uploads: number; repeatUploads: number; repeatBytes: number },
            )
            .map((r) => [r.userName, r.files, r.uploads, r.repeatUploads, r.repeatBytes]),
          [
            ['alice', 1, 3, 2, 2000],
            ['bob', 1, 3, 2, 1000],
            ['carol', 1, 2, 1, 300],
            ['dave', 1, 2, 1, 1000],
            ['erin', 1, 2, 1, 3000],
          ],
        );
        assert.deepEqual(users.items[1], {
          userId: 'a-bob',
          userName: 'bob',
          userDisplayName: '鲍勃',
          unit: UNITS.dong,
          files: 1,
          uploads: 3,
          repeatUploads: 2,
          copies: 0,
          resends: 2,
          repeatBytes: 1000,
          firstUploadTime: t('2026-03-06T01:00:00Z'),
          lastUploadTime: t('2026-03-07T01:00:00Z'),
        });
        const byBytes = await repeat({ group: 'user', sort: 'repeatBytes' });
        assert.deepEqual(
          byBytes.items.map((r) => (r as { userName: string }).userName),
          ['erin', 'alice', 'bob', 'dave', 'carol'],
        );

        const units = await repeat({ group: 'unit' });
        assert.deepEqual(units.items[0], {
          unit: UNITS.dong,
          users: 2,
          files: 2,
          uploads: 6,
          repeatUploads: 4,
          copies: 0,
          resends: 4,
          repeatBytes: 3000,
          firstUploadTime: t('2026-03-02T02:00:00Z'),
          lastUploadTime: t('2026-03-10T02:00:00Z'),
        });
        assert.deepEqual(
          units.items.map((r) => (r as { unit: { id: string } }).unit.id),
          ['u-dong', 'u-dong-cg', 'u-xi', 'u-xi-cg'],
        );
      });
    });

    describe('cross-unit duplicates', () => {
      it('lists files uploaded by two or more units, with each unit, its users, uploads and dates', async () => {
        const page = await cross();
        assert.equal(page.total, 2);
        assert.deepEqual(page.items[0], {
          fileId: id('F1'),
          fileName: '通知.pdf',
          fileLength: 1000,
          units: 4,
          users: 5,
          uploads: 8,
          firstUploadTime: t('2026-03-02T02:00:00Z'),
          lastUploadTime: t('2026-03-10T02:00:00Z'),
          uploaders: [
            {
              unit: UNITS.dong,
              userNames: ['alice', 'bob'],
              userDisplayNames: ['艾丽', '鲍勃'],
              uploads: 4,
              firstUploadTime: t('2026-03-02T02:00:00Z'),
              lastUploadTime: t('2026-03-10T02:00:00Z'),
            },
            {
              unit: UNITS.he,
              userNames: ['gina'],
              userDisplayNames: [null],
              uploads: 1,
              firstUploadTime: t('2026-03-02T16:30:00Z'),
              lastUploadTime: t('2026-03-02T16:30:00Z'),
            },
            {
              unit: UNITS.dongTown,
              userNames: ['carol'],
              userDisplayNames: ['柯萝'],
              uploads: 1,
              firstUploadTime: t('2026-03-04T02:00:00Z'),
              lastUploadTime: t('2026-03-04T02:00:00Z'),
            },
            {
              unit: UNITS.xi,
              userNames: ['dave'],
              userDisplayNames: [null],
              uploads: 2,
              firstUploadTime: t('2026-03-04T05:00:00Z'),
              lastUploadTime: t('2026-03-05T05:00:00Z'),
            },
          ],
        });
        assert.deepEqual(
          { ...page.items[1], uploaders: page.items[1]!.uploaders.map((u) => u.unit.id) },
          {
            fileId: id('F2'),
            fileName: '会议纪要.docx',
            fileLength: 3000,
            units: 2,
            users: 2,
            uploads: 3,
            firstUploadTime: t('2026-03-05T01:00:00Z'),
            lastUploadTime: t('2026-04-02T01:00:00Z'),
            uploaders: ['u-xi-cg', 'u-city'],
          },
        );
      });

      it('counts only the units of a subtree, and filters by minimum units, file name and days', async () => {
        const dong = await cross({ city: '江城市', county: '东县' });
        assert.equal(dong.total, 1);
        assert.deepEqual(
          [
            dong.items[0]!.fileId,
            dong.items[0]!.units,
            dong.items[0]!.users,
            dong.items[0]!.uploads,
            dong.items[0]!.uploaders.map((u) => [u.unit.id, u.userNames, u.uploads]),
          ],
          [
            id('F1'),
            2,
            3,
            5,
            [
              ['u-dong', ['alice', 'bob'], 4],
              ['u-dong-cg', ['carol'], 1],
            ],
          ],
        );
        assert.deepEqual(
          (await cross({ min: '3' })).items.map((r) => r.fileId),
          [id('F1')],
        );
        assert.deepEqual(
          (await cross({ q: '会议' })).items.map((r) => r.fileId),
          [id('F2')],
        );
        assert.deepEqual(
          (await cross({ from: '2026-04-01', to: '2026-04-30' })).items.map((r) => [r.fileId, r.units]),
          [[id('F2'), 2]],
        );
        assert.deepEqual(
          (await cross({ sort: 'fileLength' })).items.map((r) => r.fileId),
          [id('F2'), id('F1')],
        );
        assert.deepEqual(
          (await cross({ sort: 'fileLength', order: 'asc', limit: '1', offset: '1' })).items.map((r) => r.fileId),
          [id('F2')],
        );
      });
    });

    it('lists the first 20 units of a file uploaded by more, earliest first, and counts them all', async () => {
      const wide = await target.open();
      try {
        const staged = await stageBytes(wide.store, randomContent(10));
        const { entry } = await wide.store.content.commit(staged.stagingId, {
          key: staged.key,
          fileName: '通知.pdf',
          contentType: 'application/pdf',
          uploadDate: new Date('2026-05-01T00:00:00Z'),
        });
        for (let i = 0; i < 25; i++) {
          const at = new Date(Date.UTC(2026, 4, 1, i));
          const account = testAccount({
            id: `a-${i}`,
            username: `clerk${i}`,
            unit: {
              id: `t-${String(i).padStart(2, '0')}`,
              geoType: 'town',
              city: '江城市',
              county: '东县',
              town: `镇${i}`,
            },
          });
          await countUpload(wide.store, {
            account,
            fileId: entry.fileId,
            fileName: '通知.pdf',
            contentType: 'application/pdf',
            at,
            day: '2026-05-01',
            fileLength: 10,
            carriedBytes: i === 0,
          });
        }
        const wideReports = new ReportService(
          wide.store.reports,
          new ReportCalendar(REPORT_TIME_ZONE),
          wide.store.accounts,
        );
        const [row] = (await wideReports.crossUnit(crossUnitQuery.parse({}))).items;
        assert.equal(row!.units, 25);
        assert.deepEqual(
          row!.uploaders.map((u) => u.unit.id),
          Array.from({ length: UPLOADERS_PER_ROW }, (_, i) => `t-${String(i).padStart(2, '0')}`),
        );
      } finally {
        await wide.dispose();
      }
    });

    describe('space saved', () => {
      const figures = (rows: Array<{ uploads: number; savedUploads: number; savedBytes: number }>) =>
        rows.map((r) => [r.uploads, r.savedUploads, r.savedBytes]);

      it('totals (uploads - 1) x size over every file, and per city', async () => {
        const page = await savings();
        assert.deepEqual(page.summary, { uploads: 18, savedUploads: 12, savedBytes: 14300 });
        assert.equal(page.total, 2);
        assert.deepEqual(page.items, [
          { city: '江城市', uploads: 16, savedUploads: 11, savedBytes: 13300 },
          { city: '河市', uploads: 2, savedUploads: 1, savedBytes: 1000 },
        ]);
      });

      it('breaks a subtree down one level: a city into counties (null: its own units), a county into towns', async () => {
        const city = await savings({ city: '江城市' });
        assert.deepEqual(city.summary, { uploads: 16, savedUploads: 11, savedBytes: 13300 });
        assert.deepEqual(city.items, [
          { city: '江城市', county: '东县', uploads: 10, savedUploads: 7, savedBytes: 5300 },
          { city: '江城市', county: '西县', uploads: 4, savedUploads: 3, savedBytes: 5000 },
          { city: '江城市', county: null, uploads: 2, savedUploads: 1, savedBytes: 3000 },
        ]);
        const county = await savings({ city: '江城市', county: '东县' });
        assert.deepEqual(county.items, [
          { city: '江城市', county: '东县', town: null, uploads: 7, savedUploads: 5, savedBytes: 4000 },
          { city: '江城市', county: '东县', town: '城关镇', uploads: 3, savedUploads: 2, savedBytes: 1300 },
        ]);
        // The other county's 城关镇 is another town.
        const town = await savings({ city: '江城市', county: '西县', town: '城关镇' });
        assert.deepEqual(town.items, [
          { city: '江城市', county: '西县', town: '城关镇', uploads: 2, savedUploads: 1, savedBytes: 3000 },
        ]);
        assert.deepEqual(
          (await savings({ city: '江城市', sort: 'unit', order: 'asc' })).items.map((r) =>
            'county' in r ? r.county : undefined,
          ),
          [null, '东县', '西县'],
        );
      });

      it('counts each upload on its day in the report time zone, by day, ISO week and month', async () => {
        const days = await savings({ group: 'day', limit: '100' });
        assert.equal(days.total, 13);
        assert.deepEqual(
          days.items.map((r) => ('period' in r ? r.period : '')),
          [
            '2026-02-01',
            '2026-02-02',
            '2026-03-02',
            '2026-03-03',
            '2026-03-04',
            '2026-03-05',
            '2026-03-06',
            '2026-03-07',
            '2026-03-08',
            '2026-03-09',
            '2026-03-10',
            '2026-04-01',
            '2026-04-02',
          ],
        );
        assert.deepEqual(figures(days.items), [
          [1, 0, 0],
          [1, 0, 0],
          [1, 0, 0],
          [3, 3, 3000],
          [2, 2, 2000],
          [2, 1, 1000],
          [2, 1, 500],
          [1, 1, 500],
          [1, 0, 0],
          [1, 1, 300],
          [1, 1, 1000],
          [1, 1, 3000],
          [1, 1, 3000],
        ]);
        assert.deepEqual((await savings({ group: 'week' })).items, [
          { period: '2026-01-26', uploads: 1, savedUploads: 0, savedBytes: 0 },
          { period: '2026-02-02', uploads: 1, savedUploads: 0, savedBytes: 0 },
          { period: '2026-03-02', uploads: 12, savedUploads: 8, savedBytes: 7000 },
          { period: '2026-03-09', uploads: 2, savedUploads: 2, savedBytes: 1300 },
          { period: '2026-03-30', uploads: 2, savedUploads: 2, savedBytes: 6000 },
        ]);
        assert.deepEqual((await savings({ group: 'month' })).items, [
          { period: '2026-02', uploads: 2, savedUploads: 0, savedBytes: 0 },
          { period: '2026-03', uploads: 14, savedUploads: 10, savedBytes: 8300 },
          { period: '2026-04', uploads: 2, savedUploads: 2, savedBytes: 6000 },
        ]);
      });

      it('filters by days (both included), file name, and pages with the summary of the whole selection', async () => {
        const range = await savings({ group: 'day', from: '2026-03-03', to: '2026-03-05' });
        assert.deepEqual(range.summary, { uploads: 7, savedUploads: 6, savedBytes: 6000 });
        assert.deepEqual(
          range.items.map((r) => ('period' in r ? r.period : '')),
          ['2026-03-03', '2026-03-04', '2026-03-05'],
        );
        assert.deepEqual((await savings({ q: '报表' })).items, [
          { city: '江城市', uploads: 3, savedUploads: 2, savedBytes: 1000 },
        ]);
        const page = await savings({ group: 'day', limit: '5', offset: '10' });
        assert.deepEqual(
          [page.items.map((r) => ('period' in r ? r.period : '')), page.total, page.summary],
          [['2026-03-10', '2026-04-01', '2026-04-02'], 13, { uploads: 18, savedUploads: 12, savedBytes: 14300 }],
        );
        const past = await savings({ offset: '5' });
        assert.deepEqual(
          [past.items, past.total, past.summary],
          [[], 2, { uploads: 18, savedUploads: 12, savedBytes: 14300 }],
        );
        const biggest = await savings({ group: 'day', sort: 'savedBytes', limit: '4' });
        assert.deepEqual(
          biggest.items.map((r) => ('period' in r ? r.period : '')),
          ['2026-03-03', '2026-04-01', '2026-04-02', '2026-03-04'],
        );
        const none = await savings({ city: '无此市' });
        assert.deepEqual(
          [none.items, none.total, none.summary],
          [[], 0, { uploads: 0, savedUploads: 0, savedBytes: 0 }],
        );
      });
    });

    describe('MD5 collisions', () => {
      it('lists files sharing an MD5 with different content, grouped by MD5, oldest first', async () => {
        const page = await collisions();
        assert.equal(page.total, 2);
        assert.deepEqual(page.items, [
          {
            md5: files.C1.md5,
            fileId: id('C1'),
            sha256: files.C1.sha256,
            fileLength: 200,
            fileName: FILES.C1.name,
            uploadDate: t('2026-02-01T01:00:00Z'),
            uploads: 1,
            filesWithMd5: 2,
          },
          {
            md5: files.C1.md5,
            fileId: id('C2'),
            sha256: files.C2.sha256,
            fileLength: 300,
            fileName: FILES.C2.name,
            uploadDate: t('2026-02-02T01:00:00Z'),
            uploads: 2,
            filesWithMd5: 2,
          },
        ]);
      });

      it('filters by the uploading subtree, minimum uploads, file name and first-stored day', async () => {
        const ids = async (q: Record<string, unknown>) => (await collisions(q)).items.map((r) => r.fileId);
        assert.deepEqual(await ids({ city: '江城市', county: '东县' }), [id('C2')]);
        assert.deepEqual(await ids({ min: '2' }), [id('C2')]);
        assert.deepEqual(await ids({ q: '扫描件A' }), [id('C1')]);
        // C1 was stored 02-01 09:00 local.
        assert.deepEqual(await ids({ from: '2026-02-02' }), [id('C2')]);
        assert.deepEqual(await ids({ sort: 'fileLength' }), [id('C2'), id('C1')]);
        assert.deepEqual(await ids({ city: '河市' }), []);
      });
    });

    describe('exports: every row, a batch at a time', () => {
      /** Reads an export through, checking each batch's size and the total each carries. */
      async function readAll<Row>(batches: AsyncIterable<{ items: Row[]; total: number }>, batch: number) {
        const items: Row[] = [];
        const sizes: number[] = [];
        const totals = new Set<number>();
        for await (const b of batches) {
          assert.ok(b.items.length <= batch, `a batch of ${b.items.length} rows, asked for ${batch}`);
          sizes.push(b.items.length);
          totals.add(b.total);
          items.push(...b.items);
        }
        assert.equal(totals.size, 1, 'every batch tells the same total');
        return { items, sizes, total: [...totals][0]! };
      }
      /** The export equals the table read as one page of every row: same rows, once each, same order. */
      async function sameAsPage<Row>(
        exported: AsyncIterable<{ items: Row[]; total: number }>,
        page: Promise<{ items: Row[]; total: number }>,
      ) {
        const all = await readAll(exported, 2);
        const whole = await page;
        assert.deepEqual(all.items, whole.items);
        assert.equal(all.total, whole.total);
        assert.equal(all.items.length, all.total);
        return all;
      }
      const everyRow = { limit: '1000' };

      it('repeat uploaders: two rows a batch, in the table’s order with ties in their stable order', async () => {
        const all = await readAll(reports.repeatUploaderRows(repeatUploadersQuery.parse({}), 2), 2);
        assert.deepEqual(entries(all.items), ['alice F1 3', 'bob F3 3', 'dave F1 2', 'erin F2 2', 'carol C2 2']);
        assert.deepEqual(all.sizes, [2, 2, 1]);
        assert.equal(all.total, 5);
        assert.deepEqual(all.items[0], (await repeat()).items[0], 'rows as the page has them, display names too');
      });

      it('repeat uploaders: filters, sorts and groups as the table does', async () => {
        for (const q of [
          { city: '江城市', county: '东县' },
          { sort: 'fileLength', order: 'asc' },
          { sort: 'userName' },
          { from: '2026-03-06', to: '2026-03-08' },
          { group: 'user' },
          { group: 'unit', sort: 'repeatUploads', order: 'asc' },
          { q: '通知' },
          { city: '河市' },
        ]) {
          await sameAsPage(reports.repeatUploaderRows(repeatUploadersQuery.parse(q), 2), repeat({ ...q, ...everyRow }));
        }
      });

      it('cross-unit duplicates: each file once with its units, filtered and sorted as the table', async () => {
        for (const q of [
          {},
          { min: '3' },
          { city: '江城市', county: '东县' },
          { sort: 'fileName' },
          { from: '2026-03-06' },
        ]) {
          await sameAsPage(reports.crossUnitRows(crossUnitQuery.parse(q), 2), cross({ ...q, ...everyRow }));
        }
      });

      it('space saved and MD5 collisions: every row of the selection, in order', async () => {
        for (const q of [{}, { group: 'day' }, { group: 'month', order: 'asc' }, { city: '江城市' }, { q: '通知' }]) {
          const all = await sameAsPage(reports.savingsRows(savingsQuery.parse(q), 2), savings({ ...q, ...everyRow }));
          if (q.group === 'day')
            assert.ok(all.sizes.length >= 2, `${all.items.length} days in ${all.sizes.length} batches`);
        }
        for (const q of [{}, { sort: 'fileLength' }, { city: '江城市', county: '东县' }]) {
          await sameAsPage(reports.collisionRows(collisionsQuery.parse(q), 1), collisions({ ...q, ...everyRow }));
        }
      });

      it('an export that selects nothing is one empty batch with a total of 0', async () => {
        const all = await readAll(reports.crossUnitRows(crossUnitQuery.parse({ city: '河市' }), 2), 2);
        assert.deepEqual(all, { items: [], sizes: [0], total: 0 });
      });

      it('an export stopped after its first batch reads no further, and the store goes on answering', async () => {
        let batches = 0;
        for await (const b of reports.repeatUploaderRows(repeatUploadersQuery.parse({}), 1)) {
          batches++;
          assert.equal(b.items.length, 1);
          break;
        }
        assert.equal(batches, 1);
        assert.equal((await repeat()).total, 5);
      });
    });
  });

  describe(`repeat uploaders, copies inside one upload: ${target.name}`, { skip: target.skip }, () => {
    let opened: OpenedStore;
    let reports: ReportService;
    // Two clerks of one unit. 张: page P three times in one folder upload (receipt r1) and once
    // more later (r2); Q once in each; S twice in r1 only. 李: R sent five times, each a folder
    // upload of its own (r3 to r7).
    const zhang = testAccount({ username: 'zhang' });
    const li = testAccount({ username: 'li', unit: zhang.unit });
    const files: Record<'P' | 'Q' | 'S' | 'R', string> = { P: '', Q: '', S: '', R: '' };
    const keys: Record<string, string> = {};

    before(async () => {
      opened = await target.open();
      reports = new ReportService(opened.store.reports, new ReportCalendar(REPORT_TIME_ZONE), opened.store.accounts);
      for (const f of Object.keys(files) as Array<keyof typeof files>)
        files[f] = (await commitBytes(opened.store, randomContent(100), `${f}.pdf`)).entry.fileId;
      let minute = 0;
      const count = async (key: string, who: typeof zhang, file: keyof typeof files) => {
        const at = new Date(Date.UTC(2026, 2, 2, 2, minute++));
        keys[key] = `copies-test:${key}`;
        await opened.store.ledger.count(uploadAction(uploadRecord(who, files[file], `${file}.pdf`, at), keys[key]));
      };
      for (const [key, file] of [
        ['p1', 'P'],
        ['p2', 'P'],
        ['p3', 'P'],
        ['q1', 'Q'],
        ['s1', 'S'],
        ['s2', 'S'],
      ] as const)
        await count(key, zhang, file);
      await opened.store.ledger.placeInReceipt(
        'r1',
        ['p1', 'p2', 'p3', 'q1', 's1', 's2'].map((k) => keys[k]!),
      );
      await count('p4', zhang, 'P');
      await count('q2', zhang, 'Q');
      await opened.store.ledger.placeInReceipt('r2', [keys.p4!, keys.q2!]);
      for (const [i, receipt] of ['r3', 'r4', 'r5', 'r6', 'r7'].entries()) {
        await count(`r${i}`, li, 'R');
        await opened.store.ledger.placeInReceipt(receipt, [keys[`r${i}`]!]);
      }
    });
    after(async () => {
      await opened.dispose();
    });

    const repeat = (q: Record<string, unknown> = {}) => reports.repeatUploaders(repeatUploadersQuery.parse(q));
    const name = (fileId: string) => (Object.keys(files) as Array<keyof typeof files>).find((f) => files[f] === fileId);
    const entryCounts = async (q: Record<string, unknown> = {}) =>
      ((await repeat(q)).items as RepeatEntryRow[]).map(
        (r) => `${r.userName} ${name(r.fileId)} ${r.uploadCount} copies ${r.copies} re-sends ${r.resends}`,
      );
    const userCounts = async (q: Record<string, unknown> = {}) =>
      ((await repeat({ group: 'user', ...q })).items as RepeatUserRow[]).map((r) => [
        r.userName,
        r.files,
        r.uploads,
        r.repeatUploads,
        r.copies,
        r.resends,
        r.repeatBytes,
      ]);

    it('tells copies inside one receipt from re-sends in later ones, per file, user and unit', async () => {
      assert.deepEqual(await entryCounts(), [
        'li R 5 copies 0 re-sends 4',
        'zhang P 4 copies 2 re-sends 1',
        'zhang Q 2 copies 0 re-sends 1',
        'zhang S 2 copies 1 re-sends 0',
      ]);
      // [user, files, uploads, repeats, copies, re-sends, repeated bytes]
      assert.deepEqual(await userCounts(), [
        ['zhang', 3, 8, 5, 3, 2, 500],
        ['li', 1, 5, 4, 0, 4, 400],
      ]);
      const unit = (await repeat({ group: 'unit' })).items[0] as RepeatUnitRow;
      assert.deepEqual([unit.repeatUploads, unit.copies, unit.resends], [9, 3, 6]);
    });

    it('without copies (只看重复发送), counts each receipt once and ranks by re-sends only', async () => {
      assert.deepEqual(await entryCounts({ copies: 'exclude' }), [
        'li R 5 copies 0 re-sends 4',
        'zhang P 2 copies 2 re-sends 1',
        'zhang Q 2 copies 0 re-sends 1',
      ]);
      // S was sent in one upload only: no re-send, so not a repeat entry at all.
      assert.deepEqual(await userCounts({ copies: 'exclude' }), [
        ['li', 1, 5, 4, 0, 4, 400],
        ['zhang', 2, 4, 2, 2, 2, 200],
      ]);
      assert.deepEqual(await entryCounts({ copies: 'exclude', min: '3' }), ['li R 5 copies 0 re-sends 4']);
    });

    it('keeps an action’s first receipt, however often or under whichever receipt it is named again', async () => {
      await opened.store.ledger.placeInReceipt('r1', [keys.p1!, keys.p2!, keys.p3!]);
      await opened.store.ledger.placeInReceipt('r9', [keys.p4!, keys.q2!, keys.s1!, 'copies-test:never-counted']);
      assert.deepEqual(await entryCounts(), [
        'li R 5 copies 0 re-sends 4',
        'zhang P 4 copies 2 re-sends 1',
        'zhang Q 2 copies 0 re-sends 1',
        'zhang S 2 copies 1 re-sends 0',
      ]);
    });

    it('leaves a withdrawn upload out of both numbers, and counts it again when restored', async () => {
      assert.equal(await opened.store.ledger.reverse(keys.p2!, 'copies-test:w1'), 'reversed');
      assert.equal(await opened.store.ledger.reverse(keys.q2!, 'copies-test:w2'), 'reversed');
      assert.deepEqual(await entryCounts(), [
        'li R 5 copies 0 re-sends 4',
        'zhang P 3 copies 1 re-sends 1',
        'zhang S 2 copies 1 re-sends 0',
      ]);
      assert.equal(await opened.store.ledger.reverse(keys.s1!, 'copies-test:w3'), 'reversed');
      assert.deepEqual(await entryCounts(), ['li R 5 copies 0 re-sends 4', 'zhang P 3 copies 1 re-sends 1']);
      assert.equal(await opened.store.ledger.restore(keys.p2!, 'copies-test:u1'), 'restored');
      assert.equal(await opened.store.ledger.restore(keys.s1!, 'copies-test:u3'), 'restored');
      assert.deepEqual(await entryCounts(), [
        'li R 5 copies 0 re-sends 4',
        'zhang P 4 copies 2 re-sends 1',
        'zhang S 2 copies 1 re-sends 0',
      ]);
    });
  });

  describe(
    `repeat uploaders over every entry, as summed from the entries: ${target.name}`,
    { skip: target.skip },
    () => {
      let opened: OpenedStore;
      let reports: ReportService;
      let files: Record<FileKey, CatalogEntry>;
      const keys: string[] = [];
      let minute = 0;

      before(async () => {
        opened = await target.open();
        files = await seedReportArchive(opened.store);
        reports = new ReportService(opened.store.reports, new ReportCalendar(REPORT_TIME_ZONE), opened.store.accounts);
      });
      after(async () => {
        await opened.dispose();
      });

      const repeat = (q: Record<string, unknown>) => reports.repeatUploaders(repeatUploadersQuery.parse(q));
      /** Counts an upload under a new key (each a minute after the one before); answers its key. */
      const count = async (who: Account, file: FileKey, name = `${file}.pdf`) => {
        const key = `every-entry:${keys.length}`;
        keys.push(key);
        const at = new Date(Date.UTC(2026, 4, 1, 0, minute++));
        await opened.store.ledger.count(uploadAction(uploadRecord(who, files[file].fileId, name, at), key));
        return key;
      };
      /**
       * Every page the table over every repeat entry has (grouped each way, each sort both ways, a
       * minimum above the least, pages of two rows and past the end), equal to the same table asked
       * with a time filter that picks every entry: that one is always summed from the entries, so a
       * store that keeps sums or reads an index for the table over every entry must answer the same.
       */
      async function sameAsSummed(step: string) {
        const queries: Array<Record<string, unknown>> = [
          { min: '3' },
          { min: '3', limit: '1' },
          { min: '3', limit: '1', offset: '40' },
          { min: '3', sort: 'fileLength' },
        ];
        for (const group of ['entry', 'user', 'unit'] as const)
          for (const sort of REPEAT_SORTS[group])
            for (const order of ['desc', 'asc'])
              for (const offset of ['0', '2', '4', '40']) queries.push({ group, sort, order, limit: '2', offset });
        let rows = 0;
        for (const q of queries) {
          const page = await repeat(q);
          assert.deepEqual(page, await repeat({ ...q, from: '2000-01-01' }), `${step}: ${JSON.stringify(q)}`);
          rows += page.items.length;
        }
        for (const group of ['entry', 'user', 'unit'])
          assert.deepEqual(
            await readRows(reports.repeatUploaderRows(repeatUploadersQuery.parse({ group }), 3)),
            await readRows(reports.repeatUploaderRows(repeatUploadersQuery.parse({ group, from: '2000-01-01' }), 3)),
            `${step}: the export grouped by ${group}`,
          );
        assert.ok(rows > 0, `${step}: the table has rows`);
      }
      const readRows = async (batches: AsyncIterable<{ items: unknown[]; total: number }>) => {
        const rows: unknown[] = [];
        let total = -1;
        for await (const b of batches) {
          rows.push(...b.items);
          total = b.total;
        }
        return { rows, total };
      };

      it('after counts, repeat uploads, copies inside one upload, withdrawals and restores', async () => {
        await sameAsSummed('seeded');
        // hal, new in 东县: a file uploaded once (no repeat entry), then again (a repeat entry, the
        // unit's file F4 new to it), then again; F1 once, beside alice's and bob's repeats of it.
        const hal = testAccount({ username: 'hal', unit: UNITS.dong });
        const h1 = await count(hal, 'F4');
        await sameAsSummed('an entry uploaded once');
        const h2 = await count(hal, 'F4', 'F4-again.pdf');
        const h3 = await count(hal, 'F4');
        const h4 = await count(hal, 'F1');
        const h5 = await count(hal, 'F1');
        // dave repeats F1 in 西县; frank uploads F3 twice in one folder upload (a copy).
        await count(PEOPLE.dave, 'F1');
        const f1 = await count(PEOPLE.frank, 'F3');
        const f2 = await count(PEOPLE.frank, 'F3');
        await opened.store.ledger.placeInReceipt('every-entry:r1', [f1, f2]);
        await sameAsSummed('repeats and copies counted');
        const { ledger } = opened.store;
        // Withdrawn: hal's last upload of F4 (its first and last stay), its first (the first
        // changes), one of frank's copies, alice's F1 down to one upload (no longer a repeat entry).
        assert.equal(await ledger.reverse(h3, 'every-entry:w1'), 'reversed');
        await sameAsSummed('a repeat withdrawn');
        assert.equal(await ledger.reverse(h1, 'every-entry:w2'), 'reversed');
        assert.equal(await ledger.reverse(f2, 'every-entry:w3'), 'reversed');
        await sameAsSummed('a first upload and a copy withdrawn');
        // hal's F4 and F1 gone entirely: no entry, then no repeat entry of hal's at all.
        assert.equal(await ledger.reverse(h2, 'every-entry:w4'), 'reversed');
        assert.equal(await ledger.reverse(h4, 'every-entry:w5'), 'reversed');
        assert.equal(await ledger.reverse(h5, 'every-entry:w6'), 'reversed');
        await sameAsSummed('entries withdrawn to none');
        // Restored in another order: entries made again, uploaded twice again.
        for (const [i, key] of [h5, h2, f2, h4, h1, h3].entries())
          assert.equal(await ledger.restore(key, `every-entry:u${i}`), 'restored');
        await sameAsSummed('restored');
        // The file of two units' repeat entries withdrawn in one (F1: alice's and bob's in 东县, dave's in 西县).
        for (const [i, key] of [h4, h5].entries())
          assert.equal(await ledger.reverse(key, `every-entry:x${i}`), 'reversed');
        await sameAsSummed('one of a unit’s repeat entries of a file withdrawn');
      });
    },
  );

  describe(`cross-unit duplicates as the uploads that count make them: ${target.name}`, { skip: target.skip }, () => {
    // Two cities with a county of the same name (东县), each county with a town of the same name
    // (城关镇), units at every level; two clerks a unit; eight files. Uploads at random (seeded)
    // over half a year, in time order; then some withdrawn, some of those restored, and more
    // uploads. Every filter, sort and page is checked against the table worked out here from the
    // uploads that count: the rows a time window or a subtree picks, and a page at every offset.
    const units: Unit[] = [
      { id: 'x-jia', geoType: 'city', city: '甲市' },
      { id: 'x-jia-dong', geoType: 'county', city: '甲市', county: '东县' },
      { id: 'x-jia-dong-cg', geoType: 'town', city: '甲市', county: '东县', town: '城关镇' },
      { id: 'x-jia-xi', geoType: 'county', city: '甲市', county: '西县' },
      { id: 'x-jia-xi-cg', geoType: 'town', city: '甲市', county: '西县', town: '城关镇' },
      { id: 'x-yi', geoType: 'city', city: '乙市' },
      { id: 'x-yi-dong', geoType: 'county', city: '乙市', county: '东县' },
      { id: 'x-yi-dong-cg', geoType: 'town', city: '乙市', county: '东县', town: '城关镇' },
    ];
    const clerks = units.flatMap((unit, u) =>
      [0, 1].map((k) => testAccount({ id: `x-clerk-${u}-${k}`, username: `x${u}${k}`, unit })),
    );
    const names = [
      '通知.pdf',
      '会议纪要.docx',
      '报表.xlsx',
      '通知二.pdf',
      '照片.jpg',
      '方案.pdf',
      '通报.pdf',
      '名单.xlsx',
    ];
    const catalogued: Array<{ fileId: string; name: string; length: number }> = [];
    const uploads: Array<{ key: string; who: Account; file: number; at: number; counts: boolean }> = [];
    let opened: OpenedStore;
    let reports: ReportService;
    // mulberry32: the same archive on every run and store.
    let seed = 43;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const HOUR = 3_600_000;
    /** Uploads at hh:17 UTC, never at a day's start in Asia/Shanghai. */
    const randomTime = (fromDay: number, days: number) =>
      Date.UTC(2026, 0, 1) +
      Math.floor(fromDay + random() * days) * 24 * HOUR +
      Math.floor(random() * 24) * HOUR +
      17 * 60_000;

    const countAll = async (times: number[]) => {
      for (const at of times.sort((a, b) => a - b)) {
        const who = pick(clerks);
        // Files with lower numbers shared more widely; each upload of a file within its own months.
        const file = Math.min(Math.floor(random() * random() * names.length * 1.5), names.length - 1);
        const key = `x-upload-${uploads.length}`;
        const f = catalogued[file]!;
        await opened.store.ledger.count(uploadAction(uploadRecord(who, f.fileId, f.name, new Date(at)), key));
        uploads.push({ key, who, file, at, counts: true });
      }
    };

    before(async () => {
      opened = await target.open();
      reports = new ReportService(opened.store.reports, new ReportCalendar(REPORT_TIME_ZONE), opened.store.accounts);
      for (const [i, name] of names.entries()) {
        const { entry } = await commitBytes(opened.store, randomContent(100 + i * 37), name);
        catalogued.push({ fileId: entry.fileId, name, length: entry.length });
      }
      await countAll(Array.from({ length: 90 }, () => randomTime(0, 180)));
      for (const u of uploads.filter(() => random() < 0.2)) {
        assert.equal(await opened.store.ledger.reverse(u.key, `${u.key}:w`), 'reversed');
        u.counts = false;
      }
      for (const u of uploads.filter((u) => !u.counts && random() < 0.4)) {
        assert.equal(await opened.store.ledger.restore(u.key, `${u.key}:r`), 'restored');
        u.counts = true;
      }
      // Uploads after those: repeats of entries that stretch them into later months, new entries.
      await countAll(Array.from({ length: 30 }, () => randomTime(181, 60)));
      // A file of two units only, one in each city (random files are shared more widely).
      const pair = await commitBytes(opened.store, randomContent(99), '通知.pdf');
      catalogued.push({ fileId: pair.entry.fileId, name: '通知.pdf', length: pair.entry.length });
      for (const [i, who] of [clerks[2]!, clerks[12]!].entries()) {
        const at = Date.UTC(2026, 2, 10 + i, 3, 17);
        const key = `x-upload-${uploads.length}`;
        await opened.store.ledger.count(
          uploadAction(uploadRecord(who, pair.entry.fileId, '通知.pdf', new Date(at)), key),
        );
        uploads.push({ key, who, file: catalogued.length - 1, at, counts: true });
      }
    });
    after(async () => {
      await opened.dispose();
    });

    const localDay = (day: string) => Date.parse(`${day}T00:00:00+08:00`);
    const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    type Query = {
      city?: string;
      county?: string;
      town?: string;
      from?: string;
      to?: string;
      q?: string;
      min?: string;
    };
    type Paging = { sort?: (typeof CROSS_UNIT_SORTS)[number]; order?: 'asc' | 'desc'; limit?: string; offset?: string };
    /** The table's rows worked out from the uploads that count: each as `row` below, in the table's order. */
    function expected(q: Query & Paging) {
      const from = q.from ? localDay(q.from) : -Infinity;
      const to = q.to ? localDay(q.to) + 24 * HOUR : Infinity;
      const entries = new Map<string, { who: Account; file: number; uploads: number; first: number; last: number }>();
      for (const u of uploads.filter((u) => u.counts)) {
        const key = `${u.who.id} ${u.file}`;
        const e = entries.get(key) ?? { who: u.who, file: u.file, uploads: 0, first: u.at, last: u.at };
        entries.set(key, {
          ...e,
          uploads: e.uploads + 1,
          first: Math.min(e.first, u.at),
          last: Math.max(e.last, u.at),
        });
      }
      const picked = [...entries.values()].filter(
        (e) =>
          e.last >= from &&
          e.first < to &&
          (!q.city || e.who.unit.city === q.city) &&
          (!q.county || e.who.unit.county === q.county) &&
          (!q.town || e.who.unit.town === q.town) &&
          (!q.q || catalogued[e.file]!.name.includes(q.q)),
      );
      const rows = catalogued.flatMap((f, file) => {
        const its = picked.filter((e) => e.file === file);
        const byUnit = new Map<string, typeof its>();
        for (const e of its) byUnit.set(e.who.unit.id, [...(byUnit.get(e.who.unit.id) ?? []), e]);
        if (byUnit.size < Number(q.min ?? 2)) return [];
        const uploaders = [...byUnit]
          .map(([unitId, es]) => ({
            unitId,
            userNames: es.map((e) => e.who.username).sort(),
            uploads: es.reduce((n, e) => n + e.uploads, 0),
            first: Math.min(...es.map((e) => e.first)),
            last: Math.max(...es.map((e) => e.last)),
          }))
          .sort((a, b) => a.first - b.first || bytes(a.unitId, b.unitId))
          .slice(0, UPLOADERS_PER_ROW);
        return [
          {
            fileId: f.fileId,
            fileName: f.name,
            fileLength: f.length,
            units: byUnit.size,
            users: new Set(its.map((e) => e.who.id)).size,
            uploads: its.reduce((n, e) => n + e.uploads, 0),
            first: Math.min(...its.map((e) => e.first)),
            last: Math.max(...its.map((e) => e.last)),
            uploaders,
          },
        ];
      });
      const sort = q.sort ?? 'units';
      const key = (r: (typeof rows)[number]) =>
        ({
          units: r.units,
          uploads: r.uploads,
          users: r.users,
          fileLength: r.fileLength,
          lastUploadTime: r.last,
          firstUploadTime: r.first,
          fileName: r.fileName,
        })[sort];
      const direction = (q.order ?? defaultOrder(sort)) === 'asc' ? 1 : -1;
      rows.sort((a, b) => {
        const [x, y] = [key(a), key(b)];
        const by = typeof x === 'string' ? bytes(x, y as string) : x - (y as number);
        return by * direction || bytes(a.fileId, b.fileId);
      });
      const offset = Number(q.offset ?? 0);
      return { total: rows.length, rows: rows.slice(offset, offset + Number(q.limit ?? 50)).map(row) };
    }
    const row = (r: {
      fileId: string;
      fileLength: number;
      units: number;
      users: number;
      uploads: number;
      first: number;
      last: number;
      uploaders: Array<{ unitId: string; userNames: string[]; uploads: number; first: number; last: number }>;
    }) =>
      `${r.fileId} ${r.fileLength} B units ${r.units} users ${r.users} uploads ${r.uploads} ${new Date(r.first).toISOString()}..${new Date(r.last).toISOString()} ` +
      r.uploaders
        .map(
          (u) =>
            `[${u.unitId} ${u.userNames.join(',')} ${u.uploads} ${new Date(u.first).toISOString()}..${new Date(u.last).toISOString()}]`,
        )
        .join(' ');
    async function answered(q: Query & Paging) {
      const page = await reports.crossUnit(crossUnitQuery.parse(q));
      return { total: page.total, rows: answeredRows(page.items) };
    }
    /** The rows as `row` shows them, each with its file's name in the catalog. */
    function answeredRows(items: Array<Awaited<ReturnType<ReportService['crossUnit']>>['items'][number]>) {
      return items.map((r) => {
        assert.equal(r.fileName, catalogued.find((f) => f.fileId === r.fileId)?.name);
        return row({
          ...r,
          first: Date.parse(r.firstUploadTime),
          last: Date.parse(r.lastUploadTime),
          uploaders: r.uploaders.map((u) => ({
            unitId: u.unit.id,
            userNames: u.userNames,
            uploads: u.uploads,
            first: Date.parse(u.firstUploadTime),
            last: Date.parse(u.lastUploadTime),
          })),
        });
      });
    }

    const filters: Query[] = [
      {},
      { min: '3' },
      { city: '甲市' },
      { city: '乙市' },
      { city: '甲市', county: '东县' },
      { city: '乙市', county: '东县' },
      { city: '甲市', county: '西县', town: '城关镇' },
      { from: '2026-02-01', to: '2026-03-15' },
      { from: '2026-05-10' },
      { to: '2026-01-20' },
      { from: '2026-04-01', to: '2026-04-01' },
      { city: '甲市', from: '2026-03-01', to: '2026-05-31' },
      { city: '甲市', county: '东县', to: '2026-04-30', min: '3' },
      { q: '通' },
      { q: '通', city: '甲市' },
      { q: '通', from: '2026-03-01', to: '2026-06-30' },
    ];

    it('the archive made has files of many units, whole and in part in each window and subtree', async () => {
      // What the checks below need to mean anything: withdrawn and restored uploads, and windows
      // and subtrees that take some of a file's units and leave others.
      assert.ok(uploads.some((u) => !u.counts) && uploads.length > 100);
      const all = expected({});
      assert.ok(all.total >= 5, `${all.total} files of two units or more`);
      assert.ok(all.rows.some((r) => r.includes(' units 2 ')) && all.rows.some((r) => r.includes(' units 4 ')));
      for (const f of [{ city: '甲市' }, { city: '甲市', county: '东县' }, { from: '2026-02-01', to: '2026-03-15' }]) {
        const part = expected({ ...f, limit: '1000' });
        assert.ok(part.total > 0 && part.rows.some((r) => !all.rows.includes(r)), JSON.stringify(f));
      }
    });

    it('every filter, in every order, counts the units, users, uploads and dates of the entries it picks', async () => {
      // Each sort one way or the other, in turn (the way round is the same code on both stores).
      for (const [i, f] of filters.entries())
        for (const [k, sort] of CROSS_UNIT_SORTS.entries()) {
          const q = { ...f, sort, order: (i + k) % 2 ? ('asc' as const) : ('desc' as const), limit: '1000' };
          assert.deepEqual(await answered(q), expected(q), JSON.stringify(q));
        }
    });

    it('a page at any offset is that part of the whole table, and one past the end is empty with the total', async () => {
      for (const f of filters)
        for (const sort of ['units', 'lastUploadTime', 'fileName'] as const) {
          const { total } = expected(f);
          for (let offset = 0; offset <= total + 1; offset++) {
            const q = { ...f, sort, limit: '2', offset: String(offset) };
            assert.deepEqual(await answered(q), expected(q), JSON.stringify(q));
          }
        }
    });

    it('an export has the rows of the table, each filter and order', async () => {
      for (const f of filters) {
        const q = { ...f, sort: 'uploads' as const };
        const rows: string[] = [];
        let total = -1;
        for await (const batch of reports.crossUnitRows(crossUnitQuery.parse(q), 3)) {
          total = batch.total;
          rows.push(...answeredRows(batch.items));
        }
        assert.deepEqual({ total, rows }, expected({ ...q, limit: '1000' }), JSON.stringify(q));
      }
    });
  });
}
