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
        const b = await file();
        await store.fileTexts.put([
          { fileId: b, text: '第一次', terms: ['第一'] },
          { fileId: a, text: '又新的', terms: ['新', '又'] },
          { fileId: b, text: '第二次', terms: ['第二'] },
        ]);
        assert.deepEqual(await ids(['第一']), [], 'a file put twice in one call: its last text');
        assert.deepEqual((await search(['第二'])).hits, [{ fileId: b, text: '第二次' }]);
        assert.deepEqual((await search(['又', '新'])).hits, [{ fileId: a, text: '又新的' }]);
        await store.fileTexts.forget(b);
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

      it("walks a unit's files when they are fewer than the matches, the matches when those are fewer", async () => {
        // 公文 is common in the archive (12 files of 青县's other town) and in 3 of unit-a's 4
        // files; 批复 is in one file of unit-a only. Either way only unit-a's files are found.
        const clerkA = testAccount({ unit: unit('unit-a') });
        const clerkB = testAccount({ unit: unit('unit-b') });
        const ofA = [await file(), await file(), await file(), await file()];
        const ofB = [];
        for (let i = 0; i < 12; i++) ofB.push(await file());
        for (const [i, fileId] of ofA.entries()) await recordUpload(store, clerkA, fileId, `a${i}.txt`);
        for (const [i, fileId] of ofB.entries()) await recordUpload(store, clerkB, fileId, `b${i}.txt`);
        await store.fileTexts.put([
          ...ofA.slice(0, 3).map((fileId) => ({ fileId, text: '公文', terms: ['公文'] })),
          { fileId: ofA[3]!, text: '批复', terms: ['批复'] },
          ...ofB.map((fileId) => ({ fileId, text: '公文', terms: ['公文'] })),
        ]);
        await store.fileTexts.put([{ fileId: ofA[0]!, text: '公文批复', terms: ['公文', '批复'] }]);
        const inA = { unitId: 'unit-a' };
        const common = await store.fileTexts.search({ terms: ['公文'], scope: inA, limit: 2, offset: 0 });
        assert.equal(common.plan, 'reach', "the unit's 4 files, not the 15 matches");
        const rest = await store.fileTexts.search({ terms: ['公文'], scope: inA, limit: 2, offset: 2 });
        assert.deepEqual([common.hits.length, common.more, rest.hits.length, rest.more], [2, true, 1, false]);
        assert.deepEqual(
          [...common.hits, ...rest.hits].map((h) => h.fileId).sort(),
          ofA.slice(0, 3).sort(),
          "each of the unit's files holding the word once, in one order",
        );
        const rare = await store.fileTexts.search({ terms: ['批复'], scope: inA, limit: 10, offset: 0 });
        assert.equal(rare.plan, 'matches', 'the 2 matches, not the 4 files');
        assert.deepEqual(rare.hits.map((h) => h.fileId).sort(), [ofA[0]!, ofA[3]!].sort());
        const both = await store.fileTexts.search({ terms: ['公文', '批复'], scope: inA, limit: 10, offset: 0 });
        assert.deepEqual(
          both.hits.map((h) => h.fileId),
          [ofA[0]!],
        );
        const inB = await store.fileTexts.search({
          terms: ['公文'],
          scope: { unitId: 'unit-b' },
          limit: 20,
          offset: 0,
        });
        assert.deepEqual(
          [inB.plan, inB.hits.map((h) => h.fileId).sort()],
          ['reach', [...ofB].sort()],
          "unit-b's 12 files are fewer than the 15 matches: the unit's files hold them all",
        );
        const county = await store.fileTexts.search({
          terms: ['公文'],
          scope: { subtree: { city: '沧州市', county: '青县' } },
          limit: 20,
          offset: 0,
        });
        assert.deepEqual([county.plan, county.hits.length], ['matches', 15], 'a subtree walks the matches');
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
