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

/** The reports measured on one server over one state of the data set. */
export interface ReportsPass {
  /** Uploads withdrawn when measured. */
  withdrawn: number;
  /** Reference: GET /api/health on the same server. */
  healthP50Ms: number;
  queries: QueryTiming[];
  serverPeakRssMb: number;
}

export interface ReportsResult {
  seed: ReportSeed;
  seedSeconds: number;
  /** Withdrawing a tenth of the uploads through the ledger's reverseMany, between the passes. */
  withdrawSeconds: number;
  /** Rows and MB (data and indexes) per table, and the whole database file (after the withdrawals). */
  tables: Array<{ name: string; rows: number; mb: number }>;
  databaseMb: number;
  runs: number;
  /** Reference: `SELECT SUM(upload_count) FROM ledger` in-process (better-sqlite3) on the same file, and how SQLite reads it. */
  scanP50Ms: number;
  scanPlan: string;
  /** The same data set with none of its uploads withdrawn, then with a tenth withdrawn. */
  before: ReportsPass;
  after: ReportsPass;
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
): Promise<QueryTiming[]> {
  const queries: QueryTiming[] = [];
  for (const q of reportQueries(seed)) {
    if (exports !== undefined && !!q.csv !== exports) continue;
    const p = q.deep ? `${q.path}offset=${Math.floor((await get(q.path)).total / 100) * 50}` : q.path;
    const times: number[] = [];
    let total = 0;
    for (let i = 0; i < (q.csv ? csvRuns : runs); i++) {
      const answer = await get(p);
      times.push(answer.ms);
      total = answer.total;
    }
    const timing: QueryTiming = {
      label: q.label,
      path: decodeURIComponent(p),
      total,
      ...(q.csv && { csv: true }),
      p50Ms: median(times),
      p99Ms: quantile(times, 0.99),
      maxMs: Math.max(...times),
      peakRssMb: server.peakRssMb(),
    };
    measured(timing);
    queries.push(timing);
  }
  return queries;
}

/**
 * The administrators' reports over HTTP against the real server process on the embedded store,
 * seeded with `entries` ledger entries (and entries / 5 files), measured twice on the same data
 * set: first with none of its uploads withdrawn, then (the server stopped) with a tenth of them
 * withdrawn through the ledger's `reverseMany`, as withdrawals reverse them (bench/seed.ts), on a
 * new server. One data set rather than two, so the only difference between the passes is the
 * withdrawals (the same files, names, entries and times) and seeding is paid once. Each query runs
 * `runs` times in a row (an export 3); references in the same run: GET /api/health, and a full
 * scan of the ledger in-process.
 */
export async function benchReports(entries: number, runs = 7): Promise<ReportsResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-reports-'));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    STORE: 'embedded',
    MONGODB_URI: '',
    REPORT_TIME_ZONE,
    GC_INTERVAL_SECONDS: '0',
  };
  try {
    const token = benchToken(env, { username: 'bench-admin', role: 'admin', unit: 'archive', city: 'Archive' });
    const seedStart = performance.now();
    const seed = await seedReportData(dataDir, entries, REPORT_TIME_ZONE, 0);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const pass = async (withdrawn: number): Promise<ReportsPass> => {
      const server = await startBenchServer(env);
      try {
        const get = timedGet(server.url, { authorization: `Bearer ${token}` });
        const health: number[] = [];
        for (let i = 0; i < 50; i++) health.push((await get('/api/health')).ms);
        // A whole export takes seconds: three runs of it.
        const queries = await timeReports(server, get, seed, runs, Math.min(runs, 3));
        return { withdrawn, healthP50Ms: median(health), queries, serverPeakRssMb: server.peakRssMb() };
      } finally {
        await server.stop();
      }
    };
    const before = await pass(0);
    const withdrawStart = performance.now();
    const withdrawn = await withdrawSeededShare(dataDir, seed.uploads, 0.1);
    const withdrawSeconds = (performance.now() - withdrawStart) / 1000;
    const after = await pass(withdrawn);

    const file = databaseFile(dataDir);
    const tables = tableSizes(file);
    const databaseMb = fs.statSync(file).size / 1e6;
    const db = new Database(file, { readonly: true });
    const scanSql = 'SELECT SUM(upload_count) FROM ledger';
    const scanPlan = (db.prepare(`EXPLAIN QUERY PLAN ${scanSql}`).all() as Array<{ detail: string }>)
      .map((r) => r.detail)
      .join('; ');
    const scan = db.prepare(scanSql);
    const scans: number[] = [];
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      scan.get();
      scans.push(performance.now() - start);
    }
    db.close();
    return {
      seed: { ...seed, withdrawn },
      seedSeconds,
      withdrawSeconds,
      tables,
      databaseMb,
      runs,
      scanP50Ms: median(scans),
      scanPlan,
      before,
      after,
    };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
