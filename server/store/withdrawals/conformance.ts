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
    cleared: false,
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
        assert.deepEqual(
          await store.withdrawals.unfinished(['withdrawing', 'restoring', 'purging'], new Date('2027-01-01'), 10),
          [],
        );
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

      it('clears a withdrawal being made of holds, or a hold stops it: never both, and never a cleared one', async () => {
        const [a, b, c, d] = ['k:h1', 'k:h2', 'k:h3', 'k:h4'].map((k) => withdrawal(k)) as [
          WithdrawalRecord,
          WithdrawalRecord,
          WithdrawalRecord,
          WithdrawalRecord,
        ];
        for (const w of [a, b, c, d]) await store.withdrawals.open(w);
        await store.withdrawals.advance(d.id, 'withdrawing', 'withdrawn', new Date('2026-11-21T08:00:00Z'));
        assert.deepEqual(
          [...(await store.withdrawals.clearMany([a.id, d.id, newId()]))],
          [a.id],
          'only one being made',
        );
        assert.deepEqual(await store.withdrawals.get(a.id), { ...a, cleared: true });
        assert.deepEqual([...(await store.withdrawals.clearMany([a.id]))], [a.id], 'cleared before: still cleared');
        assert.deepEqual([...(await store.withdrawals.stopMany([a.id, b.id, d.id]))], [b.id], 'only one not cleared');
        assert.equal(await store.withdrawals.get(b.id), undefined);
        assert.equal((await store.withdrawals.get(a.id))!.state, 'withdrawing');
        assert.equal((await store.withdrawals.get(d.id))!.state, 'withdrawn');
        assert.deepEqual([...(await store.withdrawals.clearMany([b.id]))], [], 'a stopped one is not cleared');
        assert.equal((await store.withdrawals.open(withdrawal('k:h2'))).opened, true, 'its upload is free');
        // A clear and a stop racing: exactly one of them takes it.
        const [cleared, stopped] = await Promise.all([
          store.withdrawals.clearMany([c.id]),
          store.withdrawals.stopMany([c.id]),
        ]);
        assert.equal(cleared.size + stopped.size, 1);
        assert.deepEqual((await store.withdrawals.get(c.id))?.cleared, cleared.size === 1 ? true : undefined);
      });

      it('begins a purge not cleared of holds; clears it, or a hold stops it back to the trash: never both', async () => {
        const at = new Date('2026-11-21T08:00:00Z');
        const sweep = { id: 'system', username: 'system' };
        const [a, b, c] = ['k:p1', 'k:p2', 'k:p3'].map((k) => withdrawal(k, { cleared: true })) as [
          WithdrawalRecord,
          WithdrawalRecord,
          WithdrawalRecord,
        ];
        for (const w of [a, b, c]) {
          await store.withdrawals.open(w);
          await store.withdrawals.advance(w.id, 'withdrawing', 'withdrawn', at);
          await store.withdrawals.advance(w.id, 'withdrawn', 'purging', at, sweep);
        }
        assert.equal((await store.withdrawals.get(a.id))!.cleared, false, 'not cleared on its way into `purging`');
        assert.equal(await store.withdrawals.clearPurge(a.id), true);
        assert.equal(await store.withdrawals.clearPurge(a.id), true, 'cleared before: still cleared');
        assert.equal(await store.withdrawals.stopPurge(a.id, at), false, 'a cleared purge is never stopped');
        assert.deepEqual(
          [(await store.withdrawals.get(a.id))!.state, (await store.withdrawals.get(a.id))!.cleared],
          ['purging', true],
        );
        assert.equal(await store.withdrawals.stopPurge(b.id, new Date('2026-11-22T08:00:00Z')), true);
        assert.equal(await store.withdrawals.stopPurge(b.id, at), false, 'once');
        assert.deepEqual(await store.withdrawals.get(b.id), {
          ...b,
          state: 'withdrawn',
          changedAt: new Date('2026-11-22T08:00:00Z'),
        });
        assert.equal(await store.withdrawals.clearPurge(b.id), false, 'a stopped purge is not cleared');
        assert.equal(await store.withdrawals.clearPurge(newId()), false);
        // Back in the trash, it can be purged again (and is not cleared then either).
        assert.equal(await store.withdrawals.advance(b.id, 'withdrawn', 'purging', at, sweep), true);
        assert.equal((await store.withdrawals.get(b.id))!.cleared, false);
        // A clear and a stop racing: exactly one of them takes it.
        const [cleared, stopped] = await Promise.all([
          store.withdrawals.clearPurge(c.id),
          store.withdrawals.stopPurge(c.id, at),
        ]);
        assert.equal(Number(cleared) + Number(stopped), 1);
        assert.equal((await store.withdrawals.get(c.id))!.state, cleared ? 'purging' : 'withdrawn');
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
        const found = await store.withdrawals.unfinished(['withdrawing', 'restoring'], t(5), 10);
        assert.deepEqual(
          found.map((w) => [w.id, w.state]),
          [
            [stuck.id, 'withdrawing'],
            [restoring.id, 'restoring'],
          ],
        );
      });

      it('finds only the states asked for, in the order of the last change, page after page', async () => {
        const t = (m: number) => new Date(Date.UTC(2026, 10, 20, 8, m));
        // Three withdrawing at the same moment (a receipt's), one later, one restoring, one purging.
        const same = ['k:s1', 'k:s2', 'k:s3'].map((k) => withdrawal(k, { changedAt: t(1) }));
        const later = withdrawal('k:s4', { changedAt: t(2) });
        const restoring = withdrawal('k:s5', { changedAt: t(0) });
        const purging = withdrawal('k:s6', { state: 'withdrawn', changedAt: t(0) });
        for (const w of [...same, later, restoring, purging]) await store.withdrawals.open(w);
        await store.withdrawals.advance(restoring.id, 'withdrawing', 'withdrawn', t(0));
        await store.withdrawals.advance(restoring.id, 'withdrawn', 'restoring', t(0), { id: 'a', username: 'a' });
        await store.withdrawals.advance(purging.id, 'withdrawn', 'purging', t(0), { id: 'a', username: 'a' });
        const withdrawing = [...same.sort((a, b) => (a.id < b.id ? -1 : 1)), later].map((w) => w.id);
        const ids = (records: WithdrawalRecord[]) => records.map((r) => r.id);
        assert.deepEqual(ids(await store.withdrawals.unfinished(['withdrawing'], t(5), 10)), withdrawing);
        assert.deepEqual(ids(await store.withdrawals.unfinished(['purging'], t(5), 10)), [purging.id]);
        assert.deepEqual(ids(await store.withdrawals.unfinished(['restoring'], t(5), 10)), [restoring.id]);
        assert.deepEqual(ids(await store.withdrawals.unfinished([], t(5), 10)), []);
        assert.deepEqual(ids(await store.withdrawals.unfinished(['withdrawing'], t(2), 10)), withdrawing.slice(0, 3));
        // Two at a time, each page after the last of the one before: ties on the time split by id.
        const pages: string[][] = [];
        let last: WithdrawalRecord | undefined;
        for (;;) {
          const page = await store.withdrawals.unfinished(['withdrawing'], t(5), 2, last);
          if (page.length === 0) break;
          pages.push(ids(page));
          last = page.at(-1);
        }
        assert.deepEqual(pages, [withdrawing.slice(0, 2), withdrawing.slice(2, 4)]);
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
          (await store.withdrawals.unfinished(['purging'], new Date(at.getTime() + 1), 10)).map((r) => r.id),
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
        assert.deepEqual(
          await store.withdrawals.unfinished(['withdrawing', 'restoring', 'purging'], new Date(), 10),
          [],
        );
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
