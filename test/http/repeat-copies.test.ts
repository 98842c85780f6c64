import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { ReceiptView } from '../../shared/receipts.js';
import type { RepeatEntryRow, RepeatUserRow, ReportPage } from '../../shared/reports.js';
import { md5, randomContent, sha256 } from '../support/content.js';
import { body, Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * The repeat-uploaders report tells copies inside one upload (the same page twice in one folder
 * upload, one receipt) from re-sends (the same page sent again in a later upload), over HTTP:
 * the JSON's columns, the filter that leaves copies out (`copies=exclude`, 只看重复发送), the CSV.
 */
const newId = () => randomBytes(16).toString('hex');
const at = '2026-11-25T08:00:00.000Z';

type Who = 'anonymous' | 'clerkQ' | 'adminQ' | 'adminD' | 'top';

for (const target of storeTargets) {
  describe(
    `repeat uploaders: copies inside one upload vs re-sends (${target.name} store)`,
    { skip: target.skip },
    () => {
      let server: TestServer;
      let as: Record<Who, Client>;

      before(async () => {
        server = await TestServer.start(target);
        await server.archive.services.directory.load(['13']);
        await server.addAccountIn('clerkQ', 'clerk', '130922100');
        await server.addAccountIn('adminQ', 'admin', '130922');
        await server.addAccountIn('adminD', 'admin', '130923');
        await server.addAccountIn('top', 'admin', 'archive');
        as = await server.loginAll(['clerkQ', 'adminQ', 'adminD', 'top']);

        // A folder where 第0033页 is the same scan as 第0034页 and 第0035页, with one other page;
        // then, in a later folder upload, 第0033页 once more.
        const [page, other] = [randomContent(2000), randomContent(3000)];
        const sendFolder = async (files: Array<[path: string, data: Uint8Array]>) => {
          const keys = files.map(() => newId());
          await body(
            await as.clerkQ.batch(
              files.map(([path, data]) => ({ name: path, data })),
              files.map(([path, data], i) => ({ md5: md5(data), sha256: sha256(data), name: path, key: keys[i] })),
            ),
            200,
          );
          const rows = files.map(([path, data], i) => ({
            path,
            size: data.length,
            outcome: 'stored',
            via: 'batch',
            key: keys[i],
            at,
          }));
          await body(
            await as.clerkQ.json(`/api/receipts/${newId()}`, 'PUT', { title: '案卷007', startedAt: at, rows }),
            200,
          );
        };
        await sendFolder([
          ['案卷007/第0033页.jpg', page],
          ['案卷007/第0034页.jpg', page],
          ['案卷007/第0035页.jpg', page],
          ['案卷007/第0036页.jpg', other],
        ]);
        await sendFolder([['案卷007/第0033页.jpg', page]]);
      });
      after(() => server.close());

      const report = async <Row>(who: Who, query: string, expected = 200) => {
        const res = await as[who].fetch(`/api/reports/repeat-uploaders?${query}`);
        assert.equal(res.status, expected, `${who}: ${res.status} ${await res.clone().text()}`);
        return expected === 200 ? ((await res.json()) as ReportPage<Row>) : undefined;
      };

      it('shows, next to the repeat uploads, how many were copies inside one upload and how many re-sends', async () => {
        const entries = (await report<RepeatEntryRow>('top', ''))!;
        assert.deepEqual(
          entries.items.map((r) => [r.fileName, r.uploadCount, r.copies, r.resends]),
          [['案卷007/第0033页.jpg', 4, 2, 1]],
        );
        const users = (await report<RepeatUserRow>('top', 'group=user'))!;
        assert.deepEqual(
          users.items.map((r) => [r.userName, r.uploads, r.repeatUploads, r.copies, r.resends, r.repeatBytes]),
          [['clerkQ', 4, 3, 2, 1, 6000]],
        );
      });

      it('只看重复发送 (copies=exclude): each folder upload counts once, so only the re-send is a repeat', async () => {
        const users = (await report<RepeatUserRow>('top', 'group=user&copies=exclude'))!;
        assert.deepEqual(
          users.items.map((r) => [r.userName, r.uploads, r.repeatUploads, r.copies, r.resends, r.repeatBytes]),
          [['clerkQ', 2, 1, 2, 1, 2000]],
        );
        // Uploaded three times or more counting copies, but twice without them.
        assert.equal((await report('top', 'min=3'))!.total, 1);
        assert.equal((await report('top', 'min=3&copies=exclude'))!.total, 0);
      });

      it('refuses a value of the filter it does not know, saying which it takes', async () => {
        const res = await as.top.fetch('/api/reports/repeat-uploaders?copies=some');
        assert.equal(res.status, 400);
        const answer = (await res.json()) as { message: string };
        assert.match(answer.message, /copies/);
        assert.match(answer.message, /include|exclude/);
      });

      it('exports both columns in CSV, headed in Chinese for people', async () => {
        const res = await as.top.fetch('/api/reports/repeat-uploaders?format=csv&group=user&lang=zh-CN&copies=exclude');
        assert.equal(res.status, 200);
        const lines = new TextDecoder('utf-8', { ignoreBOM: true })
          .decode(await res.arrayBuffer())
          .slice(1)
          .split('\r\n');
        const header = lines[0]!.split(',');
        const row = lines[1]!.split(',');
        const cell = (column: string) => row[header.indexOf(column)];
        assert.deepEqual(['上传次数', '重复上传次数', '其中同批重复次数', '其中重复发送次数'].map(cell), [
          '2',
          '1',
          '2',
          '1',
        ]);
        assert.ok(header.indexOf('其中同批重复次数') === header.indexOf('重复上传次数') + 1, 'next to the repeats');
      });

      it('is for administrators, each within its reach, with the filter as without it', async () => {
        await report('anonymous', 'copies=exclude', 401);
        await report('clerkQ', 'copies=exclude', 403);
        const seen = async (who: Who) =>
          (await report<RepeatUserRow>(who, 'group=user&copies=exclude'))!.items.map((r) => [r.userName, r.resends]);
        assert.deepEqual(await seen('adminQ'), [['clerkQ', 1]]);
        assert.deepEqual(await seen('adminD'), [], 'another county’s administrator sees none of 青县’s');
        assert.deepEqual(await seen('top'), [['clerkQ', 1]]);
      });
    },
  );
}

/**
 * The same drops made the way the upload page makes them (client/src/upload/folder-upload.ts):
 * the first copy of a page goes in a batch, each other copy waits for it and is then counted by
 * a check and a proof of its own (instant upload, no bytes sent), and the receipt names those by
 * their claims. The later drop's proof may be counted before the first drop's receipt is kept
 * (the page sends that receipt as it clears the ended list for the next folder).
 */
for (const target of storeTargets) {
  describe(
    `repeat uploaders: copies counted by proofs, as the upload page sends them (${target.name} store)`,
    { skip: target.skip },
    () => {
      let server: TestServer;
      let clerk: Client;
      let top: Client;
      const [first, later] = [newId(), newId()];
      const page = randomContent(2000);

      /** A check and a proof of its own, as the page sends a copy that waited for the first. */
      const proved = async (path: string) => {
        const [check] = (
          await body<{
            results: Array<{ status: string; claimId: string; ranges: Array<{ start: number; end: number }> }>;
          }>(
            await clerk.json('/api/uploads/checks', 'POST', {
              files: [{ md5: md5(page), sha256: sha256(page), size: page.length, name: path }],
            }),
            200,
          )
        ).results;
        assert.equal(check!.status, 'prove', `${path}: the archive holds the page`);
        const digests = check!.ranges.map((r) => md5(page.subarray(r.start, r.end)));
        const [proof] = (
          await body<{ results: Array<{ status: string }> }>(
            await clerk.json('/api/uploads/proofs', 'POST', { proofs: [{ claimId: check!.claimId, digests }] }),
            200,
          )
        ).results;
        assert.equal(proof!.status, 'duplicate', `${path}: counted without its bytes`);
        return { path, size: page.length, outcome: 'instant', claimId: check!.claimId, at };
      };
      const keep = async (id: string, title: string, rows: unknown[]) =>
        body(await clerk.json(`/api/receipts/${id}`, 'PUT', { title, startedAt: at, rows }), 200);

      before(async () => {
        server = await TestServer.start(target);
        await server.archive.services.directory.load(['13']);
        await server.addAccountIn('clerkQ', 'clerk', '130922100');
        await server.addAccountIn('top', 'admin', 'archive');
        ({ clerkQ: clerk, top } = await server.loginAll(['clerkQ', 'top']));

        const other = randomContent(3000);
        const sent = [
          { path: '2026年移交/案卷007/第0033页.jpg', data: page, key: newId() },
          { path: '2026年移交/案卷007/第0036页.jpg', data: other, key: newId() },
        ];
        await body(
          await clerk.batch(
            sent.map((f) => ({ name: f.path, data: f.data })),
            sent.map((f) => ({ md5: md5(f.data), sha256: sha256(f.data), name: f.path, key: f.key })),
          ),
          200,
        );
        const copies = [
          await proved('2026年移交/案卷007/第0034页.jpg'),
          await proved('2026年移交/案卷007/第0035页.jpg'),
        ];
        // The next folder's page is counted before the first folder's receipt is kept.
        const resent = await proved('补交/案卷007/第0033页.jpg');
        await keep(first, '2026年移交', [
          ...sent.map((f) => ({ path: f.path, size: f.data.length, outcome: 'stored', via: 'batch', key: f.key, at })),
          ...copies,
        ]);
        await keep(later, '补交', [resent]);
      });
      after(() => server.close());

      it('counts the proved copies as copies inside one upload, and the later drop’s page as a re-send', async () => {
        const res = await top.fetch('/api/reports/repeat-uploaders?group=user');
        const users = await body<ReportPage<RepeatUserRow>>(res, 200);
        assert.deepEqual(
          users.items.map((r) => [r.userName, r.uploads, r.repeatUploads, r.copies, r.resends]),
          [['clerkQ', 4, 3, 2, 1]],
        );
        const resendsOnly = await body<ReportPage<RepeatUserRow>>(
          await top.fetch('/api/reports/repeat-uploaders?group=user&copies=exclude'),
          200,
        );
        assert.deepEqual(
          resendsOnly.items.map((r) => [r.uploads, r.repeatUploads, r.copies, r.resends]),
          [[2, 1, 2, 1]],
        );
      });

      it('says in the receipt which page of it each copy equals; the first of them and the re-send equal none', async () => {
        const receipt = await body<ReceiptView>(await clerk.fetch(`/api/receipts/${first}`), 200);
        assert.deepEqual(
          receipt.rows.map((r) => [r.path, r.outcome, r.sameAs]),
          [
            ['2026年移交/案卷007/第0033页.jpg', 'stored', undefined],
            ['2026年移交/案卷007/第0036页.jpg', 'stored', undefined],
            ['2026年移交/案卷007/第0034页.jpg', 'instant', '2026年移交/案卷007/第0033页.jpg'],
            ['2026年移交/案卷007/第0035页.jpg', 'instant', '2026年移交/案卷007/第0033页.jpg'],
          ],
        );
        const again = await body<ReceiptView>(await clerk.fetch(`/api/receipts/${later}`), 200);
        assert.deepEqual(
          again.rows.map((r) => [r.path, r.sameAs]),
          [['补交/案卷007/第0033页.jpg', undefined]],
        );
      });
    },
  );
}
