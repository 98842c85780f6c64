import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { translator } from '../../client/src/i18n/index.js';
import { MESSAGES, type Language } from '../../client/src/i18n/messages.js';
import {
  accessibilityFindings,
  blocking,
  findingsTable,
  layoutProblems,
  type Finding,
} from '../support/accessibility.js';
import { artifactPath, browserSkip, BrowserWindows, fieldProblem, focused } from '../support/browser.js';
import { chartBars } from '../support/chart.js';
import { MD5_COLLISION } from '../support/content.js';
import { PASSWORD, TestServer } from '../support/server.js';
import { damageContent, embeddedTarget, tempDir } from '../support/stores.js';
import { NOTICE, NOTICE_FROM_THE_WEB } from '../support/texts.js';

/**
 * Every page of the app, in Chinese and in English, as a clerk and as an administrator, checked
 * with axe-core against WCAG 2.1 A and AA: no serious or critical violation anywhere. The archive
 * holds what makes every table, chart and state show (a failed file, a repeat, a collision, a
 * near-duplicate pair, a damaged file, a unit's own uploads that cannot be drilled into).
 */

/** A file name as scanners make them: long, and nowhere to break a line. */
const LONG_NAME = `二〇二三年度县档案馆移交档案目录及全部扫描件汇总_第一卷至第十二卷_${'SCAN20230315'.repeat(8)}.pdf`;

/** The test server's upload limit: the failed file is one byte over it. */
const MAX_FILE_SIZE = 1024 * 1024;

describe(
  'accessibility of every page (axe-core, Debian Chromium, embedded store)',
  { skip: browserSkip, timeout: 600_000 },
  () => {
    let server: TestServer;
    let files: string;
    const windows = new BrowserWindows();
    const all: Finding[] = [];

    before(async () => {
      server = await TestServer.start(embeddedTarget, { maxFileSize: MAX_FILE_SIZE });
      files = tempDir('archive-a11y-files-');
      await server.archive.services.directory.load(['13']);
      const qz = await server.addAccountIn('qz-clerk', 'clerk', '130922100');
      const jn = await server.addAccountIn('jn-clerk', 'clerk', '130922101');
      const city = await server.addAccountIn('cz-clerk', 'clerk', '130900');
      await server.addAccountIn('top', 'admin', 'archive');
      for (const language of ['zh', 'en'])
        await server.archive.services.accounts.create({
          username: `new-clerk-${language}`,
          password: PASSWORD,
          role: 'clerk',
          unit: qz.unit,
          mustChangePassword: true,
        });
      const A = randomBytes(100_000);
      const B = randomBytes(200_000);
      const C = randomBytes(10_000);
      const uploads: Array<[typeof qz, string, Buffer, string?]> = [
        [qz, '县志.pdf', A],
        [qz, '县志（再次）.pdf', A],
        [jn, '县志.pdf', A],
        [qz, '年鉴.pdf', B],
        // The city's own unit: its bar in the city's chart cannot be drilled into.
        [city, '年鉴.pdf', B],
        [jn, '碰撞-1.bin', MD5_COLLISION[0]!],
        [jn, '碰撞-2.bin', MD5_COLLISION[1]!],
        [qz, '档案整理通知.txt', Buffer.from(NOTICE), 'text/plain'],
        [jn, '档案整理通知（网页）.txt', Buffer.from(NOTICE_FROM_THE_WEB), 'text/plain'],
        // A long name without a space to break at: it wraps, or is cut with its full text kept.
        [qz, LONG_NAME, C],
        [qz, LONG_NAME, C],
        [jn, LONG_NAME, C],
      ];
      for (const [account, name, data, type] of uploads) {
        const res = await (await server.tokenClient(account)).upload(name, data, {}, type);
        assert.ok(res.status === 200 || res.status === 201, `${name}: ${res.status}`);
      }
      while ((await server.archive.services.nearDuplicates.runDue()) > 0);
      const { items } = await server.store.unitFiles.list({ accountId: '', limit: 1, offset: 0, nameContains: '年鉴' });
      await damageContent(server.opened, items[0]!.entry.fileId, { kind: 'flip-byte', offset: 1234 });
    });
    after(async () => {
      await windows.closeAll();
      await server?.close();
      if (files) fs.rmSync(files, { recursive: true, force: true });
      fs.writeFileSync(artifactPath('accessibility-findings.json'), `${JSON.stringify(all, null, 2)}\n`);
    });

    /** A window in `language` (the app's saved choice), and a scan of whatever it shows. */
    async function open(language: Language, who: string) {
      const window = await windows.open();
      const { page } = window;
      await page.addInitScript((saved) => {
        (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem(
          'archive.language',
          saved,
        );
      }, language);
      const found: Finding[] = [];
      const layout: string[] = [];
      const scan = async (view: string) => {
        const name = `${who}, ${language}: ${view}`;
        found.push(...(await accessibilityFindings(page, name)));
        layout.push(...(await layoutProblems(page)).map((problem) => `${name}: ${problem}`));
        await page.screenshot({
          path: artifactPath(`a11y-${who}-${language}-${view.replace(/\W+/g, '-')}.png`),
          fullPage: true,
        });
      };
      /** Prints what was found, keeps it for the report, and fails on anything serious or critical. */
      const verdict = (t: TestContext) => {
        all.push(...found);
        t.diagnostic(`\n${findingsTable(found)}`);
        assert.deepEqual(
          blocking(found).map((f) => `${f.id} (${f.impact}) on ${f.page}`),
          [],
        );
        assert.deepEqual(layout, [], 'figures right-aligned under their headers; nothing wider than the window');
        assert.deepEqual(window.errors, []);
      };
      return { page, scan, verdict };
    }

    async function logIn(page: Page, language: Language, username: string, password = PASSWORD) {
      const m = MESSAGES[language];
      await page.goto(server.url);
      await page.getByLabel(m.username, { exact: true }).fill(username);
      await page.getByLabel(m.password, { exact: true }).fill(password);
      await page.getByRole('button', { name: m.loginButton, exact: true }).click();
    }

    const heading = (page: Page, name: string) => page.getByRole('heading', { name, exact: true }).first().waitFor();
    /** Opens one of the app's pages by its address; waits for its heading and, where given, for what shows it loaded. */
    const visit = async (page: Page, hash: string, title: string, loaded?: string) => {
      await page.goto(`${server.url}/#/${hash}`);
      await heading(page, title);
      if (loaded) await page.locator(loaded).first().waitFor();
    };

    for (const language of ['zh-CN', 'en'] as const) {
      const m = MESSAGES[language];
      const tr = translator(language);

      it(`as a clerk, in ${language}: login, upload (empty and finished with a failed file), files, receipts, tokens, password`, async (t) => {
        const { page, scan, verdict } = await open(language, 'clerk');
        await page.goto(server.url);
        await heading(page, m.loginTitle);
        await scan('login');
        // Nothing filled in: said at the first field, which takes the keyboard; nothing is sent.
        await page.getByRole('button', { name: m.loginButton, exact: true }).click();
        const username = page.getByLabel(m.username, { exact: true });
        assert.equal(await fieldProblem(username), m.fieldRequired);
        assert.ok(await focused(username));
        await scan('login, nothing filled in');
        await logIn(page, language, 'nobody-here', 'not the password');
        await page.getByRole('alert').waitFor();
        await scan('login refused');

        await logIn(page, language, 'qz-clerk');
        await heading(page, m.uploadTitle);
        await scan('upload, empty');
        const folder = path.join(files, `移交-${language}`);
        fs.mkdirSync(folder, { recursive: true });
        fs.writeFileSync(path.join(folder, '新文件.pdf'), randomBytes(20_000));
        fs.writeFileSync(path.join(folder, '超大.tif'), randomBytes(MAX_FILE_SIZE + 1));
        // What a screen reader is told while the list moves: the live region's every change.
        await page.evaluate(() => {
          const w = globalThis as unknown as {
            told: string[];
            document: { querySelector(s: string): { textContent: string | null } };
            MutationObserver: new (cb: () => void) => { observe(node: unknown, options: object): void };
          };
          w.told = [];
          const region = w.document.querySelector('[role="status"][aria-live="polite"].announcement');
          new w.MutationObserver(() => w.told.push(region.textContent ?? '')).observe(region, {
            childList: true,
            characterData: true,
            subtree: true,
          });
        });
        // The batch held until the start is told, so the list is seen under way (a list over
        // before the page first redraws is told its summary alone).
        const start = tr('announceStart', { count: 2 });
        await page.route('**/api/uploads/batch', async (route) => {
          await page.waitForFunction(
            (text) => (globalThis as unknown as { told: string[] }).told.includes(text),
            start,
            { timeout: 60_000 },
          );
          await route.continue();
        });
        await page.locator('input[type=file][webkitdirectory]').setInputFiles(folder);
        await page.locator('.results .summary[data-stored="1"][data-failed="1"]').waitFor({ timeout: 60_000 });
        await page.unrouteAll();
        const end = tr('announceEnd', { instant: 0, stored: 1, failed: 1 });
        await page.getByRole('status').filter({ hasText: end }).waitFor();
        // The region lies outside the upload page, which stays mounted but hidden while the clerk
        // reads another page: a hidden region would tell a screen reader nothing.
        await page.getByRole('link', { name: m.navMyUploads, exact: true }).click();
        await heading(page, m.myUploadsTitle);
        assert.equal(
          await page
            .locator('[role="status"][aria-live="polite"].announcement')
            .evaluate((region) => region.closest('[hidden]') === null),
          true,
          'the live region is not inside a hidden page',
        );
        await page.getByRole('link', { name: m.navUpload, exact: true }).click();
        await heading(page, m.uploadTitle);
        // An emptied region says nothing; a text set again unchanged is not read again.
        const told = (await page.evaluate(() => (globalThis as unknown as { told: string[] }).told)).filter(Boolean);
        assert.deepEqual(
          told.filter((text, i) => text !== told[i - 1]),
          [start, end],
          'told the start and the end, not each redraw',
        );
        assert.equal(
          await page.locator('.results .summary').getAttribute('aria-live'),
          null,
          'the summary itself is silent',
        );
        await scan('upload, finished with a failed file');

        await visit(page, 'files', m.myUploadsTitle, 'table.files td');
        await scan('our unit’s files');
        await page.locator('table.folders a.folder-name').first().click();
        await page.locator('table.folders td.name .file-name').first().waitFor();
        await scan('our unit’s files, a folder');
        await visit(page, 'files?view=latest', m.myUploadsTitle, 'table.files td');
        await scan('our unit’s files, latest uploads');

        await visit(page, 'receipts', m.receiptsTitle);
        await page.getByRole('link', { name: `移交-${language}` }).click();
        await page.locator('table.receipt-rows').waitFor();
        await scan('a receipt');
        await page.goto(`${server.url}/#/receipts`);
        await page.getByRole('link', { name: `移交-${language}` }).waitFor();
        await scan('receipts');

        await visit(page, 'tokens', m.tokensTitle);
        await page.getByLabel(m.tokenLabel, { exact: true }).fill('二楼扫描仪-'.repeat(16));
        // A clerk may let a token make tokens, not administer accounts.
        assert.equal(await page.getByLabel(m.tokenScopeAccounts).count(), 0);
        await page.getByLabel(m.tokenScopeTokens).check();
        // The clerk went through the other language first: its token of then is listed too.
        const scoped = page.locator('td.scopes', { hasText: m.tokenScopeTokens });
        const before = await scoped.count();
        await page.getByRole('button', { name: m.tokenCreateButton }).click();
        await page.locator('code.token').waitFor();
        await scoped.nth(before).waitFor();
        await scan('tokens, a new one shown');

        await visit(page, 'password', m.ownPasswordTitle);
        await scan('password');
        // The new password typed differently twice: refused at the second, before anything is sent.
        let sent = 0;
        page.on('request', (r) => {
          if (new URL(r.url()).pathname === '/api/session/password') sent++;
        });
        await page.getByLabel(m.currentPassword, { exact: true }).fill(PASSWORD);
        await page.getByLabel(tr('newPassword', { min: 10 }), { exact: true }).fill('a brand new password');
        const again = page.getByLabel(m.confirmPassword, { exact: true });
        await again.fill('a brand new passwort');
        await page.getByRole('button', { name: m.changePasswordButton }).click();
        assert.equal(await fieldProblem(again), m.passwordsDiffer);
        assert.ok(await focused(again));
        assert.equal(sent, 0, 'nothing was sent');
        await scan('password, the new one typed differently');

        await page.getByRole('button', { name: m.logout }).click();
        await logIn(page, language, `new-clerk-${language === 'en' ? 'en' : 'zh'}`);
        await heading(page, m.changePasswordTitle);
        await scan('one-time password to change');
        verdict(t);
      });

      it(`as an administrator, in ${language}: upload, every report tab, audit, fixity, accounts, units, tokens, password`, async (t) => {
        const { page, scan, verdict } = await open(language, 'admin');
        await logIn(page, language, 'top');
        await heading(page, m.uploadTitle);
        await scan('upload, empty');

        const tab = async (report: string, query = '') => {
          await visit(page, `reports/${report}${query}`, m.reportsTitle, `[data-report="${report}"] table.report`);
        };
        await tab('repeat-uploaders');
        await scan('reports, repeat uploaders');
        await tab('cross-unit');
        await page.locator('table.report button.expand').first().click();
        await page.locator('table.uploaders').waitFor();
        await scan('reports, cross-unit, a row opened');
        // 上传记录, from a file's upload count: where an administrator withdraws others' uploads.
        // The file of the long name: its title must wrap too (which row comes first varies).
        await page
          .locator('[data-report="cross-unit"] tr', { hasText: 'SCAN20230315' })
          .locator('a.uploads-link')
          .first()
          .click();
        await page.locator('main[aria-labelledby="file-uploads-title"] :is(table.file-uploads, p.empty)').waitFor();
        await scan('a file’s uploads, withdrawable');
        await tab('savings');
        await page.locator('.chart canvas').waitFor();
        await scan('reports, savings per city with its chart');
        await tab('savings', `?city=${encodeURIComponent('沧州市')}`);
        await page.locator('.chart canvas').waitFor();
        // The city's own uploads cannot be drilled into: hatched, said in the legend and in the chart's words.
        const bars = await chartBars(page);
        assert.deepEqual(bars.map((bar) => bar.hatched).sort(), [false, true], JSON.stringify(bars));
        await page.locator('.chart-legend').getByText(m.chartLegendNoDrill).waitFor();
        await page.locator('.chart-legend').getByText(m.chartLegendDrill).waitFor();
        const words = (await page.locator('.chart canvas').getAttribute('aria-label'))!;
        const ownUnits = tr('ownUnits', { unit: '沧州市' });
        assert.ok(words.includes(`${ownUnits} 195.3 KB${m.chartNoDrillMark}`), words);
        assert.ok(!words.includes(`青县 195.3 KB${m.chartNoDrillMark}`), words);
        await scan('reports, savings in a city (a bar that cannot be drilled into)');
        await tab('collisions');
        for (const summary of await page.locator('[data-report="collisions"] table.report summary').all())
          await summary.click();
        await scan('reports, collisions with their checksums shown');
        await tab('near-duplicates');
        await scan('reports, near-duplicates');
        await page.goto(`${server.url}/#/reports/savings?county=${encodeURIComponent('青县')}`);
        assert.equal(await fieldProblem(page.getByLabel(m.county, { exact: true })), m.ruleCountyNeedsCity);
        await scan('reports, a filter refused');
        // The date field's calendar, open on the field's day.
        await tab('savings', '?from=2026-03-01');
        await page.getByRole('button', { name: tr('calendarOpen', { field: m.fromDay }), exact: true }).click();
        await page.locator('.calendar td[data-day="2026-03-01"]:focus').waitFor();
        await scan('reports, a calendar open');
        await page.keyboard.press('Escape');

        // Every event (the page opens on administrators' actions, none yet here).
        await visit(page, 'audit?group=all', m.auditTitle, 'table.audit tbody tr');
        await scan('audit log');
        await visit(page, 'holds', m.holdsTitle, '.table-section .count');
        await scan('holds (冻结)');

        await visit(page, 'fixity', m.fixityTitle);
        await page.getByRole('button', { name: m.fixityStart }).click();
        await page.locator('[data-state="failed"]').waitFor();
        await page.locator('table.fixity').waitFor();
        await scan('fixity, a damaged file');

        await visit(page, 'accounts', m.accountsTitle, 'table.accounts tbody tr');
        await scan('accounts');
        await page.getByRole('button', { name: m.accountCreate, exact: true }).click();
        await page.locator('.unit-picker select').first().waitFor();
        await scan('accounts, creating one');
        await page.getByRole('button', { name: m.accountCreateButton, exact: true }).click();
        const newUsername = page.getByRole('textbox', { name: m.username, exact: true });
        assert.equal(await fieldProblem(newUsername), m.fieldRequired);
        assert.ok(await focused(newUsername), 'the first field with a problem takes the keyboard');
        assert.equal(await fieldProblem(page.getByLabel(m.unitSearch, { exact: true })), m.accountPickUnit);
        await scan('accounts, creating one with nothing filled in');
        await page.getByRole('button', { name: m.accountImport, exact: true }).click();
        await page.locator('input[type=file][name=file]').waitFor();
        await scan('accounts, importing');
        await page.getByRole('button', { name: `${m.accountRename} top`, exact: true }).click();
        const rename = page.getByRole('textbox', { name: m.displayName, exact: true });
        await rename.fill('档案馆\u200B管理员');
        await page.getByRole('button', { name: m.saveNameButton, exact: true }).click();
        const told = await fieldProblem(rename);
        assert.ok(told.endsWith(m.displayNameHidden), `the field's hint, then its problem: ${told}`);
        await scan('accounts, renaming one, a name refused');
        // A password reset, asked first; its one-time password on the 账号开通单.
        await page.getByRole('button', { name: `${m.accountReset} cz-clerk`, exact: true }).click();
        await page.getByText(tr('accountResetConfirm', { user: 'cz-clerk' })).waitFor();
        await scan('accounts, a password reset asked first');
        await page.getByRole('button', { name: m.accountResetYes, exact: true }).click();
        await page.locator('.opening-sheet tr[data-sheet-account="cz-clerk"]').waitFor();
        await scan('accounts, the account sheet');

        await visit(page, 'units', m.unitsTitle, '.tree > li');
        await scan('units');

        await visit(page, 'tokens', m.tokensTitle);
        await page.getByRole('heading', { name: m.tokensOfReach }).waitFor();
        await scan('tokens, with the accounts’ tokens');

        await visit(page, 'password', m.ownPasswordTitle);
        await scan('password');
        await page.getByRole('textbox', { name: m.displayName, exact: true }).fill('档案馆管理员');
        await page.getByRole('button', { name: m.saveNameButton, exact: true }).click();
        await page.getByRole('status').filter({ hasText: m.ownNameSaved }).waitFor();
        await scan('my account, a name saved (shown in the top bar)');

        await visit(page, 'files', m.myUploadsTitle, 'table.files td');
        await scan('our unit’s files');
        await visit(page, 'receipts', m.receiptsTitle);
        await page.getByText(m.receiptsEmpty).waitFor();
        await scan('receipts, none');
        verdict(t);
      });
    }
  },
);
