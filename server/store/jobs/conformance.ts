import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';

/** What every store adapter's jobs must do (run against each adapter by test/store/). */
export function jobConformance(target: StoreTarget): void {
  conformanceSuite('jobs', target, (store) => {
    describe('job leases', () => {
      it('lets one holder at a time run a job, keeps its state, and hands an expired lease over', async () => {
        const t0 = new Date('2026-05-01T00:00:00Z');
        const at = (ms: number) => new Date(t0.getTime() + ms);
        assert.equal(await store.jobs.get('fixity'), undefined);
        assert.equal(await store.jobs.acquire('fixity', 'a', t0, 60_000), true);
        assert.equal(await store.jobs.acquire('fixity', 'b', at(1_000), 60_000), false, 'held by a');
        assert.equal(await store.jobs.renew('fixity', 'a', at(30_000), 60_000, { files: 3 }), true);
        assert.equal(
          await store.jobs.acquire('fixity', 'b', at(70_000), 60_000),
          false,
          'the renewal extended the lease',
        );
        assert.equal(
          await store.jobs.renew('fixity', 'b', at(70_000), 60_000, { files: 99 }),
          false,
          'b does not hold it',
        );
        const held = await store.jobs.get('fixity');
        assert.deepEqual(
          { ...held, leaseUntil: held?.leaseUntil?.getTime() },
          { name: 'fixity', holder: 'a', leaseUntil: at(90_000).getTime(), state: { files: 3 } },
        );
        // a stalls past its lease: b takes over, and a can no longer save or release.
        assert.equal(await store.jobs.acquire('fixity', 'b', at(91_000), 60_000), true);
        assert.equal(await store.jobs.renew('fixity', 'a', at(92_000), 60_000, { files: 4 }), false);
        await store.jobs.release('fixity', 'a', { files: 4 });
        assert.equal((await store.jobs.get('fixity'))?.holder, 'b');
        await store.jobs.release('fixity', 'b', { done: true });
        assert.deepEqual(await store.jobs.get('fixity'), {
          name: 'fixity',
          holder: null,
          leaseUntil: null,
          state: { done: true },
        });
        assert.equal(await store.jobs.acquire('fixity', 'c', at(93_000), 60_000), true, 'free again after a release');
        assert.equal(await store.jobs.acquire('other', 'c', at(93_000), 60_000), true, 'jobs are independent');
      });
    });
  });
}
