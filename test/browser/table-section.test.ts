import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page, Route } from 'playwright-core';
import type { ReceiptSummary } from '../../shared/receipts.js';
import { browserSkip, BrowserWindows, login } from '../support/browser.js';
import { TestServer } from '../support/server.js';
import { embeddedTarget } from '../support/stores.js';

/**
 * The table every list page of the app is shown in (client/src/pages/table/table-section.tsx),
 * watched through 上传清单 in Debian's Chromium: the test answers the page's list requests
 * itself, one at a time, so each state stays on screen until it has been looked at.
 */

/** The list requests of a page, held until the test answers them. */
async function holdRequests(page: Page, pathname: string) {
  const held: Route[] = [];
  let arrived: (() => void) | undefined;
  await page.route(
    (url) => url.pathname === pathname,
    (route) => {
      held.push(route);
      arrived?.();
    },
  );
  return {
    /** The next request, once the page has sent it. */
    async next(): Promise<{ url: URL; answer(status: number, body: unknown): Promise<void> }> {
      while (held.length === 0) await new Promise<void>((resolve) => (arrived = resolve));
      const route = held.shift()!;
      return {
        url: new URL(route.request().url()),
        answer: (status, body) =>
          route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) }),
      };
    },
  };
}

function receipts(from: number, count: number): ReceiptSummary[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `r${from + i}`,
    title: `移交-${from + i}`,
    startedAt: '2026-03-01T02:00:00.000Z',
    updatedAt: '2026-03-01T02:00:00.000Z',
    counts: { instant: 1, stored: 1, duplicate: 0, failed: 0, skipped: 0 },
    total: 2,
  }));
}

describe(
  'a list page’s table: loading, refused, empty, rows, more (Debian Chromium)',
  { skip: browserSkip, timeout: 180_000 },
  () => {
    let server: TestServer;
    const windows = new BrowserWindows();

    before(async () => {
      server = await TestServer.start(embeddedTarget);
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('qz-clerk', 'clerk', '130922100');
    });
    after(async () => {
      await windows.closeAll();
      await server.close();
    });

    it('says it is loading, then why the list could not be read, that it is empty, or the rows a page at a time', async () => {
      const { page, errors } = await windows.open();
      await login(page, server.url, 'qz-clerk');
      await page.getByRole('heading', { name: '上传档案' }).waitFor();
      const requests = await holdRequests(page, '/api/receipts');
      const section = page.getByRole('region', { name: '上传清单' });
      const open = async () => {
        await page.getByRole('link', { name: '上传', exact: true }).click();
        await page.getByRole('link', { name: '上传清单', exact: true }).click();
        return requests.next();
      };

      // Loading: said, and nothing else yet.
      const refused = await open();
      await section.getByText('正在加载…', { exact: true }).waitFor();
      assert.equal(await section.locator('table, .empty, [role=alert]').count(), 0);
      // Refused: the server's reason in the clerk's words, as an alert; no longer "loading", no table.
      await refused.answer(503, { error: 'store_unavailable', message: 'the store does not answer' });
      await section
        .getByRole('alert')
        .filter({ hasText: '档案存储暂时无法访问。请稍后再试；如果持续出现，请联系管理员。' })
        .waitFor();
      assert.equal(await section.getByText('正在加载…').count(), 0);
      assert.equal(await section.locator('table, .empty').count(), 0);

      // Empty: said so, without a table or a pager.
      await (await open()).answer(200, { items: [], total: 0 });
      await section.locator('p.empty', { hasText: '还没有上传清单。' }).waitFor();
      assert.equal(await section.locator('table, nav.pager, [role=alert]').count(), 0);

      // Rows: a table named by its caption, with column headers, one page of 20 of 45, and a pager.
      const first = await open();
      assert.equal(first.url.searchParams.get('offset'), '0');
      await first.answer(200, { items: receipts(1, 20), total: 45 });
      const table = section.locator('table.files.receipts');
      await table.waitFor();
      assert.equal(await table.locator('caption').innerText(), '上传清单');
      assert.deepEqual(await table.locator('thead th[scope=col]').allInnerTexts(), ['文件夹', '开始时间', '文件']);
      assert.equal(await table.locator('tbody tr').count(), 20);
      await table.getByRole('link', { name: '移交-1', exact: true }).waitFor();
      assert.equal(await section.locator('.empty').count(), 0);
      const pager = section.getByRole('navigation', { name: '第 1 / 3 页' });
      await pager.waitFor();

      // More: the next page is asked for; meanwhile the rows shown stay, marked busy, and loading is said.
      await pager.getByRole('button', { name: '下一页' }).click();
      const second = await requests.next();
      assert.equal(second.url.searchParams.get('offset'), '20');
      await section.locator('table[aria-busy="true"]').waitFor();
      await section.locator('.table-tools .loading', { hasText: '正在加载…' }).waitFor();
      assert.equal(await table.locator('tbody tr').count(), 20);
      await second.answer(200, { items: receipts(21, 20), total: 45 });
      await section.getByRole('navigation', { name: '第 2 / 3 页' }).waitFor();
      await table.getByRole('link', { name: '移交-21', exact: true }).waitFor();
      assert.equal(await section.locator('table[aria-busy]').count(), 0);
      assert.equal(await section.getByText('正在加载…').count(), 0);
      assert.deepEqual(errors, []);
    });
  },
);
