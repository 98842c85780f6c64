import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { ReceiptView } from '../../shared/receipts.js';
import { noBlockingFindings } from '../support/accessibility.js';
import {
  artifactPath,
  browserSkip,
  BrowserWindows,
  hebeiArchive,
  login,
  rowsShown as rows,
} from '../support/browser.js';
import { md5, sha256 } from '../support/content.js';
import { body, type Client, type TestServer } from '../support/server.js';

/**
 * 冻结 end to end (issue 41 parts 4 and 5): an administrator of 青县 holds the town 清州镇 from
 * the 冻结 page; the town's clerk tries to withdraw a file of it from its receipt and is told it is
 * held, and why; the administrator lifts the hold; the same withdrawal then goes through. Debian's
 * Chromium against the archive in process, embedded store, 1280×800.
 */
const TOWN = '130922100'; // 河北省 / 沧州市 / 青县 / 清州镇
const REASON = '县纪委调查，暂停处理';

describe(
  '冻结: a held unit’s file refuses withdrawal until the hold is lifted (Debian Chromium)',
  {
    skip: browserSkip,
    timeout: 300_000,
  },
  () => {
    let server: TestServer;
    let clerk: Client;
    const windows = new BrowserWindows();
    let receipt: string;

    before(async () => {
      let accounts;
      ({ server, accounts } = await hebeiArchive([
        ['qz-clerk', 'clerk', TOWN],
        ['qing-admin', 'admin', '130922'],
      ]));
      clerk = await server.tokenClient(accounts['qz-clerk']!);
      // The clerk's folder of one file, and its receipt (the page's 撤回 is on it).
      const data = randomBytes(4000);
      const key = randomBytes(16).toString('hex');
      await body(
        await clerk.batch(
          [{ name: 'a.pdf', data }],
          [{ md5: md5(data), sha256: sha256(data), name: '2026年卷/会议纪要.pdf', key }],
        ),
        200,
      );
      receipt = randomBytes(16).toString('hex');
      const at = new Date().toISOString();
      await body(
        await clerk.json(`/api/receipts/${receipt}`, 'PUT', {
          title: '2026年卷',
          startedAt: at,
          rows: [{ path: '2026年卷/会议纪要.pdf', size: data.length, outcome: 'stored', via: 'batch', key, at }],
        }),
        200,
      );
      assert.ok((await body<ReceiptView>(await clerk.fetch(`/api/receipts/${receipt}`), 200)).rows[0]!.uploadId);
    });
    after(async () => {
      await windows.closeAll();
      await server?.close();
    });

    it('holds a unit from the 冻结 page, refuses the clerk’s withdrawal with the reason, and lets it go once lifted', async () => {
      const admin = await windows.open();
      await admin.page.setViewportSize({ width: 1280, height: 800 });
      await login(admin.page, server.url, 'qing-admin');
      await admin.page.getByRole('link', { name: '冻结' }).click();
      await admin.page.getByRole('heading', { name: '冻结' }).waitFor();
      await admin.page.getByText('没有冻结。').waitFor();

      // 冻结一个单位: nothing is sent without a unit and a reason.
      await admin.page.getByText('冻结一个单位', { exact: true }).click();
      const form = admin.page.locator('form', { has: admin.page.getByLabel('冻结原因') });
      await form.getByRole('button', { name: '冻结' }).click();
      await form.getByText('请先选择要冻结的单位。').waitFor();
      await form.getByText('请填写冻结原因。').waitFor();
      await form.getByRole('searchbox').fill('清州');
      await form.getByRole('button', { name: '河北省 / 沧州市 / 青县 / 清州镇' }).click();
      await form.getByLabel('冻结原因').fill(REASON);
      await admin.page.screenshot({ path: artifactPath('holds-place-unit-zh.png') });
      await noBlockingFindings(admin.page, 'placing a hold on a unit');
      await form.getByRole('button', { name: '冻结' }).click();
      await admin.page.getByText('已冻结“河北省 / 沧州市 / 青县 / 清州镇”。').waitFor();
      await rows(admin.page, 'table.holds tbody tr[data-active="yes"]', 1);
      const row = admin.page.locator('table.holds tbody tr');
      assert.match(await row.innerText(), /单位“河北省 \/ 沧州市 \/ 青县 \/ 清州镇”的全部文件/);
      assert.match(await row.innerText(), new RegExp(`${REASON}[\\s\\S]*qing-admin[\\s\\S]*冻结中`));
      await admin.page.screenshot({ path: artifactPath('holds-list-zh.png') });
      await noBlockingFindings(admin.page, 'the holds');

      // The clerk withdraws the file from the receipt: refused, with the hold's reason, nothing withdrawn.
      const clerkWindow = await windows.open();
      const page = clerkWindow.page;
      await page.setViewportSize({ width: 1280, height: 800 });
      await login(page, server.url, 'qz-clerk');
      await page.getByRole('heading', { name: '上传档案' }).waitFor();
      await page.goto(`${server.url}/#/receipts/${receipt}`);
      await page.getByRole('heading', { name: '上传清单：2026年卷' }).waitFor();
      await page.getByRole('button', { name: /^撤回 .*会议纪要\.pdf$/ }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('传错文件').check();
      await dialog.getByRole('button', { name: '撤回 1 个文件' }).click();
      const refusal = dialog.getByRole('alert');
      await refusal.waitFor();
      assert.equal(
        await refusal.innerText(),
        `文件“2026年卷/会议纪要.pdf”已被冻结（原因：${REASON}），不能撤回；请联系管理员。`,
      );
      await page.screenshot({ path: artifactPath('withdrawal-refused-held-zh.png') });
      assert.equal(await page.locator('table.receipt-rows tr[data-withdrawn="yes"]').count(), 0);

      // The administrator lifts it, after saying yes to what that lets happen.
      await admin.page.getByRole('button', { name: /^解除冻结 / }).click();
      await admin.page.getByText('解除后，这些文件可以再被撤回、清除或销毁。').waitFor();
      await admin.page.getByRole('button', { name: '确认解除' }).click();
      await admin.page.getByText('已解除冻结。').waitFor();
      await admin.page.getByText('没有冻结。').waitFor();
      await admin.page.getByLabel('显示').selectOption('all');
      await rows(admin.page, 'table.holds tbody tr[data-active="no"]', 1);
      assert.match(await row.innerText(), /qing-admin 于 .* 解除/);
      await admin.page.getByRole('button', { name: 'English' }).click();
      await admin.page.getByRole('heading', { name: 'Holds' }).waitFor();
      await admin.page.screenshot({ path: artifactPath('holds-lifted-en.png') });
      await noBlockingFindings(admin.page, 'the holds, in English');

      // The same withdrawal now goes through.
      await dialog.getByRole('button', { name: '撤回 1 个文件' }).click();
      await rows(page, 'table.receipt-rows tr[data-withdrawn="yes"]', 1);
      assert.deepEqual([...admin.errors, ...clerkWindow.errors], []);
    });

    it('holds one file from 本单位文件, for an administrator only', async () => {
      const { page, errors } = await windows.open();
      await page.setViewportSize({ width: 1280, height: 800 });
      // A file the clerk still counts: the first was withdrawn above.
      const data = randomBytes(3000);
      await body(
        await clerk.batch(
          [{ name: 'b.pdf', data }],
          [{ md5: md5(data), sha256: sha256(data), name: '2026年卷/预算.pdf', key: randomBytes(16).toString('hex') }],
        ),
        200,
      );
      await login(page, server.url, 'qing-admin');
      await page.getByRole('link', { name: '本单位文件' }).click();
      // The files one by one (the page opens on its folders).
      await page.getByRole('link', { name: '最近上传的文件' }).click();
      await page.getByRole('button', { name: /^冻结 .*预算\.pdf$/ }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('button', { name: '冻结' }).click();
      await dialog.getByText('请填写冻结原因。').waitFor();
      await dialog.getByLabel('冻结原因').fill('审计抽查');
      await page.screenshot({ path: artifactPath('hold-file-dialog-zh.png') });
      await noBlockingFindings(page, 'holding a file');
      // The first answer is lost on the way (the hold is placed); 冻结 again places it once.
      let lost = 0;
      await page.route('**/api/holds', async (route) => {
        if (route.request().method() !== 'POST' || lost++ > 0) return route.continue();
        await route.fetch();
        await route.abort('connectionreset');
      });
      await dialog.getByRole('button', { name: '冻结' }).click();
      await dialog.getByRole('alert').waitFor();
      await dialog.getByRole('button', { name: '冻结' }).click();
      await page.getByRole('status').getByText('冻结中').waitFor();
      assert.equal(lost, 2);
      assert.equal(await dialog.count(), 0);
      await page.getByRole('link', { name: '冻结' }).click();
      await rows(page, 'table.holds tbody tr[data-active="yes"]', 1);
      assert.match(await page.locator('table.holds tbody tr').innerText(), /1 个文件[\s\S]*审计抽查/);
      assert.deepEqual(errors, []);
    });
  },
);
