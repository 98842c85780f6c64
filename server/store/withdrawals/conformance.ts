import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Unit } from '../../../shared/schemas.js';
import {
  commitBytes,
  randomContent,
  testAccount,
  unit,
  uploadAction,
  uploadRecord,
} from '../../../test/support/content.js';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';
import type { WithdrawalRecord } from './port.js';

const newId = () => randomBytes(16).toString('hex');

/** A withdrawal of the upload under `uploadKey`, as the service records one (`withdrawing`). */
function withdrawal(uploadKey: string, overrides: Partial<WithdrawalRecord> & { unit?: Unit } = {}): WithdrawalRecord {
  const { unit: of = unit('unit-a'), ...rest } = overrides;
  return {
    id: newId(),
    uploadKey,
    upload: {
      account: { id: 'acc-1', username: 'li' },
      unit: of,
      fileId: 'f'.repeat(24),
      fileName: '卷/第1页.pdf',
      fileLength: 1234,
      at: new Date('2026-11-01T08:00:00Z'),
    },
    withdrawnBy: { id: 'acc-1', username: 'li' },
    withdrawnAt: new Date('2026-11-20T08:00:00Z'),
    reason: 'wrong_file',
    note: null,
    state: 'withdrawing',
    changedAt: new Date('2026-11-20T08:00:00Z'),
    restoredBy: null,
    restoredAt: null,
    purgedBy: null,
    purgedAt: null,
    ...rest,
  };
}

/** What every store adapter's withdrawals must do (run against each adapter by test/store/). */
export function withdrawalConformance(target: StoreTarget): void {
  conformanceSuite('withdrawals', target, (store) => {
    describe('withdrawals', () => {
      it('keeps a withdrawal as recorded, and at most one open per upload however many race', async () => {
        const first = withdrawal('tus:acc-1:k1', { note: '扫描错了' });
        assert.deepEqual(await store.withdrawals.open(first), { record: first, opened: true });
        assert.deepEqual(await store.withdrawals.get(first.id), first);
        // A second withdrawal of the same upload answers the one open.
        assert.deepEqual(await store.withdrawals.open(withdrawal('tus:acc-1:k1')), { record: first, opened: false });
        const racing = await Promise.all(
          Array.from({ length: 8 }, () => store.withdrawals.open(withdrawal('tus:acc-1:k2'))),
        );
        assert.equal(racing.filter((r) => r.opened).length, 1);
        const winner = racing.find((r) => r.opened)!.record.id;
        assert.ok(racing.every((r) => r.record.id === winner));
        assert.equal(await store.withdrawals.get(newId()), undefined);
      });

      it('opens, moves and reads many at once, each as alone: one open per upload, moved only from the state named', async () => {
        const earlier = withdrawal('batch:acc-1:k:0');
        await store.withdrawals.open(earlier);
        const records = Array.from({ length: 5 }, (_, i) => withdrawal(`batch:acc-1:k:${i}`));
        // The same upload twice in one batch: the first opens it.
        const twice = withdrawal('batch:acc-1:k:4');
        const opened = await store.withdrawals.openMany([...records, twice]);
        assert.deepEqual(
          opened.map((o) => [o.record.id, o.opened]),
          [[earlier.id, false], ...records.slice(1).map((r) => [r.id, true]), [records[4]!.id, false]],
        );
        // Sent again: every one answered as open, none twice.
        assert.ok((await store.withdrawals.openMany(records.slice(1))).every((o) => !o.opened));
        const ids = [earlier.id, ...records.slice(1).map((r) => r.id)];
        const at = new Date('2026-11-21T08:00:00Z');
        assert.equal(await store.withdrawals.advance(ids[1]!, 'withdrawing', 'withdrawn', at), true);
        const moved = await store.withdrawals.advanceMany([...ids, newId()], 'withdrawing', 'withdrawn', at);
        assert.deepEqual([...moved].sort(), ids.filter((id) => id !== ids[1]).sort(), 'not the one moved before');
        assert.equal((await store.withdrawals.advanceMany(ids, 'withdrawing', 'withdrawn', at)).size, 0);
        const by = { id: 'adm-1', username: 'wang' };
        assert.equal((await store.withdrawals.advanceMany(ids, 'withdrawn', 'restoring', at, by)).size, 5);
        assert.equal((await store.withdrawals.advanceMany(ids.slice(0, 2), 'restoring', 'restored', at)).size, 2);
        const read = await store.withdrawals.getMany([...ids, newId()]);
        assert.deepEqual(
          ids.map((id) => [read.get(id)?.state, read.get(id)?.restoredBy]),
          [
            ['restored', by],
            ['restored', by],
            ['restoring', by],
            ['restoring', by],
            ['restoring', by],
          ],
        );
        assert.equal(read.size, 5);
        assert.deepEqual(read.get(ids[4]!), { ...(await store.withdrawals.get(ids[4]!)) });
        // Restored ones free their uploads: a new withdrawal of them opens.
        const anew = await store.withdrawals.openMany([withdrawal('batch:acc-1:k:0'), withdrawal('batch:acc-1:k:2')]);
        assert.deepEqual(
          anew.map((o) => o.opened),
          [true, false],
        );
      });

      it('moves a withdrawal only from the state named, and frees its upload once restored', async () => {
        const w = withdrawal('claim:abc');
        await store.withdrawals.open(w);
        const at = new Date('2026-11-21T08:00:00Z');
        assert.equal(await store.withdrawals.advance(w.id, 'restoring', 'restored', at), false);
        assert.equal(await store.withdrawals.advance(w.id, 'withdrawing', 'withdrawn', at), true);
        assert.equal(await store.withdrawals.advance(w.id, 'withdrawing', 'withdrawn', at), false);
        const by = { id: 'adm-1', username: 'wang' };
        const later = new Date('2026-11-22T08:00:00Z');
        assert.equal(await store.withdrawals.advance(w.id, 'withdrawn', 'restoring', later, by), true);
        assert.deepEqual(
          [...(await store.withdrawals.openOf(['claim:abc', 'claim:none']))].map(([k, r]) => [k, r.state]),
          [['claim:abc', 'restoring']],
        );
        assert.equal(
          await store.withdrawals.advance(w.id, 'restoring', 'restored', new Date('2026-11-22T08:00:01Z')),
          true,
        );
        assert.deepEqual(await store.withdrawals.get(w.id), {
          ...w,
          state: 'restored',
          changedAt: new Date('2026-11-22T08:00:01Z'),
          restoredBy: by,
          restoredAt: later,
        });
        assert.equal((await store.withdrawals.openOf(['claim:abc'])).size, 0);
        // Withdrawn again: a new withdrawal, the restored one kept as it was.
        const again = withdrawal('claim:abc');
        assert.equal((await store.withdrawals.open(again)).opened, true);
        assert.equal((await store.withdrawals.openOf(['claim:abc'])).get('claim:abc')!.id, again.id);
        assert.equal((await store.withdrawals.get(w.id))!.state, 'restored');
      });

      it('closes a withdrawal not restored when its file is disposed of: out of the trash, kept as the record', async () => {
        const [made, done, restoring, restored] = ['k:c1', 'k:c2', 'k:c3', 'k:c4'].map((k) => withdrawal(k));
        for (const w of [made, done, restoring, restored]) await store.withdrawals.open(w!);
        const t = new Date('2026-11-23T08:00:00Z');
        await store.withdrawals.advance(done!.id, 'withdrawing', 'withdrawn', t);
        await store.withdrawals.advance(restoring!.id, 'withdrawing', 'withdrawn', t);
        await store.withdrawals.advance(restoring!.id, 'withdrawn', 'restoring', t, { id: 'a', username: 'a' });
        await store.withdrawals.advance(restored!.id, 'withdrawing', 'restored', t);
        const at = new Date('2026-11-24T08:00:00Z');
        const closed = [];
        for (const w of [made, done, restoring, restored]) closed.push(await store.withdrawals.close(w!.id, at));
        assert.deepEqual(closed, [true, true, true, false]);
        assert.equal(await store.withdrawals.close(done!.id, at), false, 'closed once');
        assert.deepEqual(await store.withdrawals.get(done!.id), { ...done, state: 'disposed', changedAt: at });
        assert.equal((await store.withdrawals.get(restored!.id))!.state, 'restored');
        assert.equal((await store.withdrawals.openOf(['k:c1', 'k:c2', 'k:c3', 'k:c4'])).size, 0);
        assert.equal((await store.withdrawals.trash(undefined, { limit: 10, offset: 0 })).total, 0);
        assert.deepEqual(await store.withdrawals.unfinished(new Date('2027-01-01'), 10), []);
        assert.equal(await store.withdrawals.advance(done!.id, 'withdrawn', 'restoring', at), false);
      });

      it('drops only a withdrawal still being made', async () => {
        const made = withdrawal('file:acc-1:a');
        const done = withdrawal('file:acc-1:b');
        await store.withdrawals.open(made);
        await store.withdrawals.open(done);
        await store.withdrawals.advance(done.id, 'withdrawing', 'withdrawn', new Date());
        await store.withdrawals.drop(made.id);
        await store.withdrawals.drop(done.id);
        assert.equal(await store.withdrawals.get(made.id), undefined);
        assert.equal((await store.withdrawals.get(done.id))!.state, 'withdrawn');
        assert.equal((await store.withdrawals.open(withdrawal('file:acc-1:a'))).opened, true);
      });

      it('lists the trash of a unit, a subtree or everything, the latest first, without the restored', async () => {
        const day = (d: number) => new Date(Date.UTC(2026, 10, d, 8));
        const a1 = withdrawal('k:a1', { unit: unit('unit-a'), withdrawnAt: day(1) });
        const a2 = withdrawal('k:a2', { unit: unit('unit-a'), withdrawnAt: day(3) });
        const b = withdrawal('k:b', { unit: unit('unit-b'), withdrawnAt: day(2) });
        const x = withdrawal('k:x', { unit: unit('unit-x', '献县'), withdrawnAt: day(4) });
        const gone = withdrawal('k:gone', { unit: unit('unit-a'), withdrawnAt: day(5) });
        for (const w of [a1, a2, b, x, gone]) await store.withdrawals.open(w);
        await store.withdrawals.advance(gone.id, 'withdrawing', 'restored', day(6));
        const ids = async (...args: Parameters<typeof store.withdrawals.trash>) => {
          const { items, total } = await store.withdrawals.trash(...args);
          return { ids: items.map((w) => w.id), total };
        };
        const all = { limit: 10, offset: 0 };
        assert.deepEqual(await ids({ unitId: 'unit-a' }, all), { ids: [a2.id, a1.id], total: 2 });
        assert.deepEqual(await ids({ subtree: { city: '沧州市', county: '青县' } }, all), {
          ids: [a2.id, b.id, a1.id],
          total: 3,
        });
        assert.deepEqual(await ids({ subtree: { city: '沧州市', county: '青县', town: 'unit-b镇' } }, all), {
          ids: [b.id],
          total: 1,
        });
        assert.deepEqual(await ids(undefined, all), { ids: [x.id, a2.id, b.id, a1.id], total: 4 });
        assert.deepEqual(await ids(undefined, { limit: 2, offset: 1 }), { ids: [a2.id, b.id], total: 4 });
      });

      it('finds withdrawals and restores left unfinished since before a time, for the sweep', async () => {
        const t = (m: number) => new Date(Date.UTC(2026, 10, 20, 8, m));
        const stuck = withdrawal('k:1', { changedAt: t(0) });
        const fresh = withdrawal('k:2', { changedAt: t(10) });
        const finished = withdrawal('k:3', { changedAt: t(0) });
        const restoring = withdrawal('k:4', { changedAt: t(0) });
        for (const w of [stuck, fresh, finished, restoring]) await store.withdrawals.open(w);
        await store.withdrawals.advance(finished.id, 'withdrawing', 'withdrawn', t(1));
        await store.withdrawals.advance(restoring.id, 'withdrawing', 'withdrawn', t(1));
        await store.withdrawals.advance(restoring.id, 'withdrawn', 'restoring', t(2), { id: 'a', username: 'a' });
        const found = await store.withdrawals.unfinished(t(5), 10);
        assert.deepEqual(
          found.map((w) => [w.id, w.state]),
          [
            [stuck.id, 'withdrawing'],
            [restoring.id, 'restoring'],
          ],
        );
      });
    });

    describe('purging withdrawals', () => {
      it('purges a withdrawn one with who and when: out of the trash for good, its upload never withdrawn again', async () => {
        const w = withdrawal('tus:acc-1:p1', { state: 'withdrawn' });
        await store.withdrawals.open(w);
        const admin = { id: 'adm-1', username: 'zhang' };
        const at = new Date('2026-12-30T00:00:00Z');
        assert.equal(await store.withdrawals.advance(w.id, 'withdrawing', 'purging', at, admin), false);
        assert.equal(await store.withdrawals.advance(w.id, 'withdrawn', 'purging', at, admin), true);
        assert.equal(
          await store.withdrawals.advance(w.id, 'withdrawn', 'restoring', at, admin),
          false,
          'no restore now',
        );
        assert.deepEqual(
          (await store.withdrawals.unfinished(new Date(at.getTime() + 1), 10)).map((r) => r.id),
          [w.id],
        );
        assert.deepEqual(
          (await store.withdrawals.ofFile(w.upload.fileId)).map((r) => r.state),
          ['purging'],
        );
        assert.equal(await store.withdrawals.advance(w.id, 'purging', 'purged', new Date(at.getTime() + 5)), true);
        assert.deepEqual(await store.withdrawals.get(w.id), {
          ...w,
          state: 'purged',
          changedAt: new Date(at.getTime() + 5),
          purgedBy: admin,
          purgedAt: at,
        });
        assert.deepEqual((await store.withdrawals.trash(undefined, { limit: 10, offset: 0 })).total, 0);
        assert.deepEqual(await store.withdrawals.ofFile(w.upload.fileId), []);
        assert.deepEqual(await store.withdrawals.unfinished(new Date(), 10), []);
        const again = await store.withdrawals.open(withdrawal('tus:acc-1:p1'));
        assert.equal(again.opened, false, "the purged withdrawal stays the upload's");
        assert.equal(again.record.state, 'purged');
      });

      it("finds withdrawals past their time in the trash, the oldest first, and a file's in the trash", async () => {
        const day = (d: number) => new Date(Date.UTC(2026, 10, d));
        const file = 'a'.repeat(24);
        const at = (d: number, fileId = file) => ({
          withdrawnAt: day(d),
          upload: { ...withdrawal('x').upload, fileId },
        });
        const old = withdrawal('tus:acc-1:e1', { state: 'withdrawn', ...at(2) });
        const older = withdrawal('tus:acc-1:e2', { state: 'withdrawn', ...at(1, 'b'.repeat(24)) });
        const young = withdrawal('tus:acc-1:e3', { state: 'withdrawn', ...at(20) });
        const making = withdrawal('tus:acc-1:e4', at(1));
        for (const w of [old, older, young, making]) await store.withdrawals.open(w);
        assert.deepEqual(
          (await store.withdrawals.expired(day(10), 10)).map((r) => r.id),
          [older.id, old.id],
        );
        assert.deepEqual(
          (await store.withdrawals.expired(day(10), 1)).map((r) => r.id),
          [older.id],
        );
        assert.deepEqual(
          (await store.withdrawals.ofFile(file)).map((r) => r.id).sort(),
          [old.id, young.id, making.id].sort(),
        );
        await store.withdrawals.advance(young.id, 'withdrawn', 'restoring', day(21), { id: 'acc-1', username: 'li' });
        await store.withdrawals.advance(young.id, 'restoring', 'restored', day(21));
        assert.deepEqual((await store.withdrawals.ofFile(file)).map((r) => r.id).sort(), [old.id, making.id].sort());
      });
    });

    describe("the ledger's record of an upload, as a withdrawal reads it", () => {
      it('tells whose upload a key counted, in which unit, of which file, name, size and time, and that it counts', async () => {
        const { entry } = await commitBytes(store, randomContent(10));
        const clerk = testAccount({ unit: unit('unit-q') });
        const at = new Date('2026-11-02T09:30:00Z');
        await store.ledger.count(
          uploadAction({ ...uploadRecord(clerk, entry.fileId, '卷/a.pdf', at), fileLength: 10 }, 'tus:q1'),
        );
        const found = await store.ledger.recordedUploads(['tus:q1', 'tus:never', 'tus:q1']);
        assert.deepEqual(
          [...found],
          [
            [
              'tus:q1',
              {
                key: 'tus:q1',
                accountId: clerk.id,
                unitId: 'unit-q',
                fileId: entry.fileId,
                fileName: '卷/a.pdf',
                fileLength: 10,
                at,
                counted: true,
              },
            ],
          ],
        );
      });
    });
  });
}
