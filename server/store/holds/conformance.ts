import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';
import type { HoldRecord } from './port.js';

const newId = () => randomBytes(16).toString('hex');
const fileId = () => randomBytes(12).toString('hex');
const admin = { id: 'adm-q', username: 'wang' };

/** A hold as the service places one: on files by default, or on a unit. */
function hold(overrides: Partial<HoldRecord> = {}): HoldRecord {
  return {
    id: newId(),
    files: [{ id: fileId(), name: '卷/第1页.pdf' }],
    unit: null,
    area: '130000/130900/130922/',
    reason: '纪检调查，暂停处理',
    placedBy: admin,
    placedAt: new Date('2026-11-20T08:00:00Z'),
    liftedBy: null,
    liftedAt: null,
    ...overrides,
  };
}

const unitHold = (unitId: string, overrides: Partial<HoldRecord> = {}) =>
  hold({ files: null, unit: { id: unitId, name: '金牛镇', path: '河北省 / 沧州市 / 青县 / 金牛镇' }, ...overrides });

/** What every store adapter's holds must do (run against each adapter by test/store/). */
export function holdConformance(target: StoreTarget): void {
  conformanceSuite('holds', target, (store) => {
    describe('holds', () => {
      it('keeps a hold as placed, and lifts it once, keeping who lifted it and when', async () => {
        const h = hold({
          files: [
            { id: fileId(), name: 'a.pdf' },
            { id: fileId(), name: '卷/b.pdf' },
          ],
        });
        assert.equal(await store.holds.place(h), true);
        assert.deepEqual(await store.holds.get(h.id), h);
        const u = unitHold('130922100');
        assert.equal(await store.holds.place(u), true);
        assert.deepEqual(await store.holds.get(u.id), u);
        assert.equal(await store.holds.get(newId()), undefined);
        const by = { id: 'adm-top', username: 'top' };
        const at = new Date('2026-11-21T09:00:00Z');
        assert.equal(await store.holds.lift(h.id, by, at), true);
        assert.equal(await store.holds.lift(h.id, admin, new Date()), false);
        assert.equal(await store.holds.lift(newId(), admin, new Date()), false);
        assert.deepEqual(await store.holds.get(h.id), { ...h, liftedBy: by, liftedAt: at });
      });

      it('records a hold of an id recorded already once: the first as placed, the second changing nothing', async () => {
        const first = hold();
        const again = hold({ id: first.id, reason: '另一个原因', files: [{ id: fileId(), name: 'c.pdf' }] });
        assert.equal(await store.holds.place(first), true);
        assert.equal(await store.holds.place(again), false);
        assert.deepEqual(await store.holds.get(first.id), first);
        assert.deepEqual(
          (await store.holds.covering([first.files![0]!.id, again.files![0]!.id], [])).map((h) => h.id),
          [first.id],
        );
      });

      it('finds the active holds naming any of some files or covering any of some units', async () => {
        const [f1, f2, f3, f4] = [fileId(), fileId(), fileId(), fileId()];
        const onFiles = hold({
          files: [
            { id: f1, name: '1.pdf' },
            { id: f2, name: '2.pdf' },
          ],
        });
        const alsoF2 = hold({ files: [{ id: f2, name: '2.pdf' }] });
        const lifted = hold({ files: [{ id: f3, name: '3.pdf' }] });
        const onUnit = unitHold('unit-held');
        const unitLifted = unitHold('unit-was-held');
        for (const h of [onFiles, alsoF2, lifted, onUnit, unitLifted]) await store.holds.place(h);
        await store.holds.lift(lifted.id, admin, new Date());
        await store.holds.lift(unitLifted.id, admin, new Date());
        const ids = async (files: string[], units: string[]) =>
          (await store.holds.covering(files, units)).map((h) => h.id).sort();
        assert.deepEqual(await ids([f1], []), [onFiles.id]);
        assert.deepEqual(await ids([f2, f2], []), [onFiles.id, alsoF2.id].sort());
        assert.deepEqual(await ids([f3, f4], ['unit-was-held', 'unit-other']), []);
        assert.deepEqual(await ids([f4], ['unit-held']), [onUnit.id]);
        assert.deepEqual(await ids([f1, f2], ['unit-held']), [onFiles.id, alsoF2.id, onUnit.id].sort());
        assert.deepEqual(await ids([], []), []);
        assert.ok((await store.holds.heldUnits()).includes('unit-held'));
        assert.ok(!(await store.holds.heldUnits()).includes('unit-was-held'));
        // Many files at once (a purge's), past any batch of the adapter.
        const many = Array.from({ length: 1200 }, fileId);
        assert.deepEqual(await ids([...many, f1], []), [onFiles.id]);
      });

      it('lists the holds of an area and below, active, lifted or all, the latest placed first', async () => {
        const day = (d: number) => new Date(Date.UTC(2026, 10, d, 8));
        const county = hold({ area: '130000/130900/130922/', placedAt: day(1) });
        const town = unitHold('130922100', { area: '130000/130900/130922/130922100/', placedAt: day(3) });
        const other = hold({ area: '130000/130900/130923/', placedAt: day(2) });
        const archive = hold({ area: '', placedAt: day(4) });
        for (const h of [county, town, other, archive]) await store.holds.place(h);
        await store.holds.lift(county.id, admin, day(5));
        const ids = async (...args: Parameters<typeof store.holds.list>) => {
          const { items, total } = await store.holds.list(...args);
          return { ids: items.map((h) => h.id), total };
        };
        const all = { limit: 10, offset: 0 };
        assert.deepEqual(await ids('130000/130900/130922/', 'all', all), { ids: [town.id, county.id], total: 2 });
        assert.deepEqual(await ids('130000/130900/130922/', 'active', all), { ids: [town.id], total: 1 });
        assert.deepEqual(await ids('130000/130900/130922/', 'lifted', all), { ids: [county.id], total: 1 });
        assert.deepEqual(await ids('130000/130900/', 'all', { limit: 2, offset: 1 }), {
          ids: [other.id, county.id],
          total: 3,
        });
        const everything = await ids(undefined, 'all', { limit: 500, offset: 0 });
        for (const h of [archive, town, other, county]) assert.ok(everything.ids.includes(h.id));
        assert.ok(everything.ids.indexOf(archive.id) < everything.ids.indexOf(town.id));
      });
    });
  });
}
