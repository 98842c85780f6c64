import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FileTextSearch } from '../../shared/schemas.js';
import type { WithdrawalAnswer } from '../../shared/withdrawals.js';
import { md5, sha256 } from '../support/content.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * Search by content (GET /api/files/search), for every kind of caller: two towns of 青县 (a clerk
 * in each), a town of 东光县 (a clerk), the two counties' administrators, 沧州市's administrator
 * and the archive's top-level administrator. Each town uploads a text about 档案数字化.
 */
type Who = 'anonymous' | 'clerkQ' | 'clerkQ2' | 'clerkD' | 'adminQ' | 'adminD' | 'adminCity' | 'top';

const TEXT_Q = '青县档案局召开档案数字化工作会议，部署二〇二六年度扫描任务（ＯＣＲ识别）。会议要求各村按时完成。';
const TEXT_Q2 = '金牛镇档案数字化进度报告：已扫描案卷三百卷。';
const TEXT_D = '东光县档案馆关于档案数字化工作的通知，请各乡镇按时报送台账。';

for (const target of storeTargets) {
  describe(`GET /api/files/search (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    const files: Record<'q' | 'q2' | 'd', { fileId: string; uploadId: string }> = {} as never;

    /** One text file uploaded in a batch: its file id and the key its upload was counted under. */
    async function uploadText(client: Client, name: string, text: string) {
      const data = Buffer.from(text);
      const key = randomBytes(16).toString('hex');
      const batch = await body<{ results: Array<{ fileId: string }> }>(
        await client.batch([{ name, data, type: 'text/plain' }], [{ md5: md5(data), sha256: sha256(data), name, key }]),
        200,
      );
      const me = await body<{ account: { id: string } }>(await client.fetch('/api/session'), 200);
      return { fileId: batch.results[0]!.fileId, uploadId: `file:${me.account.id}:${key}` };
    }

    const readQueue = async () => {
      const near = server.archive.services.nearDuplicates;
      while ((await near.runDue()) > 0);
    };

    before(async () => {
      server = await TestServer.start(target);
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('clerkQ', 'clerk', '130922100');
      await server.addAccountIn('clerkQ2', 'clerk', '130922101');
      await server.addAccountIn('clerkD', 'clerk', '130923100');
      await server.addAccountIn('adminQ', 'admin', '130922');
      await server.addAccountIn('adminD', 'admin', '130923');
      await server.addAccountIn('adminCity', 'admin', '130900');
      await server.addAccountIn('top', 'admin', 'archive');
      as = await server.loginAll(['clerkQ', 'clerkQ2', 'clerkD', 'adminQ', 'adminD', 'adminCity', 'top']);
      files.q = await uploadText(as.clerkQ, '会议纪要.txt', TEXT_Q);
      files.q2 = await uploadText(as.clerkQ2, '进度报告.txt', TEXT_Q2);
      files.d = await uploadText(as.clerkD, '通知.txt', TEXT_D);
      await readQueue();
    });
    after(() => server.close());

    const search = async (who: Who, q: string, extra = '') =>
      body<FileTextSearch>(await as[who].fetch(`/api/files/search?q=${encodeURIComponent(q)}${extra}`), 200);
    const found = async (who: Who, q: string) => (await search(who, q)).items.map((i) => i.fileId).sort();

    it('finds a clerk’s unit’s files by words of their text, an administrator’s reach’s, the top level all', async () => {
      assert.equal((await as.anonymous.fetch('/api/files/search?q=档案')).status, 401);
      const all = [files.q.fileId, files.q2.fileId, files.d.fileId].sort();
      assert.deepEqual(await found('clerkQ', '档案数字化'), [files.q.fileId]);
      assert.deepEqual(await found('clerkQ2', '档案数字化'), [files.q2.fileId]);
      assert.deepEqual(await found('clerkD', '档案数字化'), [files.d.fileId]);
      assert.deepEqual(await found('adminQ', '档案数字化'), [files.q.fileId, files.q2.fileId].sort());
      assert.deepEqual(await found('adminD', '档案数字化'), [files.d.fileId]);
      assert.deepEqual(await found('adminCity', '档案数字化'), all);
      assert.deepEqual(await found('top', '档案数字化'), all);
    });

    it('never tells whether a file outside the caller’s view holds the words', async () => {
      // 报送台账 is only in 东光县's text: 青县's people get the answer a word found nowhere gets.
      for (const who of ['clerkQ', 'clerkQ2', 'adminQ'] as const) {
        const elsewhere = await search(who, '报送台账');
        const nowhere = await search(who, '火星基地');
        assert.deepEqual([elsewhere.items, elsewhere.more], [[], false], who);
        assert.deepEqual([nowhere.items, nowhere.more], [[], false], who);
      }
      assert.deepEqual(await found('clerkD', '报送台账'), [files.d.fileId]);
    });

    it('shows each file under the view’s name with a snippet where the words are marked', async () => {
      const answer = await search('clerkQ', '数字化 会议');
      assert.deepEqual(answer.terms, ['数字化', '会议']);
      const [hit] = answer.items;
      assert.equal(hit!.fileName, '会议纪要.txt');
      assert.equal(hit!.contentType, 'text/plain');
      assert.equal(hit!.fileLength, Buffer.byteLength(TEXT_Q));
      const marked = hit!.snippet.marks.map(([s, e]) => hit!.snippet.text.slice(s, e));
      assert.ok(hit!.snippet.text.includes('召开档案数字化工作会议'), hit!.snippet.text);
      assert.deepEqual([...new Set(marked)].sort(), ['会议', '数字化'].sort());
    });

    it('segments Chinese: a word inside a longer one is found, traditional script and full-width letters too', async () => {
      assert.deepEqual(await found('clerkQ', '數字化'), [files.q.fileId], 'traditional script');
      assert.deepEqual(await found('clerkQ', '数字'), [files.q.fileId], '数字 is in 数字化');
      const [fullWidth] = (await search('clerkQ', 'OCR')).items;
      assert.equal(fullWidth?.fileId, files.q.fileId, 'ＯＣＲ in the text');
      const [s, e] = fullWidth.snippet.marks[0]!;
      assert.equal(fullWidth.snippet.text.slice(s, e), 'ＯＣＲ', 'marked as written');
      assert.deepEqual(await found('clerkQ', '档案 火星'), [], 'every word must be in the text');
      assert.deepEqual((await search('clerkQ', '的，。')).items, [], 'no words: nothing');
    });

    it('refuses a search without words, and pages with more', async () => {
      const empty = await body<{ error: string }>(await as.clerkQ.fetch('/api/files/search?q=%20'), 400);
      assert.equal(empty.error, 'validation_failed');
      const first = await search('top', '档案', '&limit=2');
      const second = await search('top', '档案', '&limit=2&offset=2');
      assert.deepEqual([first.items.length, first.more, second.items.length, second.more], [2, true, 1, false]);
      const ids = [...first.items, ...second.items].map((i) => i.fileId).sort();
      assert.deepEqual(ids, [files.q.fileId, files.q2.fileId, files.d.fileId].sort());
    });

    it('forgets a file withdrawn from the unit, and its text when its content is purged', async () => {
      const gone = await uploadText(as.clerkQ, '待删.txt', '这份临时通知将被彻底删除，内容涉及防汛值班安排。');
      await readQueue();
      assert.deepEqual(await found('clerkQ', '防汛值班'), [gone.fileId]);
      const withdrawal = await body<WithdrawalAnswer>(
        await as.clerkQ.json('/api/withdrawals', 'POST', { uploads: [gone.uploadId], reason: 'wrong_file' }),
        200,
      );
      assert.deepEqual(await found('clerkQ', '防汛值班'), [], 'withdrawn: no longer the unit’s');
      // 通知 is in 东光县's text too: two files hold it, more than 青县's town has left (one), so
      // the search reads the town's files from the ledger, and the withdrawn one is not among them.
      assert.deepEqual(await found('clerkQ', '通知'), [], 'walking the unit’s files: withdrawn too');
      assert.equal(await server.store.fileTexts.has(gone.fileId), true, 'kept while in the trash');
      await body(await as.adminQ.json('/api/trash/purge', 'POST', { withdrawals: [withdrawal.withdrawn[0]!.id] }), 200);
      assert.equal(await server.store.fileTexts.has(gone.fileId), false);
      assert.deepEqual(await found('top', '防汛值班'), []);
    });

    it('reads once more, through the queue, the files stored before search by content', async () => {
      // As an archive of an earlier version: the file is stored, its text never indexed.
      await server.store.fileTexts.forget(files.d.fileId);
      assert.deepEqual(await found('top', '报送台账'), []);
      const indexing = server.archive.services.textIndexing;
      assert.equal(await indexing.backfill(), 1);
      await readQueue();
      assert.deepEqual(await found('top', '报送台账'), [files.d.fileId]);
      await server.store.fileTexts.forget(files.d.fileId);
      assert.equal(await indexing.backfill(), 0, 'once for the archive');
    });
  });
}
