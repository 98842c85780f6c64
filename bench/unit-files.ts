import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import type { SeededCatalogEntry } from '../server/store/catalog/seeding.js';
import { openEmbeddedSeeding, openEmbeddedStore } from '../server/store/embedded.js';
import { databaseFile } from '../server/store/embedded/database.js';
import type { UploadRecord } from '../server/store/ledger/port.js';
import type { FolderQuery, UnitFilesQuery } from '../server/store/unit-files/port.js';
import type { Unit } from '../shared/schemas.js';

export interface UnitFilesResult {
  /** Files of the unit listed, and ledger entries in the whole database. */
  unitFiles: number;
  ledgerRows: number;
  nameRows: number;
  seedSeconds: number;
  queries: Array<{ label: string; total: number; p50Ms: number; maxMs: number }>;
  /** How SQLite reads the unit's listing (EXPLAIN QUERY PLAN of the default page and of a name search). */
  plans: Array<{ label: string; plan: string }>;
}

const median = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor((times.length - 1) / 2)]!;
const DAY = 86_400_000;

/**
 * 本单位文件 of one unit holding `files` files (a fifth of them uploaded twice, under a second
 * name in 副本/), beside as many files of 50 other units: the page's queries, in-process on the
 * embedded store, and how SQLite reads them.
 */
export function benchUnitFiles(files: number, runs = 5): Promise<UnitFilesResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-unit-files-'));
  return run(dataDir, files, runs).finally(() => fs.rmSync(dataDir, { recursive: true, force: true }));
}

async function run(dataDir: string, files: number, runs: number): Promise<UnitFilesResult> {
  await openEmbeddedStore({ dataDir, chunkSize: 261_120 }).close();
  const started = process.hrtime.bigint();
  const start = Date.UTC(2025, 0, 1);
  const { ledgerRows, nameRows } = await seed(dataDir, files, start);
  // SQLite's statistics of the seeded tables, which its query planner reads (no table is written).
  const db = new Database(databaseFile(dataDir));
  db.exec('ANALYZE');
  db.close();
  const seedSeconds = Number(process.hrtime.bigint() - started) / 1e9;

  const store = openEmbeddedStore({ dataDir, chunkSize: 261_120 });
  const unit = { unitId: 'unit-a', accountId: 'clerk1', limit: 50, offset: 0 } satisfies UnitFilesQuery;
  const month = { firstUploadFrom: new Date(start + 30 * DAY), firstUploadBefore: new Date(start + 61 * DAY) };
  const cases: Array<[string, UnitFilesQuery]> = [
    ['unit, latest upload first (the page as it opens)', unit],
    ['unit, a page half-way down', { ...unit, offset: Math.floor(files / 2) }],
    ['unit, q = a folder (1 in 500)', { ...unit, nameContains: '/卷123/' }],
    ['unit, q = 副本 (a fifth)', { ...unit, nameContains: '副本' }],
    ['unit, q = .jpg (three quarters)', { ...unit, nameContains: '.jpg' }],
    ['unit, uploader', { ...unit, uploaderId: 'clerk2' }],
    ['unit, type = pdf', { ...unit, kind: 'pdf' }],
    ['unit, type = document (none)', { ...unit, kind: 'document' }],
    ['unit, first upload in one month', { ...unit, ...month }],
    [
      'unit, q + uploader + type + month',
      { ...unit, nameContains: '2021年移交', uploaderId: 'clerk1', kind: 'image', ...month },
    ],
    ['unit, sort = name', { ...unit, sort: 'name' }],
    ['unit, sort = size', { ...unit, sort: 'size' }],
    ['unit, sort = unitCount', { ...unit, sort: 'unitCount' }],
    [
      'county reach, latest upload first',
      { subtree: { city: '沧州市', county: '青县' }, accountId: 'x', limit: 50, offset: 0 },
    ],
    ['whole archive, newest first', { accountId: 'x', limit: 50, offset: 0 }],
    ['whole archive, q = 副本', { accountId: 'x', limit: 50, offset: 0, nameContains: '副本' }],
    ['whole archive, sort = unitCount', { accountId: 'x', limit: 50, offset: 0, sort: 'unitCount' }],
  ];
  const queries: UnitFilesResult['queries'] = [];
  try {
    for (const [label, query] of cases) {
      const times: number[] = [];
      let total = 0;
      for (let r = 0; r < runs; r++) {
        const t = process.hrtime.bigint();
        total = (await store.unitFiles.list(query)).total;
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      queries.push({ label, total, p50Ms: median(times), maxMs: Math.max(...times) });
    }
    // By folder (网盘): the top (every name of the unit grouped), a year, a volume of it; and the
    // uploads 撤回 would take back for a volume.
    const folder = { unitId: 'unit-a', accountId: 'clerk1', folder: '', limit: 50, offset: 0 } satisfies FolderQuery;
    const folderCases: Array<[string, () => Promise<number>]> = [
      ['unit folder, the top', async () => (await store.unitFiles.folder({ ...folder, folder: '' })).folderTotal],
      [
        'unit folder, one year (a seventh)',
        async () => (await store.unitFiles.folder({ ...folder, folder: '2021年移交' })).folderTotal,
      ],
      [
        'unit folder, one volume',
        async () => (await store.unitFiles.folder({ ...folder, folder: '2021年移交/卷123' })).fileTotal,
      ],
      [
        'unit folder, the uploads of one volume (撤回)',
        async () =>
          (await store.unitFiles.uploads({ unitId: 'unit-a', folder: '2021年移交/卷123', limit: 10_001 })).length,
      ],
    ];
    for (const [label, query] of folderCases) {
      const times: number[] = [];
      let total = 0;
      for (let r = 0; r < runs; r++) {
        const t = process.hrtime.bigint();
        total = await query();
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      queries.push({ label, total, p50Ms: median(times), maxMs: Math.max(...times) });
    }
  } finally {
    await store.close();
  }
  return { unitFiles: files, ledgerRows, nameRows, seedSeconds, queries, plans: plansOf(dataDir) };
}

/**
 * The unit's files and the other units', through the seeding of the catalog and of the ledger
 * (server/store/catalog/seeding.ts, ledger/seeding.ts): each file uploaded once by a clerk of its
 * unit, every fifth again by that clerk a day later under a second name in 副本/, and by another
 * clerk the day after under that name.
 */
async function seed(dataDir: string, files: number, start: number): Promise<{ ledgerRows: number; nameRows: number }> {
  const seeding = openEmbeddedSeeding({ dataDir, chunkSize: 261_120 });
  try {
    const unitOf = new Map<string, Unit>();
    const unit = (i: number): Unit => {
      const id = i < files ? 'unit-a' : `unit-${i % 50}`;
      const town = i < files ? '清州镇' : `第${i % 50}镇`;
      return unitOf.get(id) ?? unitOf.set(id, { id, geoType: 'town', city: '沧州市', county: '青县', town }).get(id)!;
    };
    const clerk = (i: number, u: Unit) => ({ id: `clerk${i % 5}`, username: `clerk${i % 5}`, unit: u });
    type File = SeededCatalogEntry & { at: number; twice: boolean; unit: Unit; i: number };
    const catalogued: File[] = [];
    for (let i = 0; i < 2 * files; i++) {
      const pdf = i % 4 === 0;
      const fileName = `${2020 + (i % 7)}年移交/卷${i % 500}/第${String(i).padStart(6, '0')}页.${pdf ? 'pdf' : 'jpg'}`;
      const at = start + Math.floor((i / (2 * files)) * 365) * DAY + (i % 1000);
      catalogued.push({
        fileId: randomBytes(12).toString('hex'),
        key: {
          md5: randomBytes(16).toString('hex'),
          sha256: randomBytes(32).toString('hex'),
          length: 1000 + ((i * 7919) % 5_000_000),
        },
        fileName,
        contentType: pdf ? 'application/pdf' : 'image/jpeg',
        uploadDate: new Date(at),
        at,
        twice: i % 5 === 0,
        unit: unit(i),
        i,
      });
    }
    await seeding.catalog.seed(catalogued);
    const uploads: UploadRecord[] = [];
    const uploadOf = (f: File, account: UploadRecord['account'], at: number, fileName: string): UploadRecord => ({
      account,
      fileId: f.fileId,
      fileName,
      contentType: f.contentType,
      at: new Date(at),
      day: new Date(at).toISOString().slice(0, 10),
      fileLength: f.key.length,
      carriedBytes: at === f.at,
    });
    for (const f of catalogued) {
      const first = clerk(f.i, f.unit);
      uploads.push(uploadOf(f, first, f.at, f.fileName));
      if (f.twice) {
        const copy = `副本/${f.fileName}`;
        uploads.push(uploadOf(f, first, f.at + DAY, copy), uploadOf(f, clerk(f.i + 1, f.unit), f.at + 2 * DAY, copy));
      }
    }
    // In the order they were counted.
    uploads.sort((a, b) => a.at.getTime() - b.at.getTime());
    const seeded = await seeding.ledger.seed(uploads);
    return { ledgerRows: seeded.entries, nameRows: seeded.names };
  } finally {
    await seeding.close();
  }
}

/** EXPLAIN QUERY PLAN of the unit's listing statements, as server/store/catalog/embedded.ts builds them. */
function plansOf(dataDir: string): UnitFilesResult['plans'] {
  const db = new Database(databaseFile(dataDir), { readonly: true });
  const files = (extra: string) => `
    SELECT l.file_no AS fno, MIN(l.upload_time) AS first_upload, MAX(l.last_upload_time) AS last_upload,
           SUM(l.upload_count) AS uploads, SUM(CASE WHEN l.user_id = 'clerk1' THEN l.upload_count ELSE 0 END) AS mine
    FROM ledger l WHERE l.unit_id = 'unit-a' ${extra} GROUP BY l.file_no`;
  const latest = `(SELECT x.last_upload_file_name FROM ledger x WHERE x.file_no = p.fno AND x.unit_id = 'unit-a'
    ORDER BY x.last_upload_time DESC, x.id DESC LIMIT 1)`;
  const page = (extra: string) => `WITH files AS (${files(extra)}),
    page AS (SELECT f.*, s.file_id AS fid, s.length AS size, COUNT(*) OVER () AS total
             FROM files f JOIN catalog s INDEXED BY catalog_file_sizes ON s.file_no = f.fno ORDER BY last_upload DESC, fid LIMIT 50)
    SELECT c.*, p.*, ${latest} AS display_name FROM page p JOIN catalog c ON c.file_no = p.fno
    ORDER BY last_upload DESC, fid`;
  const plan = (sql: string) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join('; ');
  try {
    return [
      { label: 'unit page', plan: plan(page('')) },
      {
        label: 'unit page, q',
        plan: plan(
          page(
            `AND l.file_no IN (SELECT n.file_no FROM ledger_names n WHERE n.unit_id = 'unit-a' AND n.name LIKE '%副本%')`,
          ),
        ),
      },
      {
        label: 'names of a page',
        plan: plan(
          `SELECT n.file_no, n.name FROM ledger_names n WHERE n.file_no IN (SELECT value FROM json_each('[1]')) AND n.unit_id = 'unit-a'`,
        ),
      },
    ];
  } finally {
    db.close();
  }
}
