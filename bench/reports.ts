import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { databaseFile } from '../server/store/embedded/database.js';
import { benchToken, startBenchServer, type BenchServer } from './server.js';
import { seedReportData, withdrawSeededShare, type ReportSeed } from './seed.js';

export interface QueryTiming {
  /** e.g. "cross-unit by county". */
  label: string;
  path: string;
  /** Rows over all pages (X-Total-Count); for an export, the rows exported. */
  total: number;
  /** A CSV export: every row of the selection, timed whole. */
  csv?: boolean;
  p50Ms: number;
  /** Nearest rank: of a handful of runs, the slowest. */
  p99Ms: number;
  maxMs: number;
  /** The server's peak RSS once this query's runs are done (from the start: it tells which query raised it). */
  peakRssMb: number;
}

/** One query timed on both archives, request by request in turn. */
export interface PairedTiming {
  label: string;
  /** The path as sent to the archive with none withdrawn (a deep page's offset is each archive's own). */
  path: string;
  csv?: boolean;
  /** With none of the uploads withdrawn, and with a tenth withdrawn. */
  none: QueryTiming;
  withdrawn: QueryTiming;
  /** Median over the rounds of (10% time / 0% time) of the same round: drift cancels within a round. */
  pairedRatio: number;
}

export interface ReportsResult {
  seed: ReportSeed;
  seedSeconds: number;
  /** Copying the seeded data directory for the second archive. */
  copySeconds: number;
  /** Withdrawing a tenth of the uploads of the copy through the ledger's reverseMany. */
  withdrawSeconds: number;
  /** Rows and MB (data and indexes) per table, and the whole database file, of each archive. */
  tables: {
    none: Array<{ name: string; rows: number; mb: number }>;
    withdrawn: Array<{ name: string; rows: number; mb: number }>;
  };
  databaseMb: { none: number; withdrawn: number };
  runs: number;
  csvRuns: number;
  /** Reference: `SELECT SUM(upload_count) FROM ledger` in-process (better-sqlite3) on each file, alternately, and how SQLite reads it. */
  scanP50Ms: { none: number; withdrawn: number };
  scanPlan: string;
  /** Reference: GET /api/health of each server, alternately. */
  healthP50Ms: { none: number; withdrawn: number };
  queries: PairedTiming[];
  serverPeakRssMb: { none: number; withdrawn: number };
  /** The bench process's own peak RSS (the seeding's drawing of the data set is most of it). */
  benchPeakRssMb: number;
  /** The machine's load average (1 minute) at the start and end of the measuring, and its highest sample in between. */
  load: { start: number; end: number; max: number };
}

const REPORT_TIME_ZONE = 'Asia/Shanghai';

const median = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor((times.length - 1) / 2)]!;
/** Nearest-rank quantile. */
const quantile = (times: number[], q: number) =>
  [...times].sort((a, b) => a - b)[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)]!;

/** The queries an administrator runs, per report: filters, sorts, groupings, a deep page, an export. */
export function reportQueries(seed: ReportSeed): Array<{ label: string; path: string; deep?: boolean; csv?: boolean }> {
  const city = `city=${encodeURIComponent(seed.city)}`;
  const county = `${city}&county=${encodeURIComponent(seed.county)}`;
  const range = 'from=2025-03-01&to=2025-05-31';
  const name = `q=${encodeURIComponent(seed.fileWord)}`;
  const common = (report: string, sort: string, deep = '') => [
    { label: `${report}`, path: `/api/reports/${report}` },
    { label: `${report} by city`, path: `/api/reports/${report}?${city}` },
    { label: `${report} by county`, path: `/api/reports/${report}?${county}` },
    { label: `${report} 3 months`, path: `/api/reports/${report}?${range}` },
    { label: `${report} file name`, path: `/api/reports/${report}?${name}` },
    { label: `${report} sort=${sort}`, path: `/api/reports/${report}?sort=${sort}` },
    // Half-way through all pages (the offset is set from the total of the same query's first page).
    {
      label: `${report}${deep && ` ${deep}`} deep page`,
      path: `/api/reports/${report}?${deep && `${deep}&`}`,
      deep: true,
    },
  ];
  // An export is every row of the selection (the page's limit does not apply).
  const csv = (report: string, query = '') => ({
    label: `${report} CSV${query && ` ${query}`}`,
    path: `/api/reports/${report}?format=csv${query && `&${query}`}`,
    csv: true,
  });
  return [
    ...common('repeat-uploaders', 'fileLength'),
    { label: 'repeat-uploaders group=user', path: '/api/reports/repeat-uploaders?group=user' },
    { label: 'repeat-uploaders group=unit', path: '/api/reports/repeat-uploaders?group=unit' },
    csv('repeat-uploaders'),
    ...common('cross-unit', 'lastUploadTime'),
    csv('cross-unit'),
    ...common('savings', 'savedBytes', 'group=day'),
    { label: 'savings group=day', path: '/api/reports/savings?group=day' },
    { label: 'savings group=week', path: '/api/reports/savings?group=week' },
    { label: 'savings group=month', path: '/api/reports/savings?group=month' },
    csv('savings', 'group=day'),
    ...common('collisions', 'uploads'),
    csv('collisions'),
  ];
}

/** Rows and size per table (with its indexes), from SQLite's dbstat. */
export function tableSizes(file: string): Array<{ name: string; rows: number; mb: number }> {
  const db = new Database(file, { readonly: true });
  try {
    return ['ledger', 'upload_days', 'catalog'].map((name) => ({
      name,
      rows: (db.prepare(`SELECT COUNT(*) AS n FROM ${name}`).get() as { n: number }).n,
      mb:
        (
          db
            .prepare(
              "SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name = ? OR name IN (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?)",
            )
            .get(name, name) as { bytes: number }
        ).bytes / 1e6,
    }));
  } finally {
    db.close();
  }
}

/** A GET of the bench's server as one account: its time, and the total it answered. */
export type TimedGet = (path: string) => Promise<{ ms: number; total: number }>;

export function timedGet(url: string, authorization: Record<string, string>): TimedGet {
  return async (p) => {
    const start = performance.now();
    const res = await fetch(`${url}${p}`, { headers: authorization });
    const body = await res.text();
    const ms = performance.now() - start;
    if (res.status !== 200) throw new Error(`${p} answered ${res.status}: ${body.slice(0, 200)}`);
    const header = res.headers.get('x-total-count');
    // A page answers its total in its body too (`{items, total}`; the header where there is one).
    const total = header !== null ? Number(header) : Number((JSON.parse(body) as { total?: number }).total ?? 0);
    return { ms, total };
  };
}

/**
 * Times every query of `reportQueries` on a running server, `runs` times in a row each
 * (`csvRuns` for an export), answering each to `measured` as soon as it is done.
 */
export async function timeReports(
  server: BenchServer,
  get: TimedGet,
  seed: ReportSeed,
  runs: number,
  csvRuns: number,
  measured: (q: QueryTiming) => void = () => {},
  /** Which of them: the pages (false), the exports (true), or all (undefined). */
  exports?: boolean,
  /** Only those whose label holds one of these parts, split at `|` (`cross-unit 3 months|savings file name`). */
  labelPart?: string,
): Promise<QueryTiming[]> {
  const queries: QueryTiming[] = [];
  for (const q of reportQueries(seed)) {
    if (exports !== undefined && !!q.csv !== exports) continue;
    if (labelPart !== undefined && !labelPart.split('|').some((part) => q.label.includes(part))) continue;
    const p = q.deep ? `${q.path}offset=${Math.floor((await get(q.path)).total / 100) * 50}` : q.path;
    const times: number[] = [];
    let total = 0;
    for (let i = 0; i < (q.csv ? csvRuns : runs); i++) {
      const answer = await get(p);
      times.push(answer.ms);
      total = answer.total;
    }
    const timed = timing(q, p, times, total, server);
    measured(timed);
    queries.push(timed);
  }
  return queries;
}

/** The two archives a comparison runs on: none of the uploads withdrawn, and a tenth withdrawn. */
export type Pair<T> = { none: T; withdrawn: T };

const timing = (
  q: { label: string; csv?: boolean },
  p: string,
  times: number[],
  total: number,
  server: BenchServer,
): QueryTiming => ({
  label: q.label,
  path: decodeURIComponent(p),
  total,
  ...(q.csv && { csv: true }),
  p50Ms: median(times),
  p99Ms: quantile(times, 0.99),
  maxMs: Math.max(...times),
  peakRssMb: server.peakRssMb(),
});

/**
 * Times every query of `reportQueries` on both archives at once, request by request in turn
 * (0% then 10%, then 10% then 0%, and so on: ABBA, so neither is always first), `runs` times each
 * (`csvRuns` for an export), after one request of each page unmeasured on both (a deep page's
 * offset is set from each archive's own total, half-way through its pages). A change of the
 * machine's load then falls on both within the same second or so, where two passes one after the
 * other would give it to one of them.
 */
export async function timeReportsPaired(
  servers: Pair<BenchServer>,
  gets: Pair<TimedGet>,
  seed: ReportSeed,
  runs: number,
  csvRuns: number,
  measured: (q: PairedTiming) => void = () => {},
): Promise<PairedTiming[]> {
  const sides = ['none', 'withdrawn'] as const;
  const queries: PairedTiming[] = [];
  for (const q of reportQueries(seed)) {
    const paths = { none: q.path, withdrawn: q.path };
    // Exports take seconds each: not warmed (their three runs are all measured).
    if (!q.csv)
      for (const side of sides) {
        const first = await gets[side](q.path);
        if (q.deep) paths[side] = `${q.path}offset=${Math.floor(first.total / 100) * 50}`;
      }
    const times: Pair<number[]> = { none: [], withdrawn: [] };
    const totals = { none: 0, withdrawn: 0 };
    const ratios: number[] = [];
    for (let i = 0; i < (q.csv ? csvRuns : runs); i++) {
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        const answer = await gets[side](paths[side]);
        times[side].push(answer.ms);
        totals[side] = answer.total;
      }
      ratios.push(times.withdrawn[i]! / times.none[i]!);
    }
    const paired: PairedTiming = {
      label: q.label,
      path: decodeURIComponent(paths.none),
      ...(q.csv && { csv: true }),
      none: timing(q, paths.none, times.none, totals.none, servers.none),
      withdrawn: timing(q, paths.withdrawn, times.withdrawn, totals.withdrawn, servers.withdrawn),
      pairedRatio: median(ratios),
    };
    measured(paired);
    queries.push(paired);
  }
  return queries;
}

/** Peak RSS of this process so far, in MB (Linux: VmHWM). */
const ownPeakRssMb = () => {
  const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return hwm ? Number(hwm[1]) / 1024 : process.memoryUsage().rss / 1e6;
};

/**
 * The administrators' reports over HTTP against real server processes on the embedded store:
 * one data set of `entries` ledger entries (and entries / 5 files) seeded once, its data directory
 * copied, and a tenth of the copy's uploads withdrawn through the ledger's `reverseMany`, as
 * withdrawals reverse them (bench/seed.ts); so the two archives differ only by the withdrawals
 * (the same files, names, entries and times). Both are then served at once, each by its own
 * server, and every query timed on them in turn (`timeReportsPaired`): `runs` times (an export 3).
 * References in the same run, also in turn: GET /api/health, and a full scan of each ledger
 * in-process. `measured` hears each query as soon as it is done.
 */
export async function benchReports(
  entries: number,
  runs = 15,
  measured: (q: PairedTiming) => void = () => {},
  /** A directory to seed the two archives into and keep, or to take them from when an earlier run of the same size kept them there. */
  keep?: string,
): Promise<ReportsResult> {
  const root = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-reports-'));
  const dirs = { none: path.join(root, 'none'), withdrawn: path.join(root, 'withdrawn') };
  const envOf = (dataDir: string) => ({
    ...process.env,
    DATA_DIR: dataDir,
    STORE: 'embedded',
    MONGODB_URI: '',
    REPORT_TIME_ZONE,
    GC_INTERVAL_SECONDS: '0',
  });
  const servers: Partial<Pair<BenchServer>> = {};
  /** What seeding the kept archives took and made, written once both are ready. */
  const kept = path.join(root, 'seeded.json');
  type Seeded = { seed: ReportSeed; token: string; seedSeconds: number; copySeconds: number; withdrawSeconds: number };
  try {
    let seeded = keep && fs.existsSync(kept) ? (JSON.parse(fs.readFileSync(kept, 'utf8')) as Seeded) : undefined;
    if (seeded && seeded.seed.entries !== entries)
      throw new Error(`${root} holds ${seeded.seed.entries} entries, not ${entries}`);
    if (!seeded) {
      fs.rmSync(dirs.none, { recursive: true, force: true });
      fs.rmSync(dirs.withdrawn, { recursive: true, force: true });
      // The account and its token are made before the copy: the same on both archives.
      const token = benchToken(envOf(dirs.none), {
        username: 'bench-admin',
        role: 'admin',
        unit: 'archive',
        city: 'Archive',
      });
      const seedStart = performance.now();
      const seed = await seedReportData(dirs.none, entries, REPORT_TIME_ZONE, 0);
      const seedSeconds = (performance.now() - seedStart) / 1000;
      const copyStart = performance.now();
      fs.cpSync(dirs.none, dirs.withdrawn, { recursive: true });
      const copySeconds = (performance.now() - copyStart) / 1000;
      const withdrawStart = performance.now();
      const withdrawn = await withdrawSeededShare(dirs.withdrawn, seed.uploads, 0.1);
      const withdrawSeconds = (performance.now() - withdrawStart) / 1000;
      seeded = { seed: { ...seed, withdrawn }, token, seedSeconds, copySeconds, withdrawSeconds };
      if (keep) fs.writeFileSync(kept, JSON.stringify(seeded));
    }
    const { seed, token, seedSeconds, copySeconds, withdrawSeconds } = seeded;

    const files = { none: databaseFile(dirs.none), withdrawn: databaseFile(dirs.withdrawn) };
    const tables = { none: tableSizes(files.none), withdrawn: tableSizes(files.withdrawn) };
    const databaseMb = { none: fs.statSync(files.none).size / 1e6, withdrawn: fs.statSync(files.withdrawn).size / 1e6 };
    const scanSql = 'SELECT SUM(upload_count) FROM ledger';
    const dbs = {
      none: new Database(files.none, { readonly: true }),
      withdrawn: new Database(files.withdrawn, { readonly: true }),
    };
    const scanPlan = (dbs.none.prepare(`EXPLAIN QUERY PLAN ${scanSql}`).all() as Array<{ detail: string }>)
      .map((r) => r.detail)
      .join('; ');
    const scans: Pair<number[]> = { none: [], withdrawn: [] };
    for (let i = 0; i < runs; i++)
      for (const side of ['none', 'withdrawn'] as const) {
        const start = performance.now();
        dbs[side].prepare(scanSql).get();
        scans[side].push(performance.now() - start);
      }
    dbs.none.close();
    dbs.withdrawn.close();

    const loads = [os.loadavg()[0]!];
    const sampler = setInterval(() => loads.push(os.loadavg()[0]!), 5000);
    try {
      // One at a time: two start-ups side by side would each slow the other.
      servers.none = await startBenchServer(envOf(dirs.none));
      servers.withdrawn = await startBenchServer(envOf(dirs.withdrawn));
      const both = servers as Pair<BenchServer>;
      const authorization = { authorization: `Bearer ${token}` };
      const gets = {
        none: timedGet(both.none.url, authorization),
        withdrawn: timedGet(both.withdrawn.url, authorization),
      };
      const health: Pair<number[]> = { none: [], withdrawn: [] };
      for (let i = 0; i < 50; i++)
        for (const side of ['none', 'withdrawn'] as const) health[side].push((await gets[side]('/api/health')).ms);
      // A whole export takes seconds: three runs of it.
      const csvRuns = Math.min(runs, 3);
      const queries = await timeReportsPaired(both, gets, seed, runs, csvRuns, measured);
      loads.push(os.loadavg()[0]!);
      return {
        seed,
        seedSeconds,
        copySeconds,
        withdrawSeconds,
        tables,
        databaseMb,
        runs,
        csvRuns,
        scanP50Ms: { none: median(scans.none), withdrawn: median(scans.withdrawn) },
        scanPlan,
        healthP50Ms: { none: median(health.none), withdrawn: median(health.withdrawn) },
        queries,
        serverPeakRssMb: { none: both.none.peakRssMb(), withdrawn: both.withdrawn.peakRssMb() },
        benchPeakRssMb: ownPeakRssMb(),
        load: { start: loads[0]!, end: loads[loads.length - 1]!, max: Math.max(...loads) },
      };
    } finally {
      clearInterval(sampler);
    }
  } finally {
    await servers.none?.stop();
    await servers.withdrawn?.stop();
    if (!keep) fs.rmSync(root, { recursive: true, force: true });
  }
}
