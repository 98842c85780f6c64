import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomContent, readAll } from '../../../test/support/content.js';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';

/** What every store adapter's resumable uploads must do (run against each adapter by test/store/). */
export function uploadConformance(target: StoreTarget): void {
  conformanceSuite('resumable uploads', target, (store) => {
    describe('resumable uploads', () => {
      const minute = 60_000;
      const newUpload = async (id: string, at = new Date()) => {
        const stagingId = await store.content.stage(at);
        const upload = {
          id,
          ownerId: 'acc-1',
          stagingId,
          length: 5000,
          metadata: { filename: '档案.pdf', note: null },
          createdAt: at,
          activeAt: at,
          expiresAt: new Date(at.getTime() + 60 * minute),
        };
        await store.uploads.create(upload);
        return upload;
      };
      const lock = (holder: string, until = new Date(Date.now() + minute)) => ({ holder, host: 'h', pid: 1, until });

      it("keeps an upload's state: owner, staging area, length, metadata, offset 0, times, no lock, no outcome", async () => {
        const u = await newUpload('a'.repeat(32));
        assert.deepEqual(await store.uploads.get(u.id), {
          ...u,
          offset: 0,
          lock: null,
          completing: null,
          outcome: null,
        });
        assert.equal(await store.uploads.get('b'.repeat(32)), undefined);
      });

      it('gives the write lock to one of two requests; the other learns who holds it', async () => {
        const u = await newUpload('c'.repeat(32));
        const now = new Date();
        const [first, second] = await Promise.all([
          store.uploads.acquire(u.id, lock('x/1'), now),
          store.uploads.acquire(u.id, lock('y/1'), now),
        ]);
        const statuses = [first.status, second.status].sort();
        assert.deepEqual(statuses, ['acquired', 'busy']);
        const busy = [first, second].find((a) => a.status === 'busy')!;
        const acquired = [first, second].find((a) => a.status === 'acquired')!;
        assert.ok(busy.status === 'busy' && acquired.status === 'acquired');
        assert.equal(busy.lock.holder, acquired.upload.lock!.holder);
        assert.deepEqual((await store.uploads.acquire('d'.repeat(32), lock('z/1'), now)).status, 'missing');
      });

      it('frees a lock that is released, whose lease ran out, or whose holder is named as gone', async () => {
        const u = await newUpload('e'.repeat(32));
        const now = new Date();
        assert.equal((await store.uploads.acquire(u.id, lock('x/1'), now)).status, 'acquired');
        assert.equal((await store.uploads.acquire(u.id, lock('y/1'), now)).status, 'busy');
        assert.equal((await store.uploads.acquire(u.id, lock('y/1'), now, 'someone-else/9')).status, 'busy');
        assert.equal(
          (await store.uploads.acquire(u.id, lock('y/1'), now, 'x/1')).status,
          'acquired',
          'a gone holder is replaced',
        );
        await store.uploads.release(u.id, 'x/1'); // not the holder any more: no effect
        assert.equal((await store.uploads.acquire(u.id, lock('z/1'), now)).status, 'busy');
        await store.uploads.release(u.id, 'y/1');
        assert.equal(
          (await store.uploads.acquire(u.id, lock('z/1', new Date(now.getTime() + 1000)), now)).status,
          'acquired',
        );
        assert.equal(
          (await store.uploads.acquire(u.id, lock('w/1'), new Date(now.getTime() + 2000))).status,
          'acquired',
          'the lease ran out',
        );
      });

      it('records progress, renewals and the outcome only for the lock holder', async () => {
        const u = await newUpload('f'.repeat(32));
        const now = new Date();
        await store.uploads.acquire(u.id, lock('x/1'), now);
        const later = new Date(now.getTime() + minute);
        const progress = {
          offset: 4096,
          activeAt: later,
          expiresAt: new Date(later.getTime() + 60 * minute),
          lockUntil: new Date(later.getTime() + minute),
        };
        assert.equal(await store.uploads.advance(u.id, 'y/1', progress), false);
        assert.equal((await store.uploads.get(u.id))!.offset, 0);
        assert.equal(await store.uploads.advance(u.id, 'x/1', progress), true);
        await store.uploads.renew(u.id, 'x/1', new Date(later.getTime() + 5 * minute));
        await store.uploads.renew(u.id, 'y/1', new Date(0));
        const advanced = (await store.uploads.get(u.id))!;
        assert.deepEqual([advanced.offset, advanced.activeAt, advanced.expiresAt], [4096, later, progress.expiresAt]);
        assert.deepEqual(advanced.lock!.until, new Date(later.getTime() + 5 * minute));
        const key = { md5: 'a'.repeat(32), sha256: 'b'.repeat(64), length: 5000 };
        assert.equal(await store.uploads.markCompleting(u.id, 'y/1', key), false);
        assert.equal(await store.uploads.markCompleting(u.id, 'x/1', key), true);
        assert.deepEqual((await store.uploads.get(u.id))!.completing, key);
        const outcome = { status: 'stored' as const, fileId: '0'.repeat(24), uploadCount: 1 };
        assert.equal(await store.uploads.finish(u.id, 'y/1', outcome), false);
        assert.equal(await store.uploads.finish(u.id, 'x/1', outcome), true);
        const finished = (await store.uploads.get(u.id))!;
        assert.deepEqual(
          [finished.outcome, finished.offset],
          [outcome, 5000],
          'the outcome and the full offset together',
        );
        await store.uploads.delete(u.id);
        assert.equal(await store.uploads.get(u.id), undefined);
      });

      it('rewinds an upload to bytes kept, forgetting a completion under way, only for the lock holder and never a finished upload', async () => {
        const u = await newUpload('9'.repeat(32));
        const now = new Date();
        await store.uploads.acquire(u.id, lock('x/1'), now);
        const progress = {
          offset: 4096,
          activeAt: now,
          expiresAt: u.expiresAt,
          lockUntil: new Date(now.getTime() + minute),
        };
        await store.uploads.advance(u.id, 'x/1', progress);
        const key = { md5: 'a'.repeat(32), sha256: 'b'.repeat(64), length: 5000 };
        await store.uploads.markCompleting(u.id, 'x/1', key);
        assert.equal(await store.uploads.rewind(u.id, 'y/1', 1000), false);
        assert.deepEqual(
          [(await store.uploads.get(u.id))!.offset, (await store.uploads.get(u.id))!.completing],
          [4096, key],
        );
        assert.equal(await store.uploads.rewind(u.id, 'x/1', 1000), true);
        assert.deepEqual(
          [(await store.uploads.get(u.id))!.offset, (await store.uploads.get(u.id))!.completing],
          [1000, null],
        );
        assert.equal(await store.uploads.rewind(u.id, 'x/1', 3000), true);
        assert.equal((await store.uploads.get(u.id))!.offset, 1000, 'never forward');
        const outcome = { status: 'stored' as const, fileId: '0'.repeat(24), uploadCount: 1 };
        await store.uploads.finish(u.id, 'x/1', outcome);
        assert.equal(await store.uploads.rewind(u.id, 'x/1', 0), false);
        assert.deepEqual(
          [(await store.uploads.get(u.id))!.offset, (await store.uploads.get(u.id))!.outcome],
          [5000, outcome],
        );
      });

      it('lists uploads past their expiry, oldest first, up to a limit', async () => {
        const long = Date.now() - 3 * 3600_000;
        await newUpload('1'.repeat(32), new Date(long));
        await newUpload('2'.repeat(32), new Date(long - minute));
        await newUpload('3'.repeat(32), new Date(long + minute));
        await newUpload('4'.repeat(32));
        assert.deepEqual(
          (await store.uploads.listExpired(new Date(), 10)).map((u) => u.id[0]),
          ['2', '1', '3'],
        );
        assert.deepEqual(
          (await store.uploads.listExpired(new Date(), 2)).map((u) => u.id[0]),
          ['2', '1'],
        );
      });

      it("spares a live upload's staging area from garbage collection, however old", async () => {
        const long = new Date(Date.now() - 7 * 24 * 3600_000);
        const u = await newUpload('5'.repeat(32), long);
        await store.content.write(u.stagingId, 0, [randomContent(100)]);
        const abandoned = await store.content.stage(long);
        await store.content.write(abandoned, 0, [randomContent(100)]);
        assert.deepEqual(await store.content.collectGarbage(new Date()), { stagingAreas: 1, orphans: 0 });
        assert.deepEqual(await readAll(store.content.readStaged(u.stagingId, 100)).then((b) => b.length), 100);
      });
    });
  });
}
