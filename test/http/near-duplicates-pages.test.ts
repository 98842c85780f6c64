import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NearDuplicateRow, NearDuplicatesReport } from '../../shared/reports.js';
import { MATCHING_PAGES, scansSharingPages } from '../support/multi-page-scans.js';
import { cannotPrintPages } from '../support/scans.js';
import { Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

const QINGZHOU = '130922100'; // 沧州市 / 青县 / 清州镇
const QINGXIAN = '130922';
const DONGGUANG = '130923';
const DONGGUANG_TOWN = '130923100';

const csvLines = async (res: Response) =>
  (await res.text())
    .replace(/^\uFEFF/, '')
    .trim()
    .split('\r\n');

/**
 * Two multi-page scans sharing pages, uploaded by towns of two counties: the near-duplicate report
 * shows them once, as a document pair with both page counts and the matching pages, in JSON and
 * CSV; each county's administrator is drawn the pages of its own town's scan only.
 */
for (const target of storeTargets) {
  describe(
    `GET /api/reports/near-duplicates: two scans sharing pages (${target.name} store)`,
    { skip: target.skip ?? cannotPrintPages(), timeout: 600_000 },
    () => {
      let server: TestServer;
      let top: Client;
      let tiffId: string;
      let pdfId: string;
      before(async () => {
        server = await TestServer.start(target);
        await server.archive.services.directory.load(['13']);
        const qz = await server.tokenClient(await server.addAccountIn('qz-clerk', 'clerk', QINGZHOU));
        const dg = await server.tokenClient(await server.addAccountIn('dg-clerk', 'clerk', DONGGUANG_TOWN));
        top = await server.login((await server.addAccountIn('top', 'admin', 'archive')).username);
        await server.addAccountIn('qing', 'admin', QINGXIAN);
        await server.addAccountIn('dong', 'admin', DONGGUANG);
        const { tiff, pdf } = await scansSharingPages();
        const stored = async (client: Client, name: string, bytes: Buffer, type: string) => {
          const res = await client.upload(name, bytes, {}, type);
          assert.equal(res.status, 201);
          return ((await res.json()) as { fileId: string }).fileId;
        };
        tiffId = await stored(qz, '移交通知.tif', tiff, 'image/tiff');
        pdfId = await stored(dg, '移交通知扫描件.pdf', pdf, 'application/pdf');
        while ((await server.archive.services.nearDuplicates.runDue()) > 0);
      });
      after(() => server?.close());

      /** The matching pages as TIFF page ↔ PDF page, whichever file is A. */
      const asTiffPdf = (row: NearDuplicateRow) =>
        row.pages!.matches.map((m) => (row.a.fileId === tiffId ? { tiff: m.a, pdf: m.b } : { tiff: m.b, pdf: m.a }));

      it('one row for the two documents: both page counts, the matching pages each with its similarity', async () => {
        const res = await top.fetch('/api/reports/near-duplicates');
        assert.equal(res.status, 200);
        const body = (await res.json()) as NearDuplicatesReport;
        assert.equal(body.total, 1);
        assert.equal(body.status.pairs, 1);
        const row = body.items[0]!;
        assert.deepEqual([row.a.fileId, row.b.fileId].sort(), [tiffId, pdfId].sort());
        assert.deepEqual([row.pages!.a, row.pages!.b], [3, 3]);
        assert.deepEqual(
          asTiffPdf(row).sort((x, y) => x.tiff - y.tiff),
          MATCHING_PAGES,
        );
        for (const m of row.pages!.matches) {
          assert.ok(m.similarity > 0.5 && m.similarity <= 1);
          assert.ok(['simhash', 'jaccard', 'containment'].includes(m.method), 'text pages match on their texts');
        }
      });

      it('the CSV export carries each one’s pages, how many match and which', async () => {
        const [header, line, ...rest] = await csvLines(await top.fetch('/api/reports/near-duplicates?format=csv'));
        assert.deepEqual(rest, []);
        assert.match(header!, /,A: pages,B: pages,matching pages,page pairs,handled at,handled by,note$/);
        const row = ((await (await top.fetch('/api/reports/near-duplicates')).json()) as NearDuplicatesReport)
          .items[0]!;
        const pairs = row.pages!.matches.map((m) => `${m.a}-${m.b} (${Math.round(m.similarity * 100)}%)`).join('; ');
        assert.ok(line!.endsWith(`,3,3,2,${pairs},,,`), line);
        const [readable] = await csvLines(await top.fetch('/api/reports/near-duplicates?format=csv&lang=zh-CN'));
        assert.match(readable!, /,A：页数,B：页数,相同的页数,相同的页（A 页-B 页）,处理时间/);
      });

      it('each county’s administrator sees the pair, and is drawn the pages of its own town’s scan only', async () => {
        for (const [admin, own, outside] of [
          ['qing', tiffId, pdfId],
          ['dong', pdfId, tiffId],
        ] as const) {
          const client = await server.login(admin);
          const body = (await (await client.fetch('/api/reports/near-duplicates')).json()) as NearDuplicatesReport;
          assert.equal(body.total, 1, `${admin} sees the pair`);
          const mine = await client.fetch(`/api/files/${own}/pages/2`);
          assert.equal(mine.status, 200);
          assert.equal(mine.headers.get('content-type'), 'image/jpeg');
          const theirs = await client.fetch(`/api/files/${outside}/pages/2`);
          assert.equal(theirs.status, 404, `${admin} is not drawn a page outside its reach`);
        }
      });

      it('marked handled once: the document pair leaves the open list as one, and comes back as one', async () => {
        const open = ((await (await top.fetch('/api/reports/near-duplicates')).json()) as NearDuplicatesReport).items;
        const marked = await top.json('/api/reports/near-duplicates/review', 'PUT', {
          fileA: open[0]!.a.fileId,
          fileB: open[0]!.b.fileId,
          note: '两个镇扫描了同一批文件',
        });
        assert.equal(marked.status, 200);
        assert.equal(
          ((await (await top.fetch('/api/reports/near-duplicates')).json()) as NearDuplicatesReport).total,
          0,
        );
        const handled = (await (
          await top.fetch('/api/reports/near-duplicates?status=reviewed')
        ).json()) as NearDuplicatesReport;
        assert.deepEqual(
          handled.items.map((r) => [r.review?.note, r.pages?.matches.length]),
          [['两个镇扫描了同一批文件', 2]],
        );
      });
    },
  );
}
