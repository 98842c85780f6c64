import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ReportCalendar } from '../../server/services/calendar.js';
import type { CrossUnitRow, RepeatEntryRow, ReportPage, SavingsReport } from '../../shared/reports.js';
import type { AuditList } from '../../shared/schemas.js';
import { randomContent } from '../support/content.js';
import { REPORT_TIME_ZONE, seedReportArchive } from '../support/report-dataset.js';
import { TestServer, type Client } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { tusUpload } from '../support/tus.js';

const BOM = '\uFEFF';

for (const target of storeTargets) {
  describe(`reports over real uploads (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let admin: Client;
    const size = 70_000;

    before(async () => {
      server = await TestServer.start(target);
      admin = await server.addTwoCountiesAndAdmin();
      const qing = await server.login('clerk-qing');
      const xian = await server.login('clerk-xian');
      // Stored once, sent again in full by the same clerk, then claimed instantly by another
      // county; a second file arrives over tus.
      const data = randomContent(size);
      assert.equal((await qing.upload('县志.pdf', data)).status, 201);
      assert.equal((await qing.upload('县志.pdf', data)).status, 200, 'a duplicate');
      assert.equal((await xian.instantUpload(data, '县志.pdf')).res?.status, 200);
      const token = await server.tokenClient(await server.archive.services.accounts.getByUsername('clerk-xian'));
      assert.equal(
        (await tusUpload(token, randomContent(5000), { metadata: { filename: '献县档案.pdf' } })).status,
        'stored',
      );
    });
    after(() => server.close());

    const get = async <T>(path: string): Promise<T> => {
      const res = await admin.fetch(path);
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('x-total-count'), String(((await res.clone().json()) as { total: number }).total));
      return (await res.json()) as T;
    };

    it('counts what was stored and what was saved: a repeated upload and an instant claim save the whole file each', async () => {
      const today = new ReportCalendar(REPORT_TIME_ZONE).dayOf(new Date());
      const savings = await get<SavingsReport>('/api/reports/savings?group=day');
      assert.deepEqual(savings.summary, { uploads: 4, savedUploads: 2, savedBytes: 2 * size });
      assert.deepEqual(savings.items, [{ period: today, uploads: 4, savedUploads: 2, savedBytes: 2 * size }]);
      const perCounty = await get<SavingsReport>(`/api/reports/savings?city=${encodeURIComponent('沧州市')}`);
      assert.deepEqual(
        perCounty.items.map((r) => ('county' in r ? [r.county, r.savedBytes] : [])),
        [
          ['献县', size],
          ['青县', size],
        ],
      );
    });

    it('shows the repeat uploader and the file two counties sent', async () => {
      const repeats = await get<ReportPage<RepeatEntryRow>>('/api/reports/repeat-uploaders');
      assert.deepEqual(
        repeats.items.map((r) => [r.userName, r.fileName, r.uploadCount, r.fileLength]),
        [['clerk-qing', '县志.pdf', 2, size]],
      );
      const cross = await get<ReportPage<CrossUnitRow>>('/api/reports/cross-unit');
      assert.deepEqual(
        cross.items.map((r) => [r.fileName, r.units, r.uploads, r.uploaders.map((u) => [u.unit.county, u.userNames])]),
        [
          [
            '县志.pdf',
            2,
            3,
            [
              ['青县', ['clerk-qing']],
              ['献县', ['clerk-xian']],
            ],
          ],
        ],
      );
    });

    it('refuses bad filters with a message saying what to fix, and keeps serving', async () => {
      const cases: Array<[string, RegExp]> = [
        ['savings?county=青县', /county needs city/],
        ['savings?city=a&town=b', /town needs county/],
        ['savings?from=2026-03-05&to=2026-03-01', /from is after to/],
        ['cross-unit?from=2026-13-01', /YYYY-MM-DD/],
        ['repeat-uploaders?sort=password', /sorts by one of its columns/],
        ['repeat-uploaders?group=unit&sort=userName', /sorts by one of its columns/],
        ['savings?group=year', /group/],
        ['collisions?limit=0', /limit/],
        ['collisions?limit=5000', /limit/],
        ['repeat-uploaders?min=1', /min/],
        ['cross-unit?unit=1', /unknown field\(s\) "unit"/],
        ['savings?format=xlsx', /format/],
        ['savings?sort=uploads&sort=savedBytes', /sort/],
        ['savings?from=2026-02-30', /YYYY-MM-DD/],
        ['savings?to=0050-01-01', /1970-01-01 or later/],
        ['cross-unit?offset=-1', /offset/],
        ['cross-unit?limit=abc', /limit/],
      ];
      for (const [path, message] of cases) {
        const res = await admin.fetch(`/api/reports/${path}`);
        assert.equal(res.status, 400, path);
        const body = (await res.json()) as { error: string; message: string };
        assert.equal(body.error, 'validation_failed', path);
        assert.match(body.message, message, path);
      }
      assert.equal((await admin.fetch('/api/reports/no-such-report')).status, 404);
      assert.equal((await get<SavingsReport>('/api/reports/savings')).summary.uploads, 4, 'nothing changed');
    });
  });

  describe(`space saved where clerks are not told of duplicates (${target.name} store)`, { skip: target.skip }, () => {
    it('counts a duplicate answered "stored" (outside INSTANT_UPLOAD_SCOPE) as saved: its bytes were not kept twice', async () => {
      const server = await TestServer.start(target, { instantUploadScope: 'unit' });
      try {
        await server.addAccount('clerk-qing', 'clerk', 'unit-a', '青县');
        await server.addAccount('clerk-xian', 'clerk', 'unit-b', '献县');
        await server.addAccount('admin', 'admin', 'archive');
        const data = randomContent(9000);
        assert.equal((await (await server.login('clerk-qing')).upload('a.pdf', data)).status, 201);
        const other = await (await server.login('clerk-xian')).upload('b.pdf', data);
        assert.equal(other.status, 201);
        assert.equal(
          ((await other.json()) as { status: string }).status,
          'stored',
          'the clerk learns nothing of the other county',
        );
        const res = await (await server.login('admin')).fetch('/api/reports/savings');
        assert.deepEqual(((await res.json()) as SavingsReport).summary, {
          uploads: 2,
          savedUploads: 1,
          savedBytes: 9000,
        });
      } finally {
        await server.close();
      }
    });
  });

  describe(`report exports (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let admin: Client;

    before(async () => {
      server = await TestServer.start(target);
      await server.addAccount('admin', 'admin', 'archive');
      admin = await server.login('admin');
      await seedReportArchive(server.opened.store);
    });
    after(() => server.close());

    const csv = async (path: string) => {
      const res = await admin.fetch(path);
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
      assert.match(res.headers.get('content-disposition')!, /^attachment; filename="[a-z-]+-\d{4}-\d{2}-\d{2}\.csv"$/);
      const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await res.arrayBuffer());
      assert.ok(text.startsWith(BOM), 'a byte-order mark, so Excel reads Chinese text as UTF-8');
      return { total: res.headers.get('x-total-count'), lines: text.slice(1).split('\r\n') };
    };

    it('exports space saved per county as CSV: a header, one row per table row, the same numbers as the JSON', async () => {
      const { total, lines } = await csv(`/api/reports/savings?format=csv&city=${encodeURIComponent('江城市')}`);
      assert.equal(total, '3');
      assert.deepEqual(lines, [
        'city,county,town,uploads,saved uploads,saved bytes',
        '江城市,东县,,10,7,5300',
        '江城市,西县,,4,3,5000',
        '江城市,,,2,1,3000',
        '',
      ]);
      const days = await csv('/api/reports/savings?format=csv&group=month');
      assert.deepEqual(days.lines, [
        'month,uploads,saved uploads,saved bytes',
        '2026-02,2,0,0',
        '2026-03,14,10,8300',
        '2026-04,2,2,6000',
        '',
      ]);
    });

    it('exports repeat uploaders (the login and the name beside it), cross-unit files (units in one cell) and collisions', async () => {
      const repeats = await csv('/api/reports/repeat-uploaders?format=csv&min=3');
      assert.equal(
        repeats.lines[0],
        'user,name,user id,unit id,city,county,town,street,file id,file name,size (bytes),uploads,copies within one upload,re-sends,first upload,last upload',
      );
      assert.match(
        repeats.lines[1]!,
        /^alice,艾丽,a-alice,u-dong,江城市,东县,,,[0-9a-f]{24},通知\.pdf,1000,3,0,2,2026-03-02T02:00:00\.000Z,2026-03-10T02:00:00\.000Z$/,
      );
      const perUser = await csv(`/api/reports/repeat-uploaders?format=csv&group=user&lang=zh-CN&sort=userName`);
      assert.deepEqual(
        perUser.lines.slice(0, 5).map((l) => l.split(',').slice(0, 3).join(',')),
        ['用户,姓名,单位代码', 'alice,艾丽,u-dong', 'bob,鲍勃,u-dong', 'carol,柯萝,u-dong-cg', 'dave,,u-xi'],
        'no name: an empty cell',
      );
      assert.equal(repeats.lines.length, 4);
      const users = await csv('/api/reports/repeat-uploaders?format=csv&group=unit&limit=1');
      assert.deepEqual(users.lines.slice(0, 2), [
        'unit id,city,county,town,street,users,files,uploads,repeat uploads,copies within one upload,re-sends,repeat bytes,first upload,last upload',
        'u-dong,江城市,东县,,,2,2,6,4,0,4,3000,2026-03-02T02:00:00.000Z,2026-03-10T02:00:00.000Z',
      ]);
      assert.equal(users.total, '4');
      const cross = await csv('/api/reports/cross-unit?format=csv&sort=units&limit=1');
      assert.match(
        cross.lines[1]!,
        /^[0-9a-f]{24},通知\.pdf,1000,4,5,8,.*,"江城市\/东县 \(艾丽 \(alice\), 鲍勃 \(bob\): 4\); 河市 \(gina: 1\); 江城市\/东县\/城关镇 \(柯萝 \(carol\): 1\); 江城市\/西县 \(dave: 2\)"$/,
      );
      const crossZh = await csv('/api/reports/cross-unit?format=csv&sort=units&limit=1&lang=zh-CN');
      assert.match(crossZh.lines[1]!, /"江城市\/东县 \(艾丽（alice）, 鲍勃（bob）: 4\); 河市 \(gina: 1\);/);
      const collisions = await csv('/api/reports/collisions?format=csv');
      assert.equal(
        collisions.lines[0],
        'md5,file id,sha256,size (bytes),file name,first stored,uploads,files with this md5',
      );
      assert.equal(collisions.lines.length, 4);
    });

    it('exports for people give sizes as numbers in bytes and times in the report time zone, both said in the header', async () => {
      const zh = await csv('/api/reports/repeat-uploaders?format=csv&min=3&lang=zh-CN');
      assert.equal(
        zh.lines[0],
        '用户,姓名,单位代码,市,县（市、区）,乡（镇、街道）,村（社区）,文件编号,文件名,大小（字节）,上传次数,其中同批重复次数,其中重复发送次数,首次上传（北京时间 UTC+8）,最近上传（北京时间 UTC+8）',
        'no account id: the login and the name say who',
      );
      // 02:00 UTC is 10:00 in Beijing; 1000 bytes a number a spreadsheet adds up (not "1000 B").
      assert.match(
        zh.lines[1]!,
        /^alice,艾丽,u-dong,江城市,东县,,,[0-9a-f]{24},通知\.pdf,1000,3,0,2,2026-03-02 10:00:00,2026-03-10 10:00:00$/,
      );
      const en = await csv('/api/reports/repeat-uploaders?format=csv&group=unit&limit=1&lang=en');
      assert.equal(
        en.lines[0],
        'unit id,city,county,town,street,users,files,uploads,repeat uploads,copies within one upload,re-sends,repeated size (bytes),first upload (Beijing time, UTC+8),last upload (Beijing time, UTC+8)'.replace(
          /(first|last) upload \(Beijing time, UTC\+8\)/g,
          '"$&"',
        ),
      );
      assert.match(en.lines[1]!, /^u-dong,江城市,东县,,,2,2,6,4,0,4,3000,2026-03-02 10:00:00,2026-03-10 10:00:00$/);
      const saved = await csv(`/api/reports/savings?format=csv&city=${encodeURIComponent('江城市')}&lang=zh-CN`);
      assert.deepEqual(saved.lines.slice(0, 2), [
        '市,县（市、区）,乡（镇、街道）,上传次数,秒传次数,节省的空间（字节）',
        '江城市,东县,,10,7,5300',
      ]);
    });

    it('the banner’s count of collisions is not a view: it answers the report’s total and writes no audit event', async () => {
      const events = async () => ((await (await admin.fetch('/api/audit?limit=1')).json()) as AuditList).total;
      const report = (await (await admin.fetch('/api/reports/collisions?limit=1')).json()) as { total: number };
      assert.ok(report.total > 0, 'the dataset holds collisions');
      const before = await events();
      const res = await admin.fetch('/api/reports/collisions/count');
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { total: report.total });
      // Reading the log is itself an event: one more, from the second look only.
      assert.equal(await events(), before + 1, 'the count wrote nothing');
    });

    it('records every view and export in the audit log, with the report and its filters', async () => {
      await admin.fetch(`/api/reports/collisions?city=${encodeURIComponent('江城市')}`);
      const res = await admin.fetch('/api/audit?action=report_viewed&limit=1');
      const [viewed] = ((await res.json()) as AuditList).items;
      assert.equal(viewed!.userName, 'admin');
      assert.equal(viewed!.detail, 'collisions: city=江城市');
      const exported = ((await (await admin.fetch('/api/audit?action=report_exported')).json()) as AuditList).items.map(
        (e) => e.detail,
      );
      assert.ok(exported.includes(`savings: city=江城市`), exported.join('\n'));
    });
  });
}
