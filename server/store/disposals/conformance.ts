import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  commitBytes,
  randomContent,
  testAccount,
  unit,
  uploadAction,
  uploadRecord,
} from '../../../test/support/content.js';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';
import type { DisposalRecord } from './port.js';

const newId = () => randomBytes(16).toString('hex');
const day = (d: number, h = 8) => new Date(Date.UTC(2026, 10, d, h));

/** A register entry of the file, as the service records one (`disposing`). */
function disposal(fileId: string, overrides: Partial<DisposalRecord> = {}): DisposalRecord {
  return {
    id: newId(),
    fileId,
    fileName: '卷/第1页.pdf',
    fileLength: 1234,
    storedAt: day(1),
    units: [unit('unit-a'), unit('unit-x', '献县')],
    uploaders: [
      { id: 'acc-1', username: 'li', unitId: 'unit-a' },
      { id: 'acc-2', username: 'zhao', unitId: 'unit-x' },
    ],
    firstUploadAt: day(1),
    lastUploadAt: day(3),
    countedUploads: 3,
    withdrawnUploads: 1,
    reason: '保管期满',
    approvalRef: '沧档销〔2026〕7号',
    disposedBy: { id: 'adm-1', username: 'wang' },
    disposedAt: day(20),
    state: 'disposing',
    cleared: true,
    changedAt: day(20),
    ...overrides,
  };
}

/** What every store adapter's disposal register must do (run against each adapter by test/store/). */
export function disposalConformance(target: StoreTarget): void {
  conformanceSuite('disposals', target, (store) => {
    describe('the disposal register', () => {
      it('keeps an entry as recorded, and one per file however many race', async () => {
        const first = disposal('a'.repeat(24), { firstUploadAt: null, lastUploadAt: null });
        assert.deepEqual(await store.disposals.open(first), { record: first, opened: true });
        assert.deepEqual(await store.disposals.get(first.id), first);
        assert.deepEqual(await store.disposals.open(disposal('a'.repeat(24))), { record: first, opened: false });
        const racing = await Promise.all(
          Array.from({ length: 8 }, () => store.disposals.open(disposal('b'.repeat(24)))),
        );
        assert.equal(racing.filter((r) => r.opened).length, 1);
        const winner = racing.find((r) => r.opened)!.record.id;
        assert.ok(racing.every((r) => r.record.id === winner));
        assert.equal(await store.disposals.get(newId()), undefined);
        assert.deepEqual(
          [...(await store.disposals.ofFiles(['a'.repeat(24), 'c'.repeat(24), 'a'.repeat(24)]))].map(([f, r]) => [
            f,
            r.id,
          ]),
          [['a'.repeat(24), first.id]],
        );
      });

      it('moves an entry only from the state named', async () => {
        const d = disposal('d'.repeat(24));
        await store.disposals.open(d);
        assert.equal(await store.disposals.advance(d.id, 'deleting', 'disposed', day(21)), false);
        assert.equal(await store.disposals.advance(d.id, 'disposing', 'deleting', day(21)), true);
        assert.equal(await store.disposals.advance(d.id, 'disposing', 'deleting', day(21)), false);
        assert.equal(await store.disposals.advance(d.id, 'deleting', 'disposed', day(22)), true);
        assert.deepEqual(await store.disposals.get(d.id), { ...d, state: 'disposed', changedAt: day(22) });
      });

      it('clears an entry being made of holds, or a hold stops it (removed, the file free): never both', async () => {
        const [a, b, c] = ['e', 'f', '0'].map((n) => disposal(n.repeat(24), { cleared: false })) as [
          DisposalRecord,
          DisposalRecord,
          DisposalRecord,
        ];
        for (const d of [a, b, c]) await store.disposals.open(d);
        assert.deepEqual(await store.disposals.get(a.id), a, 'kept not cleared');
        assert.equal(await store.disposals.clear(a.id), true);
        assert.equal(await store.disposals.clear(a.id), true, 'cleared before: still cleared');
        assert.equal(await store.disposals.stop(a.id), false, 'a cleared entry is never removed');
        assert.deepEqual(await store.disposals.get(a.id), { ...a, cleared: true });
        assert.equal(await store.disposals.stop(b.id), true);
        assert.equal(await store.disposals.stop(b.id), false, 'once');
        assert.equal(await store.disposals.get(b.id), undefined);
        assert.equal(await store.disposals.clear(b.id), false, 'a stopped entry is not cleared');
        const { items } = await store.disposals.list({}, { limit: 50, offset: 0 });
        assert.equal(
          items.some((d) => d.id === b.id),
          false,
          'not in the register',
        );
        const again = disposal('f'.repeat(24));
        assert.equal((await store.disposals.open(again)).opened, true, 'its file is free');
        await store.disposals.advance(again.id, 'disposing', 'deleting', day(21));
        assert.equal(await store.disposals.clear(again.id), false, 'only `disposing` is cleared');
        // A clear and a stop racing: exactly one of them takes it.
        const [cleared, stopped] = await Promise.all([store.disposals.clear(c.id), store.disposals.stop(c.id)]);
        assert.equal(Number(cleared) + Number(stopped), 1);
        assert.equal((await store.disposals.get(c.id))?.cleared, cleared ? true : undefined);
      });

      it('lists the register of a unit, a subtree, a time or all of it, the latest first', async () => {
        const a = disposal('1'.repeat(24), { units: [unit('unit-a')], disposedAt: day(1) });
        const ab = disposal('2'.repeat(24), { units: [unit('unit-a'), unit('unit-b')], disposedAt: day(3) });
        const x = disposal('3'.repeat(24), { units: [unit('unit-x', '献县')], disposedAt: day(2) });
        // Its units are in 青县 and in unit-y镇 elsewhere: no one unit is in 青县's unit-y镇.
        const mixed = disposal('4'.repeat(24), {
          units: [unit('unit-c'), { ...unit('unit-z', '献县'), town: 'unit-y镇' }],
          disposedAt: day(4),
        });
        for (const d of [a, ab, x, mixed]) await store.disposals.open(d);
        const ids = async (...args: Parameters<typeof store.disposals.list>) => {
          const { items, total } = await store.disposals.list(...args);
          return { ids: items.map((d) => d.id), total };
        };
        const all = { limit: 10, offset: 0 };
        assert.deepEqual(await ids({}, all), { ids: [mixed.id, ab.id, x.id, a.id], total: 4 });
        assert.deepEqual(await ids({}, { limit: 2, offset: 1 }), { ids: [ab.id, x.id], total: 4 });
        assert.deepEqual(await ids({ scope: { unitId: 'unit-a' } }, all), { ids: [ab.id, a.id], total: 2 });
        assert.deepEqual(await ids({ scope: { subtree: { city: '沧州市', county: '青县' } } }, all), {
          ids: [mixed.id, ab.id, a.id],
          total: 3,
        });
        assert.deepEqual(await ids({ scope: { subtree: { city: '沧州市', county: '青县', town: 'unit-y镇' } } }, all), {
          ids: [],
          total: 0,
        });
        assert.deepEqual(await ids({ from: day(2), to: day(4) }, all), { ids: [ab.id, x.id], total: 2 });
        assert.deepEqual(await ids({ scope: { unitId: 'unit-a' }, from: day(2) }, all), { ids: [ab.id], total: 1 });
      });

      it('finds entries left unfinished since before a time, for the sweep', async () => {
        const t = (m: number) => new Date(Date.UTC(2026, 10, 20, 8, m));
        const stuck = disposal('5'.repeat(24), { changedAt: t(0) });
        const deleting = disposal('6'.repeat(24), { changedAt: t(0) });
        const fresh = disposal('7'.repeat(24), { changedAt: t(10) });
        const done = disposal('8'.repeat(24), { changedAt: t(0) });
        for (const d of [stuck, deleting, fresh, done]) await store.disposals.open(d);
        await store.disposals.advance(deleting.id, 'disposing', 'deleting', t(1));
        await store.disposals.advance(done.id, 'disposing', 'deleting', t(1));
        await store.disposals.advance(done.id, 'deleting', 'disposed', t(2));
        assert.deepEqual(
          (await store.disposals.unfinished(t(5), 10)).map((d) => [d.id, d.state]),
          [
            [stuck.id, 'disposing'],
            [deleting.id, 'deleting'],
          ],
        );
      });

      it('reads the entries under way page after page, in the order of the last change, ties by id', async () => {
        const t = (m: number) => new Date(Date.UTC(2026, 10, 20, 8, m));
        // Three recorded at the same moment (a receipt's), one later, one finished.
        const same = ['a', 'b', 'c'].map((c) => disposal(c.repeat(24), { changedAt: t(1) }));
        const later = disposal('d'.repeat(24), { changedAt: t(2) });
        const done = disposal('e'.repeat(24), { changedAt: t(0) });
        for (const d of [later, ...same, done]) await store.disposals.open(d);
        await store.disposals.advance(done.id, 'disposing', 'deleting', t(0));
        await store.disposals.advance(done.id, 'deleting', 'disposed', t(0));
        const underWay = [...same.sort((a, b) => (a.id < b.id ? -1 : 1)), later].map((d) => d.id);
        const pages: string[][] = [];
        let last: DisposalRecord | undefined;
        for (;;) {
          const page = await store.disposals.unfinished(t(5), 2, last);
          if (page.length === 0) break;
          pages.push(page.map((d) => d.id));
          last = page.at(-1);
        }
        assert.deepEqual(pages, [underWay.slice(0, 2), underWay.slice(2, 4)]);
      });
    });

    describe("the ledger's record of a file's uploads, as a disposal reads it", () => {
      it('lists every upload of the file, counted or reversed, in time order', async () => {
        const { entry } = await commitBytes(store, randomContent(12));
        const { entry: other } = await commitBytes(store, randomContent(13));
        const li = testAccount({ unit: unit('unit-q') });
        const zhao = testAccount({ unit: unit('unit-r', '献县') });
        const record = (who: typeof li, name: string, at: Date) => ({
          ...uploadRecord(who, entry.fileId, name, at),
          fileLength: 12,
        });
        await store.ledger.count(uploadAction(record(zhao, 'b.pdf', day(2)), 'tus:z1'));
        await store.ledger.count(uploadAction(record(li, 'a.pdf', day(1)), 'tus:l1'));
        await store.ledger.count(uploadAction(record(li, 'a2.pdf', day(3)), 'claim:l2'));
        await store.ledger.count(uploadAction(uploadRecord(li, other.fileId, 'x.pdf', day(1)), 'tus:other'));
        assert.equal(await store.ledger.reverse('tus:z1', 'withdrawal:w1'), 'reversed');
        assert.deepEqual(await store.ledger.uploadsOfFile(entry.fileId), [
          {
            key: 'tus:l1',
            accountId: li.id,
            unitId: 'unit-q',
            fileId: entry.fileId,
            fileName: 'a.pdf',
            fileLength: 12,
            at: day(1),
            counted: true,
          },
          {
            key: 'tus:z1',
            accountId: zhao.id,
            unitId: 'unit-r',
            fileId: entry.fileId,
            fileName: 'b.pdf',
            fileLength: 12,
            at: day(2),
            counted: false,
          },
          {
            key: 'claim:l2',
            accountId: li.id,
            unitId: 'unit-q',
            fileId: entry.fileId,
            fileName: 'a2.pdf',
            fileLength: 12,
            at: day(3),
            counted: true,
          },
        ]);
        assert.deepEqual(await store.ledger.uploadsOfFile('f'.repeat(24)), []);
      });
    });
  });
}
