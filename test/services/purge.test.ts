import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { PurgeService, SWEEP, type DeletionStep, type HeldFiles } from '../../server/services/purge.js';
import type { Account } from '../../server/store/accounts/port.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import { withdrawalKeys } from '../../server/store/withdrawals/port.js';
import {
  carryingUpload,
  commitBytes,
  keyOf,
  randomContent,
  readAll,
  testAccount,
  unit,
  uploadAction,
} from '../support/content.js';
import { bytesKept, fileNumber, storeTargets, type OpenedStore } from '../support/stores.js';

const DAY = 86_400_000;

for (const target of storeTargets) {
  describe(`purge and the deletion of contents (${target.name})`, { skip: target.skip }, () => {
    let opened: OpenedStore;
    let store: ArchiveStore;
    const now = new Date('2026-12-01T08:00:00Z');
    const clerk = testAccount({ unit: unit('u-q') });
    const admin: Account = testAccount({ username: 'zhang', role: 'admin', unit: unit('archive') });
    const audited: string[] = [];
    const stepKeys = new Set<string>();

    beforeEach(async () => {
      opened = await target.open();
      store = opened.store;
      audited.length = 0;
      stepKeys.clear();
    });
    afterEach(() => opened.dispose());

    /** The purge service over the store, every administrator reaching everything. */
    const purgeService = (
      options: {
        isHeld?: HeldFiles;
        afterStep?: (step: DeletionStep) => Promise<void> | void;
        clock?: () => Date;
      } = {},
    ) =>
      new PurgeService({
        store,
        directory: { reachSubtree: async () => undefined, unitInReach: async () => ({}) as never },
        // As the audit log does: a step's event once, under its key.
        audit: {
          recordSteps: async (_actor, events) => {
            for (const e of events.filter((e) => !stepKeys.has(e.key))) {
              stepKeys.add(e.key);
              audited.push(e.action);
            }
          },
        },
        settings: { trashDays: 30 },
        clock: () => now,
        ...options,
      });

    /** A content stored with one upload counted, withdrawn as the withdrawal service does: its file, key and withdrawal id. */
    async function withdrawnUpload(data: Buffer = randomContent(2000)) {
      const { entry } = await commitBytes(store, data);
      const action = uploadAction(carryingUpload(clerk, entry.fileId, new Date(now.getTime() - 40 * DAY)));
      await store.ledger.count(action);
      const id = randomBytes(16).toString('hex');
      await store.withdrawals.open({
        id,
        uploadKey: action.key,
        upload: {
          account: clerk,
          unit: clerk.unit,
          fileId: entry.fileId,
          fileName: 'a.pdf',
          fileLength: data.length,
          at: now,
        },
        withdrawnBy: clerk,
        withdrawnAt: new Date(now.getTime() - 31 * DAY),
        reason: 'wrong_file',
        note: null,
        state: 'withdrawing',
        cleared: true,
        changedAt: now,
        restoredBy: null,
        restoredAt: null,
        purgedBy: null,
        purgedAt: null,
      });
      assert.equal(await store.ledger.reverse(action.key, withdrawalKeys(id).reversal), 'reversed');
      await store.withdrawals.advance(id, 'withdrawing', 'withdrawn', now);
      return { entry, key: action.key, id, data };
    }

    for (const step of ['purged', 'marked', 'derived', 'bytes', 'catalog'] as const) {
      it(`a crash after the deletion's step "${step}": never an entry without bytes; an upload stores it anew; the sweep finishes`, async () => {
        const { entry, id, data } = await withdrawnUpload();
        const fileNo = await fileNumber(opened, entry.fileId);
        const crashing = purgeService({
          afterStep: (at) => {
            if (at === step) throw new Error(`killed after ${step}`);
          },
        });
        await assert.rejects(crashing.purge(admin, [id], null), new RegExp(`killed after ${step}`));
        // Whatever was done, the catalog offers no entry whose bytes may be gone.
        assert.equal(await store.catalog.get(entry.fileId), undefined);
        assert.equal(await store.catalog.findByKey(keyOf(data)), undefined);
        const anew = await commitBytes(store, data);
        assert.equal(anew.status, 'stored');
        // The sweep, a minute on, finishes the deletion; the copy stored meanwhile stays whole.
        const finished = await purgeService().finishInterrupted(new Date(now.getTime() + 60_000));
        assert.equal(finished, step === 'catalog' ? 0 : 1);
        assert.deepEqual(await bytesKept(opened, entry.fileId, fileNo), { files: 0, chunks: 0, rows: 0 });
        assert.deepEqual(await store.catalog.deletions(new Date(now.getTime() + 60_000), 10), []);
        assert.deepEqual(await readAll(store.content.read(anew.entry)), data);
        assert.equal((await store.withdrawals.get(id))?.state, 'purged');
      });
    }

    it('a purge a crash cut short once cleared is finished by the next sweep, its content deleted by that sweep too', async () => {
      const { entry, id } = await withdrawnUpload();
      const fileNo = await fileNumber(opened, entry.fileId);
      const crashing = purgeService({
        afterStep: (at) => {
          if (at === 'cleared') throw new Error('killed once cleared');
        },
      });
      await assert.rejects(crashing.purge(admin, [id], null), /killed once cleared/);
      assert.equal((await store.withdrawals.get(id))?.state, 'purging');
      // The garbage collector's sweep, two minutes on, asks for what was left over a minute ago.
      const later = new Date(now.getTime() + 120_000);
      const sweep = purgeService({ clock: () => later });
      assert.equal(await sweep.finishInterrupted(new Date(later.getTime() - 60_000)), 1);
      assert.equal((await store.withdrawals.get(id))?.state, 'purged');
      assert.deepEqual(await bytesKept(opened, entry.fileId, fileNo), { files: 0, chunks: 0, rows: 0 });
      assert.equal(await store.catalog.get(entry.fileId), undefined);
      assert.deepEqual(await store.catalog.deletions(later, 10), []);
    });

    it('an upload counted while the deletion begins is seen after the mark: the deletion is cancelled and the content stays', async () => {
      const { entry, id, data } = await withdrawnUpload();
      let counted = false;
      const purge = purgeService({
        afterStep: async (step) => {
          // Between the mark and the deletion's look at the ledger, another clerk's upload counts.
          if (step === 'marked' && !counted) {
            counted = true;
            await store.ledger.count(uploadAction(carryingUpload(testAccount({ unit: unit('u-d') }), entry.fileId)));
          }
        },
      });
      const answer = await purge.purge(admin, [id], null);
      assert.deepEqual([answer.purged.length, answer.contentsDeleted], [1, 0]);
      assert.deepEqual(await store.catalog.findByKey(keyOf(data)), entry, 'live again, with its identity');
      assert.deepEqual(await readAll(store.content.read(entry)), data);
      assert.deepEqual(await store.catalog.deletions(new Date(now.getTime() + 60_000), 10), []);
    });

    it('skips the withdrawals of a held file, and never deletes its content, until the hold is lifted', async () => {
      const { entry, id, data } = await withdrawnUpload();
      const holds = new Set([entry.fileId]);
      const purge = purgeService({ isHeld: async (ids) => new Set(ids.filter((f) => holds.has(f))) });
      const answer = await purge.purge(admin, [id], null);
      assert.deepEqual(answer, {
        purged: [],
        skipped: [{ id, fileName: 'a.pdf', reason: 'held' }],
        contentsDeleted: 0,
      });
      assert.equal(await purge.purgeExpired(), 0);
      assert.equal((await store.withdrawals.get(id))?.state, 'withdrawn');
      assert.deepEqual(await readAll(store.content.read(entry)), data);
      holds.clear();
      assert.equal(await purge.purgeExpired(), 1, 'its time in the trash is over');
      assert.equal(await store.catalog.get(entry.fileId), undefined);
      assert.deepEqual(audited, ['upload_purged', 'content_deleted']);
    });

    it('purgeContent deletes a content for every holder at once: counted uploads reversed, the trash purged, the bytes gone', async () => {
      const { entry, id } = await withdrawnUpload();
      const other = testAccount({ unit: unit('u-d') });
      await store.ledger.count(uploadAction(carryingUpload(other, entry.fileId)));
      await store.ledger.count(uploadAction(carryingUpload(clerk, entry.fileId)));
      assert.equal(await store.ledger.countingUploads(entry.fileId), 2);
      const fileNo = await fileNumber(opened, entry.fileId);
      const done = await purgeService().purgeContent(entry.fileId, SWEEP, 'disposed (test)');
      assert.deepEqual(done, { reversed: 2, purged: 1, fate: 'deleted' });
      assert.equal(await store.ledger.countingUploads(entry.fileId), 0);
      assert.deepEqual(await store.ledger.entriesForFile(entry.fileId), []);
      assert.equal((await store.withdrawals.get(id))?.state, 'purged');
      assert.deepEqual(await bytesKept(opened, entry.fileId, fileNo), { files: 0, chunks: 0, rows: 0 });
      assert.equal(await store.catalog.get(entry.fileId), undefined);
      // Again (a retry): nothing more to do.
      assert.deepEqual(await purgeService().purgeContent(entry.fileId, SWEEP, 'disposed (test)'), {
        reversed: 0,
        purged: 0,
        fate: 'gone',
      });
    });
  });
}
