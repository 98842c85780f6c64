import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { divisionsOf } from '../server/services/divisions.js';
import { geographyOf, UnitDirectory } from '../server/services/unit-directory.js';
import { openEmbeddedStore } from '../server/store/embedded.js';
import { timeAccountsPage } from './scale-accounts-page.js';
import { seedBenchAccounts } from './seed-accounts.js';
import { startBenchServer } from './server.js';

/** Hebei: 2,567 units, as in the province-scale run (bench/scale.ts). */
const PROVINCE = '13';
const PASSWORD = 'bench password 1';

const quantiles = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: rank(0.5), p99: rank(0.99) };
};

/** Seeds `accounts` clerks and the two administrators into a fresh data directory (see benchAccounts). */
async function seed(dataDir: string, accounts: number, print: (line: string) => void): Promise<void> {
  const t = performance.now();
  const units = divisionsOf([PROVINCE]);
  const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
  await new UnitDirectory({ units: store.units, accounts: store.accounts, jobs: store.jobs }).load([PROVINCE]);
  const placed = units.filter((u) => u.level !== 'province');
  const clerks = Array.from({ length: accounts }, (_, i) => ({
    id: `scale-${i}`,
    username: `clerk${String(i + 1).padStart(6, '0')}`,
    unit: geographyOf(placed[i % placed.length]!),
  }));
  const county = units.find((u) => u.code === '130922')!;
  await seedBenchAccounts(store.accounts, clerks, {
    password: PASSWORD,
    prefix: 'scale',
    county: geographyOf(county),
  });
  await store.close();
  print(
    `accounts ${accounts} clerks over ${placed.length} units of UNIT_REGIONS=${PROVINCE} seeded in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
}

/**
 * The accounts of issue 43 without its ledger (`BENCH_ONLY=accounts`): `accounts` clerks over
 * Hebei's units as bench/scale.ts seeds them (clerk000001…, every unit but the province's own),
 * a top-level administrator and one of 青县, then `GET /api/accounts` a page of 50 (`requests`
 * each: first page, half-way, the searches and the state filter of the README's figures, and the
 * county's first page and search), and the accounts page in Chromium (5 loads, its first rows
 * shown), with the load average before and after. `keep` (BENCH_ACCOUNTS_KEEP=DIR) seeds into that
 * directory and keeps it; a later run given it again measures it without seeding (comparing two
 * builds on the same accounts: copy it first, as a server may write to it).
 */
export async function benchAccounts(
  accounts: number,
  requests: number,
  print: (line: string) => void,
  keep?: string,
): Promise<void> {
  const seeded = keep !== undefined && fs.existsSync(path.join(keep, 'archive.sqlite'));
  const dataDir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-accounts-'));
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    if (seeded) print(`accounts ${dataDir}: seeded before, measured again`);
    else await seed(dataDir, accounts, print);
    const t = performance.now();
    const server = await startBenchServer({
      DATA_DIR: dataDir,
      STORE: 'embedded',
      MONGODB_URI: '',
      GC_INTERVAL_SECONDS: '0',
      UNIT_REGIONS: PROVINCE,
    });
    print(`        the server answers ${((performance.now() - t) / 1000).toFixed(1)} s after it is started`);
    try {
      const logIn = async (username: string) => {
        const login = await fetch(`${server.url}/api/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username, password: PASSWORD }),
        });
        if (!login.ok) throw new Error(`logging in as ${username}: ${login.status}`);
        return login.headers.get('set-cookie')!.split(';')[0]!;
      };
      const top = await logIn('top');
      const countyAdmin = await logIn('county');
      const load = () => os.loadavg()[0]!.toFixed(1);
      print(`        load average ${load()} before the requests`);
      const timed = async (label: string, cookie: string, url: string) => {
        const times: number[] = [];
        let answer: { total: number; totalCapped?: boolean } = { total: 0 };
        for (let i = 0; i < requests; i++) {
          const start = performance.now();
          const res = await fetch(`${server.url}${url}`, { headers: { cookie } });
          answer = (await res.json()) as typeof answer;
          if (!res.ok) throw new Error(`${url}: ${res.status}`);
          times.push(performance.now() - start);
        }
        const q = quantiles(times);
        const total = `${answer.total}${answer.totalCapped ? '+' : ''}`;
        print(
          `        ${label.padEnd(44)} p50 ${q.p50.toFixed(0).padStart(5)} ms  p99 ${q.p99.toFixed(0).padStart(5)} ms  (${requests} requests; ${total} in all; target p99 <= 100 ms: ${q.p99 <= 100 ? 'meets target' : 'MISSES target'})`,
        );
      };
      await timed('first page', top, '/api/accounts?limit=50');
      await timed('half-way', top, `/api/accounts?limit=50&offset=${Math.floor(accounts / 2)}`);
      await timed('q=青县', top, `/api/accounts?limit=50&q=${encodeURIComponent('青县')}`);
      await timed('q=clerk0999', top, '/api/accounts?limit=50&q=clerk0999');
      await timed('q=clerk01 (clustered in name order)', top, '/api/accounts?limit=50&q=clerk01');
      await timed('q=clerk (most accounts)', top, '/api/accounts?limit=50&q=clerk');
      await timed('role=clerk&state=active', top, '/api/accounts?limit=50&role=clerk&state=active');
      await timed('role=admin', top, '/api/accounts?limit=50&role=admin');
      await timed('state=disabled', top, '/api/accounts?limit=50&state=disabled');
      await timed('county: first page', countyAdmin, '/api/accounts?limit=50');
      await timed('county: q=镇', countyAdmin, `/api/accounts?limit=50&q=${encodeURIComponent('镇')}`);
      const shown = await timeAccountsPage(server.url, 'top', PASSWORD, 5);
      if (shown)
        print(
          `        ${'accounts page: first rows shown (Chromium)'.padEnd(44)} p50 ${quantiles(shown).p50.toFixed(0).padStart(5)} ms  max ${Math.max(
            ...shown,
          )
            .toFixed(0)
            .padStart(5)} ms  (5 loads: ${shown.map((ms) => ms.toFixed(0)).join(', ')}; target <= 1,000 ms)`,
        );
      else print('        accounts page: not timed (no Chromium: install the Debian package "chromium")');
      print(`        load average ${load()} after`);
    } finally {
      await server.stop();
    }
  } finally {
    if (keep === undefined) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
