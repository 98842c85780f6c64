import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { divisionsOf } from '../server/services/divisions.js';
import { geographyOf, UnitDirectory } from '../server/services/unit-directory.js';
import { openEmbeddedStore } from '../server/store/embedded.js';
import { CHROMIUM_FLAGS, findChromium } from '../test/support/browser.js';
import { seedBenchAccounts } from './seed-accounts.js';
import { startBenchServer } from './server.js';

export interface AdministrationResult {
  province: string;
  units: number;
  /** Reading the division data of the province (the package's JSON), the reference. */
  parseMs: number;
  /** Loading it into an empty embedded store (parse included). */
  loadMs: number;
  /** Loading it again (it is there: what every start pays). */
  reloadMs: number;
  accounts: number;
  /** Server handling times (ms): the search, the accounts page's request, and GET /api/session (reference). */
  unitSearch: { p50: number; p99: number };
  accountList: { p50: number; p99: number };
  /** The same for a county's administrator (青县: its towns' accounts). */
  countyList: { p50: number; p99: number };
  session: { p50: number; p99: number };
  /** Chromium: from opening #/accounts to the first page of the table shown (ms); null without Chromium. */
  pageMs: number | null;
}

const PROVINCE = '13';

const quantiles = (times: number[]) => {
  times.sort((a, b) => a - b);
  return {
    p50: times[Math.floor(0.5 * (times.length - 1))]!,
    p99: times[Math.floor(0.99 * (times.length - 1))]!,
  };
};

/**
 * The unit directory and the accounts page at a county-bureau scale: one province (Hebei, 2,567
 * units) loaded, `accounts` accounts spread over its towns, searched and listed over HTTP by a
 * top-level administrator (the widest reach, so the most work).
 */
export async function benchAdministration(accounts: number, requests = 1000): Promise<AdministrationResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-admin-'));
  try {
    let t = performance.now();
    const units = divisionsOf([PROVINCE]);
    const parseMs = performance.now() - t;
    const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
    const directory = new UnitDirectory({ units: store.units, accounts: store.accounts, jobs: store.jobs });
    t = performance.now();
    const [loaded] = await directory.load([PROVINCE]);
    const loadMs = performance.now() - t;
    t = performance.now();
    await directory.load([PROVINCE]);
    const reloadMs = performance.now() - t;

    // Clerks over Hebei's towns, and a county bureau's administrator: the reach the page narrows
    // to units (沧州市 青县).
    const towns = units.filter((u) => u.level === 'town');
    const clerks = Array.from({ length: accounts }, (_, i) => ({
      id: `bench-${i}`,
      username: `clerk${String(i).padStart(6, '0')}`,
      unit: geographyOf(towns[i % towns.length]!),
    }));
    const county = units.find((u) => u.code === '130922')!;
    await seedBenchAccounts(store.accounts, clerks, {
      password: 'bench password 1',
      prefix: 'bench',
      county: geographyOf(county),
    });
    await store.close();

    const server = await startBenchServer({
      DATA_DIR: dataDir,
      STORE: 'embedded',
      MONGODB_URI: '',
      UNIT_REGIONS: PROVINCE,
    });
    try {
      const logIn = async (username: string) => {
        const login = await fetch(`${server.url}/api/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username, password: 'bench password 1' }),
        });
        return login.headers.get('set-cookie')!.split(';')[0]!;
      };
      const cookie = await logIn('top');
      const countyCookie = await logIn('county');
      const timed = async (paths: string[], as = cookie) => {
        const times: number[] = [];
        for (let i = 0; i < requests; i++) {
          const start = performance.now();
          const res = await fetch(`${server.url}${paths[i % paths.length]}`, { headers: { cookie: as } });
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`${paths[i % paths.length]}: ${res.status}`);
          times.push(performance.now() - start);
        }
        return quantiles(times);
      };
      const words = ['镇', '乡', '街道', '城关', '新', '东', '1309', '130922100', '沧州', '石家庄', '村', '庄'];
      const unitSearch = await timed(words.map((q) => `/api/units?q=${encodeURIComponent(q)}&limit=20`));
      const accountList = await timed([
        '/api/accounts?limit=50',
        `/api/accounts?limit=50&offset=${Math.floor(accounts / 2)}`,
        `/api/accounts?limit=50&q=${encodeURIComponent('青县')}`,
        '/api/accounts?limit=50&q=clerk00123',
        '/api/accounts?limit=50&state=active&role=clerk',
      ]);
      const countyList = await timed(
        [
          '/api/accounts?limit=50',
          '/api/accounts?limit=50&offset=20',
          `/api/accounts?limit=50&q=${encodeURIComponent('镇')}`,
          '/api/accounts?limit=50&state=active',
        ],
        countyCookie,
      );
      const session = await timed(['/api/session']);
      const pageMs = await accountsPageMs(server.url, cookie);
      return {
        province: loaded!.name,
        units: loaded!.units,
        parseMs,
        loadMs,
        reloadMs,
        accounts,
        unitSearch,
        accountList,
        countyList,
        session,
        pageMs,
      };
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Opens the accounts page in Chromium (logged in by the session cookie) and waits for its table; median of 5. */
async function accountsPageMs(url: string, cookie: string): Promise<number | null> {
  const executablePath = findChromium();
  if (!executablePath) return null;
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_FLAGS });
  try {
    const context = await browser.newContext({ locale: 'zh-CN' });
    const [name, value] = cookie.split('=') as [string, string];
    await context.addCookies([{ name, value, url }]);
    const page = await context.newPage();
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      await page.goto(`${url}/#/upload`);
      await page.getByRole('heading', { name: '上传档案' }).waitFor();
      const start = performance.now();
      await page.goto(`${url}/#/accounts`);
      await page.locator('table.accounts tbody tr').nth(49).waitFor();
      times.push(performance.now() - start);
    }
    return quantiles(times).p50;
  } finally {
    await browser.close();
  }
}
