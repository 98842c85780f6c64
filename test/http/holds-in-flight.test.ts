import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { HoldView } from '../../shared/holds.js';
import type { FileUploadList, PurgeAnswer, TrashList, WithdrawalAnswer } from '../../shared/withdrawals.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { HoldStore } from '../../server/store/holds/port.js';
import type { Ledger } from '../../server/store/ledger/port.js';
import { randomContent } from '../support/content.js';
import { uploadFolder } from '../support/receipts.js';
import { body, type Client, TestServer } from '../support/server.js';
import { PausePoint } from '../support/pause-point.js';
import { storeTargets } from '../support/stores.js';

/**
 * 冻结 against a withdrawal under way: once `POST /api/holds` has answered, no withdrawal of a held
 * file takes effect, and one that took effect before is in the trash, where the purge skips it.
 * The withdrawal is paused (a store wrapper) at the two points where a hold can come between:
 * after it asked about holds, and just before the ledger reverses its upload.
 */
const TOWN_Q = '130922100';

for (const target of storeTargets) {
  describe(`a hold and a withdrawal under way (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<'clerkQ' | 'adminQ', Client>;
    let now = new Date();
    /** The withdrawal has read the holds (the holds' store answered its question). */
    const afterHoldCheck = new PausePoint();
    /** The withdrawal's reversal is about to be made in the ledger. */
    const beforeReversal = new PausePoint();

    before(async () => {
      server = await TestServer.start(target, {
        clock: () => now,
        wrapStore: (store: ArchiveStore) => {
          const holds: HoldStore = Object.create(store.holds) as HoldStore;
          holds.covering = async (fileIds, unitIds) => {
            const found = await store.holds.covering(fileIds, unitIds);
            await afterHoldCheck.pass();
            return found;
          };
          const ledger: Ledger = Object.create(store.ledger) as Ledger;
          ledger.reverseMany = async (changes) => {
            await beforeReversal.pass();
            return store.ledger.reverseMany(changes);
          };
          return { ...store, holds, ledger };
        },
      });
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('clerkQ', 'clerk', TOWN_Q);
      await server.addAccountIn('adminQ', 'admin', '130922');
      as = await server.loginAll(['clerkQ', 'adminQ']);
    });
    after(() => server.close());

    const withdraw = (uploadId: string) =>
      as.clerkQ.json('/api/withdrawals', 'POST', { reason: 'wrong_file', uploads: [uploadId] });
    const place = (request: object) => as.adminQ.json('/api/holds', 'POST', { reason: '审计调查', ...request });
    const lift = async (id: string) =>
      body<HoldView>(await as.adminQ.fetch(`/api/holds/${id}/lift`, { method: 'POST' }), 200);
    /** Whether the upload counts, and its withdrawal in the trash if it has one. */
    async function state(fileId: string, uploadId: string) {
      const list = await body<FileUploadList>(await as.adminQ.fetch(`/api/files/${fileId}/uploads`), 200);
      const upload = list.items.find((u) => u.uploadId === uploadId)!;
      const trash = await body<TrashList>(await as.adminQ.fetch('/api/trash?limit=500'), 200);
      return { counts: upload.counts, inTrash: trash.items.find((w) => w.uploadId === uploadId)?.id ?? null };
    }
    async function uploadOne() {
      const { uploadIds, fileIds } = await uploadFolder(as.clerkQ, [randomContent(3000)], '卷', now);
      return { uploadId: uploadIds[0]!, fileId: fileIds[0]! };
    }

    it('a hold placed after the withdrawal looked at the holds stops it: refused, its upload counting', async () => {
      const { uploadId, fileId } = await uploadOne();
      const paused = afterHoldCheck.arm();
      const withdrawing = withdraw(uploadId);
      await paused.reached;
      let hold: HoldView;
      try {
        hold = await body<HoldView>(await place({ files: [fileId] }), 201);
        assert.deepEqual(await state(fileId, uploadId), { counts: true, inTrash: null }, 'when the hold answers');
      } finally {
        paused.release();
      }
      const refused = await body<{ error: string; details: { files: string[] } }>(await withdrawing, 423);
      assert.deepEqual([refused.error, refused.details.files], ['file_on_hold', [fileId]]);
      assert.deepEqual(await state(fileId, uploadId), { counts: true, inTrash: null }, 'after the withdrawal answered');
      // Lifted, the same withdrawal is made.
      await lift(hold.id);
      await body<WithdrawalAnswer>(await withdraw(uploadId), 200);
      assert.equal((await state(fileId, uploadId)).counts, false);
    });

    it('one past its look at the holds is finished before the hold answers: in the trash, the purge skips it', async () => {
      const { uploadId, fileId } = await uploadOne();
      const paused = beforeReversal.arm();
      const withdrawing = withdraw(uploadId);
      await paused.reached;
      let hold: HoldView;
      let held: Awaited<ReturnType<typeof state>>;
      try {
        // A unit hold covers it as a file hold does.
        hold = await body<HoldView>(await place({ unit: TOWN_Q }), 201);
        held = await state(fileId, uploadId);
        assert.equal(held.counts, false, 'out of the counts when the hold answers, not after');
        assert.ok(held.inTrash, 'in the trash when the hold answers');
        const purge = await body<PurgeAnswer>(
          await as.adminQ.json('/api/trash/purge', 'POST', { withdrawals: [held.inTrash] }),
          200,
        );
        assert.deepEqual([purge.purged, purge.skipped.map((s) => s.reason)], [[], ['held']]);
      } finally {
        paused.release();
      }
      const answer = await body<WithdrawalAnswer>(await withdrawing, 200);
      assert.deepEqual(
        answer.withdrawn.map((w) => w.id),
        [held.inTrash],
      );
      assert.deepEqual(await state(fileId, uploadId), held);
      await lift(hold.id);
    });

    /** A withdrawal of the upload recorded, then the process died before it asked about holds. */
    async function crashedBeforeItsLook(uploadId: string, fileId: string): Promise<string> {
      const clerk = (await server.store.accounts.findByUsername('clerkQ'))!;
      const by = { id: clerk.id, username: 'clerkQ' };
      const id = randomBytes(16).toString('hex');
      await server.store.withdrawals.open({
        id,
        uploadKey: uploadId,
        upload: { account: by, unit: clerk.unit, fileId, fileName: '卷/第1页.pdf', fileLength: 3000, at: now },
        withdrawnBy: by,
        withdrawnAt: now,
        reason: 'wrong_file',
        note: null,
        state: 'withdrawing',
        cleared: false,
        changedAt: now,
        restoredBy: null,
        restoredAt: null,
        purgedBy: null,
        purgedAt: null,
      });
      return id;
    }

    it('a hold stops a withdrawal a crash left before its look at the holds; so does the sweep', async () => {
      const first = await uploadOne();
      const interrupted = await crashedBeforeItsLook(first.uploadId, first.fileId);
      const hold = await body<HoldView>(await place({ files: [first.fileId] }), 201);
      assert.equal(await server.store.withdrawals.get(interrupted), undefined, 'stopped by the hold');
      assert.deepEqual(await state(first.fileId, first.uploadId), { counts: true, inTrash: null });
      // Held first, then a withdrawal recorded and interrupted: the sweep, a minute on, stops it.
      const second = await uploadOne();
      const unitHold = await body<HoldView>(await place({ unit: TOWN_Q }), 201);
      const later = await crashedBeforeItsLook(second.uploadId, second.fileId);
      const started = now;
      now = new Date(started.getTime() + 2 * 60_000);
      try {
        await server.archive.gc.run();
      } finally {
        now = started;
      }
      assert.equal(await server.store.withdrawals.get(later), undefined, 'stopped by the sweep');
      assert.deepEqual(await state(second.fileId, second.uploadId), { counts: true, inTrash: null });
      await lift(hold.id);
      await lift(unitHold.id);
    });
  });
}
