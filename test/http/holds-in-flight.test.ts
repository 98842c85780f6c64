import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { FileUploadList, PurgeAnswer, TrashList, WithdrawalAnswer } from '../../shared/withdrawals.js';
import { HoldsUnderWay, TOWN_Q } from '../support/holds-under-way.js';
import { body } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * 冻结 against a withdrawal under way: once `POST /api/holds` has answered, no withdrawal of a held
 * file takes effect, and one that took effect before is in the trash, where the purge skips it.
 * The withdrawal is paused (a store wrapper) at the two points where a hold can come between:
 * after it asked about holds, and just before the ledger reverses its upload.
 */
for (const target of storeTargets) {
  describe(`a hold and a withdrawal under way (${target.name} store)`, { skip: target.skip }, () => {
    let fixture: HoldsUnderWay;
    before(async () => {
      fixture = await HoldsUnderWay.start(target);
    });
    after(() => fixture.close());
    afterEach(() => fixture.reset());

    /** Whether the upload counts, and its withdrawal in the trash if it has one. */
    async function state(fileId: string, uploadId: string) {
      const { adminQ } = fixture.as;
      const list = await body<FileUploadList>(await adminQ.fetch(`/api/files/${fileId}/uploads`), 200);
      const upload = list.items.find((u) => u.uploadId === uploadId)!;
      const trash = await body<TrashList>(await adminQ.fetch('/api/trash?limit=500'), 200);
      return { counts: upload.counts, inTrash: trash.items.find((w) => w.uploadId === uploadId)?.id ?? null };
    }

    it('a hold placed after the withdrawal looked at the holds stops it: refused, its upload counting', async () => {
      const { uploadId, fileId } = await fixture.uploadOne();
      const { hold, answer: withdrawing } = await fixture.holdMeanwhile(
        fixture.points.afterHoldCheck,
        () => fixture.withdraw(uploadId),
        { files: [fileId] },
        async () => {
          assert.deepEqual(await state(fileId, uploadId), { counts: true, inTrash: null }, 'when the hold answers');
        },
      );
      const refused = await body<{ error: string; details: { files: string[] } }>(withdrawing, 423);
      assert.deepEqual([refused.error, refused.details.files], ['file_on_hold', [fileId]]);
      assert.deepEqual(await state(fileId, uploadId), { counts: true, inTrash: null }, 'after the withdrawal answered');
      // Lifted, the same withdrawal is made.
      await fixture.lift(hold.id);
      await body<WithdrawalAnswer>(await fixture.withdraw(uploadId), 200);
      assert.equal((await state(fileId, uploadId)).counts, false);
    });

    it('one past its look at the holds is finished before the hold answers: in the trash, the purge skips it', async () => {
      const { uploadId, fileId } = await fixture.uploadOne();
      let held: Awaited<ReturnType<typeof state>> | undefined;
      const { hold, answer: withdrawing } = await fixture.holdMeanwhile(
        fixture.points.beforeWithdrawalReversal,
        () => fixture.withdraw(uploadId),
        // A unit hold covers it as a file hold does.
        { unit: TOWN_Q },
        async () => {
          held = await state(fileId, uploadId);
          assert.equal(held.counts, false, 'out of the counts when the hold answers, not after');
          assert.ok(held.inTrash, 'in the trash when the hold answers');
          const purge = await body<PurgeAnswer>(
            await fixture.as.adminQ.json('/api/trash/purge', 'POST', { withdrawals: [held.inTrash] }),
            200,
          );
          assert.deepEqual([purge.purged, purge.skipped.map((s) => s.reason)], [[], ['held']]);
        },
      );
      const answer = await body<WithdrawalAnswer>(withdrawing, 200);
      assert.deepEqual(
        answer.withdrawn.map((w) => w.id),
        [held?.inTrash],
      );
      assert.deepEqual(await state(fileId, uploadId), held);
      await fixture.lift(hold.id);
    });

    it('a hold stops a withdrawal a crash left before its look at the holds; so does the sweep', async () => {
      const { store } = fixture.server;
      const first = await fixture.uploadOne();
      const interrupted = await fixture.crashedWithdrawal(first.uploadId, first.fileId);
      const hold = await fixture.place({ files: [first.fileId] });
      assert.equal(await store.withdrawals.get(interrupted), undefined, 'stopped by the hold');
      assert.deepEqual(await state(first.fileId, first.uploadId), { counts: true, inTrash: null });
      // Held first, then a withdrawal recorded and interrupted: the sweep, a minute on, stops it.
      const second = await fixture.uploadOne();
      const unitHold = await fixture.place({ unit: TOWN_Q });
      const later = await fixture.crashedWithdrawal(second.uploadId, second.fileId);
      await fixture.sweepLater();
      assert.equal(await store.withdrawals.get(later), undefined, 'stopped by the sweep');
      assert.deepEqual(await state(second.fileId, second.uploadId), { counts: true, inTrash: null });
      await fixture.lift(hold.id);
      await fixture.lift(unitHold.id);
    });

    it('a withdrawal a crash left before its look at the holds, sent again and refused as held, never takes effect once the hold is lifted', async () => {
      const { store } = fixture.server;
      const { uploadId, fileId } = await fixture.uploadOne();
      // Held; the first try recorded, the process died before its look; the clerk's retry is refused.
      const hold = await fixture.place({ files: [fileId] });
      const interrupted = await fixture.crashedWithdrawal(uploadId, fileId);
      const refused = await body<{ error: string }>(await fixture.withdraw(uploadId), 423);
      assert.equal(refused.error, 'file_on_hold');
      assert.equal(await store.withdrawals.get(interrupted), undefined, 'the first try is stopped with the retry');
      await fixture.lift(hold.id);
      await fixture.sweepLater();
      assert.deepEqual(await state(fileId, uploadId), { counts: true, inTrash: null }, 'as the clerk was told');
    });
  });
}
