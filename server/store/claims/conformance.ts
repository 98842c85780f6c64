import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';

/** What every store adapter's claims must do (run against each adapter by test/store/). */
export function claimConformance(target: StoreTarget): void {
  conformanceSuite('claims', target, (store) => {
    describe('claims', () => {
      it('hands out a claim once, and purges expired ones', async () => {
        const claim = {
          id: 'c'.repeat(32),
          accountId: 'acc',
          fileId: 'f'.repeat(24),
          fileName: 'a.pdf',
          contentType: 'application/pdf',
          ranges: [{ start: 0, end: 10 }],
          expected: ['e'.repeat(32)],
          expiresAt: new Date(Date.now() + 60_000),
        };
        await store.claims.create(claim);
        await store.claims.create({ ...claim, id: 'old'.padEnd(32, '0'), expiresAt: new Date(Date.now() - 1000) });
        const [first, second] = await Promise.all([store.claims.take(claim.id), store.claims.take(claim.id)]);
        assert.deepEqual([first, second].filter(Boolean), [claim], 'exactly one taker gets it');
        await store.claims.purgeExpired(new Date());
        assert.equal(await store.claims.take('old'.padEnd(32, '0')), undefined);
      });

      it('makes and hands out many claims at once, each once', async () => {
        const claims = ['m1', 'm2', 'm3'].map((id) => ({
          id: id.padEnd(32, '0'),
          accountId: 'acc-m',
          fileId: 'f'.repeat(24),
          fileName: `${id}.pdf`,
          contentType: 'application/pdf',
          ranges: [{ start: 0, end: 4 }],
          expected: ['a'.repeat(32)],
          expiresAt: new Date(Date.now() + 60_000),
        }));
        await store.claims.createMany(claims);
        await store.claims.createMany([]);
        assert.equal(await store.claims.countOutstanding('acc-m', new Date()), 3);
        const ids = claims.map((c) => c.id);
        const [first, second] = await Promise.all([
          store.claims.takeMany([ids[0]!, ids[1]!, ids[0]!, 'unknown'.padEnd(32, '0')]),
          store.claims.takeMany([ids[1]!, ids[2]!]),
        ]);
        const handedOut = [...first.values(), ...second.values()].sort((a, b) => a.id.localeCompare(b.id));
        assert.deepEqual(handedOut, claims, 'each claim to exactly one taker, once');
        assert.deepEqual(first.get(ids[0]!), claims[0]);
        assert.equal((await store.claims.takeMany(ids)).size, 0);
        assert.equal((await store.claims.takeMany([])).size, 0);
      });

      it("counts an account's outstanding claims: not answered, not expired", async () => {
        const now = new Date();
        const claim = (id: string, accountId: string, expiresAt: Date) => ({
          id,
          accountId,
          fileId: 'f'.repeat(24),
          fileName: 'x.pdf',
          contentType: 'application/pdf',
          ranges: [{ start: 0, end: 1 }],
          expected: ['0'.repeat(32)],
          expiresAt,
        });
        await store.claims.create(claim('c1', 'acc-q', new Date(now.getTime() + 60_000)));
        await store.claims.create(claim('c2', 'acc-q', new Date(now.getTime() + 60_000)));
        await store.claims.create(claim('c3', 'acc-q', new Date(now.getTime() - 1)));
        await store.claims.create(claim('c4', 'acc-other', new Date(now.getTime() + 60_000)));
        assert.equal(await store.claims.countOutstanding('acc-q', now), 2);
        await store.claims.take('c1');
        assert.equal(await store.claims.countOutstanding('acc-q', now), 1);
      });
    });
  });
}
