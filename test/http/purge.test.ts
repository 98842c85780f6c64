import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { AuditList } from '../../shared/schemas.js';
import { purgeKeyOf } from '../../server/services/purge.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { Ledger } from '../../server/store/ledger/port.js';
import type { PurgeAnswer, TrashList, WithdrawalAnswer } from '../../shared/withdrawals.js';
import { checkBody, digestsFor, md5, randomContent, sha256 } from '../support/content.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * 彻底删除, 清空回收站 and the trash's expiry over HTTP, for every kind of caller: the people of
 * test/http/withdrawals.test.ts (青县 with two clerks and its administrator, 东光县 with a clerk and
 * its administrator, the top-level administrator). The archive's clock is the test's.
 */
type Who = 'anonymous' | 'clerkQ' | 'clerkQ2' | 'clerkD' | 'adminQ' | 'adminD' | 'top';
const DAY = 86_400_000;
const TOWN_Q = '130922100';
const TOWN_D = '130923100';

for (const target of storeTargets) {
  describe(`purging the trash (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    let now = new Date('2026-11-02T08:00:00Z');
    /** Set: the next count is followed at once by a deletion's mark of its file (a purge racing it). */
    let markAfterNextCount = false;

    before(async () => {
      server = await TestServer.start(target, {
        clock: () => now,
        sessionTtlMs: 400 * DAY,
        wrapStore: (store: ArchiveStore) => {
          const ledger: Ledger = Object.create(store.ledger) as Ledger;
          ledger.count = async (action) => {
            const counted = await store.ledger.count(action);
            if (markAfterNextCount) {
              markAfterNextCount = false;
              await store.catalog.beginDeletion(action.record.fileId, now);
            }
            return counted;
          };
          return { ...store, ledger };
        },
      });
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('clerkQ', 'clerk', TOWN_Q);
      await server.addAccountIn('clerkQ2', 'clerk', TOWN_Q);
      await server.addAccountIn('clerkD', 'clerk', TOWN_D);
      await server.addAccountIn('adminQ', 'admin', '130922');
      await server.addAccountIn('adminD', 'admin', '130923');
      await server.addAccountIn('top', 'admin', 'archive');
      as = await server.loginAll(['clerkQ', 'clerkQ2', 'clerkD', 'adminQ', 'adminD', 'top']);
    });
    after(() => server.close());

    const status = async (who: string, res: Response, expected: number) => {
      assert.equal(res.status, expected, `${who}: ${res.status} ${await res.clone().text()}`);
      return res;
    };

    /** One file a clerk uploads in a batch: its upload id (the counted key) and file id. */
    async function uploadOne(client: Client, data: Buffer = randomContent(2000)) {
      const key = randomBytes(16).toString('hex');
      const batch = await body<{ results: Array<{ fileId: string }> }>(
        await client.batch(
          [{ name: 'p.pdf', data }],
          [{ md5: md5(data), sha256: sha256(data), name: '卷/第1页.pdf', key }],
        ),
        200,
      );
      const me = await body<{ account: { id: string } }>(await client.fetch('/api/session'), 200);
      return { uploadId: `file:${me.account.id}:${key}`, fileId: batch.results[0]!.fileId };
    }

    /** Uploads and withdraws a file as clerkQ: the withdrawal's id and the file's. */
    async function withdrawn(data?: Buffer, who: Who = 'clerkQ') {
      const { uploadId, fileId } = await uploadOne(as[who], data);
      const answer = await body<WithdrawalAnswer>(
        await as[who].json('/api/withdrawals', 'POST', { uploads: [uploadId], reason: 'wrong_file' }),
        200,
      );
      return { id: answer.withdrawn[0]!.id, fileId };
    }

    const purge = (who: Who, ids: string[]) => as[who].json('/api/trash/purge', 'POST', { withdrawals: ids });
    const empty = (who: Who, request: object = {}) => as[who].json('/api/trash/empty', 'POST', request);
    const restore = (who: Who, id: string) => as[who].fetch(`/api/withdrawals/${id}/restore`, { method: 'POST' });
    const download = (fileId: string) => as.top.fetch(`/api/files/${fileId}`);
    const inTrash = async (who: Who, id: string) =>
      (await body<TrashList>(await as[who].fetch('/api/trash?limit=500'), 200)).items.some((i) => i.id === id);

    it('POST /api/trash/purge: administrators of the reach only; the upload can never be restored and its content is deleted', async () => {
      const { id, fileId } = await withdrawn();
      await status('before', await download(fileId), 200);
      await status('anonymous', await purge('anonymous', [id]), 401);
      for (const who of ['clerkQ', 'clerkQ2', 'clerkD'] as const) {
        const refusal = await body<{ error: string; message: string }>(await purge(who, [id]), 403);
        assert.equal(refusal.error, 'forbidden');
        assert.match(refusal.message, /只有管理员可以彻底删除/);
      }
      const outside = await body<{ error: string; message: string }>(await purge('adminD', [id]), 404);
      assert.match(outside.message, /找不到 1 条撤回记录.*不在您的范围内/);
      assert.ok(await inTrash('clerkQ', id), 'nothing of a refused request changed');
      await status('bad id', await purge('adminQ', ['x']), 400);

      const answer = await body<PurgeAnswer>(await purge('adminQ', [id]), 200);
      assert.deepEqual(
        answer.purged.map((w) => [w.id, w.state, w.purgedBy?.username]),
        [[id, 'purged', 'adminQ']],
      );
      assert.deepEqual([answer.skipped, answer.contentsDeleted], [[], 1]);
      assert.equal(await inTrash('clerkQ', id), false);
      await status('the file', await download(fileId), 404);
      assert.equal(await server.store.catalog.get(fileId), undefined);
      const refusal = await body<{ error: string; message: string }>(await restore('clerkQ', id), 410);
      assert.equal(refusal.error, 'already_purged');
      assert.match(refusal.message, /被 adminQ 彻底删除，不能再恢复/);
      // Sent again: nothing more happens.
      const again = await body<PurgeAnswer>(await purge('adminQ', [id]), 200);
      assert.deepEqual([again.purged.length, again.contentsDeleted], [0, 0]);

      // The top-level administrator reaches everywhere.
      const other = await withdrawn(undefined, 'clerkD');
      assert.equal((await body<PurgeAnswer>(await purge('top', [other.id]), 200)).purged.length, 1);
      const log = await body<AuditList>(await as.top.fetch('/api/audit?action=upload_purged&limit=50'), 200);
      // Both at the test's one instant: on MongoDB a step's event has its key for id, so two of one
      // instant come in no set order (the embedded store's ids are in order).
      assert.deepEqual(
        log.items
          .filter((e) => e.fileId === fileId || e.fileId === other.fileId)
          .map((e) => e.userName)
          .sort(),
        ['adminQ', 'top'],
      );
    });

    it('keeps a content while another upload holds it, counted or in the trash; the last one purged deletes it', async () => {
      const data = randomContent(3000);
      const first = await withdrawn(data);
      const second = await withdrawn(data, 'clerkQ2');
      assert.equal(first.fileId, second.fileId);
      const kept = await uploadOne(as.clerkD, data);
      const answer = await body<PurgeAnswer>(await purge('top', [first.id]), 200);
      assert.deepEqual([answer.purged.length, answer.contentsDeleted], [1, 0]);
      await status('held by the trash and a counted upload', await download(first.fileId), 200);
      await body(
        await as.clerkD.json('/api/withdrawals', 'POST', { uploads: [kept.uploadId], reason: 'repeated' }),
        200,
      );
      await body(await purge('top', [second.id]), 200);
      await status('held by the trash', await download(first.fileId), 200);
      const emptied = await body<PurgeAnswer>(await empty('adminD'), 200);
      assert.equal(emptied.contentsDeleted, 1);
      await status('nobody holds it', await download(first.fileId), 404);
    });

    it('answers a withdrawal of a purged upload, its content kept for another, with what happened', async () => {
      const data = randomContent(3100);
      const { uploadId } = await uploadOne(as.clerkQ, data);
      await uploadOne(as.clerkD, data);
      const answer = await body<WithdrawalAnswer>(
        await as.clerkQ.json('/api/withdrawals', 'POST', { uploads: [uploadId], reason: 'wrong_file' }),
        200,
      );
      await body(await purge('top', [answer.withdrawn[0]!.id]), 200);
      const again = await as.clerkQ.json('/api/withdrawals', 'POST', { uploads: [uploadId], reason: 'wrong_file' });
      assert.ok(again.status >= 400 && again.status < 500, `${again.status} ${await again.clone().text()}`);
      assert.match(((await again.json()) as { message: string }).message, /彻底删除/);
    });

    it('POST /api/trash/empty: an administrator empties their reach, or one unit of it; clerks are refused', async () => {
      const q = await withdrawn();
      const d = await withdrawn(undefined, 'clerkD');
      await status('anonymous', await empty('anonymous'), 401);
      for (const who of ['clerkQ', 'clerkD'] as const) await status(who, await empty(who), 403);
      await status('adminD, a unit outside', await empty('adminD', { unit: TOWN_Q }), 404);
      await status('a bad body', await empty('adminQ', { unit: '' }), 400);
      const emptiedD = await body<PurgeAnswer>(await empty('adminD'), 200);
      assert.deepEqual(
        emptiedD.purged.map((w) => w.id),
        [d.id],
      );
      assert.ok(await inTrash('adminQ', q.id), "another county's trash is left as it was");
      const emptiedQ = await body<PurgeAnswer>(await empty('adminQ', { unit: TOWN_Q }), 200);
      assert.ok(emptiedQ.purged.some((w) => w.id === q.id));
      const last = await withdrawn();
      assert.ok((await body<PurgeAnswer>(await empty('top'), 200)).purged.some((w) => w.id === last.id));
      assert.equal((await body<TrashList>(await as.top.fetch('/api/trash'), 200)).total, 0);
    });

    it('the sweep purges what stayed past TRASH_DAYS (archive gc); a restore is then refused', async () => {
      const started = now;
      try {
        const { id, fileId } = await withdrawn();
        now = new Date(started.getTime() + 29 * DAY);
        assert.equal((await server.archive.gc.run()).purgedUploads, 0);
        assert.ok(await inTrash('clerkQ', id));
        now = new Date(started.getTime() + 30 * DAY + 60_000);
        assert.equal((await server.archive.gc.run()).purgedUploads, 1);
        assert.equal(await inTrash('clerkQ', id), false);
        await status('the file', await download(fileId), 404);
        const refusal = await body<{ error: string; message: string }>(await restore('clerkQ', id), 410);
        assert.match(refusal.message, /回收站到期彻底删除，不能再恢复/);
        const log = await body<AuditList>(await as.top.fetch('/api/audit?action=upload_purged&limit=50'), 200);
        const event = log.items.find((e) => e.fileId === fileId);
        assert.equal(event?.userName, 'system');
        assert.equal(event?.note?.code === 'purged' && event.note.expired, true);
      } finally {
        now = started;
      }
    });

    for (const leftAt of ['purging', 'purging, the ledger told'] as const) {
      it(`a purge a crash left "${leftAt}" is finished by the sweep (archive gc): its upload never counts again`, async () => {
        const started = now;
        try {
          const { id, fileId } = await withdrawn();
          // The purge moved it from the trash (and, maybe, told the ledger), then the server died.
          const record = (await server.store.withdrawals.get(id))!;
          const by = { id: 'admin-q', username: 'adminQ' };
          assert.ok(await server.store.withdrawals.advance(id, 'withdrawn', 'purging', now, by));
          if (leftAt === 'purging, the ledger told')
            assert.equal(await server.store.ledger.purge(record.uploadKey, purgeKeyOf(id)), 'purged');
          now = new Date(started.getTime() + 120_000);

          await server.archive.gc.run();
          assert.equal((await server.store.withdrawals.get(id))?.state, 'purged');
          assert.equal(await server.store.ledger.countingUploads(fileId), 0, 'not counted again');
          assert.equal(await inTrash('clerkQ', id), false);
          await status('the file', await download(fileId), 404);
          assert.equal((await body<{ error: string }>(await restore('clerkQ', id), 410)).error, 'already_purged');
        } finally {
          now = started;
        }
      });
    }

    it('an instant upload whose content is deleted between check and proof is refused, and the upload then stores it anew', async () => {
      const data = randomContent(70_000);
      const { id } = await withdrawn(data);
      const check = await (await as.clerkQ2.json('/api/uploads/check', 'POST', checkBody(data, 'again.pdf'))).json();
      assert.equal(check.status, 'prove');
      await body(await purge('top', [id]), 200);
      const proof = await as.clerkQ2.json('/api/uploads/prove', 'POST', {
        claimId: check.claimId,
        digests: digestsFor(data, check.ranges),
      });
      const refusal = await body<{ error: string }>(proof, 403);
      assert.equal(refusal.error, 'claim_rejected', 'the client uploads it instead');
      // What the client does then: the check says upload, and the upload stores the bytes anew.
      const checked = await (await as.clerkQ2.json('/api/uploads/check', 'POST', checkBody(data, 'again.pdf'))).json();
      assert.equal(checked.status, 'upload');
      const stored = await uploadOne(as.clerkQ2, data);
      const res = await status('the new copy', await download(stored.fileId), 200);
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), data);
    });

    it('a proof counted just as its content begins to be deleted is taken back and refused: never counted for bytes about to go', async () => {
      const data = randomContent(70_000);
      const { fileId } = await uploadOne(as.clerkQ, data);
      const check = await (await as.clerkQ2.json('/api/uploads/check', 'POST', checkBody(data, 'race.pdf'))).json();
      assert.equal(check.status, 'prove');
      markAfterNextCount = true;
      const proof = await as.clerkQ2.json('/api/uploads/prove', 'POST', {
        claimId: check.claimId,
        digests: digestsFor(data, check.ranges),
      });
      assert.equal((await body<{ error: string }>(proof, 403)).error, 'claim_rejected');
      assert.equal(await server.store.ledger.countingUploads(fileId), 1, "only the first clerk's upload counts");
      // The same proof sent again (its answer lost) is refused too.
      const again = await as.clerkQ2.json('/api/uploads/prove', 'POST', {
        claimId: check.claimId,
        digests: digestsFor(data, check.ranges),
      });
      assert.equal((await body<{ error: string }>(again, 403)).error, 'claim_rejected');
      // The deletion that raced it sees the first clerk's upload and is cancelled: the file stays.
      assert.equal(await server.store.catalog.cancelDeletion(fileId), true);
      await status('the file', await download(fileId), 200);
    });
  });
}
