import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { databaseFile } from '../server/store/embedded/database.js';
import { benchToken, startBenchServer } from './server.js';
import { seedReportData, type ReportSeed } from './seed.js';

export interface QueryTiming {
  /** e.g. "cross-unit by county". */
  label: string;
  path: string;
  /** Rows over all pages (X-Total-Count); for an export, the rows exported. */
  total: number;
  /** A CSV export: every row of the selection, timed whole. */
  csv?: boolean;
  p50Ms: number;
  maxMs: number;
  /** The server's peak RSS once this query's runs are done (from the start: it tells which query raised it). */
  peakRssMb: number;
}

export interface ReportsResult {
  seed: ReportSeed;
  seedSeconds: number;
  /** Rows and MB (data and indexes) per table, and the whole database file. */
  tables: Array<{ name: string; rows: number; mb: number }>;
  databaseMb: number;
  runs: number;
  /** Reference: GET /api/health on the same server. */
  healthP50Ms: number;
  /** Reference: `SELECT SUM(upload_count) FROM ledger` in-process (better-sqlite3) on the same file, and how SQLite reads it. */
  scanP50Ms: number;
  scanPlan: string;
  queries: QueryTiming[];
  serverPeakRssMb: number;
}

const REPORT_TIME_ZONE = 'Asia/Shanghai';

const median = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor((times.length - 1) / 2)]!;

/** The queries an administrator runs, per report: filters, sorts, groupings, a deep page, an export. */
function reportQueries(seed: ReportSeed): Array<{ label: string; path: string; deep?: boolean; csv?: boolean }> {
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
function tableSizes(file: string): Array<{ name: string; rows: number; mb: number }> {
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

/**
 * The administrators' reports over HTTP against the real server process on the embedded store,
 * seeded with `entries` ledger entries (and entries / 5 files), a tenth of the uploads then
 * withdrawn (reversed by the ledger, bench/seed.ts). Each query runs `runs` times in a
 * row; references in the same run: GET /api/health, and a full scan of the ledger in-process.
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
    const seed = await seedReportData(dataDir, entries, REPORT_TIME_ZONE);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const file = databaseFile(dataDir);
    const tables = tableSizes(file);
    const databaseMb = fs.statSync(file).size / 1e6;

    const server = await startBenchServer(env);
    try {
      const get = async (p: string): Promise<{ ms: number; total: number }> => {
        const start = performance.now();
        const res = await fetch(`${server.url}${p}`, { headers: { authorization: `Bearer ${token}` } });
        const body = await res.text();
        const ms = performance.now() - start;
        if (res.status !== 200) throw new Error(`${p} answered ${res.status}: ${body.slice(0, 200)}`);
        return { ms, total: Number(res.headers.get('x-total-count') ?? 0) };
      };
      const health: number[] = [];
      for (let i = 0; i < 50; i++) health.push((await get('/api/health')).ms);

      const queries: QueryTiming[] = [];
      for (const q of reportQueries(seed)) {
        const p = q.deep ? `${q.path}offset=${Math.floor((await get(q.path)).total / 100) * 50}` : q.path;
        const times: number[] = [];
        let total = 0;
        // A whole export takes seconds: three runs of it.
        for (let i = 0; i < (q.csv ? Math.min(runs, 3) : runs); i++) {
          const answer = await get(p);
          times.push(answer.ms);
          total = answer.total;
        }
        queries.push({
          label: q.label,
          path: decodeURIComponent(p),
          total,
          ...(q.csv && { csv: true }),
          p50Ms: median(times),
          maxMs: Math.max(...times),
          peakRssMb: server.peakRssMb(),
        });
      }
      const serverPeakRssMb = server.peakRssMb();

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
        seed,
        seedSeconds,
        tables,
        databaseMb,
        runs,
        healthP50Ms: median(health),
        scanP50Ms: median(scans),
        scanPlan,
        queries,
        serverPeakRssMb,
      };
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
