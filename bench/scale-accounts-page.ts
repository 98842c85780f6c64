import { findChromium, launchContext } from '../test/support/browser.js';

/**
 * The accounts page as an administrator opens it in Chromium (issue 43: "the accounts page showing
 * its first rows in ≤ 1 s"): logged in once, then `loads` times a fresh load of `#/accounts` (the
 * app's scripts from the server, the session from its cookie), each timed from the navigation to
 * the first row of the table shown. Undefined when no Chromium is installed.
 */
export async function timeAccountsPage(
  url: string,
  username: string,
  password: string,
  loads: number,
): Promise<number[] | undefined> {
  if (!findChromium()) return undefined;
  const browser = await launchContext({ locale: 'zh-CN' });
  try {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    await page.goto(url);
    await page.getByLabel('用户名', { exact: true }).fill(username);
    await page.getByLabel('密码', { exact: true }).fill(password);
    await page.getByRole('button', { name: '登录' }).click();
    await page.getByLabel('密码', { exact: true }).waitFor({ state: 'hidden', timeout: 60_000 });
    const times: number[] = [];
    for (let i = 0; i < loads; i++) {
      await page.goto('about:blank');
      const start = performance.now();
      await page.goto(`${url}/#/accounts`);
      await page.locator('table.accounts tbody tr').first().waitFor({ timeout: 60_000 });
      times.push(performance.now() - start);
    }
    return times;
  } finally {
    await browser.close();
  }
}
