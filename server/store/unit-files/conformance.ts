import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FILE_NAMES_SHOWN, type FileSort } from '../../../shared/schemas.js';
import type { Account } from '../accounts/port.js';
import type { UnitFilesQuery } from './port.js';
import {
  commitBytes,
  randomContent,
  recordUpload,
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
    });
  });
}
