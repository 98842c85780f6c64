import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FILE_NAMES_SHOWN, type FileSort } from '../../../shared/schemas.js';
import type { Account } from '../accounts/port.js';
import { randomUUID } from 'node:crypto';
import type { FolderPage, UnitFilesQuery, ViewUploadsQuery } from './port.js';
import {
  commitBytes,
  randomContent,
  recordUpload,
  stageBytes,
  testAccount,
  unit,
  uploadAction,
  uploadRecord,
} from '../../../test/support/content.js';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';

/**
 * What every store adapter's listing of a unit's files must do (run against each adapter by
 * test/store/). Moved from the catalog's suite when the listing became a read model of its own.
 */
export function unitFilesConformance(target: StoreTarget): void {
  conformanceSuite('unit files', target, (store) => {
    describe('unit files listing', () => {
      it("lists a unit's files under the unit's names and all files for an admin view, with counts, search and paging", async () => {
        const clerkA = testAccount();
        const clerkB = testAccount({ unit: unit('unit-b') });
        const shared = (await commitBytes(store, randomContent(10), 'b-name.pdf')).entry;
        const onlyA = (await commitBytes(store, randomContent(11), 'a-only.pdf')).entry;
        const onlyB = (await commitBytes(store, randomContent(12), 'b-only.pdf')).entry;
        const t = Date.now();
        await recordUpload(store, clerkB, shared.fileId, 'b-name.pdf', new Date(t - 5000));
        await recordUpload(store, clerkB, onlyB.fileId, 'b-only.pdf', new Date(t - 4000));
        await recordUpload(store, clerkA, onlyA.fileId, '档案 A.pdf', new Date(t - 3000));
        await recordUpload(store, clerkA, shared.fileId, '共享 文件.pdf', new Date(t - 2000));
        await recordUpload(store, clerkA, shared.fileId, '共享 文件.pdf', new Date(t - 1000), 'application/x-unit-a');

        const unitA = await store.unitFiles.list({ unitId: 'unit-a', accountId: clerkA.id, limit: 10, offset: 0 });
        assert.equal(unitA.total, 2);
        assert.deepEqual(
          unitA.items.map((i) => [i.entry.fileId, i.displayName, i.displayType, i.uploadCount, i.myUploadCount]),
          [
            [shared.fileId, '共享 文件.pdf', 'application/x-unit-a', 2, 2],
            [onlyA.fileId, '档案 A.pdf', 'application/pdf', 1, 1],
          ],
        );
        const searched = await store.unitFiles.list({
          unitId: 'unit-a',
          accountId: clerkA.id,
          nameContains: '档案',
          limit: 10,
          offset: 0,
        });
        assert.deepEqual(
          searched.items.map((i) => i.entry.fileId),
          [onlyA.fileId],
        );
        assert.equal(searched.total, 1);
        const page2 = await store.unitFiles.list({ unitId: 'unit-a', accountId: clerkA.id, limit: 1, offset: 1 });
        assert.deepEqual([page2.total, page2.items.map((i) => i.entry.fileId)], [2, [onlyA.fileId]]);

        const all = await store.unitFiles.list({ accountId: clerkA.id, limit: 10, offset: 0 });
        assert.equal(all.total, 3);
        const sharedRow = all.items.find((i) => i.entry.fileId === shared.fileId)!;
        assert.deepEqual([sharedRow.displayName, sharedRow.uploadCount, sharedRow.myUploadCount], ['b-name.pdf', 3, 2]);
        const literal = await store.unitFiles.list({ accountId: clerkA.id, nameContains: '%', limit: 10, offset: 0 });
        assert.equal(literal.total, 0, 'search text is literal, not a pattern');
      });

      it('lists the files of a unit subtree under the names its units gave them', async () => {
        const qing = testAccount({ unit: unit('unit-q', '青县') });
        const xian = testAccount({ unit: unit('unit-x', '献县') });
        const shared = (await commitBytes(store, randomContent(10), 'x.pdf')).entry;
        const onlyXian = (await commitBytes(store, randomContent(11), 'x2.pdf')).entry;
        await recordUpload(store, xian, shared.fileId, '献县的名字.pdf', new Date(Date.now() - 2000));
        await recordUpload(store, qing, shared.fileId, '青县的名字.pdf', new Date(Date.now() - 1000));
        await recordUpload(store, xian, onlyXian.fileId, '只有献县.pdf');
        const list = (subtree: { city: string; county?: string }, nameContains?: string) =>
          store.unitFiles.list({
            subtree,
            accountId: qing.id,
            limit: 10,
            offset: 0,
            ...(nameContains && { nameContains }),
          });
        const county = await list({ city: '沧州市', county: '青县' });
        assert.deepEqual(
          [county.total, county.items.map((i) => [i.entry.fileId, i.displayName, i.uploadCount, i.myUploadCount])],
          [1, [[shared.fileId, '青县的名字.pdf', 1, 1]]],
        );
        const city = await list({ city: '沧州市' });
        assert.deepEqual(
          city.items.map((i) => [i.entry.fileId, i.uploadCount]),
          [
            [onlyXian.fileId, 1],
            [shared.fileId, 2],
          ],
        );
        assert.equal((await list({ city: '沧州市' }, '只有')).total, 1);
        assert.equal((await list({ city: '廊坊市' })).total, 0);
      });

      it('finds a file by any name its unit uploaded it under, folders included, and lists them all, not other units’ names', async () => {
        const clerk = testAccount();
        const colleague = testAccount();
        const other = testAccount({ unit: unit('unit-b', '献县') });
        const file = (await commitBytes(store, randomContent(10), 'x.pdf')).entry;
        const t = Date.now() - 10_000;
        // Three names by one clerk: the ledger entry keeps the first and the last only.
        await recordUpload(store, clerk, file.fileId, '2026年移交/新文件.pdf', new Date(t));
        const again = uploadAction(
          uploadRecord(clerk, file.fileId, '2026年移交/副本/新文件-副本.pdf', new Date(t + 1000)),
        );
        await store.ledger.count(again);
        await store.ledger.count(again); // a retry: counted once, its name kept once
        await recordUpload(store, clerk, file.fileId, '其他/第三个名字.pdf', new Date(t + 2000));
        await recordUpload(store, colleague, file.fileId, '2026年移交/新文件.pdf', new Date(t + 3000));
        await recordUpload(store, other, file.fileId, '献县的名字.pdf', new Date(t + 4000));

        const unitA = (nameContains?: string) =>
          store.unitFiles.list({
            unitId: 'unit-a',
            accountId: clerk.id,
            limit: 10,
            offset: 0,
            ...(nameContains && { nameContains }),
          });
        for (const part of ['新文件.pdf', '副本', '2026年移交/副本/', '新文件-副本', '第三个'])
          assert.deepEqual(
            (await unitA(part)).items.map((i) => i.entry.fileId),
            [file.fileId],
            `found by ${part}`,
          );
        assert.equal((await unitA('献县')).total, 0, "another unit's name does not find it");
        const [listed] = (await unitA()).items;
        assert.deepEqual(
          [listed!.displayName, listed!.names, listed!.nameCount, listed!.uploadCount],
          [
            '2026年移交/新文件.pdf',
            ['2026年移交/新文件.pdf', '2026年移交/副本/新文件-副本.pdf', '其他/第三个名字.pdf'],
            3,
            4,
          ],
        );
        assert.deepEqual([listed!.uploaders, listed!.uploaderCount], [[clerk.username, colleague.username], 2]);

        const county = await store.unitFiles.list({
          subtree: { city: '沧州市', county: '献县' },
          accountId: clerk.id,
          limit: 10,
          offset: 0,
        });
        assert.deepEqual([county.items[0]!.names, county.items[0]!.uploaders], [['献县的名字.pdf'], [other.username]]);
        const city = await store.unitFiles.list({
          subtree: { city: '沧州市' },
          accountId: clerk.id,
          nameContains: '献县的',
          limit: 10,
          offset: 0,
        });
        assert.equal(city.items[0]!.nameCount, 4, 'a reach sees its units’ names, each once');
        assert.equal(city.items[0]!.uploadCount, 5, 'the sums are the whole reach’s, whatever name was searched');
        const all = await store.unitFiles.list({ accountId: clerk.id, nameContains: '副本', limit: 10, offset: 0 });
        assert.deepEqual(
          [
            all.items.map((i) => i.entry.fileId),
            all.items[0]!.displayName,
            all.items[0]!.nameCount,
            all.items[0]!.uploaderCount,
          ],
          [[file.fileId], 'x.pdf', 4, 3],
        );
      });

      it('shows at most FILE_NAMES_SHOWN names of a file, first used first, and counts them all', async () => {
        const clerk = testAccount();
        const file = (await commitBytes(store, randomContent(10))).entry;
        const t = Date.now() - 100_000;
        for (let i = 0; i < FILE_NAMES_SHOWN + 5; i++)
          await recordUpload(
            store,
            clerk,
            file.fileId,
            `第${String(i).padStart(2, '0')}页.jpg`,
            new Date(t + i * 1000),
          );
        const [listed] = (await store.unitFiles.list({ unitId: 'unit-a', accountId: clerk.id, limit: 10, offset: 0 }))
          .items;
        assert.equal(listed!.nameCount, FILE_NAMES_SHOWN + 5);
        assert.deepEqual(
          listed!.names,
          Array.from({ length: FILE_NAMES_SHOWN }, (_, i) => `第${String(i).padStart(2, '0')}页.jpg`),
        );
      });

      it('filters a unit’s files by uploader, first upload and kind, and sorts them by every column both ways', async () => {
        const clerk = testAccount();
        const colleague = testAccount();
        const other = testAccount({ unit: unit('unit-b') });
        const day = (n: number) => new Date(Date.UTC(2026, 2, 10) + n * 86_400_000);
        const files: Record<string, string> = {};
        const upload = async (name: string, size: number, type: string, uploads: Array<[Account, Date]>) => {
          const { entry } = await commitBytes(store, randomContent(size), name);
          files[name] = entry.fileId;
          for (const [account, at] of uploads) await recordUpload(store, account, entry.fileId, name, at, type);
        };
        // Every column differs between the four, so each sort has one right order.
        await upload('卷宗.pdf', 300, 'application/pdf', [
          [clerk, day(0)],
          [clerk, day(0.5)],
          [colleague, day(5)],
        ]);
        // Another unit had the photo a month before: the unit's first upload is its own.
        await upload('照片.jpg', 100, 'image/jpeg', [
          [other, day(-30)],
          [colleague, day(2)],
          [colleague, day(4)],
        ]);
        // A WPS document the browser sent without a media type: its kind is read from its name.
        await upload('说明.wps', 200, 'application/octet-stream', [[clerk, day(3)]]);
        await upload('数据.zip', 400, 'application/zip', [
          [clerk, day(1)],
          [clerk, day(1.1)],
          [clerk, day(1.2)],
          [clerk, day(6)],
        ]);

        const list = async (q: Partial<UnitFilesQuery> = {}) =>
          (await store.unitFiles.list({ unitId: 'unit-a', accountId: clerk.id, limit: 10, offset: 0, ...q })).items.map(
            (i) => i.entry.fileId,
          );
        const ids = (...names: string[]) => names.map((n) => files[n]!);

        assert.deepEqual(await list({ uploaderId: colleague.id }), ids('卷宗.pdf', '照片.jpg'), 'latest upload first');
        assert.deepEqual(await list({ uploaderId: other.id }), [], 'another unit’s uploads are not the unit’s');
        assert.deepEqual(await list({ kind: 'pdf' }), ids('卷宗.pdf'));
        assert.deepEqual(await list({ kind: 'image' }), ids('照片.jpg'));
        assert.deepEqual(await list({ kind: 'document' }), ids('说明.wps'));
        assert.deepEqual(await list({ kind: 'spreadsheet' }), []);
        assert.deepEqual(await list({ kind: 'other' }), ids('数据.zip'));
        // The unit's first upload on day 2 or 3, whatever was uploaded before elsewhere or again later.
        const window = { firstUploadFrom: day(2), firstUploadBefore: day(4) };
        assert.deepEqual(await list({ ...window, sort: 'firstUpload', order: 'asc' }), ids('照片.jpg', '说明.wps'));
        assert.deepEqual(await list({ ...window, uploaderId: clerk.id }), ids('说明.wps'));
        assert.deepEqual(await list({ ...window, kind: 'image', uploaderId: colleague.id }), ids('照片.jpg'));

        const ascending: Record<FileSort, string[]> = {
          name: ['卷宗.pdf', '数据.zip', '照片.jpg', '说明.wps'],
          size: ['照片.jpg', '说明.wps', '卷宗.pdf', '数据.zip'],
          firstUpload: ['卷宗.pdf', '数据.zip', '照片.jpg', '说明.wps'],
          lastUpload: ['说明.wps', '照片.jpg', '卷宗.pdf', '数据.zip'],
          unitCount: ['说明.wps', '照片.jpg', '卷宗.pdf', '数据.zip'],
          myCount: ['照片.jpg', '说明.wps', '卷宗.pdf', '数据.zip'],
        };
        for (const [sort, names] of Object.entries(ascending) as Array<[FileSort, string[]]>) {
          assert.deepEqual(await list({ sort, order: 'asc' }), ids(...names), `${sort} ascending`);
          assert.deepEqual(await list({ sort, order: 'desc' }), ids(...names).reverse(), `${sort} descending`);
        }
        assert.deepEqual(await list({ sort: 'name' }), ids(...ascending.name), 'names A→Z unless asked otherwise');
        assert.deepEqual(await list({ sort: 'size' }), ids(...ascending.size).reverse(), 'sizes biggest first');

        const page = await store.unitFiles.list({
          unitId: 'unit-a',
          accountId: clerk.id,
          sort: 'size',
          limit: 2,
          offset: 2,
        });
        assert.deepEqual(
          [page.total, page.sort, page.order, page.items.map((i) => i.entry.fileId)],
          [4, 'size', 'desc', ids('说明.wps', '照片.jpg')],
        );
        const beyond = await store.unitFiles.list({ unitId: 'unit-a', accountId: clerk.id, limit: 2, offset: 10 });
        assert.deepEqual([beyond.total, beyond.items], [4, []], 'a page past the end still says how many there are');
        const atTheEnd = await store.unitFiles.list({ unitId: 'unit-a', accountId: clerk.id, limit: 2, offset: 4 });
        assert.deepEqual([atTheEnd.total, atTheEnd.items], [4, []]);
        const lastOne = await store.unitFiles.list({ unitId: 'unit-a', accountId: clerk.id, limit: 2, offset: 3 });
        assert.deepEqual([lastOne.total, lastOne.items.length], [4, 1], 'the last file is on a page of its own');
        for (const offset of [0, 2]) {
          const empty = await store.unitFiles.list({ unitId: 'unit-new', accountId: clerk.id, limit: 2, offset });
          assert.deepEqual([empty.total, empty.items], [0, []], 'a unit with no files');
        }
      });

      it('filters and sorts the whole archive by its catalog and ledger', async () => {
        const clerk = testAccount();
        const other = testAccount({ unit: unit('unit-b') });
        const a = (await commitBytes(store, randomContent(30), 'a.pdf')).entry;
        const b = (await commitBytes(store, randomContent(20), 'b.pdf')).entry;
        await recordUpload(store, clerk, a.fileId, 'a.pdf');
        await recordUpload(store, other, b.fileId, 'b.pdf');
        await recordUpload(store, other, b.fileId, '别名/b 的副本.pdf');
        const all = async (q: Partial<UnitFilesQuery> = {}) =>
          (await store.unitFiles.list({ accountId: clerk.id, limit: 10, offset: 0, ...q })).items.map(
            (i) => i.entry.fileId,
          );
        assert.deepEqual(await all({ uploaderId: other.id }), [b.fileId]);
        assert.deepEqual(await all({ nameContains: '别名/' }), [b.fileId]);
        assert.deepEqual(await all({ kind: 'pdf', sort: 'size', order: 'asc' }), [b.fileId, a.fileId]);
        assert.deepEqual(await all({ kind: 'image' }), []);
        assert.deepEqual(await all({ sort: 'unitCount' }), [b.fileId, a.fileId]);
        assert.deepEqual(await all({ sort: 'myCount' }), [a.fileId, b.fileId]);
        assert.deepEqual(await all({ sort: 'name', order: 'desc' }), [b.fileId, a.fileId]);
        assert.deepEqual(await all({ firstUploadFrom: new Date(Date.now() + 60_000) }), []);
      });

      it('filters the whole archive by an uploader: each of their files once, whatever units they sent it from, in every order and page', async () => {
        const scanner = testAccount();
        // The same account after a move to another unit: its entries there are its too.
        const moved = { ...scanner, unit: unit('unit-b', '献县') };
        const other = testAccount({ unit: unit('unit-c') });
        const t = Date.now() - 60_000;
        const big = (await commitBytes(store, randomContent(50), '大.pdf')).entry;
        const small = (await commitBytes(store, randomContent(10), '小.pdf')).entry;
        const staged = await stageBytes(store, randomContent(30));
        const mid = (
          await store.content.commit(staged.stagingId, {
            key: staged.key,
            fileName: '中.jpg',
            contentType: 'image/jpeg',
            uploadDate: new Date(),
          })
        ).entry;
        const notTheirs = (await commitBytes(store, randomContent(40), '别人的.pdf')).entry;
        const deleting = (await commitBytes(store, randomContent(20), '删除中.pdf')).entry;
        await recordUpload(store, scanner, big.fileId, '大.pdf', new Date(t));
        await recordUpload(store, moved, big.fileId, '大.pdf', new Date(t + 1000));
        await recordUpload(store, moved, big.fileId, '大.pdf', new Date(t + 2000));
        await recordUpload(store, scanner, small.fileId, '小.pdf', new Date(t + 3000));
        await recordUpload(store, scanner, mid.fileId, '中.jpg', new Date(t + 4000), 'image/jpeg');
        await recordUpload(store, other, mid.fileId, '中.jpg', new Date(t + 5000), 'image/jpeg');
        await recordUpload(store, other, notTheirs.fileId, '别人的.pdf', new Date(t + 6000));
        await recordUpload(store, scanner, deleting.fileId, '删除中.pdf', new Date(t + 7000));
        await store.catalog.beginDeletion(deleting.fileId, new Date());
        const byScanner = async (q: Partial<UnitFilesQuery> = {}) => {
          const page = await store.unitFiles.list({
            accountId: other.id,
            uploaderId: scanner.id,
            limit: 10,
            offset: 0,
            ...q,
          });
          return [page.total, page.items.map((i) => i.entry.fileId)];
        };
        const [b, s, m] = [big.fileId, small.fileId, mid.fileId];
        assert.deepEqual(await byScanner({ sort: 'size' }), [3, [b, m, s]], 'each file once, not one a unit');
        assert.deepEqual(await byScanner({ sort: 'size', order: 'asc', limit: 1, offset: 1 }), [3, [m]]);
        assert.deepEqual(await byScanner({ sort: 'unitCount' }), [3, [b, m, s]], 'summed over every uploader');
        assert.deepEqual((await byScanner({ sort: 'myCount', order: 'desc', limit: 1 }))[1], [m], 'mine: the viewer’s');
        assert.deepEqual(await byScanner({ sort: 'name', order: 'asc' }), [3, [m, b, s]]);
        assert.deepEqual(await byScanner({ kind: 'pdf', sort: 'size' }), [2, [b, s]], 'with the catalog’s filters');
        assert.deepEqual(await byScanner({ kind: 'image' }), [1, [m]]);
        assert.deepEqual(await byScanner({ firstUploadFrom: new Date(Date.now() + 60_000) }), [0, []]);
        assert.deepEqual(await byScanner({ limit: 2, offset: 5 }), [3, []], 'a page past the end says how many');
        assert.deepEqual(await byScanner({ uploaderId: 'nobody' }), [0, []]);
        const listed = (
          await store.unitFiles.list({ accountId: other.id, uploaderId: scanner.id, sort: 'size', limit: 1, offset: 0 })
        ).items[0]!;
        assert.deepEqual(
          [listed.displayName, listed.uploadCount, listed.uploaderCount],
          ['大.pdf', 3, 1],
          'the row is the whole archive’s, as without the filter',
        );
      });

      it('searches the whole archive by any uploaded name or the first name, each file once, in every order and page', async () => {
        const clerk = testAccount();
        const other = testAccount({ unit: unit('unit-b') });
        const t = Date.now();
        // Found by an uploaded name only, by the first name only (no upload under it), by both, and not at all.
        const byUpload = (await commitBytes(store, randomContent(40), 'scan-001.tif')).entry;
        const byFirst = (await commitBytes(store, randomContent(10), '会议纪要-初稿.doc')).entry;
        const byBoth = (await commitBytes(store, randomContent(30), '会议纪要.pdf')).entry;
        const neither = (await commitBytes(store, randomContent(20), 'other.pdf')).entry;
        await recordUpload(store, clerk, byUpload.fileId, '2026/会议纪要-终稿.tif', new Date(t - 3000));
        await recordUpload(store, other, byUpload.fileId, 'scan-001.tif', new Date(t - 2000));
        await recordUpload(store, clerk, byBoth.fileId, '会议纪要.pdf', new Date(t - 1000));
        await recordUpload(store, other, byBoth.fileId, '归档/会议纪要 副本.pdf', new Date(t));
        await recordUpload(store, clerk, byBoth.fileId, '会议纪要.pdf', new Date(t));
        await recordUpload(store, other, neither.fileId, 'other.pdf', new Date(t));
        const search = async (q: Partial<UnitFilesQuery> = {}) => {
          const page = await store.unitFiles.list({
            accountId: clerk.id,
            nameContains: '会议纪要',
            limit: 10,
            offset: 0,
            ...q,
          });
          return [page.total, page.items.map((i) => i.entry.fileId)];
        };
        const [u, f, b] = [byUpload.fileId, byFirst.fileId, byBoth.fileId];
        assert.deepEqual(await search({ sort: 'name', order: 'asc' }), [3, [u, f, b]], 'by the first name, each once');
        assert.deepEqual(await search({ sort: 'name', order: 'desc' }), [3, [b, f, u]]);
        assert.deepEqual(await search({ sort: 'size', order: 'desc' }), [3, [u, b, f]]);
        assert.deepEqual(await search({ sort: 'unitCount' }), [3, [b, u, f]]);
        assert.deepEqual(await search({ sort: 'myCount', limit: 1, offset: 1 }), [3, [u]]);
        assert.deepEqual(
          await search({ sort: 'size', order: 'asc', limit: 1, offset: 1 }),
          [3, [b]],
          'a page in the middle',
        );
        assert.deepEqual(await search({ sort: 'size', order: 'asc', limit: 2, offset: 2 }), [3, [u]]);
        assert.deepEqual(await search({ sort: 'size', limit: 2, offset: 5 }), [3, []]);
        assert.deepEqual(await search({ uploaderId: other.id, sort: 'size' }), [2, [u, b]], 'with an uploader');
        assert.deepEqual(await search({ nameContains: '终稿' }), [1, [u]]);
        assert.deepEqual(await search({ nameContains: '初稿' }), [1, [f]]);
        assert.deepEqual(
          await search({ firstUploadFrom: new Date(t + 60_000) }),
          [0, []],
          'with the catalog’s filters',
        );
      });
    });

    describe('unit files by folder (网盘)', () => {
      /** A unit's folder upload: each path a content (the same content under two paths where named twice). */
      async function folderUpload() {
        const clerk = testAccount();
        const colleague = testAccount();
        const elsewhere = testAccount({ unit: unit('unit-b') });
        const page1 = (await commitBytes(store, randomContent(100), 'p1.tif')).entry;
        const page2 = (await commitBytes(store, randomContent(200), 'p2.tif')).entry;
        const note = (await commitBytes(store, randomContent(300), 'note.txt')).entry;
        const cover = (await commitBytes(store, randomContent(400), 'cover.pdf')).entry;
        const copy = (await commitBytes(store, randomContent(500), 'copy.pdf')).entry;
        const other = (await commitBytes(store, randomContent(600), 'other.pdf')).entry;
        const t = Date.now() - 60_000;
        const count = (account: Account, fileId: string, name: string, at: number, key = randomUUID()) =>
          store.ledger.count(uploadAction(uploadRecord(account, fileId, name, new Date(at)), key)).then(() => key);
        const keys = {
          page1: await count(clerk, page1.fileId, '2026年/案卷001/第0001页.tif', t),
          page2: await count(clerk, page2.fileId, '2026年/案卷001/第0002页.tif', t + 1),
          // The same page in another folder: one content, two paths.
          page1Again: await count(clerk, page1.fileId, '2026年/案卷002/第0001页.tif', t + 2),
          note: await count(colleague, note.fileId, '2026年/说明.txt', t + 3),
          cover: await count(clerk, cover.fileId, '封面.pdf', t + 4),
          // Names that begin as the folder's but lie outside it ('-' and '0' sort around '/').
          copy: await count(clerk, copy.fileId, '2026年-副本/封面.pdf', t + 5),
          other: await count(elsewhere, other.fileId, '2026年/案卷001/外单位.pdf', t + 6),
        };
        return { clerk, colleague, elsewhere, files: { page1, page2, note, cover, copy, other }, keys, t };
      }
      const shown = (page: FolderPage) => ({
        folders: page.folders.map((f) => [f.name, f.files]),
        files: page.files.map((f) => f.path),
        totals: [page.folderTotal, page.fileTotal],
      });

      it('lists a folder as a 网盘 does: its sub-folders with their counts first, then its files, each by name', async () => {
        const { clerk, files } = await folderUpload();
        const folder = (path: string, limit = 10, offset = 0) =>
          store.unitFiles.folder({ unitId: 'unit-a', accountId: clerk.id, folder: path, limit, offset });
        assert.deepEqual(shown(await folder('')), {
          folders: [
            ['2026年', 4],
            ['2026年-副本', 1],
          ],
          files: ['封面.pdf'],
          totals: [2, 1],
        });
        assert.deepEqual(shown(await folder('2026年')), {
          folders: [
            ['案卷001', 2],
            ['案卷002', 1],
          ],
          files: ['说明.txt'],
          totals: [2, 1],
        });
        const volume = await folder('2026年/案卷001');
        assert.deepEqual(shown(volume), { folders: [], files: ['第0001页.tif', '第0002页.tif'], totals: [0, 2] });
        assert.deepEqual(
          volume.files.map((f) => [f.entry.fileId, f.entry.length, f.uploadCount, f.myUploadCount]),
          [
            [files.page1.fileId, 100, 2, 2],
            [files.page2.fileId, 200, 1, 1],
          ],
          'a file row is the listing of the file in the view (its uploads under every name)',
        );
        assert.deepEqual(shown(await folder('2026年/案卷002/')), {
          folders: [],
          files: ['第0001页.tif'],
          totals: [0, 1],
        });
        assert.deepEqual(shown(await folder('没有这个文件夹')), { folders: [], files: [], totals: [0, 0] });
      });

      it('pages over the sub-folders and then the files', async () => {
        const { clerk } = await folderUpload();
        const folder = (limit: number, offset: number) =>
          store.unitFiles.folder({ unitId: 'unit-a', accountId: clerk.id, folder: '2026年', limit, offset });
        assert.deepEqual(shown(await folder(1, 0)).folders, [['案卷001', 2]]);
        assert.deepEqual(shown(await folder(1, 1)), { folders: [['案卷002', 1]], files: [], totals: [2, 1] });
        assert.deepEqual(shown(await folder(2, 1)), {
          folders: [['案卷002', 1]],
          files: ['说明.txt'],
          totals: [2, 1],
        });
        assert.deepEqual(shown(await folder(5, 2)), { folders: [], files: ['说明.txt'], totals: [2, 1] });
        assert.deepEqual(shown(await folder(5, 3)), { folders: [], files: [], totals: [2, 1] });
      });

      it('counts a level of many sub-folders, files between them, as one of a few', async () => {
        const clerk = testAccount();
        const t = Date.now() - 60_000;
        const file = (size: number) => commitBytes(store, randomContent(size), 'f.bin').then((c) => c.entry.fileId);
        // 70 volumes of one page each, or two in every tenth, and a file beside every seventh.
        const names: string[] = [];
        for (let v = 0; v < 70; v++) {
          const volume = `卷${String(v).padStart(2, '0')}`;
          names.push(`2026年/${volume}/第1页.tif`);
          if (v % 10 === 0) names.push(`2026年/${volume}/第2页.tif`);
          if (v % 7 === 0) names.push(`2026年/${volume}.txt`);
        }
        let at = t;
        for (const name of names)
          await store.ledger.count(uploadAction(uploadRecord(clerk, await file(10), name, new Date(at++))));
        const folder = (limit: number, offset: number) =>
          store.unitFiles.folder({ unitId: 'unit-a', accountId: clerk.id, folder: '2026年', limit, offset });
        assert.deepEqual(shown(await folder(3, 0)), {
          folders: [
            ['卷00', 2],
            ['卷01', 1],
            ['卷02', 1],
          ],
          files: [],
          totals: [70, 10],
        });
        assert.deepEqual(shown(await folder(3, 69)), {
          folders: [['卷69', 1]],
          files: ['卷00.txt', '卷07.txt'],
          totals: [70, 10],
        });
        assert.deepEqual(
          shown(
            await store.unitFiles.folder({ unitId: 'unit-a', accountId: clerk.id, folder: '', limit: 5, offset: 0 }),
          ),
          {
            folders: [['2026年', 87]],
            files: [],
            totals: [1, 0],
          },
        );
      });

      it("shows a reach's folders across its units, and a withdrawn upload's name no more", async () => {
        const { clerk, keys } = await folderUpload();
        const reach = await store.unitFiles.folder({
          subtree: { city: '沧州市', county: '青县' },
          accountId: clerk.id,
          folder: '2026年/案卷001',
          limit: 10,
          offset: 0,
        });
        assert.deepEqual(shown(reach).files, ['外单位.pdf', '第0001页.tif', '第0002页.tif']);

        assert.equal(await store.ledger.reverse(keys.note, 'withdrawal-note'), 'reversed');
        const folder = (path: string) =>
          store.unitFiles.folder({ unitId: 'unit-a', accountId: clerk.id, folder: path, limit: 10, offset: 0 });
        assert.deepEqual(shown(await folder('2026年')), {
          folders: [
            ['案卷001', 2],
            ['案卷002', 1],
          ],
          files: [],
          totals: [2, 0],
        });
        assert.deepEqual(shown(await folder('')).folders, [
          ['2026年', 3],
          ['2026年-副本', 1],
        ]);
        assert.equal(await store.ledger.reverse(keys.page1Again, 'withdrawal-page1-again'), 'reversed');
        assert.deepEqual(shown(await folder('2026年')).folders, [['案卷001', 2]], 'a folder left empty is gone');
        assert.equal(await store.ledger.restore(keys.note, 'restore-note'), 'restored');
        assert.deepEqual(shown(await folder('2026年')).files, ['说明.txt'], 'a restored upload is listed again');
      });

      it('names the uploads that count behind some files or a folder, by uploader and since when', async () => {
        const { clerk, colleague, files, keys, t } = await folderUpload();
        const uploads = async (q: Partial<ViewUploadsQuery>) =>
          (await store.unitFiles.uploads({ unitId: 'unit-a', limit: 100, ...q })).map((u) => u.key);
        assert.deepEqual(await uploads({ folder: '2026年' }), [keys.page1, keys.page2, keys.page1Again, keys.note]);
        assert.deepEqual(
          await uploads({ folder: '2026年/案卷002' }),
          [keys.page1Again],
          "only the uploads under the folder's names, not the same content's elsewhere",
        );
        assert.deepEqual(await uploads({ folder: '2026年', accountId: clerk.id }), [
          keys.page1,
          keys.page2,
          keys.page1Again,
        ]);
        assert.deepEqual(await uploads({ folder: '2026年', accountId: colleague.id }), [keys.note]);
        assert.deepEqual(await uploads({ folder: '2026年', since: new Date(t + 2) }), [keys.page1Again, keys.note]);
        assert.deepEqual(await uploads({ folder: '2026年', limit: 2 }), [keys.page1, keys.page2]);
        assert.deepEqual(await uploads({ fileIds: [files.page1.fileId, files.cover.fileId] }), [
          keys.page1,
          keys.page1Again,
          keys.cover,
        ]);
        assert.deepEqual(
          await uploads({ fileIds: [files.other.fileId] }),
          [],
          "another unit's upload is not the view's",
        );
        assert.deepEqual(
          (
            await store.unitFiles.uploads({ subtree: { city: '沧州市' }, fileIds: [files.other.fileId], limit: 10 })
          ).map((u) => [u.key, u.fileName]),
          [[keys.other, '2026年/案卷001/外单位.pdf']],
        );
        assert.equal(await store.ledger.reverse(keys.page1, 'withdrawal-page1'), 'reversed');
        assert.deepEqual(
          await uploads({ folder: '2026年/案卷001' }),
          [keys.page2],
          'a withdrawn upload is not named again',
        );
        assert.deepEqual(
          await uploads({ fileIds: [files.page1.fileId] }),
          [keys.page1Again],
          "a withdrawn upload is not named by its file either, while the file's other upload is",
        );
      });
    });
  });
}
