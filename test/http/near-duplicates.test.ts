import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { NOTICE, NOTICE_FROM_THE_WEB, OTHER_NOTICE, POEM, POEM_TRADITIONAL } from '../support/texts.js';
import { tusUpload } from '../support/tus.js';

for (const target of storeTargets) {
  describe(`GET /api/reports/near-duplicates (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let clerk: Client;
    let admin: Client;
    before(async () => {
      server = await TestServer.start(target);
      clerk = await server.tokenClient(await server.addAccount('clerk', 'clerk', 'unit-a'));
      admin = await server.login((await server.addAccount('admin', 'admin', 'archive')).username);
      // New content by every way in (one file at a time, in a batch, over tus) is queued as it is committed.
      assert.equal((await clerk.upload('通知.txt', Buffer.from(NOTICE), {}, 'text/plain')).status, 201);
      assert.equal(
        (
          await clerk.batch([
            { name: '通知-网页.txt', data: Buffer.from(NOTICE_FROM_THE_WEB), type: 'text/plain' },
            { name: '培训.txt', data: Buffer.from(OTHER_NOTICE), type: 'text/plain' },
          ])
        ).status,
        200,
      );
      assert.equal(
        (await tusUpload(clerk, Buffer.from(POEM), { metadata: { filename: '静夜思.txt', filetype: 'text/plain' } }))
          .status,
        'stored',
      );
      assert.equal((await clerk.upload('靜夜思.txt', Buffer.from(POEM_TRADITIONAL), {}, 'text/plain')).status, 201);
      // Uploading a duplicate queues nothing new.
      assert.equal((await clerk.upload('通知 (1).txt', Buffer.from(NOTICE), {}, 'text/plain')).status, 200);
      const near = server.archive.services.nearDuplicates;
      let ran = 0;
      for (let n; (n = await near.runDue()) > 0;) ran += n;
      assert.equal(ran, 5);
    });
    after(() => server.close());

    it('shows administrators the pairs found, with names, units, similarity and where they differ, and how the fingerprinting stands', async () => {
      const res = await admin.fetch('/api/reports/near-duplicates?sort=jaccard');
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-total-count'), '2');
      const body = await res.json();
      const names = body.items
        .map((r: { a: { fileName: string }; b: { fileName: string } }) =>
          [r.a.fileName, r.b.fileName].sort().join(' ~ '),
        )
        .sort();
      assert.deepEqual(names, ['通知-网页.txt ~ 通知.txt', '静夜思.txt ~ 靜夜思.txt']);
      for (const row of body.items) {
        assert.deepEqual(
          row.a.units.map((u: { id: string }) => u.id),
          ['unit-a'],
        );
        assert.ok(row.jaccard > 0 && row.containment > 0);
        assert.equal(typeof row.a.snippet, 'string');
      }
      assert.deepEqual(
        { ...body.status, failures: body.status.failures.length },
        { fingerprinted: 5, skipped: 0, pairs: 2, queued: 0, running: 0, failed: 0, failures: 0 },
      );
      const viewed = await server.store.audit.search({ action: 'report_viewed', limit: 5, offset: 0 });
      assert.match(viewed.items[0]!.detail, /near-duplicates/);
    });

    it('filters by method and name, and exports CSV', async () => {
      const short = await (await admin.fetch('/api/reports/near-duplicates?method=containment')).json();
      assert.equal(short.total, 1);
      assert.equal(short.items[0].hamming, null);
      const named = await (await admin.fetch(`/api/reports/near-duplicates?q=${encodeURIComponent('网页')}`)).json();
      assert.equal(named.total, 1);
      const csv = await admin.fetch('/api/reports/near-duplicates?format=csv');
      assert.equal(csv.status, 200);
      assert.match(csv.headers.get('content-type')!, /text\/csv/);
      const lines = (await csv.text())
        .replace(/^\uFEFF/, '')
        .trim()
        .split('\r\n');
      assert.equal(lines.length, 3);
      assert.match(lines[0]!, /^found,method,hamming distance,jaccard,containment,A: file id,A: file name/);
    });

    it('is for administrators only, and refuses a bad query with the parameter named', async () => {
      assert.equal((await server.anonymous().fetch('/api/reports/near-duplicates')).status, 401);
      assert.equal((await clerk.fetch('/api/reports/near-duplicates')).status, 403);
      const bad = await admin.fetch('/api/reports/near-duplicates?sort=size');
      assert.equal(bad.status, 400);
      assert.match((await bad.json()).message, /sort/);
      assert.equal((await admin.fetch('/api/reports/near-duplicates?method=cosine')).status, 400);
    });
  });
}
