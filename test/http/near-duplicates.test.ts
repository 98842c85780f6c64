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
      assert.match(lines[0]!, /^found,similarity,method,hamming distance,jaccard,containment,A: file id,A: file name/);
      assert.match(lines[0]!, /,handled at,handled by,note$/);
      // For people: Chinese columns, one similarity in per cent (the methods' measures are for programs).
      const readable = (await (await admin.fetch('/api/reports/near-duplicates?format=csv&lang=zh-CN')).text())
        .replace(/^\uFEFF/, '')
        .trim()
        .split('\r\n');
      assert.match(readable[0]!, /^发现时间（北京时间 UTC\+8）,相似度（%）,A：文件编号,A：文件名,A：大小（字节）,/);
      assert.doesNotMatch(readable[0]!, /比对方法|海明距离|Jaccard|包含度/);
      assert.match(readable[0]!, /,A：上传单位,A：不同之处,.*,处理时间（北京时间 UTC\+8）,处理人,处理说明$/);
      assert.ok(
        readable.slice(1).every((l) => /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},(100|[1-9]\d),[0-9a-f]{24},/.test(l)),
        readable.join('\n'),
      );
    });

    it('marks a pair handled with a note: it leaves the open list, is listed as handled, audited, and can be opened again', async () => {
      const open = await (await admin.fetch('/api/reports/near-duplicates?sort=jaccard')).json();
      const row = open.items[0] as { a: { fileId: string; fileName: string }; b: { fileId: string; fileName: string } };
      // Either order of the two files names the pair.
      const marked = await admin.json('/api/reports/near-duplicates/review', 'PUT', {
        fileA: row.b.fileId,
        fileB: row.a.fileId,
        note: '  修订稿，两份都保留  ',
      });
      assert.equal(marked.status, 200, await marked.clone().text());
      assert.deepEqual(
        { ...(await marked.json()), at: 'at' },
        { at: 'at', userName: 'admin', note: '修订稿，两份都保留' },
      );
      const still = await (await admin.fetch('/api/reports/near-duplicates')).json();
      assert.equal(still.total, 1, 'the handled pair leaves the open list');
      const handled = await (await admin.fetch('/api/reports/near-duplicates?status=reviewed')).json();
      assert.equal(handled.total, 1);
      assert.equal(handled.items[0].review.note, '修订稿，两份都保留');
      assert.equal((await (await admin.fetch('/api/reports/near-duplicates?status=all')).json()).total, 2);
      const [event] = (await server.store.audit.search({ action: 'near_duplicate_reviewed', limit: 1, offset: 0 }))
        .items;
      assert.deepEqual(event!.note, {
        code: 'pair_reviewed',
        nameA: [row.a, row.b].sort((x, y) => (x.fileId < y.fileId ? -1 : 1))[0]!.fileName,
        nameB: [row.a, row.b].sort((x, y) => (x.fileId < y.fileId ? -1 : 1))[1]!.fileName,
        note: '修订稿，两份都保留',
      });
      // A rebuild of the index finds the pair again: it stays handled.
      const near = server.archive.services.nearDuplicates;
      await near.rebuild();
      while ((await near.runDue()) > 0);
      const afterRebuild = await (await admin.fetch('/api/reports/near-duplicates?status=reviewed')).json();
      assert.equal(afterRebuild.total, 1, 'still handled after a rebuild');
      const query = new URLSearchParams({ fileA: row.a.fileId, fileB: row.b.fileId }).toString();
      const reopened = await admin.fetch(`/api/reports/near-duplicates/review?${query}`, { method: 'DELETE' });
      assert.equal(reopened.status, 204);
      assert.equal(
        (await server.store.audit.search({ action: 'near_duplicate_reopened', limit: 5, offset: 0 })).total,
        1,
      );
      // Opening an open pair again changes nothing and records nothing.
      assert.equal(
        (await admin.fetch(`/api/reports/near-duplicates/review?${query}`, { method: 'DELETE' })).status,
        204,
      );
      assert.equal(
        (await server.store.audit.search({ action: 'near_duplicate_reopened', limit: 5, offset: 0 })).total,
        1,
      );
    });

    it('lets only administrators who see a pair mark it, and refuses bad requests with what is wrong', async () => {
      const { items } = await (await admin.fetch('/api/reports/near-duplicates?status=all')).json();
      const pair = { fileA: items[0].a.fileId, fileB: items[0].b.fileId };
      const put = (who: Client, body: unknown) => who.json('/api/reports/near-duplicates/review', 'PUT', body);
      assert.equal((await put(server.anonymous(), pair)).status, 401);
      assert.equal((await put(clerk, pair)).status, 403);
      // The files were uploaded in 青县: its administrator sees the pair, 献县's does not.
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('admin-qing', 'admin', '130922');
      await server.addAccountIn('admin-other', 'admin', '130923');
      assert.equal((await put(await server.login('admin-qing'), pair)).status, 200);
      const outside = await put(await server.login('admin-other'), pair);
      assert.equal(outside.status, 404);
      assert.match((await outside.json()).message, /No such pair/);
      const unknown = await put(admin, { fileA: 'a'.repeat(24), fileB: 'b'.repeat(24) });
      assert.equal(unknown.status, 404);
      const badId = await put(admin, { ...pair, fileA: 'not-a-file' });
      assert.equal(badId.status, 400);
      assert.match((await badId.json()).message, /24 hexadecimal/);
      assert.equal((await put(admin, { ...pair, note: '长'.repeat(501) })).status, 400);
      assert.equal((await admin.fetch('/api/reports/near-duplicates?status=done')).status, 400);
      assert.equal((await admin.fetch('/api/reports/near-duplicates/review', { method: 'DELETE' })).status, 400);
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
