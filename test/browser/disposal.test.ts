import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { noBlockingFindings } from '../support/accessibility.js';
import { browserSkip, BrowserWindows, hebeiArchive, login } from '../support/browser.js';
import { randomContent } from '../support/content.js';
import { body, type TestServer } from '../support/server.js';

/**
 * 销毁 as a top-level administrator does it (issue 41 parts 4 and 5): from 本单位文件, a file is
 * disposed of after the two confirmations (what happens, then reason, 审批文号 and 销毁 typed);
 * the 销毁清册 lists it, and its printed view has the register's columns and signature lines.
 * Debian's Chromium against an in-process server on the embedded store, at 1280×800; screenshots
 * under SHOTS_DIR for a person to look at.
 */
const SHOTS = path.resolve(process.env.SHOTS_DIR ?? 'test-artifacts/shots-d');
const shot = (page: Page, name: string) => {
  fs.mkdirSync(SHOTS, { recursive: true });
  return page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
};

describe('销毁 and 销毁清册 (Debian Chromium, embedded store)', { skip: browserSkip, timeout: 300_000 }, () => {
  let server: TestServer;
  const windows = new BrowserWindows();

  before(async () => {
    ({ server } = await hebeiArchive([
      ['clerk', 'clerk', '130922100'],
      ['top', 'admin', 'archive'],
    ]));
  });
  after(async () => {
    await windows.closeAll();
    await server.close();
  });

  it('a top-level administrator disposes of a file from 本单位文件 and it shows in the register, printable', async () => {
    const clerk = await server.login('clerk');
    const kept = await body<{ fileId: string }>(await clerk.upload('县志-保留.pdf', randomContent(5000)), 201);
    const expired = await body<{ fileId: string }>(await clerk.upload('临时名册-2010.pdf', randomContent(7000)), 201);

    const { page, errors } = await windows.open();
    await page.setViewportSize({ width: 1280, height: 800 });
    await login(page, server.url, 'top');
    await page.getByRole('link', { name: '本单位文件', exact: true }).click();
    // The files one by one (the page opens on its folders).
    await page.getByRole('link', { name: '最近上传的文件' }).click();
    const button = page.getByRole('button', { name: '销毁 临时名册-2010.pdf', exact: true });
    await button.waitFor();
    await shot(page, '1-files-with-dispose');
    await button.click();

    // The first confirmation says what happens, and asks for nothing yet.
    const dialog = page.getByRole('dialog');
    await dialog.getByText('此操作不能撤销').waitFor();
    assert.match(await dialog.innerText(), /不再计入任何统计/);
    await noBlockingFindings(page, 'dispose dialog, step 1');
    await shot(page, '2-dialog-step-1');
    await dialog.getByRole('button', { name: '下一步' }).click();
    await dialog.getByLabel('销毁原因').fill('保管期满，经鉴定无继续保存价值');
    await dialog.getByLabel('审批文号').fill('沧档销〔2026〕7号');
    // Anything but 销毁 typed is refused in the dialog.
    await dialog.getByLabel('请输入“销毁”二字确认').fill('确定');
    await dialog.getByRole('button', { name: '确认销毁' }).click();
    await dialog.getByText('请输入“销毁”二字确认。').waitFor();
    assert.ok(await server.store.catalog.get(expired.fileId), 'nothing deleted before the confirmation');
    await dialog.getByLabel('请输入“销毁”二字确认').fill('销毁');
    await noBlockingFindings(page, 'dispose dialog, step 2');
    await shot(page, '3-dialog-step-2');
    await dialog.getByRole('button', { name: '确认销毁' }).click();

    // The register opens, with the entry.
    const row = page.locator('table.register tbody tr', { hasText: '临时名册-2010.pdf' });
    await row.waitFor();
    assert.equal(await server.store.catalog.get(expired.fileId), undefined, 'its content is deleted');
    const text = await row.innerText();
    for (const shown of [expired.fileId, '沧档销〔2026〕7号', '保管期满', 'clerk', 'top', '青县'])
      assert.ok(text.includes(shown), `${shown} in ${text}`);
    // Uploaded once, on one day: the day is named once, not "X 至 X".
    const dates = (await row.locator('td.when').first().innerText()).trim();
    assert.match(dates, /^\S+$/, `one upload day: ${dates}`);
    assert.equal(await page.locator('table.register tbody tr', { hasText: '县志-保留.pdf' }).count(), 0);
    assert.notEqual(kept.fileId, expired.fileId);
    await noBlockingFindings(page, 'disposal register');
    await shot(page, '4-register');

    // Printed: the title, the columns, the signature lines; no filters or buttons.
    await page.emulateMedia({ media: 'print' });
    const headers = await page.locator('table.register thead th').allInnerTexts();
    assert.deepEqual(
      headers.map((h) => h.trim()),
      ['文件名', '单位', '上传者', '上传日期', '大小', '系统编号', '销毁原因', '审批文号', '销毁人', '销毁时间'],
    );
    assert.equal(await page.getByRole('heading', { name: '销毁清册' }).isVisible(), true);
    assert.equal(await page.locator('table.signatures').isVisible(), true);
    assert.match(await page.locator('table.signatures').innerText(), /监销人（签字）[\s\S]*经办人（签字）/);
    assert.equal(await page.getByRole('button', { name: '打印清册' }).isVisible(), false);
    await shot(page, '5-register-printed');
    const pdf = await page.pdf({ preferCSSPageSize: true });
    fs.writeFileSync(path.join(SHOTS, 'register.pdf'), pdf);
    await page.emulateMedia({ media: 'screen' });

    // The date filters are the page's own fields (never the browser's mm/dd/yyyy): a day typed as
    // a clerk writes it filters the register, and shows in the page's language.
    const from = page.getByRole('textbox', { name: '销毁日期从' });
    await from.fill('2099-1-1');
    await page.getByRole('button', { name: '筛选' }).click();
    await page.getByText('没有符合筛选条件的销毁记录。').waitFor();
    assert.equal(await from.inputValue(), '2099年1月1日');
    assert.match(page.url(), /from=2099-01-01/);

    // In English, one click away.
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('heading', { name: 'Disposal register' }).waitFor();
    assert.equal(await page.getByRole('textbox', { name: 'Disposed of from' }).inputValue(), '2099-01-01');
    await shot(page, '6-register-en');
    assert.deepEqual(errors, []);
  });
});
