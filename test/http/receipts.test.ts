import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { ReceiptSummary, ReceiptView } from '../../shared/receipts.js';
import { checkBody, digestsFor, md5, randomContent, sha256 } from '../support/content.js';
import { body, Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * 上传清单 over HTTP: the page reports a folder upload; the archive keeps it with each finished
 * file as it was counted, refuses one that claims what was not counted, and shows it to its
 * clerk only.
 */
const newKey = () => randomBytes(16).toString('hex');
const newId = () => randomBytes(16).toString('hex');
const at = '2026-11-25T08:00:00.000Z';

for (const target of storeTargets) {
  describe(`receipts of folder uploads (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<'anonymous' | 'clerk' | 'other' | 'admin', Client>;

    before(async () => {
      server = await TestServer.start(target);
      await server.addAccount('clerk', 'clerk', 'unit-a');
      await server.addAccount('other', 'clerk', 'unit-b', '献县');
      await server.addAccount('admin', 'admin', 'archive');
      as = await server.loginAll(['clerk', 'other', 'admin'] as const);
    });
    after(() => server.close());

    /** A folder uploaded by the clerk: two pages in a batch (each under its key), one instantly. */
    async function uploadFolder() {
      const [a, b, held] = [randomContent(1000), randomContent(1200), randomContent(1500)];
      await as.other.batch([{ name: 'held.pdf', data: held }]);
      const keys = [newKey(), newKey()];
      const batch = await body<{ results: Array<{ fileId: string }> }>(
        await as.clerk.batch(
          [
            { name: 'a', data: a },
            { name: 'b', data: b },
          ],
          [
            { md5: md5(a), sha256: sha256(a), name: '卷/a.pdf', key: keys[0] },
            { md5: md5(b), sha256: sha256(b), name: '卷/b.pdf', key: keys[1] },
          ],
        ),
        200,
      );
      const check = await body<{ results: Array<{ claimId: string; ranges: Array<{ start: number; end: number }> }> }>(
        await as.clerk.json('/api/uploads/checks', 'POST', { files: [checkBody(held, '卷/held.pdf')] }),
        200,
      );
      const claim = check.results[0]!;
      const proof = await body<{ results: Array<{ fileId: string }> }>(
        await as.clerk.json('/api/uploads/proofs', 'POST', {
          proofs: [{ claimId: claim.claimId, digests: digestsFor(held, claim.ranges) }],
        }),
        200,
      );
      const rows = [
        { path: '卷/a.pdf', size: a.length, outcome: 'stored', via: 'batch', key: keys[0], at },
        { path: '卷/b.pdf', size: b.length, outcome: 'stored', via: 'batch', key: keys[1], at },
        { path: '卷/held.pdf', size: held.length, outcome: 'instant', claimId: claim.claimId, at },
        { path: '卷/太大.tif', size: 5e9, outcome: 'failed', reason: 'payload_too_large', at },
      ];
      return { rows, fileIds: [batch.results[0]!.fileId, batch.results[1]!.fileId, proof.results[0]!.fileId] };
    }

    it('keeps a receipt with each finished file as the archive counted it, and lists it', async () => {
      const { rows, fileIds } = await uploadFolder();
      const id = newId();
      const summary = await body<ReceiptSummary>(
        await as.clerk.json(`/api/receipts/${id}`, 'PUT', { title: '卷', startedAt: at, rows }),
        200,
      );
      assert.deepEqual(summary.counts, { stored: 2, duplicate: 0, instant: 1, failed: 1, skipped: 0 });
      const receipt = await body<ReceiptView>(await as.clerk.fetch(`/api/receipts/${id}`), 200);
      assert.deepEqual(
        receipt.rows.map((r) => [r.path, r.outcome, r.fileId, r.uploadCount, r.reason]),
        [
          ['卷/a.pdf', 'stored', fileIds[0], 1, undefined],
          ['卷/b.pdf', 'stored', fileIds[1], 1, undefined],
          ['卷/held.pdf', 'instant', fileIds[2], 1, undefined],
          ['卷/太大.tif', 'failed', undefined, undefined, 'payload_too_large'],
        ],
      );
      const listed = await body<{ items: ReceiptSummary[]; total: number }>(await as.clerk.fetch('/api/receipts'), 200);
      assert.equal(listed.items[0]!.id, id);
      assert.equal(listed.items[0]!.total, 4);

      // Sent again once a retry finished: the receipt is replaced, not added to.
      const retried = rows.slice(0, 3);
      await body(await as.clerk.json(`/api/receipts/${id}`, 'PUT', { title: '卷', startedAt: at, rows: retried }), 200);
      assert.equal((await body<ReceiptView>(await as.clerk.fetch(`/api/receipts/${id}`), 200)).rows.length, 3);
      assert.equal((await body<{ total: number }>(await as.clerk.fetch('/api/receipts'), 200)).total, 1);
    });

    it('keeps a file the clerk chose to skip (uploaded into its unit before) as skipped, with no file or count of its own', async () => {
      const { rows } = await uploadFolder();
      const id = newId();
      const skipped = { path: '卷/旧/第1页.jpg', size: 1000, outcome: 'skipped', at };
      const summary = await body<ReceiptSummary>(
        await as.clerk.json(`/api/receipts/${id}`, 'PUT', { title: '卷', startedAt: at, rows: [...rows, skipped] }),
        200,
      );
      assert.deepEqual(summary.counts, { stored: 2, duplicate: 0, instant: 1, failed: 1, skipped: 1 });
      const receipt = await body<ReceiptView>(await as.clerk.fetch(`/api/receipts/${id}`), 200);
      assert.deepEqual(receipt.rows[4], { ...skipped, reason: 'already_uploaded' });
    });

    it('refuses a receipt that claims an upload not counted for the clerk, keeping nothing', async () => {
      const { rows } = await uploadFolder();
      const id = newId();
      for (const bad of [
        { ...rows[0]!, key: newKey() },
        { ...rows[0]!, key: undefined },
        { ...rows[2]!, claimId: 'x'.repeat(32) },
      ]) {
        const res = await as.clerk.json(`/api/receipts/${id}`, 'PUT', { title: '卷', startedAt: at, rows: [bad] });
        const refusal = await body<{ error: string; message: string; details: { rows: unknown[] } }>(res, 400);
        assert.equal(refusal.error, 'validation_failed');
        assert.match(refusal.message, /row 1 \(卷\/(a|held)\.pdf\)/);
      }
      // Another clerk cannot put the clerk's uploads on a receipt of theirs.
      const theirs = await as.other.json(`/api/receipts/${id}`, 'PUT', { title: '卷', startedAt: at, rows });
      assert.equal(theirs.status, 400);
      assert.equal((await as.clerk.fetch(`/api/receipts/${id}`)).status, 404);
    });

    it('shows a receipt to its clerk only: anonymous 401, another clerk and an administrator 404', async () => {
      const { rows } = await uploadFolder();
      const id = newId();
      await body(await as.clerk.json(`/api/receipts/${id}`, 'PUT', { title: '卷', startedAt: at, rows }), 200);
      assert.equal((await as.anonymous.fetch(`/api/receipts/${id}`)).status, 401);
      assert.equal((await as.anonymous.fetch('/api/receipts')).status, 401);
      assert.equal(
        (await as.anonymous.json(`/api/receipts/${id}`, 'PUT', { title: '卷', startedAt: at, rows })).status,
        401,
      );
      for (const who of ['other', 'admin'] as const) {
        assert.equal((await as[who].fetch(`/api/receipts/${id}`)).status, 404, who);
        assert.ok(
          !(await body<{ items: ReceiptSummary[] }>(await as[who].fetch('/api/receipts'), 200)).items.some(
            (r) => r.id === id,
          ),
        );
      }
      assert.equal((await as.clerk.fetch(`/api/receipts/${id}`)).status, 200);
    });

    it('answers bad requests with what to change', async () => {
      const rows = [{ path: 'a.pdf', size: 1, outcome: 'failed', reason: 'network', at }];
      const cases: Array<[string, unknown, RegExp]> = [
        ['not-an-id', { title: 't', startedAt: at, rows }, /receipt id/],
        [newId(), { title: 't', startedAt: at, rows: [] }, /rows/],
        [newId(), { title: 't', startedAt: 'yesterday', rows }, /startedAt/],
        [newId(), { title: 't', startedAt: at, rows: [{ ...rows[0], outcome: 'lost' }] }, /outcome/],
      ];
      for (const [id, request, message] of cases) {
        const refusal = await body<{ message: string }>(
          await as.clerk.json(`/api/receipts/${id}`, 'PUT', request),
          400,
        );
        assert.match(refusal.message, message);
      }
      const huge = await as.clerk.fetch(`/api/receipts/${newId()}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 't', startedAt: at, rows, pad: 'x'.repeat(17 * 1024 * 1024) }),
      });
      assert.equal(huge.status, 413);
      assert.equal((await as.clerk.fetch('/api/receipts/not-an-id')).status, 400);
    });
  });
}
