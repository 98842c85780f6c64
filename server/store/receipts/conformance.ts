import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';
import type { ReceiptRecord } from './port.js';

/** What every store adapter's receipts must do (run against each adapter by test/store/). */
export function receiptConformance(target: StoreTarget): void {
  conformanceSuite('receipts', target, (store) => {
    describe('receipts', () => {
      const receipt = (accountId: string, id: string, rows: number, updatedAt: Date): ReceiptRecord => ({
        id,
        accountId,
        title: '2026年移交',
        startedAt: new Date('2026-11-25T08:00:00Z'),
        updatedAt,
        counts: { stored: rows, duplicate: 0, instant: 0, failed: 0, skipped: 0 },
        bytes: 1000 + rows,
        rows: Array.from({ length: rows }, (_, i) => ({
          path: `2026年移交/第${i}页.jpg`,
          size: i,
          outcome: 'stored' as const,
          fileId: 'f'.repeat(24),
          uploadCount: 1,
          at: '2026-11-25T08:00:01.000Z',
        })),
      });

      it('keeps a receipt of thousands of rows whole, in order, and replaces it when sent again', async () => {
        const first = receipt('acc-r', 'a'.repeat(32), 2500, new Date('2026-11-25T09:00:00Z'));
        await store.receipts.put(first);
        assert.deepEqual(await store.receipts.get('acc-r', first.id), first);
        const again = { ...receipt('acc-r', first.id, 3, new Date('2026-11-25T10:00:00Z')), title: '又一次' };
        await store.receipts.put(again);
        assert.deepEqual(await store.receipts.get('acc-r', first.id), again);
      });

      it("tells a receipt's size without its rows, and nothing for one that is not there", async () => {
        const r = receipt('acc-s', 'e'.repeat(32), 10, new Date('2026-11-25T09:00:00Z'));
        assert.equal(await store.receipts.sizeOf('acc-s', r.id), undefined);
        await store.receipts.put(r);
        assert.equal(await store.receipts.sizeOf('acc-s', r.id), 1010);
        await store.receipts.put({ ...r, bytes: 77 });
        assert.equal(await store.receipts.sizeOf('acc-s', r.id), 77);
        assert.equal(await store.receipts.sizeOf('acc-other', r.id), undefined, "another account's id is its own");
        assert.equal((await store.receipts.list('acc-s', { limit: 1, offset: 0 })).items[0]!.bytes, 77);
      });

      it("lists an account's receipts, the latest first, without rows; another account's stay apart", async () => {
        await store.receipts.put(receipt('acc-l', 'b'.repeat(32), 1, new Date('2026-11-20T00:00:00Z')));
        await store.receipts.put(receipt('acc-l', 'c'.repeat(32), 2, new Date('2026-11-22T00:00:00Z')));
        await store.receipts.put(receipt('acc-other', 'b'.repeat(32), 5, new Date('2026-11-23T00:00:00Z')));
        const page = await store.receipts.list('acc-l', { limit: 10, offset: 0 });
        assert.equal(page.total, 2);
        assert.deepEqual(
          page.items.map((r) => [r.id[0], r.counts.stored, 'rows' in r]),
          [
            ['c', 2, false],
            ['b', 1, false],
          ],
        );
        assert.equal((await store.receipts.list('acc-l', { limit: 1, offset: 1 })).items[0]!.id, 'b'.repeat(32));
        assert.equal((await store.receipts.get('acc-l', 'b'.repeat(32)))!.rows.length, 1);
        assert.equal((await store.receipts.get('acc-other', 'b'.repeat(32)))!.rows.length, 5);
        assert.equal(await store.receipts.get('acc-l', 'd'.repeat(32)), undefined);
      });
    });
  });
}
