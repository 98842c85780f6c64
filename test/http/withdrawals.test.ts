import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { ReceiptView } from '../../shared/receipts.js';
import type { ReportPage, RepeatEntryRow, SavingsReport } from '../../shared/reports.js';
import type { AuditList, SessionView } from '../../shared/schemas.js';
import {
  RESTORE_MAX_WITHDRAWALS,
  type RestoreAnswer,
  type TrashList,
  WITHDRAW_MAX_UPLOADS,
  type WithdrawalAnswer,
  type WithdrawalView,
} from '../../shared/withdrawals.js';
import { randomContent } from '../support/content.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { uploadFolder } from '../support/receipts.js';

/**
 * 撤回, 回收站 and 恢复 over HTTP, for every kind of caller. Two counties of 沧州市 (Hebei loaded):
 * 青县 with two clerks of one town (clerkQ, clerkQ2) and its administrator, 东光县 with a clerk and
 * its administrator; and the archive's top-level administrator. The archive's clock is the test's.
 */
type Who = 'anonymous' | 'clerkQ' | 'clerkQ2' | 'clerkD' | 'adminQ' | 'adminD' | 'top';
const DAY = 86_400_000;
const TOWN_Q = '130922100';

for (const target of storeTargets) {
  describe(`withdrawal, the trash and restore (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    let now = new Date('2026-11-02T08:00:00Z');

    before(async () => {
      // Sessions outlive the weeks the clock is moved on by.
      server = await TestServer.start(target, { clock: () => now, sessionTtlMs: 400 * DAY });
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('clerkQ', 'clerk', TOWN_Q);
      await server.addAccountIn('clerkQ2', 'clerk', TOWN_Q);
      await server.addAccountIn('clerkD', 'clerk', '130923100');
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

    /** One file the client uploads: its upload id. */
    const uploadOne = async (client: Client, data = randomContent(2000)) =>
      (await uploadFolder(client, [data], '卷', now)).uploadIds[0]!;

    const withdraw = (who: Who, request: object) =>
      as[who].json('/api/withdrawals', 'POST', { reason: 'wrong_file', ...request });

    /**
     * What the reports count: a file's UploadCount on the repeat-uploaders page (absent there under
     * two: 0 or 1 alike, so the specs count a file uploaded twice or more), and every upload on the
     * space-saved page, as the top-level administrator sees them.
     */
    async function counted(fileId: string) {
      const repeats = await body<ReportPage<RepeatEntryRow>>(
        await as.top.fetch('/api/reports/repeat-uploaders?limit=500'),
        200,
      );
      const savings = await body<SavingsReport>(await as.top.fetch('/api/reports/savings'), 200);
      return {
        uploadCount: repeats.items.find((r) => r.fileId === fileId)?.uploadCount ?? 0,
        uploads: savings.summary.uploads,
      };
    }

    it('POST /api/withdrawals: the uploader, and administrators of its reach; others are told no', async () => {
      const theirs = await uploadOne(as.clerkQ);
      await status('anonymous', await withdraw('anonymous', { uploads: [theirs] }), 401);
      // Outside the unit, or outside an administrator's reach, the upload is unknown.
      for (const who of ['clerkD', 'adminD'] as const) {
        const refusal = await body<{ error: string; message: string }>(await withdraw(who, { uploads: [theirs] }), 404);
        assert.equal(refusal.error, 'not_found');
        assert.match(refusal.message, /找不到1 个上传.*不在您的范围内/);
      }
      // Another clerk of the same unit is told whose it is not.
      const notYours = await body<{ error: string; message: string }>(
        await withdraw('clerkQ2', { uploads: [theirs] }),
        403,
      );
      assert.equal(notYours.error, 'forbidden');
      assert.match(notYours.message, /只能撤回自己的上传/);
      for (const who of ['clerkQ', 'adminQ', 'top'] as const) {
        const upload = who === 'clerkQ' ? theirs : await uploadOne(as.clerkQ);
        const answer = await body<WithdrawalAnswer>(
          await status(who, await withdraw(who, { uploads: [upload] }), 200),
          200,
        );
        assert.deepEqual(
          answer.withdrawn.map((w) => [w.uploadId, w.withdrawnBy.username, w.uploader.username, w.state]),
          [[upload, who, 'clerkQ', 'withdrawn']],
        );
        assert.deepEqual([answer.alreadyWithdrawn, answer.skippedRows], [[], 0]);
      }
    });

    it('a clerk withdraws within WITHDRAW_DAYS of the upload; after that only an administrator', async () => {
      const started = now;
      try {
        const [early, late] = [await uploadOne(as.clerkQ), await uploadOne(as.clerkQ)];
        now = new Date(started.getTime() + 29 * DAY);
        await status('clerkQ at 29 days', await withdraw('clerkQ', { uploads: [early] }), 200);
        now = new Date(started.getTime() + 30 * DAY + 60_000);
        const refusal = await body<{ error: string; message: string }>(
          await withdraw('clerkQ', { uploads: [late] }),
          403,
        );
        assert.equal(refusal.error, 'withdrawal_too_late');
        assert.match(refusal.message, /^上传已超过 30 天，请联系管理员撤回/);
        await status('adminQ at 30 days', await withdraw('adminQ', { uploads: [late] }), 200);
      } finally {
        now = started;
      }
    });

    it('refuses what a clerk can correct: no reason, 其他 without a note, an unknown upload, a bad id', async () => {
      const upload = await uploadOne(as.clerkQ);
      const refused = async (request: object, code: number, message: RegExp) => {
        const res = await as.clerkQ.json('/api/withdrawals', 'POST', request);
        assert.match((await body<{ message: string }>(res, code)).message, message);
      };
      await refused({ uploads: [upload] }, 400, /reason/);
      await refused({ uploads: [upload], reason: 'other' }, 400, /其他.*请填写说明/);
      await refused({ uploads: [upload], reason: 'other', note: '  ' }, 400, /其他.*请填写说明/);
      await refused({ uploads: [upload], reason: 'because' }, 400, /reason is one of/);
      await refused({ uploads: ['tus:nobody:never'], reason: 'wrong_file' }, 404, /找不到1 个上传（tus:nobody:never）/);
      await refused({ uploads: [], reason: 'wrong_file' }, 400, /uploads/);
      await refused({ receipt: 'x', reason: 'wrong_file' }, 400, /receipt id/);
      await refused({ receipt: '0'.repeat(32), reason: 'wrong_file' }, 404, /没有这个上传清单/);
      // Nothing of a refused request was withdrawn: with a reason the same upload goes.
      await status('clerkQ', await withdraw('clerkQ', { uploads: [upload], reason: 'other', note: '扫描件缺页' }), 200);
    });

    it('reads a list of 1,000 upload ids of the longest form, as a selection in 本单位文件 sends them', async () => {
      const longest = Array.from({ length: WITHDRAW_MAX_UPLOADS }, (_, i) => `tus:${String(i).padStart(200, 'x')}`);
      const res = await withdraw('clerkQ', { uploads: longest });
      // Answered about the uploads (none of them known), not refused for the request's size.
      assert.match((await body<{ message: string }>(res, 404)).message, /找不到1000 个上传/);
      const restore = await as.clerkQ.json('/api/withdrawals/restore', 'POST', {
        withdrawals: Array.from({ length: RESTORE_MAX_WITHDRAWALS }, (_, i) => i.toString(16).padStart(32, '0')),
      });
      assert.equal(restore.status, 404, await restore.clone().text());
    });

    it('a withdrawn upload leaves the counts at once; a request sent again changes nothing', async () => {
      const data = randomContent(3000);
      const first = await uploadFolder(as.clerkQ, [data], '卷', now);
      await uploadFolder(as.clerkQ, [data], '卷', now);
      const again = await uploadFolder(as.clerkQ, [data], '卷', now);
      const fileId = first.fileIds[0]!;
      const before = await counted(fileId);
      assert.equal(before.uploadCount, 3);
      const request = { uploads: [again.uploadIds[0]!], reason: 'repeated' };
      await body<WithdrawalAnswer>(await withdraw('clerkQ', request), 200);
      assert.deepEqual(await counted(fileId), { uploadCount: 2, uploads: before.uploads - 1 });
      const retried = await body<{ error: string; message: string }>(await withdraw('clerkQ', request), 409);
      assert.equal(retried.error, 'already_withdrawn');
      assert.match(retried.message, /已由 clerkQ 于 .* 撤回，不必再撤回；要恢复，请到回收站/);
      assert.deepEqual(await counted(fileId), { uploadCount: 2, uploads: before.uploads - 1 });
    });

    it('withdraws a whole folder by its receipt, whose rows then say so; withdrawn ones are left as they are', async () => {
      const folder = await uploadFolder(
        as.clerkQ,
        [randomContent(100), randomContent(200), randomContent(300)],
        '卷',
        now,
      );
      const { uploads } = await counted('');
      await body(await withdraw('clerkQ', { uploads: [folder.uploadIds[1]!] }), 200);
      assert.equal((await counted('')).uploads, uploads - 1);
      const answer = await body<WithdrawalAnswer>(
        await withdraw('clerkQ', { receipt: folder.receipt, reason: 'wrong_unit' }),
        200,
      );
      assert.deepEqual(
        answer.withdrawn.map((w) => [w.uploadId, w.reason]),
        [
          [folder.uploadIds[0], 'wrong_unit'],
          [folder.uploadIds[2], 'wrong_unit'],
        ],
      );
      assert.deepEqual(
        answer.alreadyWithdrawn.map((w) => [w.uploadId, w.reason]),
        [[folder.uploadIds[1], 'wrong_file']],
      );
      const receipt = await body<ReceiptView>(await as.clerkQ.fetch(`/api/receipts/${folder.receipt}`), 200);
      assert.deepEqual(
        receipt.rows.map((r) => [r.path, r.withdrawal?.reason, r.withdrawal?.withdrawnBy]),
        [
          ['卷/第1页.pdf', 'wrong_unit', 'clerkQ'],
          ['卷/第2页.pdf', 'wrong_file', 'clerkQ'],
          ['卷/第3页.pdf', 'wrong_unit', 'clerkQ'],
        ],
      );
      assert.equal((await counted('')).uploads, uploads - 3);
      // Sent again: all withdrawn already, nothing changes.
      await body(await withdraw('clerkQ', { receipt: folder.receipt, reason: 'wrong_unit' }), 409);
      assert.equal((await counted('')).uploads, uploads - 3);
      // Another clerk's receipt is not theirs to name.
      await body(await withdraw('clerkQ2', { receipt: folder.receipt }), 404);
    });

    it('GET /api/trash: a unit’s withdrawn uploads with who, when, why and days left, within reach', async () => {
      const data = randomContent(4321);
      const { uploadIds } = await uploadFolder(as.clerkQ, [data], '回收站测试', now);
      const [withdrawn] = (
        await body<WithdrawalAnswer>(await withdraw('adminQ', { uploads: uploadIds, reason: 'must_not_keep' }), 200)
      ).withdrawn;
      const later = now;
      now = new Date(later.getTime() + 3 * DAY + 1000);
      try {
        await status('anonymous', await as.anonymous.fetch('/api/trash'), 401);
        const listed = async (who: Who, query = '') =>
          (await body<TrashList>(await status(who, await as[who].fetch(`/api/trash${query}`), 200), 200)).items.find(
            (i) => i.id === withdrawn!.id,
          );
        const item = await listed('clerkQ');
        assert.ok(item);
        assert.deepEqual(
          {
            fileName: item.fileName,
            size: item.size,
            unit: item.unit.id,
            uploader: item.uploader.username,
            withdrawnBy: item.withdrawnBy.username,
            reason: item.reason,
            daysLeft: item.daysLeft,
            expired: item.expired,
            canRestore: item.canRestore,
          },
          {
            fileName: '回收站测试/第1页.pdf',
            size: 4321,
            unit: TOWN_Q,
            uploader: 'clerkQ',
            withdrawnBy: 'adminQ',
            reason: 'must_not_keep',
            daysLeft: 27,
            expired: false,
            canRestore: true,
          },
        );
        assert.equal((await listed('clerkQ2'))?.canRestore, false);
        assert.equal(await listed('clerkD'), undefined);
        assert.ok(await listed('adminQ', `?unit=${TOWN_Q}`));
        assert.equal(await listed('adminD'), undefined);
        assert.ok(await listed('top'));
        await status('clerkD', await as.clerkD.fetch(`/api/trash?unit=${TOWN_Q}`), 404);
        await status('adminD', await as.adminD.fetch(`/api/trash?unit=${TOWN_Q}`), 404);
        // Past TRASH_DAYS: 待清除, still listed and restorable until the purge (issue 41 part 3).
        now = new Date(later.getTime() + 31 * DAY);
        const expired = await listed('clerkQ');
        assert.deepEqual([expired?.daysLeft, expired?.expired, expired?.canRestore], [0, true, true]);
      } finally {
        now = later;
      }
    });

    it('POST /api/withdrawals/:id/restore: the uploader or an administrator of its reach; every count returns once', async () => {
      const data = randomContent(5000);
      const { fileIds } = await uploadFolder(as.clerkQ, [data], '卷', now);
      await uploadOne(as.clerkQ, data);
      const fileId = fileIds[0]!;
      const withdrawals: string[] = [];
      for (let i = 0; i < 3; i++) {
        const upload = await uploadOne(as.clerkQ, data);
        withdrawals.push(
          (await body<WithdrawalAnswer>(await withdraw('clerkQ', { uploads: [upload] }), 200)).withdrawn[0]!.id,
        );
      }
      const withdrawnCounts = await counted(fileId);
      assert.equal(withdrawnCounts.uploadCount, 2);
      const restore = (who: Who, id: string) => as[who].fetch(`/api/withdrawals/${id}/restore`, { method: 'POST' });
      await status('anonymous', await restore('anonymous', withdrawals[0]!), 401);
      await status('clerkD', await restore('clerkD', withdrawals[0]!), 404);
      await status('adminD', await restore('adminD', withdrawals[0]!), 404);
      const notYours = await body<{ message: string }>(await restore('clerkQ2', withdrawals[0]!), 403);
      assert.match(notYours.message, /只有上传者本人或管理员可以恢复/);
      await status('bad id', await restore('clerkQ', 'x'), 400);
      await status('unknown id', await restore('clerkQ', '0'.repeat(32)), 404);
      for (const [i, who] of (['clerkQ', 'adminQ', 'top'] as const).entries()) {
        const view = await body<WithdrawalView>(await status(who, await restore(who, withdrawals[i]!), 200), 200);
        assert.deepEqual([view.state, view.restoredBy?.username], ['restored', who]);
        assert.deepEqual(await counted(fileId), {
          uploadCount: 3 + i,
          uploads: withdrawnCounts.uploads + i + 1,
        });
      }
      // Restored again: refused, and nothing counts twice.
      const again = await body<{ error: string; message: string }>(await restore('clerkQ', withdrawals[0]!), 409);
      assert.equal(again.error, 'already_restored');
      assert.match(again.message, /已由 clerkQ 于 .* 恢复/);
      assert.deepEqual(await counted(fileId), { uploadCount: 5, uploads: withdrawnCounts.uploads + 3 });
      const trash = await body<TrashList>(await as.clerkQ.fetch('/api/trash?limit=500'), 200);
      assert.ok(!trash.items.some((i) => withdrawals.includes(i.id)));
    });

    it('POST /api/withdrawals/restore: many at once, by withdrawal ids or a receipt; the uploader or administrators of its reach', async () => {
      const folder = await uploadFolder(
        as.clerkQ,
        [randomContent(310), randomContent(320), randomContent(330)],
        '卷',
        now,
      );
      const { uploads } = await counted('');
      const ids = (
        await body<WithdrawalAnswer>(await withdraw('clerkQ', { receipt: folder.receipt }), 200)
      ).withdrawn.map((w) => w.id);
      assert.equal((await counted('')).uploads, uploads - 3);
      const restoreMany = (who: Who, request: object) => as[who].json('/api/withdrawals/restore', 'POST', request);
      await status('anonymous', await restoreMany('anonymous', { withdrawals: ids }), 401);
      // Outside the unit, or outside an administrator's reach, the withdrawals are unknown.
      for (const who of ['clerkD', 'adminD'] as const) {
        const refusal = await body<{ error: string; message: string }>(
          await restoreMany(who, { withdrawals: ids }),
          404,
        );
        assert.match(refusal.message, /找不到3 条撤回记录.*不在您的范围内/);
      }
      const notYours = await body<{ error: string; message: string }>(
        await restoreMany('clerkQ2', { withdrawals: ids }),
        403,
      );
      assert.match(notYours.message, /只有上传者本人或管理员可以恢复/);
      // A receipt is its owner's to name.
      await status('clerkQ2', await restoreMany('clerkQ2', { receipt: folder.receipt }), 404);
      await status('adminQ', await restoreMany('adminQ', { receipt: folder.receipt }), 404);
      assert.equal((await counted('')).uploads, uploads - 3, 'a refused request restores nothing');

      const restored = async (who: Who, request: object) => {
        const answer = await body<RestoreAnswer>(await status(who, await restoreMany(who, request), 200), 200);
        return [
          answer.restored.map((w) => [w.id, w.state, w.restoredBy?.username]),
          answer.alreadyRestored.map((w) => w.id),
        ];
      };
      assert.deepEqual(await restored('adminQ', { withdrawals: [ids[0]] }), [[[ids[0], 'restored', 'adminQ']], []]);
      assert.equal((await counted('')).uploads, uploads - 2);
      assert.deepEqual(await restored('top', { withdrawals: [ids[0], ids[1]] }), [
        [[ids[1], 'restored', 'top']],
        [ids[0]],
      ]);
      assert.equal((await counted('')).uploads, uploads - 1);
      assert.deepEqual(await restored('clerkQ', { receipt: folder.receipt }), [[[ids[2], 'restored', 'clerkQ']], []]);
      assert.equal((await counted('')).uploads, uploads, 'every count back, once');
      const receipt = await body<ReceiptView>(await as.clerkQ.fetch(`/api/receipts/${folder.receipt}`), 200);
      assert.ok(receipt.rows.every((r) => r.withdrawal === undefined));
      // All restored already: refused, nothing counts twice.
      const again = await body<{ error: string }>(await restoreMany('clerkQ', { withdrawals: ids }), 409);
      assert.equal(again.error, 'already_restored');
      const none = await body<{ message: string }>(await restoreMany('clerkQ', { receipt: folder.receipt }), 400);
      assert.match(none.message, /没有已撤回、可恢复的文件/);
      assert.equal((await counted('')).uploads, uploads);
    });

    it('refuses a restore of many that a clerk can correct: neither or both, too many, a bad id', async () => {
      for (const request of [
        {},
        { withdrawals: ['0'.repeat(32)], receipt: randomBytes(16).toString('hex') },
        { withdrawals: [] },
        { withdrawals: Array.from({ length: 1001 }, () => randomBytes(16).toString('hex')) },
        { withdrawals: ['x'] },
      ]) {
        const refusal = await body<{ error: string; message: string }>(
          await as.clerkQ.json('/api/withdrawals/restore', 'POST', request),
          400,
        );
        assert.equal(refusal.error, 'validation_failed', JSON.stringify(request).slice(0, 80));
      }
    });

    it('a restored upload counts again on its receipt, and can be withdrawn anew', async () => {
      const folder = await uploadFolder(as.clerkQ, [randomContent(700)], '卷', now);
      const { uploads } = await counted('');
      const [w] = (await body<WithdrawalAnswer>(await withdraw('clerkQ', { receipt: folder.receipt }), 200)).withdrawn;
      await body(await as.clerkQ.fetch(`/api/withdrawals/${w!.id}/restore`, { method: 'POST' }), 200);
      const receipt = await body<ReceiptView>(await as.clerkQ.fetch(`/api/receipts/${folder.receipt}`), 200);
      assert.equal(receipt.rows[0]!.withdrawal, undefined);
      assert.equal((await counted('')).uploads, uploads);
      const anew = await body<WithdrawalAnswer>(await withdraw('clerkQ', { receipt: folder.receipt }), 200);
      assert.notEqual(anew.withdrawn[0]!.id, w!.id);
      assert.equal((await counted('')).uploads, uploads - 1);
    });

    it('GET /api/withdrawals/:id: to whoever sees the unit’s trash, else unknown', async () => {
      const upload = await uploadOne(as.clerkQ);
      const [w] = (await body<WithdrawalAnswer>(await withdraw('clerkQ', { uploads: [upload] }), 200)).withdrawn;
      const expected: Record<Who, number> = {
        anonymous: 401,
        clerkQ: 200,
        clerkQ2: 200,
        clerkD: 404,
        adminQ: 200,
        adminD: 404,
        top: 200,
      };
      for (const who of Object.keys(expected) as Who[])
        await status(who, await as[who].fetch(`/api/withdrawals/${w!.id}`), expected[who]);
    });

    it('keeps each withdrawal and restore in the audit log: who, when, which upload and why', async () => {
      const upload = await uploadOne(as.clerkQ);
      const [w] = (
        await body<WithdrawalAnswer>(
          await withdraw('clerkQ', { uploads: [upload], reason: 'other', note: '含身份证号' }),
          200,
        )
      ).withdrawn;
      await body(await as.adminQ.fetch(`/api/withdrawals/${w!.id}/restore`, { method: 'POST' }), 200);
      const events = async (action: string) =>
        (await body<AuditList>(await as.top.fetch(`/api/audit?action=${action}&limit=1000`), 200)).items.filter(
          (e) => e.fileId === w!.fileId,
        );
      const [withdrawn] = await events('upload_withdrawn');
      assert.deepEqual(
        [withdrawn?.userName, withdrawn?.fileName, withdrawn?.unit?.id, withdrawn?.note],
        [
          'clerkQ',
          w!.fileName,
          TOWN_Q,
          {
            code: 'withdrawn',
            withdrawalId: w!.id,
            uploader: 'clerkQ',
            unit: TOWN_Q,
            uploadedAt: w!.uploadedAt,
            reason: 'other',
            note: '含身份证号',
          },
        ],
      );
      const [restored] = await events('upload_restored');
      assert.deepEqual([restored?.userName, restored?.note?.code], ['adminQ', 'restored']);
      // The audit page opens on 管理操作: corrections are among them.
      const administration = (
        await body<AuditList>(await as.top.fetch('/api/audit?group=administration&limit=1000'), 200)
      ).items.filter((e) => e.fileId === w!.fileId);
      assert.deepEqual(administration.map((e) => e.action).sort(), ['upload_restored', 'upload_withdrawn']);
    });

    it('finishes a withdrawal a crash interrupted, on a retry or at the sweep, counting it out once', async () => {
      const data = randomContent(6000);
      const { fileIds } = await uploadFolder(as.clerkQ, [data], '卷', now);
      await uploadOne(as.clerkQ, data);
      const [a, b] = [await uploadOne(as.clerkQ, data), await uploadOne(as.clerkQ, data)];
      const fileId = fileIds[0]!;
      const before = await counted(fileId);
      // Recorded and reversed, then the process died before the record said `withdrawn`.
      const clerk = (await server.store.accounts.findByUsername('clerkQ'))!;
      const [recA, recB] = [a, b].map((key) => ({
        id: randomBytes(16).toString('hex'),
        uploadKey: key,
        upload: {
          account: { id: clerk.id, username: 'clerkQ' },
          unit: clerk.unit,
          fileId,
          fileName: '卷/第1页.pdf',
          fileLength: data.length,
          at: now,
        },
        withdrawnBy: { id: clerk.id, username: 'clerkQ' },
        withdrawnAt: now,
        reason: 'wrong_file' as const,
        note: null,
        state: 'withdrawing' as const,
        changedAt: now,
        restoredBy: null,
        restoredAt: null,
        purgedBy: null,
        purgedAt: null,
      }));
      for (const rec of [recA!, recB!]) await server.store.withdrawals.open(rec);
      await server.store.ledger.reverse(a, `withdrawal:${recA!.id}`);
      assert.equal((await counted(fileId)).uploadCount, before.uploadCount - 1);
      // The clerk's retry finishes A under its own key (not reversed twice) …
      const retried = await body<WithdrawalAnswer>(await withdraw('clerkQ', { uploads: [a] }), 200);
      assert.deepEqual(
        retried.withdrawn.map((w) => w.id),
        [recA!.id],
      );
      assert.equal((await counted(fileId)).uploadCount, before.uploadCount - 1);
      // … and the sweep, a minute on, finishes B.
      const started = now;
      now = new Date(started.getTime() + 2 * 60_000);
      try {
        await server.archive.gc.run();
      } finally {
        now = started;
      }
      assert.equal((await server.store.withdrawals.get(recB!.id))!.state, 'withdrawn');
      assert.deepEqual(await counted(fileId), { uploadCount: before.uploadCount - 2, uploads: before.uploads - 2 });

      // A restore interrupted after the ledger's restore: the retry finishes it, counting A back once.
      await server.store.withdrawals.advance(recA!.id, 'withdrawn', 'restoring', now, {
        id: clerk.id,
        username: 'clerkQ',
      });
      await server.store.ledger.restore(a, `restore:${recA!.id}`);
      const restored = await body<WithdrawalView>(
        await as.clerkQ.fetch(`/api/withdrawals/${recA!.id}/restore`, { method: 'POST' }),
        200,
      );
      assert.equal(restored.state, 'restored');
      assert.deepEqual(await counted(fileId), { uploadCount: before.uploadCount - 1, uploads: before.uploads - 1 });
    });

    it('withdraws and restores once however many of the same request race', async () => {
      const data = randomContent(6500);
      const { fileIds } = await uploadFolder(as.clerkQ, [data], '卷', now);
      await uploadOne(as.clerkQ, data);
      const upload = await uploadOne(as.clerkQ, data);
      const before = await counted(fileIds[0]!);
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => withdraw('clerkQ', { uploads: [upload] }).then((r) => r.status)),
      );
      // One withdrew it; the others found it withdrawn (or finished the same withdrawal).
      assert.ok(
        answers.every((code) => code === 200 || code === 409),
        String(answers),
      );
      assert.deepEqual(await counted(fileIds[0]!), { uploadCount: 2, uploads: before.uploads - 1 });
      const trash = await body<TrashList>(await as.clerkQ.fetch('/api/trash?limit=500'), 200);
      const ours = trash.items.filter((i) => i.uploadId === upload);
      assert.equal(ours.length, 1);
      const restores = await Promise.all(
        Array.from({ length: 5 }, () =>
          as.clerkQ.fetch(`/api/withdrawals/${ours[0]!.id}/restore`, { method: 'POST' }).then((r) => r.status),
        ),
      );
      assert.ok(
        restores.every((code) => code === 200 || code === 409),
        String(restores),
      );
      assert.ok(restores.includes(200));
      assert.deepEqual(await counted(fileIds[0]!), before);
    });
  });
}

describe('the session tells the page WITHDRAW_DAYS and TRASH_DAYS, so its dialog and trash promise what the server keeps', () => {
  it('answers the configured days to every logged-in account', async () => {
    const server = await TestServer.start(storeTargets[0]!, { withdrawDays: 7, trashDays: 14 });
    try {
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('clerkQ', 'clerk', TOWN_Q);
      const clerk = await server.login('clerkQ');
      const session = await body<SessionView>(await clerk.fetch('/api/session'), 200);
      assert.deepEqual([session.withdrawDays, session.trashDays], [7, 14]);
    } finally {
      await server.close();
    }
  });
});
