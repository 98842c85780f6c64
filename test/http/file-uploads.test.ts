import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { ReceiptView } from '../../shared/receipts.js';
import type { FileUploadList } from '../../shared/withdrawals.js';
import { md5, randomContent, sha256 } from '../support/content.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * GET /api/files/:id/uploads, where an administrator finds the uploads of others to withdraw (the
 * reports lead there): a file's uploads the caller sees, each with its upload id and whether the
 * caller may withdraw it, for every kind of caller. Two counties of 沧州市: 青县 with two clerks of
 * one town and its administrator, 东光县 with a clerk and its administrator; the top level.
 */
type Who = 'anonymous' | 'clerkQ' | 'clerkQ2' | 'clerkD' | 'adminQ' | 'adminD' | 'top';
const DAY = 86_400_000;
const TOWN_Q = '130922100';
const TOWN_D = '130923100';

for (const target of storeTargets) {
  describe(`a file's uploads, for withdrawing them (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    let now = new Date('2026-11-02T08:00:00Z');

    before(async () => {
      server = await TestServer.start(target, { clock: () => now, sessionTtlMs: 400 * DAY });
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

    /** One file the client uploads in a batch, with its receipt: its file id and its upload id. */
    async function upload(client: Client, data: Buffer, path: string) {
      const key = randomBytes(16).toString('hex');
      const batch = await body<{ results: Array<{ fileId: string }> }>(
        await client.batch([{ name: 'p.pdf', data }], [{ md5: md5(data), sha256: sha256(data), name: path, key }]),
        200,
      );
      const receipt = randomBytes(16).toString('hex');
      const row = { path, size: data.length, outcome: 'stored', via: 'batch', key, at: now.toISOString() };
      await body(
        await client.json(`/api/receipts/${receipt}`, 'PUT', {
          title: '卷',
          startedAt: now.toISOString(),
          rows: [row],
        }),
        200,
      );
      const view = await body<ReceiptView>(await client.fetch(`/api/receipts/${receipt}`), 200);
      return { fileId: batch.results[0]!.fileId, uploadId: view.rows[0]!.uploadId! };
    }

    const uploadsOf = async (who: Who, fileId: string, expected = 200, query = '') => {
      const res = await as[who].fetch(`/api/files/${fileId}/uploads${query}`);
      assert.equal(res.status, expected, `${who}: ${res.status} ${await res.clone().text()}`);
      return res.status === 200 ? ((await res.json()) as FileUploadList) : undefined;
    };
    /** Who sees which uploads (by upload id, newest first), and which they may withdraw. */
    const seen = async (who: Who, fileId: string) =>
      (await uploadsOf(who, fileId))!.items.map((u) => [u.uploadId, u.uploader.username, u.canWithdraw]);

    it('lists a file’s uploads with their upload ids to each caller within their unit or reach', async () => {
      const data = randomContent(4000);
      const first = await upload(as.clerkQ, data, '卷/第1页.pdf');
      now = new Date(now.getTime() + 60_000);
      const second = await upload(as.clerkQ, data, '卷/第1页.pdf');
      now = new Date(now.getTime() + 60_000);
      const east = await upload(as.clerkD, data, '东光/扫描.pdf');
      const { fileId } = first;
      assert.equal(second.fileId, fileId);

      await uploadsOf('anonymous', fileId, 401);
      assert.deepEqual(await seen('clerkQ', fileId), [
        [second.uploadId, 'clerkQ', true],
        [first.uploadId, 'clerkQ', true],
      ]);
      // A colleague of the unit sees them (as 本单位文件 shows the unit's files), but they are not theirs to withdraw.
      assert.deepEqual(await seen('clerkQ2', fileId), [
        [second.uploadId, 'clerkQ', false],
        [first.uploadId, 'clerkQ', false],
      ]);
      assert.deepEqual(await seen('clerkD', fileId), [[east.uploadId, 'clerkD', true]]);
      assert.deepEqual(await seen('adminQ', fileId), [
        [second.uploadId, 'clerkQ', true],
        [first.uploadId, 'clerkQ', true],
      ]);
      assert.deepEqual(await seen('adminD', fileId), [[east.uploadId, 'clerkD', true]]);
      assert.deepEqual(await seen('top', fileId), [
        [east.uploadId, 'clerkD', true],
        [second.uploadId, 'clerkQ', true],
        [first.uploadId, 'clerkQ', true],
      ]);

      const listed = (await uploadsOf('top', fileId))!;
      assert.equal(listed.total, 3);
      assert.deepEqual(
        { ...listed.items[0]!, uploader: listed.items[0]!.uploader.username },
        {
          uploadId: east.uploadId,
          uploader: 'clerkD',
          unit: { id: TOWN_D, city: '沧州市', county: '东光县', town: '东光镇' },
          fileName: '东光/扫描.pdf',
          size: 4000,
          uploadedAt: now.toISOString(),
          counts: true,
          withdrawal: null,
          canWithdraw: true,
        },
      );
      assert.deepEqual(
        (await uploadsOf('top', fileId, 200, '?limit=1&offset=1'))!.items.map((u) => u.uploadId),
        [second.uploadId],
      );
    });

    it('answers a file nobody in sight uploaded, an unknown file and a bad id as a clerk can act on', async () => {
      const { fileId } = await upload(as.clerkQ, randomContent(1000), '卷/只在青县.pdf');
      for (const who of ['clerkD', 'adminD'] as const) {
        const refusal = await body<{ error: string; message: string }>(
          await as[who].fetch(`/api/files/${fileId}/uploads`),
          404,
        );
        assert.equal(refusal.error, 'not_found');
        assert.match(refusal.message, /No file with this id is visible to you/);
      }
      await uploadsOf('top', '0'.repeat(24), 404);
      const bad = await body<{ message: string }>(await as.top.fetch('/api/files/xyz/uploads'), 400);
      assert.match(bad.message, /file id is 24 lowercase hexadecimal characters/);
      const badPage = await body<{ message: string }>(await as.top.fetch(`/api/files/${fileId}/uploads?limit=0`), 400);
      assert.match(badPage.message, /limit/);
    });

    it('an upload withdrawn by its listed id says so and counts no more; a clerk’s own only within WITHDRAW_DAYS', async () => {
      const started = now;
      try {
        const data = randomContent(5000);
        const first = await upload(as.clerkQ, data, '卷/撤回.pdf');
        now = new Date(now.getTime() + 60_000);
        const second = await upload(as.clerkQ, data, '卷/撤回.pdf');
        const [latest] = (await uploadsOf('adminQ', first.fileId))!.items;
        assert.equal(latest!.uploadId, second.uploadId);
        await body(
          await as.adminQ.json('/api/withdrawals', 'POST', { uploads: [latest!.uploadId], reason: 'repeated' }),
          200,
        );
        const after = (await uploadsOf('clerkQ', first.fileId))!.items;
        assert.deepEqual(
          after.map((u) => [
            u.uploadId,
            u.counts,
            u.withdrawal?.withdrawnBy ?? null,
            u.withdrawal?.reason ?? null,
            u.canWithdraw,
          ]),
          [
            [second.uploadId, false, 'adminQ', 'repeated', false],
            [first.uploadId, true, null, null, true],
          ],
        );
        // Past WITHDRAW_DAYS the clerk may not; the administrator still may.
        now = new Date(started.getTime() + 31 * DAY);
        assert.deepEqual(
          (await uploadsOf('clerkQ', first.fileId))!.items.map((u) => u.canWithdraw),
          [false, false],
        );
        assert.deepEqual(
          (await uploadsOf('adminQ', first.fileId))!.items.map((u) => u.canWithdraw),
          [false, true],
        );
        // All of the unit's uploads withdrawn: the file is still found, with its uploads as withdrawn.
        await body(
          await as.adminQ.json('/api/withdrawals', 'POST', { uploads: [first.uploadId], reason: 'wrong_unit' }),
          200,
        );
        assert.deepEqual(
          (await uploadsOf('clerkQ', first.fileId))!.items.map((u) => u.counts),
          [false, false],
        );
      } finally {
        now = started;
      }
    });
  });
}
