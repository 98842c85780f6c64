import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { HoldList, HoldView } from '../../shared/holds.js';
import type { ReceiptView } from '../../shared/receipts.js';
import type { AuditList } from '../../shared/schemas.js';
import type { TrashList, WithdrawalAnswer } from '../../shared/withdrawals.js';
import { md5, randomContent, sha256 } from '../support/content.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * 冻结 over HTTP, for every kind of caller. Two counties of 沧州市 (Hebei loaded): 青县 with a
 * clerk of one of its towns and its administrator, 东光县 with a clerk and its administrator; and
 * the archive's top-level administrator.
 */
type Who = 'anonymous' | 'clerkQ' | 'clerkD' | 'adminQ' | 'adminD' | 'top';
const TOWN_Q = '130922100';
const TOWN_D = '130923100';
const newKey = () => randomBytes(16).toString('hex');
const nobody = () => randomBytes(16).toString('hex');

for (const target of storeTargets) {
  describe(`holds (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;

    before(async () => {
      server = await TestServer.start(target);
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('clerkQ', 'clerk', TOWN_Q);
      await server.addAccountIn('clerkD', 'clerk', TOWN_D);
      await server.addAccountIn('adminQ', 'admin', '130922');
      await server.addAccountIn('adminD', 'admin', '130923');
      await server.addAccountIn('top', 'admin', 'archive');
      as = await server.loginAll(['clerkQ', 'clerkD', 'adminQ', 'adminD', 'top']);
    });
    after(() => server.close());

    const status = async (who: string, res: Response, expected: number) => {
      assert.equal(res.status, expected, `${who}: ${res.status} ${await res.clone().text()}`);
      return res;
    };

    /** One file the clerk uploads in a batch, recorded on a receipt: its file id and upload id. */
    async function upload(client: Client, data = randomContent(3000), name = '卷/第1页.pdf') {
      const key = newKey();
      const batch = await body<{ results: Array<{ fileId: string }> }>(
        await client.batch([{ name: 'p.pdf', data }], [{ md5: md5(data), sha256: sha256(data), name, key }]),
        200,
      );
      const receipt = newKey();
      const at = new Date().toISOString();
      await body(
        await client.json(`/api/receipts/${receipt}`, 'PUT', {
          title: '卷',
          startedAt: at,
          rows: [{ path: name, size: data.length, outcome: 'stored', via: 'batch', key, at }],
        }),
        200,
      );
      const view = await body<ReceiptView>(await client.fetch(`/api/receipts/${receipt}`), 200);
      return { fileId: batch.results[0]!.fileId, uploadId: view.rows[0]!.uploadId! };
    }

    const place = (who: Who, request: object) => as[who].json('/api/holds', 'POST', { reason: '审计调查', ...request });
    const lift = (who: Who, id: string) => as[who].fetch(`/api/holds/${id}/lift`, { method: 'POST' });
    const withdraw = (who: Who, uploads: string[]) =>
      as[who].json('/api/withdrawals', 'POST', { reason: 'wrong_file', uploads });

    it('POST /api/holds on files: administrators of a reach with an upload of them; clerks are refused', async () => {
      const { fileId } = await upload(as.clerkQ);
      const expected: Record<Who, number> = {
        anonymous: 401,
        clerkQ: 403,
        clerkD: 403,
        adminQ: 201,
        adminD: 404,
        top: 201,
      };
      for (const who of Object.keys(expected) as Who[])
        await status(who, await place(who, { files: [fileId] }), expected[who]);
      const outside = await body<{ error: string; message: string }>(await place('adminD', { files: [fileId] }), 404);
      assert.equal(outside.error, 'not_found');
      assert.match(outside.message, /找不到1 个文件.*不在您的范围内/);
      // A file nobody uploaded is unknown to everybody, the top level included.
      await status('top', await place('top', { files: ['0123456789abcdef01234567'] }), 404);
    });

    it('POST /api/holds on a unit: a unit of the reach; another county’s is unknown', async () => {
      const expected: Record<Who, number> = {
        anonymous: 401,
        clerkQ: 403,
        clerkD: 403,
        adminQ: 201,
        adminD: 404,
        top: 201,
      };
      for (const who of Object.keys(expected) as Who[])
        await status(who, await place(who, { unit: TOWN_Q }), expected[who]);
      const held = await body<HoldView>(await place('adminQ', { unit: TOWN_Q, reason: '  巡视整改  ' }), 201);
      assert.deepEqual(held.scope, {
        kind: 'unit',
        unit: { id: TOWN_Q, name: '清州镇', path: '河北省 / 沧州市 / 青县 / 清州镇' },
      });
      assert.deepEqual(
        [held.reason, held.placedBy.username, held.active, held.liftedBy],
        ['巡视整改', 'adminQ', true, null],
      );
      for (const h of (await body<HoldList>(await as.top.fetch('/api/holds?state=active&limit=500'), 200)).items)
        await lift('top', h.id);
    });

    it('refuses a hold without a reason, with a reason over 500 characters, or naming both or neither', async () => {
      const { fileId } = await upload(as.clerkQ);
      for (const request of [
        { files: [fileId], reason: '   ' },
        { files: [fileId], reason: '长'.repeat(501) },
        { files: [fileId], unit: TOWN_Q },
        {},
        { files: ['not-a-file-id'] },
      ]) {
        const refusal = await body<{ error: string; message: string }>(
          await as.adminQ.json('/api/holds', 'POST', { reason: '审计', ...request }),
          400,
        );
        assert.equal(refusal.error, 'validation_failed', JSON.stringify(request));
      }
      await status('500 characters', await place('adminQ', { files: [fileId], reason: '长'.repeat(500) }), 201);
    });

    it('GET /api/holds/:id and POST …/lift: administrators who see the hold; clerks refused, others told unknown', async () => {
      const { fileId } = await upload(as.clerkQ);
      const readers: Record<Who, number> = {
        anonymous: 401,
        clerkQ: 403,
        clerkD: 403,
        adminQ: 200,
        adminD: 404,
        top: 200,
      };
      const held = await body<HoldView>(await place('adminQ', { files: [fileId] }), 201);
      for (const who of Object.keys(readers) as Who[])
        await status(who, await as[who].fetch(`/api/holds/${held.id}`), readers[who]);
      await status('unknown id', await as.top.fetch(`/api/holds/${nobody()}`), 404);
      await status('bad id', await as.top.fetch('/api/holds/xyz'), 400);
      // A top-level administrator's file hold belongs to the whole archive: a county's administrator does not see it.
      const topHold = await body<HoldView>(await place('top', { files: [fileId] }), 201);
      await status('adminQ, top-level hold', await as.adminQ.fetch(`/api/holds/${topHold.id}`), 404);
      await status('adminQ lifts the top-level hold', await lift('adminQ', topHold.id), 404);
      for (const who of ['anonymous', 'clerkQ', 'clerkD', 'adminD'] as const)
        await status(who, await lift(who, held.id), readers[who]);
      const lifted = await body<HoldView>(await status('adminQ', await lift('adminQ', held.id), 200), 200);
      assert.deepEqual([lifted.active, lifted.liftedBy?.username], [false, 'adminQ']);
      assert.ok(lifted.liftedAt);
      // Lifting again changes nothing: it is answered as lifted, by whom it was.
      const again = await body<HoldView>(await lift('top', held.id), 200);
      assert.deepEqual([again.liftedBy?.username, again.liftedAt], ['adminQ', lifted.liftedAt]);
      await body(await lift('top', topHold.id), 200);
    });

    it('GET /api/holds: each administrator the holds of their reach, active and lifted, paged', async () => {
      const readers: Record<Who, number> = {
        anonymous: 401,
        clerkQ: 403,
        clerkD: 403,
        adminQ: 200,
        adminD: 200,
        top: 200,
      };
      for (const who of Object.keys(readers) as Who[])
        await status(who, await as[who].fetch('/api/holds'), readers[who]);
      const q = await upload(as.clerkQ);
      const onQ = await body<HoldView>(await place('adminQ', { files: [q.fileId], reason: '青县' }), 201);
      const onD = await body<HoldView>(await place('adminD', { unit: TOWN_D, reason: '东光' }), 201);
      const liftedQ = await body<HoldView>(await place('adminQ', { unit: TOWN_Q, reason: '青县镇' }), 201);
      await body(await lift('adminQ', liftedQ.id), 200);
      const list = async (who: Who, query = '') =>
        (await body<HoldList>(await as[who].fetch(`/api/holds?limit=500${query}`), 200)).items.map((h) => h.id);
      const ofQ = await list('adminQ');
      assert.ok(ofQ.includes(onQ.id) && ofQ.includes(liftedQ.id) && !ofQ.includes(onD.id));
      assert.ok((await list('adminQ', '&state=active')).includes(onQ.id));
      assert.ok(!(await list('adminQ', '&state=active')).includes(liftedQ.id));
      assert.deepEqual(
        (await list('adminQ', '&state=lifted')).filter((id) => [onQ.id, liftedQ.id].includes(id)),
        [liftedQ.id],
      );
      const ofD = await list('adminD');
      assert.ok(ofD.includes(onD.id) && !ofD.includes(onQ.id));
      const all = await list('top');
      for (const id of [onQ.id, onD.id, liftedQ.id]) assert.ok(all.includes(id));
      // The latest first, a page at a time.
      const page = await body<HoldList>(await as.top.fetch('/api/holds?limit=1&offset=1'), 200);
      assert.deepEqual([page.items.length, page.limit, page.offset], [1, 1, 1]);
      assert.equal(page.total, all.length);
      assert.equal(page.items[0]!.id, all[1]);
      await status('bad state', await as.top.fetch('/api/holds?state=frozen'), 400);
      await body(await lift('adminQ', onQ.id), 200);
      await body(await lift('adminD', onD.id), 200);
    });

    it('refuses to withdraw a held file, whole and changing nothing, until the hold is lifted', async () => {
      const held = await upload(as.clerkQ, randomContent(4000), '卷/冻结的.pdf');
      const free = await upload(as.clerkQ);
      const hold = await body<HoldView>(await place('adminQ', { files: [held.fileId], reason: '纪检调查' }), 201);
      for (const who of ['clerkQ', 'adminQ', 'top'] as const) {
        const refusal = await body<{ error: string; message: string; details: Record<string, unknown> }>(
          await withdraw(who, [free.uploadId, held.uploadId]),
          423,
        );
        assert.equal(refusal.error, 'file_on_hold');
        assert.equal(refusal.message, '文件“卷/冻结的.pdf”已被冻结（原因：纪检调查），不能撤回；请联系管理员。');
        assert.deepEqual(
          [refusal.details.fileName, refusal.details.holdReason, refusal.details.action, refusal.details.holds],
          ['卷/冻结的.pdf', '纪检调查', 'withdraw', [hold.id]],
        );
      }
      // Nothing was withdrawn, not even the file that is not held.
      const trash = await body<TrashList>(await as.top.fetch('/api/trash?limit=500'), 200);
      assert.ok(!trash.items.some((w) => [free.uploadId, held.uploadId].includes(w.uploadId)));
      await body(await lift('adminQ', hold.id), 200);
      const answer = await body<WithdrawalAnswer>(await withdraw('clerkQ', [free.uploadId, held.uploadId]), 200);
      assert.deepEqual(answer.withdrawn.map((w) => w.uploadId).sort(), [free.uploadId, held.uploadId].sort());
    });

    it('holds every file of a unit, uploaded before or while the hold lasts; not other units’ uploads', async () => {
      const before = await upload(as.clerkQ);
      const elsewhere = await upload(as.clerkD);
      const hold = await body<HoldView>(await place('top', { unit: TOWN_Q, reason: '整体移交前冻结' }), 201);
      const during = await upload(as.clerkQ);
      for (const { uploadId } of [before, during]) {
        const refusal = await body<{ error: string; message: string }>(await withdraw('clerkQ', [uploadId]), 423);
        assert.match(refusal.message, /已被冻结（原因：整体移交前冻结），不能撤回/);
      }
      await body(await withdraw('clerkD', [elsewhere.uploadId]), 200);
      // The same content uploaded by another unit is held too: the hold is on the file, wherever it is.
      const shared = randomContent(5000);
      await upload(as.clerkQ, shared);
      const theirs = await upload(as.clerkD, shared);
      await status('another unit’s upload of a held file', await withdraw('clerkD', [theirs.uploadId]), 423);
      // The service other corrections ask (purge, disposal) says the same.
      const { holds } = server.archive.services;
      assert.deepEqual(
        [...(await holds.heldAmong([before.fileId, during.fileId, elsewhere.fileId, theirs.fileId]))].sort(),
        [before.fileId, during.fileId, theirs.fileId].sort(),
      );
      await body(await lift('top', hold.id), 200);
      assert.equal((await holds.heldAmong([before.fileId, during.fileId, theirs.fileId])).size, 0);
      await body(await withdraw('clerkQ', [before.uploadId, during.uploadId]), 200);
    });

    it('keeps a file in its unit’s trash held by the unit’s hold (the purge must not take it)', async () => {
      const trashed = await upload(as.clerkQ);
      await body(await withdraw('clerkQ', [trashed.uploadId]), 200);
      const { holds } = server.archive.services;
      assert.equal((await holds.heldAmong([trashed.fileId])).size, 0);
      const hold = await body<HoldView>(await place('adminQ', { unit: TOWN_Q }), 201);
      assert.deepEqual([...(await holds.heldAmong([trashed.fileId]))], [trashed.fileId]);
      // And a file only in the trash can be held by itself, by an administrator of its reach.
      const byFile = await body<HoldView>(await place('adminQ', { files: [trashed.fileId] }), 201);
      assert.deepEqual(byFile.scope, { kind: 'files', files: [{ id: trashed.fileId, name: trashed.fileId }] });
      await status('adminD', await place('adminD', { files: [trashed.fileId] }), 404);
      await body(await lift('adminQ', hold.id), 200);
      assert.deepEqual([...(await holds.heldAmong([trashed.fileId]))], [trashed.fileId]);
      await body(await lift('adminQ', byFile.id), 200);
      assert.equal((await holds.heldAmong([trashed.fileId])).size, 0);
    });

    it('keeps each hold placed and lifted in the audit log, among 管理操作', async () => {
      const { fileId } = await upload(as.clerkQ, randomContent(3100), '卷/审计.pdf');
      const hold = await body<HoldView>(await place('adminQ', { files: [fileId], reason: '审计留痕' }), 201);
      await body(await lift('top', hold.id), 200);
      const events = (
        await body<AuditList>(await as.top.fetch('/api/audit?group=administration&limit=1000'), 200)
      ).items.filter((e) => (e.note as { holdId?: string } | null)?.holdId === hold.id);
      assert.deepEqual(events.map((e) => [e.action, e.userName, e.fileId, e.fileName, e.note]).reverse(), [
        [
          'hold_placed',
          'adminQ',
          fileId,
          '卷/审计.pdf',
          { code: 'hold_placed', holdId: hold.id, reason: '审计留痕', files: 1 },
        ],
        [
          'hold_lifted',
          'top',
          fileId,
          '卷/审计.pdf',
          { code: 'hold_lifted', holdId: hold.id, reason: '审计留痕', files: 1 },
        ],
      ]);
    });
  });
}
