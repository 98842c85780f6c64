import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuditEvent, AuditSearch } from './port.js';
import { unit } from '../../../test/support/content.js';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';

/** What every store adapter's audit log must do (run against each adapter by test/store/). */
export function auditConformance(target: StoreTarget): void {
  conformanceSuite('audit log', target, (store) => {
    describe('audit log', () => {
      const event = (minutes: number, overrides: Partial<AuditEvent> = {}): AuditEvent => ({
        at: new Date(Date.UTC(2026, 10, 1, 8, minutes)),
        action: 'download',
        userId: 'u1',
        userName: 'clerk-1',
        unit: unit('unit-a', '青县'),
        address: '10.1.2.3',
        fileId: 'f'.repeat(24),
        fileName: '县志.pdf',
        detail: '100 bytes',
        note: { code: 'download', length: 100 },
        ...overrides,
      });

      it("appends a step's event once, however often it is appended under its key, and the others beside it", async () => {
        const withdrawn = event(5, { action: 'upload_withdrawn', note: null, detail: 'w-1' });
        await store.audit.appendOnce([{ key: 'withdrawn:w-1', event: withdrawn }]);
        // A retry after a crash appends it again, with another one: the first is not doubled.
        await store.audit.appendOnce([
          { key: 'withdrawn:w-1', event: { ...withdrawn, at: event(9).at } },
          { key: 'withdrawn:w-2', event: event(6, { action: 'upload_withdrawn', note: null, detail: 'w-2' }) },
        ]);
        await store.audit.appendOnce([]);
        const { items, total } = await store.audit.search({ action: 'upload_withdrawn', limit: 10, offset: 0 });
        assert.equal(total, 2);
        assert.deepEqual(
          items.map((e) => [e.detail, e.at.toISOString()]),
          [
            ['w-2', event(6).at.toISOString()],
            ['w-1', event(5).at.toISOString()],
          ],
        );
      });

      it('finds events of one millisecond in the order they were made, the last first, however each was appended', async () => {
        const same = (detail: string) => event(7, { detail });
        await store.audit.append(same('first'));
        await store.audit.appendOnce([{ key: 'step:second', event: same('second') }]);
        await store.audit.appendMany([same('third'), same('fourth')]);
        await store.audit.appendOnce([{ key: 'step:fifth', event: same('fifth') }]);
        await store.audit.append(same('sixth'));
        const newest = ['sixth', 'fifth', 'fourth', 'third', 'second', 'first'];
        const page = await store.audit.search({ limit: 10, offset: 0 });
        assert.deepEqual(
          page.items.map((e) => e.detail),
          newest,
        );
        const batches: string[] = [];
        for await (const b of store.audit.searchBatches({ action: 'download' }, 4))
          batches.push(...b.items.map((e) => e.detail));
        assert.deepEqual(batches, newest);
      });

      it('appends events and finds them newest first, with every field back', async () => {
        await store.audit.append(event(1, { action: 'login', fileId: null, fileName: null, detail: '', note: null }));
        await store.audit.append(event(3));
        await store.audit.append(
          event(2, {
            action: 'login_failed',
            userId: null,
            userName: 'who?',
            unit: null,
            address: null,
            fileId: null,
            fileName: null,
            detail: 'wrong username or password',
            note: { code: 'wrong_password' },
          }),
        );
        const { items, total } = await store.audit.search({ limit: 10, offset: 0 });
        assert.equal(total, 3);
        assert.deepEqual(
          items.map((e) => e.at.getUTCMinutes()),
          [3, 2, 1],
        );
        const { id, ...first } = items[0]!;
        assert.equal(typeof id, 'string');
        assert.deepEqual(first, event(3));
        assert.deepEqual(items[1]!.unit, null);
      });

      it('appends many events at once, each found with every field', async () => {
        await store.audit.appendMany([
          event(1),
          event(2, { action: 'upload', detail: 'batch: stored', note: { code: 'upload', via: 'batch', stored: true } }),
          event(3, { action: 'upload_failed', fileId: null }),
        ]);
        await store.audit.appendMany([]);
        const { items, total } = await store.audit.search({ limit: 10, offset: 0 });
        assert.equal(total, 3);
        assert.deepEqual(
          items.map(({ id: _id, ...e }) => e),
          [
            event(3, { action: 'upload_failed', fileId: null }),
            event(2, {
              action: 'upload',
              detail: 'batch: stored',
              note: { code: 'upload', via: 'batch', stored: true },
            }),
            event(1),
          ],
        );
      });

      it('filters by time (from inclusive, to exclusive), action, user, unit subtree and text, and pages', async () => {
        await store.audit.append(event(1, { action: 'upload', fileName: '50%_off.pdf' }));
        await store.audit.append(event(2, { userName: 'clerk-2', unit: unit('unit-b', '献县') }));
        await store.audit.append(event(3, { unit: { id: 'city-office', geoType: 'city', city: '沧州市' } }));
        await store.audit.append(event(4, { detail: 'bytes 0-99 of 1000' }));
        const find = async (query: Omit<AuditSearch, 'limit' | 'offset'>, limit = 10, offset = 0) =>
          (await store.audit.search({ ...query, limit, offset })).items.map((e) => e.at.getUTCMinutes());
        assert.deepEqual(
          await find({ from: new Date(Date.UTC(2026, 10, 1, 8, 2)), to: new Date(Date.UTC(2026, 10, 1, 8, 4)) }),
          [3, 2],
        );
        assert.deepEqual(await find({ action: 'upload' }), [1]);
        assert.deepEqual(await find({ actions: ['upload', 'login'] }), [1], 'a group of actions');
        assert.deepEqual(await find({ actions: ['download', 'upload'] }), [4, 3, 2, 1]);
        assert.deepEqual(await find({ actions: ['download'], action: 'upload' }), [], 'a group and an action: both');
        assert.deepEqual(await find({ actions: [] }), [], 'an empty group: nothing');
        assert.deepEqual(await find({ userName: 'clerk-2' }), [2]);
        assert.deepEqual(await find({ unit: { city: '沧州市' } }), [4, 3, 2, 1]);
        assert.deepEqual(await find({ unit: { city: '沧州市', county: '青县' } }), [4, 1]);
        assert.deepEqual(await find({ unit: { city: '沧州市', county: '献县' } }), [2]);
        assert.deepEqual(await find({ unit: { city: '沧州市', county: '青县', town: 'unit-a镇' } }), [4, 1]);
        assert.deepEqual(await find({ text: '50%' }), [1], 'wildcards are literal');
        assert.deepEqual(await find({ text: '0-99' }), [4], 'the detail is searched too');
        assert.deepEqual(await find({ text: '_' }), [1]);
        assert.deepEqual(await find({}, 2, 1), [3, 2]);
        assert.equal(
          (await store.audit.search({ unit: { city: '沧州市', county: '青县' }, limit: 1, offset: 0 })).total,
          2,
        );
      });

      it('exports every event the search selects, newest first, a batch at a time (same-time events by recording)', async () => {
        // Two events in the same millisecond: the later recorded comes first, in the export as in pages.
        await store.audit.appendMany([event(1), event(2, { userName: 'clerk-2' }), event(2), event(3), event(4)]);
        await store.audit.append(event(5, { action: 'upload' }));
        const exported = async (query: Omit<AuditSearch, 'limit' | 'offset'>, batch: number) => {
          const sizes: number[] = [];
          const totals = new Set<number>();
          const items: Array<AuditEvent & { id: string }> = [];
          for await (const b of store.audit.searchBatches(query, batch)) {
            sizes.push(b.items.length);
            totals.add(b.total);
            items.push(...b.items);
          }
          return { items, sizes, totals: [...totals] };
        };
        const all = await exported({}, 2);
        assert.deepEqual(all.sizes, [2, 2, 2]);
        assert.deepEqual(all.totals, [6]);
        assert.deepEqual(all.items, (await store.audit.search({ limit: 10, offset: 0 })).items);
        assert.deepEqual(
          all.items.map((e) => `${e.at.getUTCMinutes()} ${e.userName}`),
          ['5 clerk-1', '4 clerk-1', '3 clerk-1', '2 clerk-1', '2 clerk-2', '1 clerk-1'],
        );
        const filtered = await exported({ action: 'download', to: new Date(Date.UTC(2026, 10, 1, 8, 4)) }, 3);
        assert.deepEqual(
          filtered.items.map((e) => e.at.getUTCMinutes()),
          [3, 2, 2, 1],
        );
        assert.deepEqual(filtered.sizes, [3, 1]);
        assert.deepEqual(await exported({ userName: 'nobody' }, 2), { items: [], sizes: [0], totals: [0] });
      });
    });
  });
}
