import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { MESSAGES, type Language } from '../../client/src/i18n/messages.js';
import { IMPORT_TEMPLATE } from '../../shared/accounts.js';
import { browserSkip, BrowserWindows, fieldProblem } from '../support/browser.js';
import { PASSWORD, TestServer } from '../support/server.js';
import { embeddedTarget } from '../support/stores.js';

/**
 * The accounts page as a county's administrator hands out accounts (issue 42): the 账号开通单 that
 * keeps every one-time password made in the session until it is closed (and prints alone), the
 * password reset asked first and never offered on one's own row, and the server's advice on a
 * refused file or row shown on the page. In Chinese and in English, at 1280×800, with screenshots
 * under SHOTS_DIR (default test-artifacts/shots-i) for a person to look at.
 */
const SHOTS_DIR = path.resolve(process.env.SHOTS_DIR ?? 'test-artifacts/shots-i');
const shot = (page: Page, name: string, language: Language) => {
  fs.mkdirSync(SHOTS_DIR, { recursive: true });
  return page.screenshot({ path: path.join(SHOTS_DIR, `${name}-${language}.png`) });
};

/** "张三,档案员,…" as GBK, the way Excel saves a plain CSV on a Chinese Windows (GB18030's two-byte part). */
function gbk(text: string): Buffer {
  const decoder = new TextDecoder('gb18030');
  const codes = new Map<string, number[]>();
  for (let lead = 0x81; lead <= 0xfe; lead++)
    for (let trail = 0x40; trail <= 0xfe; trail++)
      if (trail !== 0x7f) {
        const c = decoder.decode(new Uint8Array([lead, trail]));
        if (!codes.has(c)) codes.set(c, [lead, trail]);
      }
  return Buffer.from([...text].flatMap((c) => (c.charCodeAt(0) < 0x80 ? [c.charCodeAt(0)] : codes.get(c)!)));
}

describe(
  'the accounts page hands out accounts (Debian Chromium, embedded store)',
  { skip: browserSkip, timeout: 300_000 },
  () => {
    let server: TestServer;
    const windows = new BrowserWindows();
    const files = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-sheet-files-'));

    before(async () => {
      server = await TestServer.start(embeddedTarget);
      await server.archive.services.directory.load(['13']);
      const qing = await server.addAccountIn('qing-admin', 'admin', '130922');
      // A unit added below a town: an administrator cannot belong there (the server says why).
      await server.archive.services.directory.add(qing, { parentId: '130922100', name: '档案室' });
    });
    after(async () => {
      await windows.closeAll();
      await server.close();
      fs.rmSync(files, { recursive: true, force: true });
    });

    /** A 1280×800 window in `language` (the app's saved choice), logged in as 青县's administrator, on 账号管理. */
    async function accountsPage(language: Language) {
      const m = MESSAGES[language];
      const window = await windows.open();
      const { page } = window;
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.addInitScript((saved) => {
        (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem(
          'archive.language',
          saved,
        );
      }, language);
      await page.goto(server.url);
      await page.getByLabel(m.username, { exact: true }).fill('qing-admin');
      await page.getByLabel(m.password, { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: m.loginButton, exact: true }).click();
      await page.getByRole('link', { name: m.accountsTitle, exact: true }).click();
      await page.locator('table.accounts tbody tr').first().waitFor();
      return { page, m, errors: window.errors };
    }

    const sheetRows = (page: Page) =>
      page.locator('.opening-sheet tbody tr').evaluateAll((rows) =>
        rows.map((r) => {
          const row = r as unknown as { querySelector(s: string): { textContent: string | null } | null };
          return [
            (row.querySelector('th')?.textContent ?? '').trim(),
            (row.querySelector('code.secret')?.textContent ?? '').trim(),
          ];
        }),
      );

    for (const language of ['zh-CN', 'en'] as const) {
      const tag = language === 'zh-CN' ? 'zh' : 'en';

      it(`${language}: the 账号开通单 keeps every account made here, through a second 新建账号, until closed; it prints alone`, async () => {
        const { page, m, errors } = await accountsPage(language);
        const create = async (username: string, name: string) => {
          await page.getByRole('button', { name: m.accountCreate, exact: true }).click();
          await page.getByRole('textbox', { name: m.username, exact: true }).fill(username);
          await page.getByRole('textbox', { name: m.displayName, exact: true }).fill(name);
          await page.getByLabel(m.unitSearch, { exact: true }).fill('130922101');
          await page.getByRole('button', { name: '河北省 / 沧州市 / 青县 / 金牛镇' }).click();
          await page.getByRole('button', { name: m.accountCreateButton, exact: true }).click();
          await page.locator(`.opening-sheet tr[data-sheet-account="${username}"]`).waitFor();
        };
        await create(`first.${tag}`, '孙一');
        const [[, first]] = (await sheetRows(page)) as [[string, string]];
        assert.match(first, /^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
        // 新建账号 again: the first account's password stays on the sheet.
        await page.getByRole('button', { name: m.accountCreate, exact: true }).click();
        await page.getByRole('textbox', { name: m.username, exact: true }).waitFor();
        assert.deepEqual(await sheetRows(page), [[`first.${tag}`, first]], 'still there with the form open again');
        await page.getByRole('button', { name: m.accountCreate, exact: true }).click();
        await create(`second.${tag}`, '孙二');
        // An import adds its accounts too: a GBK file from the template, its example row and an empty row left in.
        await page.getByRole('button', { name: m.accountImport, exact: true }).click();
        const file = path.join(files, `accounts-${tag}.csv`);
        fs.writeFileSync(
          file,
          gbk(`${IMPORT_TEMPLATE.replace('\uFEFF', '')}third.${tag},档案员,130922102,孙三\r\n,,,\r\n`),
        );
        await page.getByLabel(m.importFile, { exact: true }).setInputFiles(file);
        await page.locator('form[aria-labelledby="import-title"] button[type=submit]').click();
        await page.locator(`.opening-sheet tr[data-sheet-account="third.${tag}"]`).waitFor();
        await page.getByText(m.importSkippedExamples.replace('{lines}', '2')).waitFor();
        await page.getByText(language === 'zh-CN' ? '已跳过 1 个空行。' : 'Skipped 1 empty row.').waitFor();
        const rows = await sheetRows(page);
        assert.deepEqual(
          rows.map(([user]) => user),
          [`first.${tag}`, `second.${tag}`, `third.${tag}`],
        );
        assert.equal(rows[0]![1], first);
        await page.locator('.opening-sheet').scrollIntoViewIfNeeded();
        await shot(page, 'accounts-sheet', language);
        for (const [user, password] of rows) await server.login(user!, password);

        // Printing prints the sheet alone: its accounts, passwords, the first-login line and the date.
        await page.emulateMedia({ media: 'print' });
        assert.equal(await page.locator('table.accounts').isVisible(), false, 'the list is not printed');
        assert.equal(await page.locator('form.panel').isVisible(), false, 'nor the import form');
        assert.equal(await page.locator('.topbar').first().isVisible(), false, 'nor the top bar');
        assert.equal(await page.getByRole('button', { name: m.sheetPrint }).isVisible(), false, 'nor its buttons');
        assert.ok(await page.locator('.opening-sheet code.secret').first().isVisible());
        assert.ok(await page.getByText(m.sheetFirstLogin).isVisible());
        assert.ok(await page.locator('.opening-sheet .sheet-date').isVisible());
        await shot(page, 'accounts-sheet-print', language);
        await page.emulateMedia({ media: 'screen' });

        // Closing asks first; then the sheet is gone.
        await page.getByRole('button', { name: m.sheetClose, exact: true }).click();
        await page.getByText(m.sheetCloseConfirm).waitFor();
        assert.equal(await page.locator('.opening-sheet tbody tr').count(), 3, 'not closed before the answer');
        await page.getByRole('button', { name: m.sheetCloseYes, exact: true }).click();
        await page.locator('.opening-sheet').waitFor({ state: 'detached' });
        assert.deepEqual(errors, []);
      });

      it(`${language}: 重置密码 is asked first like 停用, is not offered on one's own row, and puts the new password on the sheet`, async () => {
        const user = `reset.${tag}`;
        await server.addAccountIn(user, 'clerk', '130922101');
        const { page, m, errors } = await accountsPage(language);
        await page.locator(`tr[data-account="${user}"]`).waitFor();
        assert.equal(
          await page.getByRole('button', { name: `${m.accountReset} qing-admin`, exact: true }).count(),
          0,
          'no reset on one’s own row',
        );
        const before = (await server.archive.services.accounts.getByUsername(user)).passwordHash;
        await page.getByRole('button', { name: `${m.accountReset} ${user}`, exact: true }).click();
        await page.getByText(m.accountResetConfirm.replace('{user}', user)).waitFor();
        await shot(page, 'accounts-reset-confirm', language);
        assert.equal((await server.archive.services.accounts.getByUsername(user)).passwordHash, before, 'not yet');
        // Cancelled: nothing happens; asked again and confirmed: reset.
        await page.getByRole('button', { name: m.cancel, exact: true }).click();
        await page.getByRole('button', { name: `${m.accountReset} ${user}`, exact: true }).click();
        await page.getByRole('button', { name: m.accountResetYes, exact: true }).click();
        await page.locator(`.opening-sheet tr[data-sheet-account="${user}"]`).waitFor();
        await page.getByText(m.sheetReset).waitFor();
        const [[, password]] = (await sheetRows(page)) as [[string, string]];
        await server.login(user, password);
        assert.deepEqual(errors, []);
      });

      it(`${language}: the server's advice reaches the page: a file it cannot read, a unit code with no unit, a unit an administrator cannot have`, async () => {
        const { page, m, errors } = await accountsPage(language);
        await page.getByRole('button', { name: m.accountImport, exact: true }).click();
        const fileField = page.getByLabel(m.importFile, { exact: true });
        const xls = path.join(files, 'old.xls');
        fs.writeFileSync(
          xls,
          Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(504)]),
        );
        await fileField.setInputFiles(xls);
        await page.locator('form[aria-labelledby="import-title"] button[type=submit]').click();
        assert.equal(await fieldProblem(fileField), m.importOldExcel);
        const typo = path.join(files, `typo-${tag}.csv`);
        fs.writeFileSync(typo, `typo.${tag},档案员,130922023\r\n`);
        await fileField.setInputFiles(typo);
        await page.locator('form[aria-labelledby="import-title"] button[type=submit]').click();
        const said =
          language === 'zh-CN'
            ? `第 1 行（typo.${tag}）：单位代码“130922023”：没有这个代码。是否为 陈嘴乡 130922203？（河北省 / 沧州市 / 青县 / 陈嘴乡）`
            : `Line 1 (typo.${tag}): unit code 130922023: there is no such code. Did you mean 陈嘴乡 130922203? (河北省 / 沧州市 / 青县 / 陈嘴乡)`;
        await page.getByText(said, { exact: true }).waitFor();
        await page.getByRole('alert').filter({ hasText: said }).scrollIntoViewIfNeeded();
        await shot(page, 'accounts-import-unknown-code', language);

        // A refusal the page has no words of its own for: the server's own advice is shown, not a generic text.
        await page.getByRole('button', { name: m.accountCreate, exact: true }).click();
        const form = page.locator('form[aria-labelledby="create-title"]');
        await form.getByRole('textbox', { name: m.username, exact: true }).fill(`archivist.${tag}`);
        await form.getByRole('combobox', { name: m.accountRole, exact: true }).selectOption('admin');
        await page.getByLabel(m.unitSearch, { exact: true }).fill('档案室');
        await page.getByRole('button', { name: '河北省 / 沧州市 / 青县 / 清州镇 / 档案室' }).click();
        await page.getByRole('button', { name: m.accountCreateButton, exact: true }).click();
        const advice = page.getByText(/An administrator belongs to the archive, a city, a county, a town/);
        await advice.waitFor();
        assert.ok(
          (await advice.innerText()).startsWith(language === 'zh-CN' ? '提交的信息不符合要求' : 'What was sent'),
        );
        await advice.scrollIntoViewIfNeeded();
        await shot(page, 'accounts-server-advice', language);
        assert.deepEqual(errors, []);
      });
    }
  },
);
