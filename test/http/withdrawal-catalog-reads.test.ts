import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PurgeAnswer, RestoreAnswer, WithdrawalAnswer } from '../../shared/withdrawals.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { Catalog } from '../../server/store/catalog/port.js';
import { randomContent } from '../support/content.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { uploadFolder } from '../support/receipts.js';

/**
 * What a withdrawal asks the catalog (issue 41): only about uploads the ledger no longer counts,
 * to tell a file disposed of or deleted (销毁, 彻底删除) from one withdrawn. A receipt of 10,000
 * files that counts whole is 10,000 catalog reads otherwise, on MongoDB as many round trips.
 * The services read the catalog through a spy that records each file id asked about.
 */
type Who = 'clerkQ' | 'top';
const TOWN_Q = '130922100';

for (const target of storeTargets) {
  describe(`the catalog reads of a withdrawal (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    /** Every file id the services asked the catalog about (`Catalog.get`), in order. */
    const reads: string[] = [];

    before(async () => {
      server = await TestServer.start(target, {
        wrapStore: (store: ArchiveStore) => {
          const catalog: Catalog = Object.create(store.catalog) as Catalog;
          catalog.get = (fileId) => {
            reads.push(fileId);
            return store.catalog.get(fileId);
          };
          return { ...store, catalog };
        },
      });
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('clerkQ', 'clerk', TOWN_Q);
      await server.addAccountIn('top', 'admin', 'archive');
      as = await server.loginAll(['clerkQ', 'top']);
    });
    after(() => server.close());

    /** The catalog reads of these files while `request` runs, and its answer. */
    async function readsDuring(fileIds: readonly string[], request: () => Promise<Response>) {
      reads.length = 0;
      const res = await request();
      return { res, reads: reads.filter((id) => fileIds.includes(id)) };
    }

    const withdraw = (request: object) =>
      as.clerkQ.json('/api/withdrawals', 'POST', { reason: 'wrong_unit', ...request });

    it('withdraws a receipt the ledger counts whole, again, and restores it, without reading the catalog', async () => {
      const { receipt, fileIds } = await uploadFolder(
        as.clerkQ,
        [1, 2, 3, 4, 5].map((n) => randomContent(1000 + n)),
      );
      const withdrawal = await readsDuring(fileIds, () => withdraw({ receipt }));
      assert.equal((await body<WithdrawalAnswer>(withdrawal.res, 200)).withdrawn.length, 5);
      assert.deepEqual(withdrawal.reads, [], 'uploads that count were not disposed of: nothing to ask');
      // Withdrawn already: the answer comes from the withdrawals' records.
      const again = await readsDuring(fileIds, () => withdraw({ receipt }));
      assert.equal((await body<{ error: string }>(again.res, 409)).error, 'already_withdrawn');
      assert.deepEqual(again.reads, []);
      const restore = await readsDuring(fileIds, () => as.clerkQ.json('/api/withdrawals/restore', 'POST', { receipt }));
      assert.equal((await body<RestoreAnswer>(restore.res, 200)).restored.length, 5);
      assert.deepEqual(restore.reads, []);
    });

    it("asks the catalog about a receipt's disposed file alone, and skips its row", async () => {
      const { receipt, fileIds } = await uploadFolder(
        as.clerkQ,
        [2001, 2002, 2003].map((n) => randomContent(n)),
        '半销毁',
      );
      const disposal = await as.top.json('/api/disposals', 'POST', {
        fileIds: [fileIds[0]],
        reason: '保管期满，经鉴定无保存价值',
        approvalRef: '沧档销〔2026〕7号',
        confirm: '销毁',
      });
      await body(disposal, 200);
      const withdrawal = await readsDuring(fileIds, () => withdraw({ receipt }));
      const answer = await body<WithdrawalAnswer>(withdrawal.res, 200);
      assert.deepEqual(
        [answer.withdrawn.map((w) => w.fileId).sort(), answer.skippedRows],
        [[fileIds[1], fileIds[2]].sort(), 1],
      );
      assert.deepEqual(withdrawal.reads, [fileIds[0]]);
    });

    it('answers a purged upload from its withdrawal record (410), without reading the catalog', async () => {
      const { uploadIds, fileIds } = await uploadFolder(as.clerkQ, [randomContent(3001)], '已清除');
      const [withdrawn] = (await body<WithdrawalAnswer>(await withdraw({ uploads: uploadIds }), 200)).withdrawn;
      const purged = await as.top.json('/api/trash/purge', 'POST', { withdrawals: [withdrawn!.id] });
      assert.equal((await body<PurgeAnswer>(purged, 200)).contentsDeleted, 1);
      const again = await readsDuring(fileIds, () => withdraw({ uploads: uploadIds }));
      assert.equal((await body<{ error: string }>(again.res, 410)).error, 'already_purged');
      assert.deepEqual(again.reads, []);
    });
  });
}
