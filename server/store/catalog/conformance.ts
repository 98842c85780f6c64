import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commitBytes, randomContent, recordUpload, testAccount, unit } from '../../../test/support/content.js';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';

/** What every store adapter's catalog must do (run against each adapter by test/store/). */
export function catalogConformance(target: StoreTarget): void {
  conformanceSuite('catalog', target, (store) => {
    describe('catalog scan', () => {
      it('walks every entry in file id order, a page at a time, and counts them', async () => {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push((await commitBytes(store, randomContent(100 + i))).entry.fileId);
        assert.equal(await store.catalog.count(), 5);
        const seen: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await store.catalog.scan(after, 2);
          if (page.length === 0) break;
          assert.ok(page.length <= 2);
          seen.push(...page.map((e) => e.fileId));
          after = page.at(-1)!.fileId;
        }
        assert.deepEqual(seen, [...ids].sort());
      });
    });

    describe('catalog listing', () => {
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

        const unitA = await store.catalog.list({ unitId: 'unit-a', accountId: clerkA.id, limit: 10, offset: 0 });
        assert.equal(unitA.total, 2);
        assert.deepEqual(
          unitA.items.map((i) => [i.entry.fileId, i.displayName, i.displayType, i.uploadCount, i.myUploadCount]),
          [
            [shared.fileId, '共享 文件.pdf', 'application/x-unit-a', 2, 2],
            [onlyA.fileId, '档案 A.pdf', 'application/pdf', 1, 1],
          ],
        );
        const searched = await store.catalog.list({
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
        const page2 = await store.catalog.list({ unitId: 'unit-a', accountId: clerkA.id, limit: 1, offset: 1 });
        assert.deepEqual([page2.total, page2.items.map((i) => i.entry.fileId)], [2, [onlyA.fileId]]);

        const all = await store.catalog.list({ accountId: clerkA.id, limit: 10, offset: 0 });
        assert.equal(all.total, 3);
        const sharedRow = all.items.find((i) => i.entry.fileId === shared.fileId)!;
        assert.deepEqual([sharedRow.displayName, sharedRow.uploadCount, sharedRow.myUploadCount], ['b-name.pdf', 3, 2]);
        const literal = await store.catalog.list({ accountId: clerkA.id, nameContains: '%', limit: 10, offset: 0 });
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
          store.catalog.list({
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
    });
  });
}
