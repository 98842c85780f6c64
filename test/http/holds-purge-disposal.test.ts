import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import type { DisposalAnswer } from '../../shared/disposals.js';
import type { HoldView } from '../../shared/holds.js';
import type { FileUploadList, PurgeAnswer, WithdrawalAnswer } from '../../shared/withdrawals.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { Catalog } from '../../server/store/catalog/port.js';
import type { ContentStore } from '../../server/store/content/port.js';
import type { DisposalStore } from '../../server/store/disposals/port.js';
import type { Ledger } from '../../server/store/ledger/port.js';
import type { WithdrawalStore } from '../../server/store/withdrawals/port.js';
import { randomContent } from '../support/content.js';
import { PausePoint } from '../support/pause-point.js';
import { uploadFolder } from '../support/receipts.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * 冻结 against a purge (彻底删除) or a disposal (销毁) under way: once `POST /api/holds` has
 * answered, no purge or disposal of a held file takes effect and none of its bytes is deleted; one
 * cleared of holds before the hold was placed has been finished by then. Each is paused (a store
 * wrapper) where a hold can come between: after its look at the holds, and after it was cleared.
 */
const TOWN_Q = '130922100';

for (const target of storeTargets) {
  describe(`a hold and a purge or disposal under way (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<'clerkQ' | 'adminQ' | 'top', Client>;
    let now = new Date();
    /** A purge has looked at the holds, and is about to be cleared. */
    const beforePurgeCleared = new PausePoint();
    /** A cleared purge is about to have the ledger purge its upload. */
    const beforeLedgerPurge = new PausePoint();
    /** A content's deletion has looked at its holders and holds, and is about to be cleared. */
    const beforeDeletionCleared = new PausePoint();
    /** A cleared deletion is about to remove the bytes. */
    const beforeBytesRemoved = new PausePoint();
    /** A disposal has looked at the holds, and is about to be cleared. */
    const beforeDisposalCleared = new PausePoint();
    /** A cleared disposal is about to reverse the file's uploads. */
    const beforeDisposalReversal = new PausePoint();

    before(async () => {
      server = await TestServer.start(target, {
        clock: () => now,
        wrapStore: (store: ArchiveStore) => {
          const withdrawals: WithdrawalStore = Object.create(store.withdrawals) as WithdrawalStore;
          withdrawals.clearPurge = async (id) => {
            await beforePurgeCleared.pass();
            return store.withdrawals.clearPurge(id);
          };
          const ledger: Ledger = Object.create(store.ledger) as Ledger;
          ledger.purge = async (uploadKey, changeKey) => {
            await beforeLedgerPurge.pass();
            return store.ledger.purge(uploadKey, changeKey);
          };
          ledger.reverse = async (actionKey, changeKey) => {
            if (changeKey.startsWith('disposal:')) await beforeDisposalReversal.pass();
            return store.ledger.reverse(actionKey, changeKey);
          };
          const catalog: Catalog = Object.create(store.catalog) as Catalog;
          catalog.clearDeletion = async (fileId) => {
            await beforeDeletionCleared.pass();
            return store.catalog.clearDeletion(fileId);
          };
          const content: ContentStore = Object.create(store.content) as ContentStore;
          content.remove = async (entry) => {
            await beforeBytesRemoved.pass();
            return store.content.remove(entry);
          };
          const disposals: DisposalStore = Object.create(store.disposals) as DisposalStore;
          disposals.clear = async (id) => {
            await beforeDisposalCleared.pass();
            return store.disposals.clear(id);
          };
          return { ...store, withdrawals, ledger, catalog, content, disposals };
        },
      });
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('clerkQ', 'clerk', TOWN_Q);
      await server.addAccountIn('adminQ', 'admin', '130922');
      await server.addAccountIn('top', 'admin', 'archive');
      as = await server.loginAll(['clerkQ', 'adminQ', 'top']);
    });
    after(() => server.close());
    /** Holds placed by a test, lifted after it whatever happened. */
    const placed: string[] = [];
    afterEach(async () => {
      for (const point of [
        beforePurgeCleared,
        beforeLedgerPurge,
        beforeDeletionCleared,
        beforeBytesRemoved,
        beforeDisposalCleared,
        beforeDisposalReversal,
      ])
        point.disarm();
      for (const id of placed.splice(0)) await lift(id);
    });

    async function place(request: object): Promise<HoldView> {
      const hold = await body<HoldView>(
        await as.adminQ.json('/api/holds', 'POST', { reason: '审计调查', ...request }),
        201,
      );
      placed.push(hold.id);
      return hold;
    }
    const lift = async (id: string) =>
      body<HoldView>(await as.adminQ.fetch(`/api/holds/${id}/lift`, { method: 'POST' }), 200);
    const purge = (id: string) => as.adminQ.json('/api/trash/purge', 'POST', { withdrawals: [id] });
    const dispose = (fileId: string) =>
      as.top.json('/api/disposals', 'POST', {
        reason: '保管期满，经鉴定无保存价值',
        approvalRef: '沧档销〔2026〕7号',
        confirm: '销毁',
        fileIds: [fileId],
      });
    async function uploadOne() {
      const { uploadIds, fileIds } = await uploadFolder(as.clerkQ, [randomContent(3000)], '卷', now);
      return { uploadId: uploadIds[0]!, fileId: fileIds[0]! };
    }
    /** An upload withdrawn: in the trash, its withdrawal's id. */
    async function inTrash() {
      const upload = await uploadOne();
      const answer = await body<WithdrawalAnswer>(
        await as.clerkQ.json('/api/withdrawals', 'POST', { reason: 'wrong_file', uploads: [upload.uploadId] }),
        200,
      );
      return { ...upload, withdrawalId: answer.withdrawn[0]!.id };
    }
    /** Whether the content is live in the catalog, its bytes readable; or deleted. */
    async function contentOf(fileId: string): Promise<'kept' | 'deleted'> {
      const entry = await server.store.catalog.get(fileId);
      if (!entry) return 'deleted';
      for await (const chunk of server.store.content.read(entry)) void chunk;
      return 'kept';
    }
    /** The withdrawal's state, and whether the content is kept. */
    async function state(withdrawalId: string, fileId: string) {
      return {
        withdrawal: (await server.store.withdrawals.get(withdrawalId))?.state,
        content: await contentOf(fileId),
      };
    }
    /** Whether the file's upload counts, and its register entry's state, if it has one. */
    async function disposalState(fileId: string, uploadId: string) {
      const list = await as.adminQ.fetch(`/api/files/${fileId}/uploads`);
      const counts =
        list.status === 200
          ? (await body<FileUploadList>(list, 200)).items.find((u) => u.uploadId === uploadId)?.counts
          : false;
      if (list.status !== 200) await list.arrayBuffer();
      return {
        counts,
        entry: (await server.store.disposals.ofFiles([fileId])).get(fileId)?.state ?? null,
        content: await contentOf(fileId),
      };
    }

    it('a hold placed after a purge looked at the holds stops it: skipped as held, still in the trash, bytes kept', async () => {
      const { fileId, withdrawalId } = await inTrash();
      const paused = beforePurgeCleared.arm();
      const purging = purge(withdrawalId);
      await paused.reached;
      let hold: HoldView;
      try {
        hold = await place({ files: [fileId] });
        assert.deepEqual(
          await state(withdrawalId, fileId),
          { withdrawal: 'withdrawn', content: 'kept' },
          'when the hold answers',
        );
      } finally {
        paused.release();
      }
      const answer = await body<PurgeAnswer>(await purging, 200);
      assert.deepEqual([answer.purged, answer.skipped.map((s) => [s.id, s.reason])], [[], [[withdrawalId, 'held']]]);
      assert.deepEqual(await state(withdrawalId, fileId), { withdrawal: 'withdrawn', content: 'kept' });
      // Lifted, the same purge is made.
      await lift(hold.id);
      assert.deepEqual(
        (await body<PurgeAnswer>(await purge(withdrawalId), 200)).purged.map((w) => w.id),
        [withdrawalId],
      );
      assert.deepEqual(await state(withdrawalId, fileId), { withdrawal: 'purged', content: 'deleted' });
    });

    it('a purge cleared before the hold is finished before the hold answers; its content is kept by the hold', async () => {
      const { fileId, withdrawalId } = await inTrash();
      const paused = beforeLedgerPurge.arm();
      const purging = purge(withdrawalId);
      await paused.reached;
      let hold: HoldView;
      try {
        hold = await place({ unit: TOWN_Q });
        assert.deepEqual(
          await state(withdrawalId, fileId),
          { withdrawal: 'purged', content: 'kept' },
          'when the hold answers',
        );
      } finally {
        paused.release();
      }
      const answer = await body<PurgeAnswer>(await purging, 200);
      assert.deepEqual([answer.purged.map((w) => w.id), answer.contentsDeleted], [[withdrawalId], 0]);
      assert.deepEqual(await state(withdrawalId, fileId), { withdrawal: 'purged', content: 'kept' });
      await lift(hold.id);
    });

    it("a hold placed after a content's deletion looked at the holds cancels it: the bytes stay", async () => {
      const { fileId, withdrawalId } = await inTrash();
      const paused = beforeDeletionCleared.arm();
      const purging = purge(withdrawalId);
      await paused.reached;
      let hold: HoldView;
      try {
        hold = await place({ files: [fileId] });
        assert.deepEqual(
          await state(withdrawalId, fileId),
          { withdrawal: 'purged', content: 'kept' },
          'when the hold answers',
        );
      } finally {
        paused.release();
      }
      const answer = await body<PurgeAnswer>(await purging, 200);
      assert.deepEqual([answer.purged.map((w) => w.id), answer.contentsDeleted], [[withdrawalId], 0]);
      assert.deepEqual(await state(withdrawalId, fileId), { withdrawal: 'purged', content: 'kept' });
      assert.equal((await server.store.catalog.deletions(new Date(now.getTime() + 3_600_000), 10)).length, 0);
      await lift(hold.id);
    });

    it('a deletion cleared before the hold is finished before the hold answers: no bytes of a held file are left going', async () => {
      const { fileId, withdrawalId } = await inTrash();
      const paused = beforeBytesRemoved.arm();
      const purging = purge(withdrawalId);
      await paused.reached;
      let hold: HoldView;
      try {
        hold = await place({ files: [fileId] });
        assert.deepEqual(
          await state(withdrawalId, fileId),
          { withdrawal: 'purged', content: 'deleted' },
          'when the hold answers',
        );
        assert.equal(
          (await server.store.catalog.deletions(new Date(now.getTime() + 3_600_000), 10)).length,
          0,
          'finished',
        );
      } finally {
        paused.release();
      }
      await body<PurgeAnswer>(await purging, 200);
      assert.deepEqual(await state(withdrawalId, fileId), { withdrawal: 'purged', content: 'deleted' });
      await lift(hold.id);
    });

    it('a hold placed after a disposal looked at the holds stops it: refused, its entry gone, nothing changed', async () => {
      const { fileId, uploadId } = await uploadOne();
      const paused = beforeDisposalCleared.arm();
      const disposing = dispose(fileId);
      await paused.reached;
      let hold: HoldView;
      try {
        hold = await place({ files: [fileId] });
        assert.deepEqual(
          await disposalState(fileId, uploadId),
          { counts: true, entry: null, content: 'kept' },
          'when the hold answers',
        );
      } finally {
        paused.release();
      }
      const refused = await body<{ error: string; details: { files: string[] } }>(await disposing, 423);
      assert.deepEqual([refused.error, refused.details.files], ['file_on_hold', [fileId]]);
      assert.deepEqual(await disposalState(fileId, uploadId), { counts: true, entry: null, content: 'kept' });
      // Lifted, the same disposal is made.
      await lift(hold.id);
      assert.deepEqual(
        (await body<DisposalAnswer>(await dispose(fileId), 200)).disposed.map((d) => d.fileId),
        [fileId],
      );
      assert.deepEqual(await disposalState(fileId, uploadId), { counts: false, entry: 'disposed', content: 'deleted' });
    });

    it('a disposal cleared before the hold is finished before the hold answers: the bytes already gone', async () => {
      const { fileId, uploadId } = await uploadOne();
      const paused = beforeDisposalReversal.arm();
      const disposing = dispose(fileId);
      await paused.reached;
      let hold: HoldView;
      try {
        hold = await place({ unit: TOWN_Q });
        assert.deepEqual(
          await disposalState(fileId, uploadId),
          { counts: false, entry: 'disposed', content: 'deleted' },
          'when the hold answers',
        );
      } finally {
        paused.release();
      }
      assert.deepEqual(
        (await body<DisposalAnswer>(await disposing, 200)).disposed.map((d) => d.fileId),
        [fileId],
      );
      await lift(hold.id);
    });

    it('a purge and a disposal a crash left not cleared are stopped by a hold, or asked about holds by the sweep', async () => {
      const top = (await server.store.accounts.findByUsername('top'))!;
      /** A purge recorded (`purging`), then the process died before it looked at the holds. */
      async function crashedPurge(w: { withdrawalId: string }) {
        const by = { id: top.id, username: 'top' };
        assert.ok(await server.store.withdrawals.advance(w.withdrawalId, 'withdrawn', 'purging', now, by));
      }
      /** A disposal's entry recorded, then the process died before it looked at the holds. */
      async function crashedDisposal({ fileId }: { fileId: string }) {
        const entry = (await server.store.catalog.get(fileId))!;
        await server.store.disposals.open({
          id: randomBytes(16).toString('hex'),
          fileId,
          fileName: entry.fileName,
          fileLength: entry.length,
          storedAt: entry.uploadDate,
          units: [],
          uploaders: [],
          firstUploadAt: null,
          lastUploadAt: null,
          countedUploads: 1,
          withdrawnUploads: 0,
          reason: '保管期满',
          approvalRef: '沧档销〔2026〕7号',
          disposedBy: { id: top.id, username: 'top' },
          disposedAt: now,
          state: 'disposing',
          cleared: false,
          changedAt: now,
        });
      }
      const p1 = await inTrash();
      const d1 = await uploadOne();
      await crashedPurge(p1);
      await crashedDisposal(d1);
      const hold = await place({ files: [p1.fileId, d1.fileId] });
      assert.deepEqual(await state(p1.withdrawalId, p1.fileId), { withdrawal: 'withdrawn', content: 'kept' });
      assert.deepEqual(await disposalState(d1.fileId, d1.uploadId), { counts: true, entry: null, content: 'kept' });
      // Held first, then a purge and a disposal recorded and interrupted: the sweep, a minute on, stops them.
      const p2 = await inTrash();
      const d2 = await uploadOne();
      const unitHold = await place({ unit: TOWN_Q });
      await crashedPurge(p2);
      await crashedDisposal(d2);
      const started = now;
      now = new Date(started.getTime() + 2 * 60_000);
      try {
        await server.archive.gc.run();
      } finally {
        now = started;
      }
      assert.deepEqual(await state(p2.withdrawalId, p2.fileId), { withdrawal: 'withdrawn', content: 'kept' });
      assert.deepEqual(await disposalState(d2.fileId, d2.uploadId), { counts: true, entry: null, content: 'kept' });
      await lift(hold.id);
      await lift(unitHold.id);
    });
  });
}
