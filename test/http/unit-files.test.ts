import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auditQuery, type FileList, type FileSummary } from '../../shared/schemas.js';
import { ReportCalendar } from '../../server/services/calendar.js';
import { nextDay } from '../../shared/calendar.js';
import { md5, randomContent, sha256 } from '../support/content.js';
import { type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/** The smallest PNG (one transparent pixel) and a PDF's first bytes: what previews are of. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const pdf = () => Buffer.concat([Buffer.from('%PDF-1.4\n'), randomContent(200)]);

/**
 * 本单位文件 over HTTP: a clerk finds the unit's files again by any name and folder, filters and
 * sorts them, and previews PDFs and images in the browser.
 */
for (const target of storeTargets) {
  describe(`本单位文件: finding and previewing a unit's files (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let clerk: Client;
    let colleague: Client;
    let stranger: Client;
    let colleagueId: string;
    const ids: Record<string, string> = {};
    const today = new ReportCalendar('Asia/Shanghai').dayOf(new Date());

    before(async () => {
      server = await TestServer.start(target);
      clerk = await server.tokenClient(await server.addAccount('zhang', 'clerk', 'unit-a'));
      const colleagueAccount = await server.addAccount('li', 'clerk', 'unit-a');
      colleagueId = colleagueAccount.id;
      colleague = await server.tokenClient(colleagueAccount);
      stranger = await server.tokenClient(await server.addAccount('wang', 'clerk', 'unit-b', '献县'));
      // In a batch, as the browser sends a folder's small files: each under its path in the folder.
      const upload = async (key: string, as: Client, name: string, data: Uint8Array, type: string) => {
        const res = await as.batch([{ name, data, type }], [{ md5: md5(data), sha256: sha256(data), name, type }]);
        assert.equal(res.status, 200, await res.clone().text());
        ids[key] = (await res.json()).results[0].fileId;
      };
      const transfer = pdf();
      await upload('transfer', clerk, '2026年移交/新文件.pdf', transfer, 'application/pdf');
      await upload('transfer', colleague, '2026年移交/副本/新文件-副本.pdf', transfer, 'application/pdf');
      await upload('transfer', stranger, '献县/别的名字.pdf', transfer, 'application/pdf');
      await upload('photo', clerk, '照片/合影.png', PNG, 'image/png');
      await upload(
        'scan',
        clerk,
        '扫描/第0012页.jpg',
        Buffer.concat([PNG, randomContent(50)]),
        'application/octet-stream',
      );
      await upload(
        'drawing',
        clerk,
        'logo.svg',
        Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
        'image/svg+xml',
      );
      await upload('page', clerk, 'page.html', Buffer.from('<script>alert(1)</script>'), 'text/html');
    });
    after(() => server.close());

    const list = async (as: Client, query: string): Promise<FileList> => {
      const res = await as.fetch(`/api/files?${query}`);
      assert.equal(res.status, 200, await res.clone().text());
      return (await res.json()) as FileList;
    };
    const listed = async (query: string) => (await list(clerk, query)).items.map((f) => f.fileId);
    const refused = async (query: string, message: RegExp) => {
      const res = await clerk.fetch(`/api/files?${query}`);
      assert.equal(res.status, 400, `${query}: ${res.status}`);
      const body = await res.json();
      assert.equal(body.error, 'validation_failed');
      assert.match(body.message, message, query);
    };
    const q = (text: string) => `q=${encodeURIComponent(text)}`;

    it('finds a file by every name the unit uploaded it under and by its folders, and shows those names and uploaders', async () => {
      for (const part of ['新文件.pdf', '新文件-副本', '副本/', '2026年移交/副本', '2026年移交'])
        assert.deepEqual(await listed(q(part)), [ids.transfer], part);
      assert.deepEqual(await listed(q('第0012页')), [ids.scan]);
      assert.deepEqual(await listed(q('别的名字')), [], "another unit's name for the same content finds nothing");
      const [file] = (await list(clerk, q('新文件'))).items as [FileSummary];
      assert.deepEqual(
        [file.fileName, file.names, file.nameCount, file.uploaders, file.uploaderCount, file.uploadCount],
        [
          '2026年移交/副本/新文件-副本.pdf',
          ['2026年移交/新文件.pdf', '2026年移交/副本/新文件-副本.pdf'],
          2,
          ['zhang', 'li'],
          2,
          2,
        ],
      );
      const theirs = (await list(stranger, q('新文件'))).items;
      assert.deepEqual(theirs, [], 'nor does the other unit find it by this unit’s names');
    });

    it('filters by uploader (login or id), kind and first-upload day, and sorts by any column', async () => {
      assert.deepEqual(await listed('uploader=li'), [ids.transfer]);
      assert.deepEqual(await listed(`uploader=${colleagueId}`), [ids.transfer]);
      assert.deepEqual(await listed('type=pdf'), [ids.transfer]);
      assert.deepEqual(new Set(await listed('type=image')), new Set([ids.photo, ids.scan, ids.drawing]));
      assert.deepEqual(await listed('type=other'), [ids.page]);
      assert.equal((await listed(`from=${today}&to=${today}`)).length, 5, '至 includes its day');
      assert.deepEqual(await listed(`from=${nextDay(today)}`), []);
      assert.deepEqual(await listed(`to=2020-01-01`), []);
      const bySize = await list(clerk, 'sort=size&order=asc');
      assert.deepEqual([bySize.sort, bySize.order], ['size', 'asc']);
      const sizes = bySize.items.map((f) => f.fileLength);
      assert.deepEqual(
        sizes,
        [...sizes].sort((a, b) => a - b),
      );
      const byName = await list(clerk, 'sort=name');
      assert.deepEqual([byName.sort, byName.order], ['name', 'asc']);
      const names = byName.items.map((f) => f.fileName);
      assert.deepEqual(names, [...names].sort());
      const byDefault = await list(clerk, '');
      assert.deepEqual([byDefault.sort, byDefault.order, byDefault.total], ['lastUpload', 'desc', 5]);
      assert.equal(byDefault.items[0]!.fileId, ids.page, 'the latest upload first');
    });

    it('names the uploaders the filter offers: the unit’s, not another unit’s', async () => {
      const res = await clerk.fetch('/api/files/uploaders');
      assert.equal(res.status, 200);
      assert.deepEqual(
        ((await res.json()).items as Array<{ username: string }>).map((u) => u.username),
        ['li', 'zhang'],
      );
      assert.equal((await clerk.fetch('/api/files/uploaders?unit=unit-b')).status, 400);
    });

    it('refuses bad filters with a 400 that says what to change', async () => {
      await refused('sort=colour', /sort by one of name, size, firstUpload, lastUpload, unitCount, myCount/);
      await refused('sort=size&order=up', /order is asc or desc/);
      await refused('from=2026-13-01', /Invalid from: a day is written YYYY-MM-DD/);
      await refused('to=yesterday', /Invalid to: a day is written YYYY-MM-DD/);
      await refused('from=2026-03-05&to=2026-03-01', /from is after to: the first day is later than the last/);
      await refused('type=video', /a type is one of pdf, image, document, spreadsheet, other/);
      await refused('uploader=wang', /nobody called "wang" uploads in your unit/);
      await refused('uploader=nobody', /nobody called "nobody" uploads in your unit/);
      await refused('colour=red', /unknown field\(s\) "colour"/);
      await refused('limit=0', /limit/);
    });

    it('shows a PDF and an image in the browser, sandboxed, and never HTML or SVG', async () => {
      const inline = async (key: string) => clerk.fetch(`/api/files/${ids[key]}?disposition=inline`);
      for (const [key, type] of [
        ['transfer', 'application/pdf'],
        ['photo', 'image/png'],
        // Sent without a media type: shown as what its extension says, and nothing else.
        ['scan', 'image/jpeg'],
      ] as const) {
        const res = await inline(key);
        assert.equal(res.status, 200, key);
        assert.equal(res.headers.get('content-type'), type, key);
        assert.match(res.headers.get('content-disposition')!, /^inline; /, key);
        assert.equal(res.headers.get('content-security-policy'), "default-src 'none'; sandbox");
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
        await res.arrayBuffer();
      }
      for (const key of ['drawing', 'page']) {
        const res = await inline(key);
        assert.equal(res.status, 400, key);
        assert.match((await res.json()).message, /only PDF files and images .* can be shown in the browser; download/);
        const download = await clerk.fetch(`/api/files/${ids[key]}`);
        assert.equal(download.status, 200);
        assert.match(download.headers.get('content-disposition')!, /^attachment; /, 'downloaded, never shown');
        await download.arrayBuffer();
      }
      const bad = await clerk.fetch(`/api/files/${ids.photo}?disposition=open`);
      assert.equal(bad.status, 400);
      assert.match((await bad.json()).message, /disposition is attachment or inline/);
      const hidden = await stranger.fetch(`/api/files/${ids.photo}?disposition=inline`);
      assert.equal(hidden.status, 404, 'another unit’s clerk: not found, as for a download');
      const { format: _, ...downloads } = auditQuery.parse({ action: 'download', limit: '50' });
      const events = (await server.archive.services.audit.search(downloads)).items;
      assert.ok(
        events.some((e) => e.fileId === ids.photo && e.detail?.startsWith('preview: ')),
        'a preview is audited as a reading of the file',
      );
    });
  });
}
