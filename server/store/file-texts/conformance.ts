import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commitBytes, randomContent, recordUpload, testAccount, unit } from '../../../test/support/content.js';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';

/** What every store adapter's index of files' texts must do (run against each adapter by test/store/). */
export function fileTextConformance(target: StoreTarget): void {
  conformanceSuite('file texts', target, (store) => {
    describe('file texts', () => {
      let seq = 0;
      const file = async () => (await commitBytes(store, randomContent(40), `文本${seq++}.txt`)).entry.fileId;
      const search = (terms: string[], scope?: { unitId: string } | { subtree: { city: string; county?: string } }) =>
        store.fileTexts.search({ terms, scope, limit: 10, offset: 0 });
      const ids = async (terms: string[], scope?: Parameters<typeof search>[1]) =>
        (await search(terms, scope)).hits.map((h) => h.fileId).sort();

      it('finds the files holding every term of a search, with their texts', async () => {
        const [a, b] = [await file(), await file()];
        await store.fileTexts.put([
          { fileId: a, text: '关于档案数字化的通知', terms: ['关于', '档案', '数字', '数字化', '通知'] },
          { fileId: b, text: '档案管理办法', terms: ['档案', '管理', '办法'] },
        ]);
        assert.deepEqual(await ids(['档案']), [a, b].sort());
        assert.deepEqual(await ids(['档案', '通知']), [a]);
        assert.deepEqual(await ids(['通知', '办法']), [], 'no file holds both');
        assert.deepEqual(await ids(['没有']), []);
        const [hit] = (await search(['办法'])).hits;
        assert.deepEqual(hit, { fileId: b, text: '档案管理办法' });
        assert.equal(await store.fileTexts.count(), 2);
        assert.equal(await store.fileTexts.has(a), true);
      });

      it('takes terms that are words of query syntax as words', async () => {
        const a = await file();
        await store.fileTexts.put([{ fileId: a, text: 'x', terms: ['and', 'or', 'not', 'near'] }]);
        assert.deepEqual(await ids(['or', 'not']), [a]);
        assert.deepEqual(await ids(['near', 'and']), [a]);
      });

      it("replaces a file's terms when its text is put again, and forgets them with the file", async () => {
        const a = await file();
        await store.fileTexts.put([{ fileId: a, text: '旧的', terms: ['旧'] }]);
        await store.fileTexts.put([{ fileId: a, text: '新的', terms: ['新'] }]);
        assert.deepEqual(await ids(['旧']), [], 'the old terms are gone');
        assert.deepEqual((await search(['新'])).hits, [{ fileId: a, text: '新的' }]);
        await store.fileTexts.forget(a);
        await store.fileTexts.forget(a);
        assert.deepEqual(await ids(['新']), []);
        assert.equal(await store.fileTexts.has(a), false);
        assert.equal(await store.fileTexts.count(), 0);
      });

      it('finds only files uploaded in the scope: a unit, or a subtree', async () => {
        const clerkA = testAccount({ unit: unit('unit-a') });
        const clerkB = testAccount({ unit: unit('unit-b') });
        const clerkX = testAccount({ unit: unit('unit-x', '献县') });
        const [ofA, ofB, shared, ofX, nobody] = [await file(), await file(), await file(), await file(), await file()];
        await recordUpload(store, clerkA, ofA, 'a.txt');
        await recordUpload(store, clerkB, ofB, 'b.txt');
        await recordUpload(store, clerkA, shared, 's.txt');
        await recordUpload(store, clerkX, shared, 's.txt');
        await recordUpload(store, clerkX, ofX, 'x.txt');
        await store.fileTexts.put(
          [ofA, ofB, shared, ofX, nobody].map((fileId) => ({ fileId, text: '公文', terms: ['公文'] })),
        );
        assert.deepEqual(await ids(['公文'], { unitId: 'unit-a' }), [ofA, shared].sort());
        assert.deepEqual(await ids(['公文'], { unitId: 'unit-b' }), [ofB]);
        assert.deepEqual(
          await ids(['公文'], { subtree: { city: '沧州市', county: '青县' } }),
          [ofA, ofB, shared].sort(),
        );
        assert.deepEqual(await ids(['公文'], { subtree: { city: '沧州市', county: '献县' } }), [shared, ofX].sort());
        assert.deepEqual(await ids(['公文'], { subtree: { city: '沧州市' } }), [ofA, ofB, shared, ofX].sort());
        assert.deepEqual(await ids(['公文']), [ofA, ofB, shared, ofX, nobody].sort(), 'the whole archive: every file');
        assert.deepEqual(await ids(['公文'], { unitId: 'unit-z' }), []);
      });

      it('pages through the files found in one order, saying when more follow', async () => {
        const files = [];
        for (let i = 0; i < 5; i++) files.push(await file());
        await store.fileTexts.put(files.map((fileId) => ({ fileId, text: '页', terms: ['页'] })));
        const seen: string[] = [];
        for (let offset = 0; ; offset += 2) {
          const page = await store.fileTexts.search({ terms: ['页'], scope: undefined, limit: 2, offset });
          seen.push(...page.hits.map((h) => h.fileId));
          assert.equal(page.more, offset + 2 < 5, `more after offset ${offset}`);
          if (!page.more) break;
        }
        assert.deepEqual([...seen].sort(), [...files].sort(), 'each file once');
      });
    });
  });
}
