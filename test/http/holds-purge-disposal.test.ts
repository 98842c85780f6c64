import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import type { DisposalAnswer } from '../../shared/disposals.js';
import type { HoldList, HoldView } from '../../shared/holds.js';
import type { FileUploadList, PurgeAnswer } from '../../shared/withdrawals.js';
import { recordUpload } from '../support/content.js';
import { HoldsUnderWay, TOWN_Q } from '../support/holds-under-way.js';
import { body } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * 冻结 against a purge (彻底删除) or a disposal (销毁) under way: once `POST /api/holds` has
 * answered, no purge or disposal of a held file takes effect and none of its bytes is deleted; one
 * cleared of holds before the hold was placed has been finished by then. Each is paused (a store
 * wrapper) where a hold can come between: after its look at the holds, and after it was cleared.
 */
for (const target of storeTargets) {
  describe(`a hold and a purge or disposal under way (${target.name} store)`, { skip: target.skip }, () => {
    let fixture: HoldsUnderWay;
    before(async () => {
      fixture = await HoldsUnderWay.start(target);
    });
    after(() => fixture.close());
    afterEach(() => fixture.reset());

    const purge = (id: string) => fixture.as.adminQ.json('/api/trash/purge', 'POST', { withdrawals: [id] });
    const dispose = (fileId: string) =>
      fixture.as.top.json('/api/disposals', 'POST', {
        reason: '保管期满，经鉴定无保存价值',
        approvalRef: '沧档销〔2026〕7号',
        confirm: '销毁',
        fileIds: [fileId],
      });

    /** Whether the content is live in the catalog, its bytes readable; or deleted. */
    async function contentOf(fileId: string): Promise<'kept' | 'deleted'> {
      const entry = await fixture.server.store.catalog.get(fileId);
      if (!entry) return 'deleted';
      for await (const chunk of fixture.server.store.content.read(entry)) void chunk;
      return 'kept';
    }
    /** The withdrawal's state, and whether the content is kept. */
    async function state(withdrawalId: string, fileId: string) {
      return {
        withdrawal: (await fixture.server.store.withdrawals.get(withdrawalId))?.state,
        content: await contentOf(fileId),
      };
    }
    /** Whether the file's upload counts, and its register entry's state, if it has one. */
    async function disposalState(fileId: string, uploadId: string) {
      const list = await fixture.as.adminQ.fetch(`/api/files/${fileId}/uploads`);
      const counts =
        list.status === 200
          ? (await body<FileUploadList>(list, 200)).items.find((u) => u.uploadId === uploadId)?.counts
          : false;
      if (list.status !== 200) await list.arrayBuffer();
      return {
        counts,
        entry: (await fixture.server.store.disposals.ofFiles([fileId])).get(fileId)?.state ?? null,
        content: await contentOf(fileId),
      };
    }

    it('a hold placed after a purge looked at the holds stops it: skipped as held, still in the trash, bytes kept', async () => {
      const { fileId, withdrawalId } = await fixture.inTrash();
      const { hold, answer: purging } = await fixture.holdMeanwhile(
        fixture.points.beforePurgeCleared,
        () => purge(withdrawalId),
        { files: [fileId] },
        async () => {
          assert.deepEqual(
            await state(withdrawalId, fileId),
            { withdrawal: 'withdrawn', content: 'kept' },
            'when the hold answers',
          );
        },
      );
      const answer = await body<PurgeAnswer>(purging, 200);
      assert.deepEqual([answer.purged, answer.skipped.map((s) => [s.id, s.reason])], [[], [[withdrawalId, 'held']]]);
      assert.deepEqual(await state(withdrawalId, fileId), { withdrawal: 'withdrawn', content: 'kept' });
      // Lifted, the same purge is made.
      await fixture.lift(hold.id);
      assert.deepEqual(
        (await body<PurgeAnswer>(await purge(withdrawalId), 200)).purged.map((w) => w.id),
        [withdrawalId],
      );
      assert.deepEqual(await state(withdrawalId, fileId), { withdrawal: 'purged', content: 'deleted' });
    });

    it('a purge cleared before the hold is finished before the hold answers; its content is kept by the hold', async () => {
      const { fileId, withdrawalId } = await fixture.inTrash();
      const { hold, answer: purging } = await fixture.holdMeanwhile(
        fixture.points.beforeLedgerPurge,
        () => purge(withdrawalId),
        { unit: TOWN_Q },
        async () => {
          assert.deepEqual(
            await state(withdrawalId, fileId),
            { withdrawal: 'purged', content: 'kept' },
            'when the hold answers',
          );
        },
      );
      const answer = await body<PurgeAnswer>(purging, 200);
      assert.deepEqual([answer.purged.map((w) => w.id), answer.contentsDeleted], [[withdrawalId], 0]);
      assert.deepEqual(await state(withdrawalId, fileId), { withdrawal: 'purged', content: 'kept' });
      await fixture.lift(hold.id);
    });

    it("a hold placed after a content's deletion looked at the holds cancels it: the bytes stay", async () => {
      const { fileId, withdrawalId } = await fixture.inTrash();
      const { hold, answer: purging } = await fixture.holdMeanwhile(
        fixture.points.beforeDeletionCleared,
        () => purge(withdrawalId),
        { files: [fileId] },
        async () => {
          assert.deepEqual(
            await state(withdrawalId, fileId),
            { withdrawal: 'purged', content: 'kept' },
            'when the hold answers',
          );
        },
      );
      const answer = await body<PurgeAnswer>(purging, 200);
      assert.deepEqual([answer.purged.map((w) => w.id), answer.contentsDeleted], [[withdrawalId], 0]);
      assert.deepEqual(await state(withdrawalId, fileId), { withdrawal: 'purged', content: 'kept' });
      assert.equal(
        (await fixture.server.store.catalog.deletions(new Date(fixture.now.getTime() + 3_600_000), 10)).length,
        0,
      );
      await fixture.lift(hold.id);
    });

    it('a deletion cleared before the hold is finished before the hold answers: no bytes of a held file are left going', async () => {
      const { fileId, withdrawalId } = await fixture.inTrash();
      const { hold, answer: purging } = await fixture.holdMeanwhile(
        fixture.points.beforeBytesRemoved,
        () => purge(withdrawalId),
        { files: [fileId] },
        async () => {
          assert.deepEqual(
            await state(withdrawalId, fileId),
            { withdrawal: 'purged', content: 'deleted' },
            'when the hold answers',
          );
          assert.equal(
            (await fixture.server.store.catalog.deletions(new Date(fixture.now.getTime() + 3_600_000), 10)).length,
            0,
            'finished',
          );
        },
      );
      await body<PurgeAnswer>(purging, 200);
      assert.deepEqual(await state(withdrawalId, fileId), { withdrawal: 'purged', content: 'deleted' });
      await fixture.lift(hold.id);
    });

    it('a hold placed after a disposal looked at the holds stops it: refused, its entry gone, nothing changed', async () => {
      const { fileId, uploadId } = await fixture.uploadOne();
      const { hold, answer: disposing } = await fixture.holdMeanwhile(
        fixture.points.beforeDisposalCleared,
        () => dispose(fileId),
        { files: [fileId] },
        async () => {
          assert.deepEqual(
            await disposalState(fileId, uploadId),
            { counts: true, entry: null, content: 'kept' },
            'when the hold answers',
          );
        },
      );
      const refused = await body<{ error: string; details: { files: string[] } }>(disposing, 423);
      assert.deepEqual([refused.error, refused.details.files], ['file_on_hold', [fileId]]);
      assert.deepEqual(await disposalState(fileId, uploadId), { counts: true, entry: null, content: 'kept' });
      // Lifted, the same disposal is made.
      await fixture.lift(hold.id);
      assert.deepEqual(
        (await body<DisposalAnswer>(await dispose(fileId), 200)).disposed.map((d) => d.fileId),
        [fileId],
      );
      assert.deepEqual(await disposalState(fileId, uploadId), { counts: false, entry: 'disposed', content: 'deleted' });
    });

    it('a disposal cleared before the hold is finished before the hold answers: the bytes already gone', async () => {
      const { fileId, uploadId } = await fixture.uploadOne();
      const { hold, answer: disposing } = await fixture.holdMeanwhile(
        fixture.points.beforeDisposalReversal,
        () => dispose(fileId),
        { unit: TOWN_Q },
        async () => {
          assert.deepEqual(
            await disposalState(fileId, uploadId),
            { counts: false, entry: 'disposed', content: 'deleted' },
            'when the hold answers',
          );
        },
      );
      assert.deepEqual(
        (await body<DisposalAnswer>(disposing, 200)).disposed.map((d) => d.fileId),
        [fileId],
      );
      await fixture.lift(hold.id);
    });

    it('a disposal cleared, its file counted again as fast as it is reversed: the hold answers once, and its retry places no other', async () => {
      const { fileId, uploadId } = await fixture.uploadOne();
      const { store } = fixture.server;
      const clerk = (await store.accounts.findByUsername('clerkQ'))!;
      const key = randomUUID();
      const placeWithKey = (reason = '审计调查') =>
        fixture.as.adminQ.fetch('/api/holds', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ reason, files: [fileId] }),
        });
      const paused = fixture.points.beforeDisposalReversal.arm();
      const disposing = dispose(fileId);
      await paused.reached;
      let placing: Response;
      try {
        // The clerk sends the file again after each of the disposal's reversals, while the hold settles it.
        fixture.points.afterDisposalReversal = async () => void (await recordUpload(store, clerk, fileId));
        placing = await placeWithKey();
      } finally {
        fixture.points.afterDisposalReversal = undefined;
        paused.release();
      }
      const hold = await body<HoldView>(placing, 201);
      // Its answer lost, the hold is sent again with its key: the same hold, no other placed.
      assert.equal((await body<HoldView>(await placeWithKey(), 201)).id, hold.id);
      const active = await body<HoldList>(await fixture.as.adminQ.fetch('/api/holds?state=active'), 200);
      assert.deepEqual(
        active.items
          .filter((h) => h.scope.kind === 'files' && h.scope.files.some((f) => f.id === fileId))
          .map((h) => h.id),
        [hold.id],
      );
      const reused = await body<{ error: string }>(await placeWithKey('另一个原因'), 422);
      assert.equal(reused.error, 'idempotency_key_reused');
      // The file no longer counted again, the disposal's request finishes it.
      assert.deepEqual(
        (await body<DisposalAnswer>(await disposing, 200)).disposed.map((d) => d.fileId),
        [fileId],
      );
      const { entry, content } = await disposalState(fileId, uploadId);
      assert.deepEqual({ entry, content }, { entry: 'disposed', content: 'deleted' });
      await fixture.lift(hold.id);
    });

    it('a purge and a disposal a crash left not cleared are stopped by a hold, or asked about holds by the sweep', async () => {
      const p1 = await fixture.inTrash();
      const d1 = await fixture.uploadOne();
      await fixture.crashedPurge(p1);
      await fixture.crashedDisposal(d1);
      const hold = await fixture.place({ files: [p1.fileId, d1.fileId] });
      assert.deepEqual(await state(p1.withdrawalId, p1.fileId), { withdrawal: 'withdrawn', content: 'kept' });
      assert.deepEqual(await disposalState(d1.fileId, d1.uploadId), { counts: true, entry: null, content: 'kept' });
      // Held first, then a purge and a disposal recorded and interrupted: the sweep, a minute on, stops them.
      const p2 = await fixture.inTrash();
      const d2 = await fixture.uploadOne();
      const unitHold = await fixture.place({ unit: TOWN_Q });
      await fixture.crashedPurge(p2);
      await fixture.crashedDisposal(d2);
      await fixture.sweepLater();
      assert.deepEqual(await state(p2.withdrawalId, p2.fileId), { withdrawal: 'withdrawn', content: 'kept' });
      assert.deepEqual(await disposalState(d2.fileId, d2.uploadId), { counts: true, entry: null, content: 'kept' });
      await fixture.lift(hold.id);
      await fixture.lift(unitHold.id);
    });
  });
}
