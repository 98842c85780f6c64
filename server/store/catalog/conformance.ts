import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commitBytes, randomContent } from '../../../test/support/content.js';
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
  });
}
