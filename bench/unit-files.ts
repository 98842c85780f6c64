import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { openEmbeddedStore } from '../server/store/embedded.js';
import { databaseFile } from '../server/store/embedded/database.js';
import type { UnitFilesQuery } from '../server/store/unit-files/port.js';

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
  const db = new Database(databaseFile(dataDir));
  const started = process.hrtime.bigint();
  const start = Date.UTC(2025, 0, 1);
  const unitJson = (id: string, town: string) =>
    JSON.stringify({ id, geoType: 'town', city: '沧州市', county: '青县', town });
  const catalog = db.prepare(
    `INSERT INTO catalog (file_id, md5, sha256, length, chunk_size, chunk_count, file_name, content_type, upload_date)
     VALUES (@id, @md5, @sha, @length, 261120, 1, @name, @type, @at)`,
  );
  const ledger = db.prepare(
    `INSERT INTO ledger (user_id, user_name, unit_id, unit, file_no, upload_time, last_upload_time, upload_file_name, last_upload_file_name, last_content_type, upload_count)
     VALUES (@user, @user, @unitId, @unit, @no, @at, @last, @name, @lastName, @type, @count)`,
  );
  const name = db.prepare(
    `INSERT OR IGNORE INTO ledger_names (unit_id, file_no, name, first_used, city, county, town) VALUES (@unitId, @no, @name, @at, '沧州市', '青县', @town)`,
  );
  db.transaction(() => {
    for (let i = 0; i < 2 * files; i++) {
      const own = i < files;
      const unitId = own ? 'unit-a' : `unit-${i % 50}`;
      const town = own ? '清州镇' : `第${i % 50}镇`;
      const id = randomBytes(12).toString('hex');
      const pdf = i % 4 === 0;
      const fileName = `${2020 + (i % 7)}年移交/卷${i % 500}/第${String(i).padStart(6, '0')}页.${pdf ? 'pdf' : 'jpg'}`;
      const type = pdf ? 'application/pdf' : 'image/jpeg';
      const at = start + Math.floor((i / (2 * files)) * 365) * DAY + (i % 1000);
      const no = catalog.run({
        id,
        md5: randomBytes(16).toString('hex'),
        sha: randomBytes(32).toString('hex'),
        length: 1000 + ((i * 7919) % 5_000_000),
        name: fileName,
        type,
        at,
      }).lastInsertRowid;
      const twice = i % 5 === 0;
      const copy = `副本/${fileName}`;
      const row = { no, unitId, unit: unitJson(unitId, town), type, at, town };
      ledger.run({
        ...row,
        user: `clerk${i % 5}`,
        last: twice ? at + DAY : at,
        name: fileName,
        lastName: twice ? copy : fileName,
        count: twice ? 2 : 1,
      });
      name.run({ ...row, name: fileName });
      if (twice) {
        ledger.run({
          ...row,
          user: `clerk${(i + 1) % 5}`,
          at: at + 2 * DAY,
          last: at + 2 * DAY,
          name: copy,
          lastName: copy,
          count: 1,
        });
        name.run({ ...row, at: at + DAY, name: copy });
      }
    }
  })();
  db.exec('ANALYZE');
  const seedSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  const ledgerRows = count('ledger');
  const nameRows = count('ledger_names');
  db.close();

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
  } finally {
    await store.close();
  }
  return { unitFiles: files, ledgerRows, nameRows, seedSeconds, queries, plans: plansOf(dataDir) };
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
