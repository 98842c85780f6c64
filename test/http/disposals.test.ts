import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DisposalAnswer, DisposalList, DisposalView } from '../../shared/disposals.js';
import type { SavingsReport } from '../../shared/reports.js';
import type { AuditList } from '../../shared/schemas.js';
import type { TrashList, WithdrawalAnswer } from '../../shared/withdrawals.js';
import { randomContent } from '../support/content.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { uploadFolder } from '../support/receipts.js';

/**
 * 销毁 and 销毁清册 over HTTP. Two counties of 沧州市 (Hebei loaded): 青县 with two clerks of one
 * town and its administrator, 东光县 with a clerk and its administrator; and the archive's
 * top-level administrator.
 *
 * TEST DOUBLES: the deletion of a content (issue 41 part 3's, built in parallel) and the holds
 * (part 4's) are not in this branch; the server is given a deletion that records which files it
 * was asked to delete (and fails when told to), and a hold check over a set the test fills. The
 * counts, the trash and the register are the archive's own.
 */
type Who = 'anonymous' | 'clerkQ' | 'clerkQ2' | 'clerkD' | 'adminQ' | 'adminD' | 'top';
const TOWN_Q = '130922100';
const TOWN_D = '130923100';

for (const target of storeTargets) {
  describe(`disposal and its register (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    const deleted: string[] = [];
    let failDeletion = false;

    before(async () => {
      server = await TestServer.start(target, {
        disposal: {
          // The archive's own deletion (the purge's), watched, and cut short when a test says.
          deleteContent: async (fileId, by, why) => {
            if (failDeletion) throw new Error('the deletion was cut short');
            deleted.push(fileId);
            return server.archive.services.purge.deleteContent(fileId, by, why, { ignoreHolds: true });
          },
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

    const dispose = (who: Who, request: object) =>
      as[who].json('/api/disposals', 'POST', {
        reason: '保管期满，经鉴定无保存价值',
        approvalRef: '沧档销〔2026〕7号',
        confirm: '销毁',
        ...request,
      });

    const savings = async () => (await body<SavingsReport>(await as.top.fetch('/api/reports/savings'), 200)).summary;

    /** A disposal of the file whose deletion is cut short (500): out of every count, its bytes kept. */
    async function disposeCutShort(fileId: string) {
      failDeletion = true;
      try {
        assert.equal((await dispose('top', { fileIds: [fileId] })).status, 500);
      } finally {
        failDeletion = false;
      }
    }

    /**
     * A file held in three ways: clerkQ uploaded it twice, clerkD once (another county), and
     * clerkQ2's upload of it is in the trash.
     */
    async function widelyHeldFile() {
      const data = randomContent(3000);
      const [first] = (await uploadFolder(as.clerkQ, [data], '县志')).fileIds;
      await uploadFolder(as.clerkQ, [data], '县志');
      await uploadFolder(as.clerkD, [data], '东光');
      const { uploadIds } = await uploadFolder(as.clerkQ2, [data], '误传');
      await body<WithdrawalAnswer>(
        await as.clerkQ2.json('/api/withdrawals', 'POST', { uploads: uploadIds, reason: 'wrong_unit' }),
        200,
      );
      return first!;
    }

    it('POST /api/disposals: top-level administrators only; the rest are told no and nothing changes', async () => {
      const { fileIds } = await uploadFolder(as.clerkQ, [randomContent(500)]);
      const before = await savings();
      assert.equal((await dispose('anonymous', { fileIds })).status, 401);
      for (const who of ['clerkQ', 'adminQ', 'adminD'] as const) {
        const refusal = await body<{ error: string; message: string }>(await dispose(who, { fileIds }), 403);
        assert.equal(refusal.error, 'forbidden', who);
      }
      assert.deepEqual(await savings(), before);
      assert.equal(deleted.includes(fileIds[0]!), false);
      const answer = await body<DisposalAnswer>(await dispose('top', { fileIds }), 200);
      assert.deepEqual(
        answer.disposed.map((d) => [d.fileId, d.state, d.disposedBy.username]),
        [[fileIds[0], 'disposed', 'top']],
      );
    });

    it('takes every upload of the file out of every count, empties it from the trash, deletes its bytes and keeps an entry', async () => {
      const fileId = await widelyHeldFile();
      const before = await savings();
      const trashBefore = await body<TrashList>(await as.adminQ.fetch('/api/trash'), 200);
      assert.ok(trashBefore.items.some((w) => w.fileId === fileId));

      const answer = await body<DisposalAnswer>(await dispose('top', { fileIds: [fileId] }), 200);
      const [entry] = answer.disposed;
      assert.deepEqual(
        deleted.filter((f) => f === fileId),
        [fileId],
        'deleted once',
      );
      // Its three uploads that counted leave every count; the one in the trash leaves the trash.
      const afterwards = await savings();
      assert.equal(afterwards.uploads, before.uploads - 3);
      assert.equal(afterwards.savedUploads, before.savedUploads - 2);
      const trash = await body<TrashList>(await as.adminQ.fetch('/api/trash'), 200);
      assert.equal(
        trash.items.some((w) => w.fileId === fileId),
        false,
      );
      // Its withdrawal is closed: not restorable, as its bytes are gone.
      const withdrawal = trashBefore.items.find((w) => w.fileId === fileId)!;
      const restore = await as.top.json(`/api/withdrawals/${withdrawal.id}/restore`, 'POST', {});
      assert.equal(restore.status, 404, await restore.clone().text());
      assert.match(((await restore.json()) as { message: string }).message, /已经销毁/);
      assert.deepEqual(
        {
          fileName: entry!.fileName,
          size: entry!.size,
          uploaders: entry!.uploaders.map((u) => u.username).sort(),
          counted: entry!.countedUploads,
          withdrawn: entry!.withdrawnUploads,
          reason: entry!.reason,
          approvalRef: entry!.approvalRef,
          by: entry!.disposedBy.username,
          state: entry!.state,
          otherUnits: entry!.otherUnits,
        },
        {
          fileName: '第1页.pdf',
          size: 3000,
          uploaders: ['clerkD', 'clerkQ', 'clerkQ2'],
          counted: 3,
          withdrawn: 1,
          reason: '保管期满，经鉴定无保存价值',
          approvalRef: '沧档销〔2026〕7号',
          by: 'top',
          state: 'disposed',
          otherUnits: 0,
        },
      );
      assert.deepEqual(
        entry!.units.map((u) => u.county).sort(),
        ['东光县', '青县'],
        'the units of both counties that held it',
      );
      assert.ok(entry!.firstUploadAt! <= entry!.lastUploadAt!);
      // Disposed of once: asked again, nothing changes.
      const again = await body<{ error: string; message: string }>(await dispose('top', { fileIds: [fileId] }), 409);
      assert.equal(again.error, 'already_disposed');
      assert.match(again.message, /已由 top 于 .* 销毁/);
      assert.deepEqual(await savings(), afterwards);
      // The audit log's 管理操作 keeps it.
      const log = await body<AuditList>(
        await as.top.fetch('/api/audit?group=administration&action=content_disposed'),
        200,
      );
      const event = log.items.find((e) => e.fileId === fileId)!;
      assert.equal(event.userName, 'top');
      assert.match(event.detail ?? '', /沧档销〔2026〕7号.*3 uploads left every count, 1 left the trash/);
    });

    it('refuses the whole request, changing nothing, for an unknown file, a held one, or without the confirmations', async () => {
      const { fileIds } = await uploadFolder(as.clerkQ, [randomContent(700), randomContent(701)]);
      const before = await savings();
      const unknown = await body<{ error: string; message: string }>(
        await dispose('top', { fileIds: [fileIds[0], 'f'.repeat(24)] }),
        404,
      );
      assert.match(unknown.message, /找不到 1 个文件（f{24}）/);
      const hold = await body<{ id: string }>(
        await as.adminQ.json('/api/holds', 'POST', { files: [fileIds[1]], reason: '县纪委调查' }),
        201,
      );
      try {
        const refusal = await body<{ error: string; message: string }>(await dispose('top', { fileIds }), 423);
        assert.equal(refusal.error, 'file_on_hold');
        assert.match(refusal.message, /已被冻结（原因：县纪委调查），不能销毁/);
      } finally {
        await body(await as.adminQ.json(`/api/holds/${hold.id}/lift`, 'POST', {}), 200);
      }
      for (const [asked, field] of [
        [{ confirm: '确定' }, 'confirm'],
        [{ confirm: undefined }, 'confirm'],
        [{ approvalRef: '  ' }, 'approvalRef'],
        [{ reason: '' }, 'reason'],
        [{ fileIds: undefined }, 'fileIds'],
      ] as const) {
        const refusal = await body<{ error: string; message: string }>(
          await dispose('top', { fileIds, ...asked }),
          400,
        );
        assert.match(refusal.message, new RegExp(field), JSON.stringify(asked));
      }
      assert.deepEqual(await savings(), before);
      assert.equal(
        deleted.some((f) => fileIds.includes(f)),
        false,
      );
    });

    it("disposes of a receipt's files", async () => {
      const { receipt, fileIds } = await uploadFolder(as.top, [randomContent(900), randomContent(901)], '到期案卷');
      const answer = await body<DisposalAnswer>(await dispose('top', { receipt }), 200);
      assert.deepEqual(answer.disposed.map((d) => d.fileId).sort(), [...fileIds].sort());
      const notHers = await uploadFolder(as.clerkQ, [randomContent(902)]);
      assert.equal((await dispose('top', { receipt: notHers.receipt })).status, 404);
    });

    it('a disposal cut short is finished by the sweep, its uploads reversed once', async () => {
      const fileId = await widelyHeldFile();
      const before = await savings();
      await disposeCutShort(fileId);
      // Out of every count already, its bytes not yet deleted: listed as being disposed of.
      assert.equal((await savings()).uploads, before.uploads - 3);
      const list = await body<DisposalList>(await as.top.fetch('/api/disposals'), 200);
      const entry = list.items.find((d) => d.fileId === fileId)!;
      assert.equal(entry.state, 'disposing');
      assert.equal(deleted.includes(fileId), false);
      const finished = await server.archive.services.disposals.finishInterrupted(new Date(Date.now() + 120_000));
      assert.equal(finished, 1);
      const view = await body<DisposalView>(await as.top.fetch(`/api/disposals/${entry.id}`), 200);
      assert.equal(view.state, 'disposed');
      assert.deepEqual(
        deleted.filter((f) => f === fileId),
        [fileId],
      );
      assert.equal((await savings()).uploads, before.uploads - 3);
    });

    it('a disposal cut short is finished even when one of its reversed uploads was restored meanwhile', async () => {
      const fileId = await widelyHeldFile();
      const before = await savings();
      await disposeCutShort(fileId);
      // A restore that raced the disposal: one of the uploads it reversed counts again.
      const reversed = (await server.store.ledger.uploadsOfFile(fileId)).find((u) => !u.counted)!;
      assert.equal(await server.store.ledger.restore(reversed.key, 'a restore racing the disposal'), 'restored');
      assert.equal((await savings()).uploads, before.uploads - 2);
      assert.equal(await server.archive.services.disposals.finishInterrupted(new Date(Date.now() + 120_000)), 1);
      const list = await body<DisposalList>(await as.top.fetch('/api/disposals'), 200);
      assert.equal(list.items.find((d) => d.fileId === fileId)!.state, 'disposed');
      assert.equal((await savings()).uploads, before.uploads - 3, 'out of every count again');
      assert.ok((await server.store.ledger.uploadsOfFile(fileId)).every((u) => !u.counted));
    });

    it('answers a withdrawal of an upload whose file was disposed of with what happened, changing nothing', async () => {
      const { uploadIds, fileIds } = await uploadFolder(as.clerkQ, [randomContent(2500)], '已销毁');
      assert.equal((await dispose('top', { fileIds })).status, 200);
      const before = await savings();
      const res = await as.clerkQ.json('/api/withdrawals', 'POST', { uploads: uploadIds, reason: 'wrong_file' });
      assert.ok(res.status >= 400 && res.status < 500, `${res.status} ${await res.clone().text()}`);
      assert.match(((await res.json()) as { message: string }).message, /销毁/);
      assert.deepEqual(await savings(), before);
      // By receipt, the disposed row is skipped and the rest withdrawn.
      const folder = await uploadFolder(as.clerkQ, [randomContent(2600), randomContent(2700)], '半销毁');
      assert.equal((await dispose('top', { fileIds: [folder.fileIds[0]] })).status, 200);
      const byReceipt = await body<WithdrawalAnswer>(
        await as.clerkQ.json('/api/withdrawals', 'POST', { receipt: folder.receipt, reason: 'wrong_file' }),
        200,
      );
      assert.deepEqual([byReceipt.withdrawn.map((w) => w.uploadId), byReceipt.skippedRows], [[folder.uploadIds[1]], 1]);
    });

    it('GET /api/disposals: administrators read the register of their reach, a county its own units only', async () => {
      const fileId = await widelyHeldFile();
      const onlyD = (await uploadFolder(as.clerkD, [randomContent(1200)], '东光')).fileIds[0]!;
      const [entry] = (await body<DisposalAnswer>(await dispose('top', { fileIds: [fileId, onlyD] }), 200)).disposed;
      const ofD = (await body<DisposalList>(await as.top.fetch('/api/disposals'), 200)).items.find(
        (d) => d.fileId === onlyD,
      )!;
      assert.equal((await as.anonymous.fetch('/api/disposals')).status, 401);
      assert.equal((await as.clerkQ.fetch('/api/disposals')).status, 403);
      assert.equal((await as.clerkQ.fetch(`/api/disposals/${entry!.id}`)).status, 403);
      assert.equal((await as.clerkQ.fetch('/api/disposals.csv')).status, 403);

      const ofQ = await body<DisposalList>(await as.adminQ.fetch('/api/disposals?limit=500'), 200);
      const seen = ofQ.items.find((d) => d.id === entry!.id)!;
      assert.deepEqual(
        [seen.units.map((u) => u.county), seen.uploaders.map((u) => u.username).sort(), seen.otherUnits],
        [['青县'], ['clerkQ', 'clerkQ2'], 1],
      );
      assert.equal(
        ofQ.items.some((d) => d.fileId === onlyD),
        false,
        "another county's file is not in its register",
      );
      assert.equal((await as.adminQ.fetch(`/api/disposals/${ofD.id}`)).status, 404);
      assert.equal((await as.adminD.fetch(`/api/disposals/${ofD.id}`)).status, 200);
      const top = await body<DisposalView>(await as.top.fetch(`/api/disposals/${entry!.id}`), 200);
      assert.equal(top.units.length, 2);
      // A unit of another county is outside adminQ's reach.
      assert.equal((await as.adminQ.fetch(`/api/disposals?unit=${TOWN_D}`)).status, 404);
      const ofTownD = await body<DisposalList>(await as.adminD.fetch(`/api/disposals?unit=${TOWN_D}&limit=500`), 200);
      assert.ok(ofTownD.items.some((d) => d.id === ofD.id));
      // By date, in the archive's time zone.
      const today = new Intl.DateTimeFormat('sv-SE', { timeZone: 'Asia/Shanghai' }).format(new Date());
      const byDay = await body<DisposalList>(
        await as.top.fetch(`/api/disposals?from=${today}&to=${today}&limit=500`),
        200,
      );
      assert.ok(byDay.items.some((d) => d.id === entry!.id));
      const earlier = await body<DisposalList>(await as.top.fetch('/api/disposals?to=2020-01-01'), 200);
      assert.equal(earlier.total, 0);
      assert.equal((await as.top.fetch('/api/disposals?from=2026-13-01')).status, 400);
    });

    it('GET /api/disposals.csv: UTF-8 with a byte-order mark, Chinese headers, every entry the filters select', async () => {
      const fileId = await widelyHeldFile();
      await body<DisposalAnswer>(await dispose('top', { fileIds: [fileId] }), 200);
      const res = await as.top.fetch('/api/disposals.csv');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type')!, /^text\/csv; charset=utf-8/);
      const bytes = new Uint8Array(await res.arrayBuffer());
      assert.deepEqual([...bytes.slice(0, 3)], [0xef, 0xbb, 0xbf]);
      const lines = new TextDecoder().decode(bytes.slice(3)).split('\r\n');
      assert.equal(
        lines[0],
        '系统编号,文件名,大小（字节）,单位,上传者,首次上传,最后上传,入库时间,计数的上传,回收站中的上传,销毁原因,审批文号,销毁人,销毁时间,状态',
      );
      const row = lines.find((l) => l.startsWith(fileId))!;
      assert.match(row, /,3000,/);
      assert.match(row, /青县/);
      assert.match(row, /东光县/);
      assert.match(row, /,3,1,保管期满，经鉴定无保存价值,沧档销〔2026〕7号,top,\d{4}-\d\d-\d\d \d\d:\d\d,已销毁$/);
      const total = (await body<DisposalList>(await as.top.fetch('/api/disposals'), 200)).total;
      assert.equal(lines.filter((l) => l !== '').length, total + 1);
      // A county administrator's export: its reach's entries, other counties' units unnamed.
      const ofQ = new TextDecoder().decode(await (await as.adminQ.fetch('/api/disposals.csv')).arrayBuffer());
      const rowQ = ofQ.split('\r\n').find((l) => l.startsWith(fileId))!;
      assert.doesNotMatch(rowQ, /东光县|clerkD/);
      assert.match(rowQ, /其他 1 个单位/);
    });
  });
}
