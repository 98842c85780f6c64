import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { FileList } from '../../shared/schemas.js';
import { noBlockingFindings } from '../support/accessibility.js';
import { browserSkip, BrowserWindows, hebeiArchive, login, rowsShown, shownWhole } from '../support/browser.js';
import { keyOf, md5, sha256 } from '../support/content.js';
import { body, type Client, type TestServer } from '../support/server.js';
import { bytesKept, fileNumber, tempDir } from '../support/stores.js';

/** The page's document, as the callbacks run inside the browser see it. */
declare const document: {
  querySelector(selector: string): { dataset: Record<string, string | undefined>; textContent: string | null } | null;
  querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }>;
};

/**
 * Issue 41 end to end, as one journey through the screens (Debian Chromium, 1280×800, the archive
 * in process on the embedded store). A clerk of 清州镇 had sent 甲.pdf once by script; she drops
 * the folder 2026年文书 (甲, 乙, 丙) on the upload page and counts 甲 again. The county's
 * administrator, in another browser, reads the reports (重复上传, 节省空间) and 甲's 上传记录.
 * The clerk withdraws the whole drop, and the counts drop; restores it from 回收站, and they
 * return; withdraws it again. The administrator deletes 丙's withdrawal for good (彻底删除), then
 * empties the trash (清空回收站): the bytes of 乙 and 丙 are gone from the store and their
 * download answers 404, 甲's stay (the earlier upload still holds them). The administrator holds
 * 甲 (冻结): the clerk's withdrawal is refused with the reason. Once the hold is lifted, a top-level
 * administrator disposes of 甲 (销毁, two confirmations): it shows in 销毁清册, its bytes are
 * gone, and the reports count nothing. The clerk is never offered 彻底删除 or 清空回收站.
 */

/** Screenshots a person looks at (outside the repository): SHOTS_DIR, or the worktree's test-artifacts. */
const SHOTS = path.resolve(process.env.SHOTS_DIR ?? 'test-artifacts');
const shot = (page: Page, name: string) => {
  fs.mkdirSync(SHOTS, { recursive: true });
  return page.screenshot({ path: path.join(SHOTS, `journey-${name}.png`) });
};

/** Opens a page from the top bar's menu. */
const menu = (page: Page, name: string) =>
  page.locator('header.topbar nav').getByRole('link', { name, exact: true }).click();

const TOWN = '130922100'; // 河北省 / 沧州市 / 青县 / 清州镇
const COUNTY = '130922'; // 青县
const FOLDER = '2026年文书';
const HOLD_REASON = '审计抽查，暂停处理';

describe(
  'issue 41, one journey: drop, withdraw, restore, purge, hold, dispose (Debian Chromium)',
  {
    skip: browserSkip,
    timeout: 900_000,
  },
  () => {
    let server: TestServer;
    let files: string;
    /** The administrator of 青县, through the API: what the store says, beside what the pages say. */
    let adminApi: Client;
    const windows = new BrowserWindows();
    const contents = { '甲.pdf': randomBytes(5000), '乙.pdf': randomBytes(6000), '丙.pdf': randomBytes(7000) };
    const names = Object.keys(contents) as Array<keyof typeof contents>;

    before(async () => {
      let accounts;
      ({ server, accounts } = await hebeiArchive([
        ['qz-clerk', 'clerk', TOWN],
        ['qing-admin', 'admin', COUNTY],
        ['top', 'admin', 'archive'],
      ]));
      adminApi = await server.login('qing-admin');
      files = tempDir('archive-journey-');
      const folder = path.join(files, FOLDER);
      fs.mkdirSync(folder, { recursive: true });
      for (const name of names) fs.writeFileSync(path.join(folder, name), contents[name]);
      // 甲 sent once before, by the clerk's script.
      const script = await server.tokenClient(accounts['qz-clerk']!);
      const data = contents['甲.pdf'];
      const key = randomBytes(16).toString('hex');
      await body(
        await script.batch(
          [{ name: '甲.pdf', data }],
          [{ md5: md5(data), sha256: sha256(data), name: `${FOLDER}/甲.pdf`, key }],
        ),
        200,
      );
    });
    after(async () => {
      await windows.closeAll();
      await server?.close();
      if (files) fs.rmSync(files, { recursive: true, force: true });
    });

    /** A file's id in the catalog, or undefined once its content is deleted. */
    const fileIdOf = async (name: keyof typeof contents) =>
      (await server.store.catalog.findByKey(keyOf(contents[name])))?.fileId;

    /** Each file's upload count as the administrator's file list has it (0: not listed). */
    async function apiCounts(): Promise<Record<string, number>> {
      const list = await body<FileList>(await adminApi.fetch('/api/files?limit=200'), 200);
      const ids = await Promise.all(names.map(fileIdOf));
      return Object.fromEntries(
        names.map((name, i) => [name, list.items.find((f) => f.fileId === ids[i])?.uploadCount ?? 0]),
      );
    }

    /** That a content is gone: not in the catalog, no byte of it kept, its download refused. */
    async function contentGone(fileId: string, fileNo: number | undefined, what: string): Promise<void> {
      assert.equal(await server.store.catalog.get(fileId), undefined, `${what}: out of the catalog`);
      assert.deepEqual(await bytesKept(server.opened, fileId, fileNo), { files: 0, chunks: 0, rows: 0 }, what);
      const download = await adminApi.fetch(`/api/files/${fileId}`);
      assert.ok([404, 410].includes(download.status), `${what}: download answered ${download.status}`);
    }

    /**
     * The administrator's reports, read anew: 甲's upload count in 重复上传 (null: no row, nothing
     * repeated), then the uploads and 秒传 uploads of 节省空间.
     */
    async function reportsSay(
      admin: Page,
      expected: { repeat: number | null; uploads: number; savedUploads: number },
    ): Promise<void> {
      await admin.locator('nav.tabs').getByRole('link', { name: '重复上传' }).click();
      await admin.waitForFunction((count) => {
        const tab = '[data-report="repeat-uploaders"]';
        if (count === null) return document.querySelector(`${tab} p.empty`) !== null;
        const links = Array.from(document.querySelectorAll(`${tab} a.uploads-link`));
        return links.length === 1 && links[0]!.textContent === String(count);
      }, expected.repeat);
      await admin.locator('nav.tabs').getByRole('link', { name: '节省空间' }).click();
      await admin.waitForFunction(
        ({ uploads, savedUploads }) =>
          document.querySelector('[data-report="savings"] [data-figure="uploads"]')?.textContent === String(uploads) &&
          (
            document.querySelector('[data-report="savings"] [data-figure="savedUploads"]')?.textContent ?? ''
          ).startsWith(String(savedUploads)),
        expected,
      );
    }

    it('goes through every screen of 撤回, 回收站, 清空回收站, 冻结 and 销毁, the counts following', async () => {
      const clerkWindow = await windows.open();
      const adminWindow = await windows.open();
      const topWindow = await windows.open();
      const all = [clerkWindow, adminWindow, topWindow];
      for (const w of all) await w.page.setViewportSize({ width: 1280, height: 800 });
      const { page: clerk } = clerkWindow;
      const { page: admin } = adminWindow;
      const top = topWindow.page;

      await login(admin, server.url, 'qing-admin');
      await menu(admin, '报表');
      await reportsSay(admin, { repeat: null, uploads: 1, savedUploads: 0 });

      // The clerk drops the folder; 甲 was sent before, and counts again because she says so.
      await login(clerk, server.url, 'qz-clerk');
      await clerk.getByRole('heading', { name: '上传档案' }).waitFor();
      await clerk.locator('input[type=file][webkitdirectory]').setInputFiles(path.join(files, FOLDER));
      await clerk.getByRole('button', { name: '仍要再次登记' }).click();
      await clerk.waitForFunction(() => {
        const summary = document.querySelector('.results .summary')?.dataset;
        return summary?.instant === '1' && summary.stored === '2';
      });
      const withdrawDrop = clerk.getByRole('button', { name: '撤回本次上传' });
      await withdrawDrop.waitFor();
      assert.deepEqual(await apiCounts(), { '甲.pdf': 2, '乙.pdf': 1, '丙.pdf': 1 });
      await reportsSay(admin, { repeat: 2, uploads: 4, savedUploads: 1 });

      // 甲's 上传记录, from its count in 重复上传: the script's upload and the drop's.
      await admin.locator('nav.tabs').getByRole('link', { name: '重复上传' }).click();
      await admin.locator('[data-report="repeat-uploaders"] a.uploads-link').click();
      await admin.getByRole('heading', { name: '“甲.pdf”的上传记录' }).waitFor();
      await rowsShown(admin, 'table.file-uploads tbody tr', 2);
      assert.equal(await admin.locator('table.file-uploads tr[data-withdrawn="yes"]').count(), 0);

      // 撤回本次上传: the dialog says what happens to the counts.
      await withdrawDrop.click();
      const clerkDialog = clerk.getByRole('dialog');
      assert.match(await clerkDialog.innerText(), /撤回：本次上传“2026年文书”（3 个文件）/);
      assert.match(await clerkDialog.innerText(), /撤回后，这些文件不再计入上传次数和各类统计；30 天内可在回收站恢复/);
      await clerkDialog.getByLabel('重复上传').check();
      await clerkDialog.getByRole('button', { name: '撤回 3 个文件' }).click();
      await clerk.getByText('本次上传中已撤回 3 个文件，可在回收站恢复。').waitFor();
      assert.deepEqual(await apiCounts(), { '甲.pdf': 1, '乙.pdf': 0, '丙.pdf': 0 });
      await admin.reload();
      await rowsShown(admin, 'table.file-uploads tr[data-withdrawn="yes"]', 1);
      assert.match(await admin.locator('table.file-uploads tbody tr').first().innerText(), /已撤回（qz-clerk，/);
      await menu(admin, '报表');
      await reportsSay(admin, { repeat: null, uploads: 1, savedUploads: 0 });

      // 回收站, as the clerk: 恢复 on each of her uploads, and neither 彻底删除 nor 清空回收站.
      await clerk.locator('.withdrawn-note').getByRole('link', { name: '回收站' }).click();
      await clerk.getByRole('heading', { name: '回收站' }).waitFor();
      await rowsShown(clerk, 'table.trash tbody tr', 3);
      assert.equal(await clerk.getByRole('button', { name: /^恢复 / }).count(), 3);
      assert.equal(await clerk.getByRole('button', { name: /彻底删除/ }).count(), 0, 'a clerk purges nothing');
      assert.equal(await clerk.getByRole('button', { name: '清空回收站' }).count(), 0, 'a clerk empties nothing');
      await shot(clerk, '1-trash-clerk');
      for (let left = 3; left > 0; left--) {
        await rowsShown(clerk, 'table.trash tbody tr', left);
        await clerk
          .getByRole('button', { name: /^恢复 / })
          .first()
          .click();
        await clerk.getByRole('button', { name: '确认恢复' }).click();
        await clerk.getByText(/^已恢复“.*”，重新计入统计。$/).waitFor();
      }
      await clerk.getByText('回收站是空的。').waitFor();
      assert.deepEqual(await apiCounts(), { '甲.pdf': 2, '乙.pdf': 1, '丙.pdf': 1 });
      await reportsSay(admin, { repeat: 2, uploads: 4, savedUploads: 1 });

      // Withdrawn again, the whole drop, from the upload page.
      await menu(clerk, '上传');
      await withdrawDrop.click();
      await clerkDialog.getByLabel('传错单位').check();
      await clerkDialog.getByRole('button', { name: '撤回 3 个文件' }).click();
      await clerk.getByText('本次上传中已撤回 3 个文件，可在回收站恢复。').waitFor();
      assert.deepEqual(await apiCounts(), { '甲.pdf': 1, '乙.pdf': 0, '丙.pdf': 0 });
      await reportsSay(admin, { repeat: null, uploads: 1, savedUploads: 0 });

      // 回收站, as the administrator: 彻底删除 of one withdrawal (丙), confirmed in its row.
      const ids = { 甲: (await fileIdOf('甲.pdf'))!, 乙: (await fileIdOf('乙.pdf'))!, 丙: (await fileIdOf('丙.pdf'))! };
      // Their numbers in the embedded store, which find their bytes in a pack once the catalog forgets them.
      const fileNos = {
        甲: await fileNumber(server.opened, ids.甲),
        乙: await fileNumber(server.opened, ids.乙),
        丙: await fileNumber(server.opened, ids.丙),
      };
      await menu(admin, '回收站');
      await admin.getByRole('heading', { name: '回收站' }).waitFor();
      await rowsShown(admin, 'table.trash tbody tr', 3);
      assert.equal(await admin.getByRole('button', { name: /^彻底删除 / }).count(), 3);
      const purgedRow = admin.locator('table.trash tbody tr', { hasText: '丙.pdf' });
      await purgedRow.getByRole('button', { name: /^彻底删除 / }).click();
      const purgeQuestion = purgedRow.getByRole('group');
      assert.equal(
        await purgeQuestion.getAttribute('aria-label'),
        '彻底删除后不能再恢复；它已不计入统计，统计数字不变；没有其他上传的文件内容将被删除。',
      );
      await shot(admin, '2-trash-purge-one');
      for (const button of ['确认彻底删除', '取消'])
        assert.ok(await shownWhole(purgedRow.getByRole('button', { name: button })), `${button}, at 1280×800`);
      await noBlockingFindings(admin, 'the trash, as an administrator purges one withdrawal');
      await purgedRow.getByRole('button', { name: '确认彻底删除' }).click();
      await admin.getByText('已彻底删除 1 个上传，删除文件内容 1 个。').waitFor();
      await rowsShown(admin, 'table.trash tbody tr', 2);
      await contentGone(ids.丙, fileNos.丙, '丙, purged');
      assert.ok(await server.store.catalog.get(ids.乙), '乙 stays while its withdrawal is in the trash');

      // 清空回收站, confirmed: 乙's content goes; 甲's stays, the script's upload still holds it.
      await admin.getByRole('button', { name: '清空回收站' }).click();
      const emptyQuestion = admin.getByRole('group', { name: /^回收站中的全部上传将被彻底删除/ });
      assert.match(await emptyQuestion.innerText(), /不能再恢复；它们已不计入统计，统计数字不变；/);
      await shot(admin, '3-trash-empty-question');
      await noBlockingFindings(admin, 'the trash, as an administrator empties it');
      await emptyQuestion.getByRole('button', { name: '确认清空' }).click();
      await admin.getByText('已彻底删除 2 个上传，删除文件内容 1 个。').waitFor();
      await admin.getByText('回收站是空的。').waitFor();
      await contentGone(ids.乙, fileNos.乙, '乙, emptied from the trash');
      const kept = await adminApi.fetch(`/api/files/${ids.甲}`);
      assert.equal(kept.status, 200);
      assert.deepEqual(Buffer.from(await kept.arrayBuffer()), contents['甲.pdf'], '甲 is whole');
      assert.deepEqual(await apiCounts(), { '甲.pdf': 1, '乙.pdf': 0, '丙.pdf': 0 }, 'purging changes no count');
      await menu(clerk, '回收站');
      await clerk.getByText('回收站是空的。').waitFor();

      // 冻结 甲, from 本单位文件: the clerk's withdrawal of it is refused, with the reason.
      await menu(admin, '本单位文件');
      await admin.getByRole('link', { name: '最近上传的文件' }).click();
      await admin.getByRole('button', { name: /^冻结 .*甲\.pdf$/ }).click();
      const holdDialog = admin.getByRole('dialog');
      await holdDialog.getByLabel('冻结原因').fill(HOLD_REASON);
      await holdDialog.getByRole('button', { name: '冻结' }).click();
      await admin.getByRole('status').getByText('冻结中').waitFor();
      // 本单位文件 opens on its folders, where a clerk's 撤回 is.
      await menu(clerk, '本单位文件');
      await clerk.getByRole('link', { name: FOLDER }).click();
      await clerk.getByRole('button', { name: /^撤回 .*甲\.pdf$/ }).click();
      await clerkDialog.getByLabel('传错文件').check();
      await clerkDialog.getByRole('button', { name: '撤回 1 个文件' }).click();
      const refusal = clerkDialog.getByRole('alert');
      await refusal.waitFor();
      assert.match(await refusal.innerText(), new RegExp(`甲\\.pdf”已被冻结（原因：${HOLD_REASON}），不能撤回`));
      await shot(clerk, '4-withdrawal-refused-held');
      assert.deepEqual(await apiCounts(), { '甲.pdf': 1, '乙.pdf': 0, '丙.pdf': 0 }, 'nothing withdrawn');
      await clerkDialog.getByRole('button', { name: '取消' }).click();

      // Lifted; then the top-level administrator disposes of 甲, confirmed twice.
      await menu(admin, '冻结');
      await admin.getByRole('button', { name: /^解除冻结 / }).click();
      await admin.getByRole('button', { name: '确认解除' }).click();
      await admin.getByText('已解除冻结。').waitFor();
      await login(top, server.url, 'top');
      await menu(top, '本单位文件');
      await top.getByRole('link', { name: '最近上传的文件' }).click();
      await top.getByRole('button', { name: /^销毁 .*甲\.pdf$/ }).click();
      const disposeDialog = top.getByRole('dialog');
      await disposeDialog.getByText('此操作不能撤销').waitFor();
      assert.match(await disposeDialog.innerText(), /不再计入任何统计/);
      await disposeDialog.getByRole('button', { name: '下一步' }).click();
      await disposeDialog.getByLabel('销毁原因').fill('保管期满，经鉴定无继续保存价值');
      await disposeDialog.getByLabel('审批文号').fill('青档销〔2026〕3号');
      await disposeDialog.getByLabel('请输入“销毁”二字确认').fill('销毁');
      await disposeDialog.getByRole('button', { name: '确认销毁' }).click();
      const registered = top.locator('table.register tbody tr', { hasText: '甲.pdf' });
      await registered.waitFor();
      const entry = await registered.innerText();
      for (const shown of [ids.甲, '青档销〔2026〕3号', '保管期满', 'qz-clerk', 'top', '清州镇'])
        assert.ok(entry.includes(shown), `${shown} in ${entry}`);
      await shot(top, '5-register');
      await noBlockingFindings(top, 'the disposal register');
      await contentGone(ids.甲, fileNos.甲, '甲, disposed of');
      assert.deepEqual(await apiCounts(), { '甲.pdf': 0, '乙.pdf': 0, '丙.pdf': 0 });
      await menu(admin, '报表');
      await reportsSay(admin, { repeat: null, uploads: 0, savedUploads: 0 });
      assert.deepEqual(
        all.flatMap((w) => w.errors),
        [],
      );
    });
  },
);
