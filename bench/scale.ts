import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { divisionsOf } from '../server/services/divisions.js';
import { geographyOf, UnitDirectory } from '../server/services/unit-directory.js';
import { openEmbeddedStore } from '../server/store/embedded.js';
import { databaseFile } from '../server/store/embedded/database.js';
import { tableSizes, timedGet, timeReports, type QueryTiming, type TimedGet } from './reports.js';
import { seedReportData, type ReportSeed, type SeedAccount } from './seed.js';
import { timeAccountsPage } from './scale-accounts-page.js';
import { seedBenchAccounts } from './seed-accounts.js';
import { EXPORT_PATHS, timeExport } from './scale-exports.js';
import { startBenchServer } from './server.js';

/** Hebei: 2,567 units (the issue's "whole province"). */
const PROVINCE = '13';
const REPORT_TIME_ZONE = 'Asia/Shanghai';
const PASSWORD = 'bench password 1';

const quantiles = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: rank(0.5), p99: rank(0.99) };
};

/** The parts of the scale run after start-up, in their order. */
export const SCALE_PARTS = ['accounts', 'files', 'reports', 'exports'] as const;
export type ScalePart = (typeof SCALE_PARTS)[number];
/**
 * What of the scale run to measure: `only` these parts (BENCH_SCALE_PARTS=reports,exports), and
 * only report pages whose label holds `pages` (BENCH_SCALE_PAGES=savings), to time a change to one
 * report on a kept archive in minutes, where the whole run takes half an hour.
 */
export interface ScaleParts {
  only?: ScalePart[];
  pages?: string;
}

/** What a kept data directory's seeding made and took (BENCH_SCALE_KEEP), written once it is done. */
interface KeptScale {
  scale: number;
  accounts: number;
  units: number;
  seed: ReportSeed;
  seedSeconds: number;
}

/**
 * The province-scale run (issue 43), opt-in with BENCH_SCALE: `scale` × 1,000,000 ledger entries
 * (scale × 200,000 files, scale × 10,000 accounts over the units of UNIT_REGIONS=13), a tenth of the
 * uploads withdrawn, seeded through the stores' ports (accounts `createMany`, the catalog's and the
 * ledger's seeding, which withdraws the tenth as the ledger's `reverseMany` does) into a data
 * directory under the system's temporary directory, deleted afterwards, or into `keep`
 * (BENCH_SCALE_KEEP), kept, and measured again without seeding by a later run given it. Prints
 * each figure as soon as it is measured (`print`), so a run cut short still says what it got:
 * seeding time, database size, the store's open time and the server's start-up, every report
 * page (`runs` runs each) and export (once: at this size each takes minutes), 本单位文件 of the
 * unit with the most entries, GET /api/accounts pages of 50, and the server's peak RSS during the
 * exports (its high-water mark reset just before them).
 */
export async function benchScale(
  scale: number,
  runs: number,
  print: (line: string) => void,
  /** Accounts to seed (BENCH_SCALE_ACCOUNTS): the issue's 100,000 without its 10,000,000 entries. */
  accounts = Math.round(scale * 10_000),
  /** A directory to seed into and keep, or to measure again if an earlier run of the same scale seeded it (BENCH_SCALE_KEEP). */
  keep?: string,
  /** Which parts to measure after start-up (BENCH_SCALE_PARTS): all unless given. */
  parts: ScaleParts = {},
): Promise<void> {
  const part = (name: ScalePart) => !parts.only || parts.only.includes(name);
  if (keep) fs.mkdirSync(keep, { recursive: true });
  const dataDir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-scale-'));
  const keptFile = path.join(dataDir, 'bench-scale.json');
  const entries = Math.round(scale * 1_000_000);
  try {
    let kept =
      keep && fs.existsSync(keptFile) ? (JSON.parse(fs.readFileSync(keptFile, 'utf8')) as KeptScale) : undefined;
    const seededBefore = kept !== undefined;
    if (kept && (kept.scale !== scale || kept.accounts !== accounts))
      throw new Error(
        `${dataDir} holds the run of BENCH_SCALE=${kept.scale} with ${kept.accounts} accounts, not ${scale} with ${accounts}`,
      );
    if (kept)
      print(`scale   province-scale run (BENCH_SCALE=${scale}): measuring ${dataDir} as seeded by an earlier run`);
    else {
      // A directory an interrupted seeding left is seeded afresh.
      if (keep)
        for (const name of fs.readdirSync(dataDir))
          fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
      kept = await seedScale(dataDir, scale, entries, accounts, print);
      if (keep) fs.writeFileSync(keptFile, JSON.stringify(kept));
    }
    const { seed, seedSeconds } = kept;
    const accountCount = kept.accounts;
    const file = databaseFile(dataDir);
    const databaseMb = fs.statSync(file).size / 1e6;
    print(
      `scale   province-scale run (BENCH_SCALE=${scale}), embedded store: ${seed.entries} ledger entries, ${seed.files} files, ${seed.uploadDays} upload days, ${seed.uploads} uploads (${seed.withdrawn} of them withdrawn) by ${seed.accounts} accounts in ${kept.units} units of UNIT_REGIONS=${PROVINCE}`,
    );
    print(
      `        seeded in ${seedSeconds.toFixed(0)} s (${(seedSeconds / 60).toFixed(1)} min)${seededBefore ? ' by the run that kept it' : ''}; database ${databaseMb.toFixed(0)} MB: ${tableSizes(
        file,
      )
        .map((t) => `${t.name} ${t.rows} rows ${t.mb.toFixed(0)} MB`)
        .join(
          ', ',
        )} (with indexes); free on ${dataDir}: ${((fs.statfsSync(dataDir).bavail * fs.statfsSync(dataDir).bsize) / 1e9).toFixed(0)} GB`,
    );

    // Start-up: opening the store in-process (what the server does first), then the server until it answers.
    let t = performance.now();
    await openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 }).close();
    const openMs = performance.now() - t;
    const env = {
      ...process.env,
      // The bench's own heap limit (its data set in memory) is not the server's: it runs as `npm run serve`.
      NODE_OPTIONS: '',
      DATA_DIR: dataDir,
      STORE: 'embedded',
      MONGODB_URI: '',
      REPORT_TIME_ZONE,
      GC_INTERVAL_SECONDS: '0',
      UNIT_REGIONS: PROVINCE,
    };
    // The first start of a data directory reads every account once for the unit directory (its
    // upgrade step: the seeding went through the ports, as an earlier version's data); every later
    // start is the one the target is for.
    t = performance.now();
    const first = await startBenchServer(env);
    const firstMs = performance.now() - t;
    await first.stop();
    t = performance.now();
    const server = await startBenchServer(env);
    const startMs = performance.now() - t;
    const steps = /"startUp":(\{[^}]*\})/.exec(server.logLines().join('\n'))?.[1] ?? '{}';
    print(
      `        start-up: the store opens in ${(openMs / 1000).toFixed(2)} s in-process, the server answers ${(startMs / 1000).toFixed(2)} s after it is started (its steps in ms: ${steps}; the first start, reading every account once, ${(firstMs / 1000).toFixed(2)} s), load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}  (target <= 5 s: ${openMs <= 5000 && startMs <= 5000 ? 'meets target' : 'MISSES target'})`,
    );
    const sessionCookie = async (url: string, username: string): Promise<string> => {
      const login = await fetch(`${url}/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password: PASSWORD }),
      });
      if (!login.ok) throw new Error(`logging in as ${username}: ${login.status} ${await login.text()}`);
      return login.headers.get('set-cookie')!.split(';')[0]!;
    };
    const logIn = async (url: string, username: string): Promise<TimedGet> =>
      timedGet(url, { cookie: await sessionCookie(url, username) });
    try {
      const admin = await logIn(server.url, 'top');
      const timed = async (label: string, get: TimedGet, paths: string[], times: number, target: number) => {
        const all: number[] = [];
        let total = 0;
        for (let i = 0; i < times; i++) {
          const answer = await get(paths[i % paths.length]!);
          all.push(answer.ms);
          total = answer.total;
        }
        const q = quantiles(all);
        print(
          `        ${label.padEnd(48)} p50 ${q.p50.toFixed(0).padStart(6)} ms  p99 ${q.p99.toFixed(0).padStart(6)} ms  (${times} requests; ${total} in all; target p99 <= ${target} ms: ${q.p99 <= target ? 'meets target' : 'MISSES target'})`,
        );
      };

      if (part('accounts')) {
        // GET /api/accounts: a page of 50 of them all, the first and one half-way, and a search.
        await timed('GET /api/accounts?limit=50', admin, ['/api/accounts?limit=50'], 200, 100);
        await timed(
          'GET /api/accounts?limit=50 half-way',
          admin,
          [`/api/accounts?limit=50&offset=${Math.floor(accountCount / 2)}`],
          200,
          100,
        );
        await timed(
          'GET /api/accounts?limit=50&q=青县',
          admin,
          [`/api/accounts?limit=50&q=${encodeURIComponent('青县')}`],
          200,
          100,
        );
        // The accounts page in Chromium: from the address typed to its first rows shown.
        const shown = await timeAccountsPage(server.url, 'top', PASSWORD, 5);
        if (shown) {
          const q = quantiles(shown);
          print(
            `        ${'accounts page: first rows shown (Chromium)'.padEnd(48)} p50 ${q.p50.toFixed(0).padStart(6)} ms  max ${Math.max(
              ...shown,
            )
              .toFixed(0)
              .padStart(
                6,
              )} ms  (${shown.length} loads; target <= 1,000 ms: ${Math.max(...shown) <= 1000 ? 'meets target' : 'MISSES target'})`,
          );
        } else print('        accounts page: not timed (no Chromium: install the Debian package "chromium")');
      }
      if (part('files')) {
        // 本单位文件 of the unit with the most entries, as one of its clerks sees it.
        const clerk = await logIn(server.url, seed.largestUnit.clerk);
        const unitName = [seed.largestUnit.unit.city, seed.largestUnit.unit.county, seed.largestUnit.unit.town]
          .filter(Boolean)
          .join(' ');
        const files = (await clerk('/api/files?limit=50')).total;
        print(`        本单位文件 of ${unitName} (${seed.largestUnit.entries} ledger entries, ${files} files):`);
        await timed('GET /api/files?limit=50 (the page as it opens)', clerk, ['/api/files?limit=50'], runs * 4, 300);
        await timed(
          'GET /api/files half-way',
          clerk,
          [`/api/files?limit=50&offset=${Math.floor(files / 2)}`],
          runs * 4,
          300,
        );
        await timed(
          'GET /api/files?q=通知',
          clerk,
          [`/api/files?limit=50&q=${encodeURIComponent('通知')}`],
          runs * 4,
          300,
        );
        await timed('GET /api/files?sort=name', clerk, ['/api/files?limit=50&sort=name'], runs * 4, 300);
      }
      if (part('reports')) {
        // Every report page, then (the peak RSS reset before each) every export once.
        print(`        report pages, p50 and p99 (nearest rank: the slowest) of ${runs} runs each`);
        const report = (q: QueryTiming) => {
          const ok = q.p50Ms <= 1000 && q.p99Ms <= 2000;
          print(
            `        ${q.label.padEnd(48)} p50 ${q.p50Ms.toFixed(0).padStart(6)} ms  p99 ${q.p99Ms.toFixed(0).padStart(6)} ms  ${String(q.total).padStart(8)} rows  (target p50 <= 1 s, p99 <= 2 s: ${ok ? 'meets target' : 'MISSES target'}); peak RSS ${q.peakRssMb.toFixed(0)} MB`,
          );
        };
        await timeReports(server, admin, seed, runs, 1, report, false, parts.pages);
      }
      if (part('exports')) {
        // Every export once, read as it comes; the server's RSS high-water mark reset before each.
        print(
          '        exports, each once: every row received, and the server peak RSS during it (VmHWM, reset before it)',
        );
        const cookie = await sessionCookie(server.url, 'top');
        let highest = 0;
        for (const p of EXPORT_PATHS) {
          const e = await timeExport(server, cookie, p);
          highest = Math.max(highest, e.peakRssMb);
          print(
            `        ${decodeURIComponent(e.path).replace('/api/', '').padEnd(48)} ${e.seconds.toFixed(1).padStart(6)} s  ${e.rows} rows of ${e.total} (${e.rows === e.total ? 'every row' : 'ROWS MISSING'}), ${(e.bytes / 1e6).toFixed(0)} MB, ${((e.seconds * 1e6) / Math.max(1, e.rows)).toFixed(0)} ms per 1,000; server RSS ${e.startRssMb.toFixed(0)} MB at its start, peak ${e.peakRssMb.toFixed(0)} MB  (target <= 250 MB: ${e.peakRssMb <= 250 ? 'meets target' : 'MISSES target'})`,
          );
        }
        print(
          `        server peak RSS over every export ${highest.toFixed(0)} MB (target <= 250 MB: ${highest <= 250 ? 'meets target' : 'MISSES target'})`,
        );
      }
    } finally {
      await server.stop();
    }
  } finally {
    if (keep === undefined) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Seeds the province into `dataDir`: the accounts (through the accounts store), then the uploads
 * with a tenth withdrawn (seedReportData: the catalog's and the ledger's seeding), with progress
 * lines. Answers what it made and how long it took.
 */
async function seedScale(
  dataDir: string,
  scale: number,
  entries: number,
  accountCount: number,
  print: (line: string) => void,
): Promise<KeptScale> {
  const seedStart = performance.now();
  const units = divisionsOf([PROVINCE]);
  const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
  await new UnitDirectory({ units: store.units, accounts: store.accounts, jobs: store.jobs }).load([PROVINCE]);
  // Accounts in every unit but the province's own (most in towns, as there are most towns),
  // each in the area of its county (its neighbours upload the same files most).
  const placed = units.filter((u) => u.level !== 'province');
  const byId = new Map(units.map((u) => [u.id, u]));
  const areaOf = (u: (typeof units)[number]) => (u.level === 'town' ? (u.parentId ?? u.id) : u.id);
  const given: SeedAccount[] = Array.from({ length: accountCount }, (_, i) => {
    const unit = placed[i % placed.length]!;
    return {
      id: `scale-${i}`,
      username: `clerk${String(i + 1).padStart(6, '0')}`,
      unit: geographyOf(unit),
      area: areaOf(byId.get(unit.id)!),
    };
  });
  // The clerks, and the top-level administrator (a unit outside the directory: reach over everything).
  await seedBenchAccounts(store.accounts, given, { password: PASSWORD, prefix: 'scale' });
  await store.close();
  print(`        seeding: ${accountCount} accounts in ${placed.length} units of province ${PROVINCE} made`);
  // A tenth of the uploads withdrawn by the ledger's seeding, as withdrawals reverse them.
  const seed = await seedReportData(dataDir, entries, REPORT_TIME_ZONE, 0.1, given);
  return {
    scale,
    accounts: accountCount,
    units: placed.length,
    seed,
    seedSeconds: (performance.now() - seedStart) / 1000,
  };
}
