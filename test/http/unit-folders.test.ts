import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FolderList, WithdrawableUploads } from '../../shared/schemas.js';
import type { WithdrawalAnswer } from '../../shared/withdrawals.js';
import { md5, randomContent, sha256 } from '../support/content.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * 本单位文件 by folder (GET /api/files/folders) and 撤回 from it (GET /api/files/withdrawable, then
 * POST /api/withdrawals), for every kind of caller: two counties of 沧州市 (Hebei loaded), 青县
 * with two clerks of one town and its administrator, 东光县 with a clerk and its administrator,
 * and the archive's top-level administrator. The archive's clock is the test's.
 */
type Who = 'anonymous' | 'clerkQ' | 'clerkQ2' | 'clerkD' | 'adminQ' | 'adminD' | 'top';
const DAY = 86_400_000;
const TOWN_Q = '130922100';

for (const target of storeTargets) {
  describe(`本单位文件 by folder, and 撤回 there (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    let now = new Date('2026-11-02T08:00:00Z');

    before(async () => {
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

    /** Files the client uploads in one batch, each under its path: their file ids. */
    async function upload(client: Client, paths: string[]): Promise<string[]> {
      const files = paths.map(() => randomContent(1000));
      const answer = await body<{ results: Array<{ fileId: string }> }>(
        await client.batch(
          files.map((data, i) => ({ name: `p${i}.pdf`, data })),
          files.map((data, i) => ({
            md5: md5(data),
            sha256: sha256(data),
            name: paths[i]!,
            key: randomBytes(16).toString('hex'),
          })),
        ),
        200,
      );
      return answer.results.map((r) => r.fileId);
    }

    const folder = (who: Who, path: string, paging = '') =>
      as[who].fetch(`/api/files/folders?path=${encodeURIComponent(path)}${paging}`);
    const shown = (list: FolderList) => ({
      folders: list.folders.map((f) => `${f.name} (${f.files})`),
      files: list.files.map((f) => f.path),
    });
    const withdrawable = (who: Who, query: string) => as[who].fetch(`/api/files/withdrawable?${query}`);

    it('GET /api/files/folders: a clerk browses the unit’s folders, an administrator its reach’s; others see none of them', async () => {
      const tag = randomBytes(4).toString('hex');
      await upload(as.clerkQ, [`${tag}/案卷001/第1页.pdf`, `${tag}/案卷001/第2页.pdf`, `${tag}/案卷002/第1页.pdf`]);
      await upload(as.clerkQ2, [`${tag}/目录.pdf`]);
      assert.equal((await folder('anonymous', tag)).status, 401);
      for (const who of ['clerkQ', 'clerkQ2', 'adminQ', 'top'] as const) {
        const list = await body<FolderList>(await folder(who, tag), 200);
        assert.deepEqual(shown(list), { folders: ['案卷001 (2)', '案卷002 (1)'], files: ['目录.pdf'] }, who);
        assert.deepEqual([list.folderTotal, list.fileTotal, list.path], [2, 1, tag], who);
      }
      for (const who of ['clerkD', 'adminD'] as const)
        assert.deepEqual(shown(await body<FolderList>(await folder(who, tag), 200)), { folders: [], files: [] }, who);
      const top = await body<FolderList>(await folder('clerkQ', ''), 200);
      assert.ok(
        top.folders.some((f) => f.name === tag && f.files === 4),
        'the top folder counts every file under it',
      );
      const volume = await body<FolderList>(await folder('clerkQ', `/${tag}/案卷001/`, '&limit=1&offset=1'), 200);
      assert.deepEqual(
        [shown(volume), volume.fileTotal, volume.files[0]!.fileLength, volume.files[0]!.uploadCount],
        [{ folders: [], files: ['第2页.pdf'] }, 2, 1000, 1],
      );
    });

    it('GET /api/files/folders and /withdrawable refuse what they cannot read, saying how to ask', async () => {
      const bad = async (res: Response, pattern: RegExp) => {
        const answer = await body<{ error: string; message: string }>(res, 400);
        assert.match(answer.message, pattern);
      };
      await bad(await as.clerkQ.fetch('/api/files/folders?limit=0'), /limit/);
      await bad(await as.clerkQ.fetch('/api/files/folders?path=a&colour=red'), /colour/);
      await bad(await withdrawable('clerkQ', 'folder=a&file=0123456789abcdef01234567'), /one of the two/);
      await bad(await withdrawable('clerkQ', ''), /one of the two/);
      await bad(await withdrawable('clerkQ', 'file=not-an-id'), /24 lowercase hexadecimal/);
    });

    it('GET /api/files/withdrawable: a clerk’s own uploads within WITHDRAW_DAYS, an administrator’s any in reach', async () => {
      const tag = randomBytes(4).toString('hex');
      now = new Date(now.getTime() - 40 * DAY);
      const [old] = await upload(as.clerkQ, [`${tag}/旧/第1页.pdf`]);
      now = new Date(now.getTime() + 40 * DAY);
      const [mine1, mine2] = await upload(as.clerkQ, [`${tag}/新/第1页.pdf`, `${tag}/新/第2页.pdf`]);
      const [colleagues] = await upload(as.clerkQ2, [`${tag}/新/第3页.pdf`]);
      assert.equal((await withdrawable('anonymous', `folder=${tag}`)).status, 401);

      const clerk = await body<WithdrawableUploads>(
        await withdrawable('clerkQ', `folder=${encodeURIComponent(tag)}`),
        200,
      );
      assert.deepEqual(
        [clerk.uploads.map((u) => u.fileId).sort(), clerk.othersUploads, clerk.tooOld],
        [[mine1, mine2].sort(), 1, 1],
        'the clerk’s own recent uploads; a colleague’s and an old one are counted, not offered',
      );
      const byFile = await body<WithdrawableUploads>(
        await withdrawable('clerkQ', `file=${mine1}&file=${colleagues}&file=${old}`),
        200,
      );
      assert.deepEqual([byFile.uploads.map((u) => u.fileId), byFile.othersUploads, byFile.tooOld], [[mine1], 1, 1]);
      for (const who of ['adminQ', 'top'] as const) {
        const admin = await body<WithdrawableUploads>(
          await withdrawable(who, `folder=${encodeURIComponent(tag)}`),
          200,
        );
        assert.deepEqual(
          [admin.uploads.map((u) => u.fileId).sort(), admin.othersUploads, admin.tooOld],
          [[old, mine1, mine2, colleagues].sort(), 0, 0],
          who,
        );
      }
      for (const who of ['clerkD', 'adminD'] as const) {
        const none = await body<WithdrawableUploads>(await withdrawable(who, `folder=${encodeURIComponent(tag)}`), 200);
        assert.deepEqual([none.uploads, none.othersUploads, none.tooOld], [[], 0, 0], who);
      }
    });

    it('撤回 a whole folder from 本单位文件: its uploads leave the listing, and come back on restore', async () => {
      const tag = randomBytes(4).toString('hex');
      await upload(as.clerkQ, [`${tag}/卷/第1页.pdf`, `${tag}/卷/第2页.pdf`, `${tag}/留下.pdf`]);
      const offered = await body<WithdrawableUploads>(
        await withdrawable('clerkQ', `folder=${encodeURIComponent(`${tag}/卷`)}`),
        200,
      );
      assert.equal(offered.uploads.length, 2);
      const answer = await body<WithdrawalAnswer>(
        await as.clerkQ.json('/api/withdrawals', 'POST', {
          reason: 'wrong_file',
          uploads: offered.uploads.map((u) => u.uploadId),
        }),
        200,
      );
      assert.equal(answer.withdrawn.length, 2);
      assert.deepEqual(shown(await body<FolderList>(await folder('clerkQ', tag), 200)), {
        folders: [],
        files: ['留下.pdf'],
      });
      const again = await body<WithdrawableUploads>(
        await withdrawable('clerkQ', `folder=${encodeURIComponent(`${tag}/卷`)}`),
        200,
      );
      assert.deepEqual(again.uploads, [], 'a withdrawn upload is not offered again');
      await body(await as.clerkQ.json(`/api/withdrawals/${answer.withdrawn[0]!.id}/restore`, 'POST', {}), 200);
      assert.deepEqual(shown(await body<FolderList>(await folder('clerkQ', tag), 200)).folders, ['卷 (1)']);
    });
  });
}
