import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ReportCalendar } from '../server/services/calendar.js';
import { databaseFile } from '../server/store/embedded/database.js';
import { openEmbeddedDatabase } from '../server/store/embedded.js';
import type { ContentKey } from '../server/store/catalog/port.js';
import { monthOf, nextDay, weekOf } from '../shared/calendar.js';
import type { Unit } from '../shared/schemas.js';

/** A catalog entry's key for seed number i (deterministic, so lookups can aim at hits). */
export const seedKey = (i: number): ContentKey => ({
  md5: createHash('md5').update(`file ${i}`).digest('hex'),
  sha256: createHash('sha256').update(`file ${i}`).digest('hex'),
  length: 1000 + (i % 100000),
});

/**
 * Fills an embedded store's catalog with `count` entries in one SQL transaction. Only for
 * benchmarks: seeding speed is not what they measure, and these entries have no bytes.
 */
export function seedCatalog(dataDir: string, count: number): void {
  const db = new Database(path.join(dataDir, 'archive.sqlite'));
  const insert = db.prepare(
    `INSERT INTO catalog (file_id, md5, sha256, length, chunk_size, chunk_count, file_name, content_type, upload_date)
     VALUES (?, ?, ?, ?, 261120, 1, 'seed.pdf', 'application/pdf', ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const k = seedKey(i);
      insert.run(randomBytes(12).toString('hex'), k.md5, k.sha256, k.length, Date.now());
    }
  })();
  db.close();
}

/** A small deterministic PRNG (mulberry32): the same seed gives the same data set, so runs compare. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CITIES = ['江城', '河阳', '山南', '云溪', '临川', '青州', '安平', '宁远', '东湖', '西岭'];
// County and town names repeat across the province, as they do in life (城关镇 is everywhere).
const COUNTIES = ['东县', '西县', '南县', '北县', '新县', '平县', '安县', '永县', '长县', '和县'];
const TOWNS = [
  '城关镇',
  '新城镇',
  '河口镇',
  '石桥镇',
  '柳林乡',
  '大庄镇',
  '白沙镇',
  '黄土乡',
  '龙泉镇',
  '清水镇',
  '高桥乡',
  '南关镇',
  '北坪乡',
  '东升镇',
  '西湖乡',
  '太平镇',
  '红星乡',
  '长岭镇',
  '青山乡',
  '三合镇',
];
const TOPICS: Array<[topic: string, ext: string]> = [
  ['通知', 'pdf'],
  ['会议纪要', 'docx'],
  ['统计报表', 'xlsx'],
  ['工作方案', 'docx'],
  ['请示', 'pdf'],
  ['批复', 'pdf'],
  ['年度总结', 'docx'],
  ['现场照片', 'jpg'],
  ['扫描件', 'pdf'],
  ['合同', 'pdf'],
  ['公函', 'pdf'],
  ['决定', 'pdf'],
  ['实施意见', 'docx'],
  ['发展规划', 'pdf'],
  ['预算表', 'xlsx'],
  ['档案目录', 'xlsx'],
  ['登记表', 'xlsx'],
  ['调查报告', 'docx'],
  ['工作简报', 'pdf'],
  ['花名册', 'xlsx'],
];
const CONTENT_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  jpg: 'image/jpeg',
};
/** The embedded store's default chunk size (CHUNK_SIZE). */
const CHUNK_SIZE = 255 * 1024;
const HOUR_MS = 3_600_000;

export interface ReportSeed {
  files: number;
  entries: number;
  uploads: number;
  uploadDays: number;
  accounts: number;
  units: number;
  collisionPairs: number;
  firstDay: string;
  lastDay: string;
  /** Names the benchmark filters by: a city, a county of it, a word of file names. */
  city: string;
  county: string;
  fileWord: string;
}

/**
 * Fills an embedded store with a province's uploads for the reports: `entries` ledger entries
 * over `entries / 5` catalog files, and their upload_days tallies, with exactly the columns and
 * meanings EmbeddedLedger.record and EmbeddedContentStore.commit write (no bytes behind the
 * catalog entries). Units: 10 cities x 10 counties x 20 towns plus the county and city units;
 * a few thousand accounts; each file uploaded by ~5 entries, some by hundreds of units; upload
 * counts mostly 1, ~15% 2, ~5% 3-20; two years of days in `timeZone`. Deterministic.
 */
export function seedReportData(dataDir: string, entries: number, timeZone: string): ReportSeed {
  openEmbeddedDatabase(dataDir).close(); // the schema, as the server makes it
  const random = prng(20260301);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const hex = (chars: number) => {
    let s = '';
    while (s.length < chars)
      s += Math.floor(random() * 2 ** 32)
        .toString(16)
        .padStart(8, '0');
    return s.slice(0, chars);
  };
  const calendar = new ReportCalendar(timeZone);

  // Two years of days, with each day's first instant in the zone.
  const DAYS = 730;
  const days: string[] = ['2024-05-01'];
  while (days.length < DAYS) days.push(nextDay(days[days.length - 1]!));
  const dayStart = days.map((d) => calendar.startOf(d).getTime());
  /** An instant in office hours (08:00-18:00) of day `d`. */
  const officeTime = (d: number) => dayStart[d]! + Math.floor((8 + random() * 10) * HOUR_MS);

  // Units: the cities, their counties, their towns; accounts in them.
  type SeedUnit = { unit: Unit; json: string; area: number };
  const units: SeedUnit[] = [];
  const addUnit = (unit: Unit, area: number) => units.push({ unit, json: JSON.stringify(unit), area });
  CITIES.forEach((name, c) => {
    const code = `43${String(c + 1).padStart(2, '0')}`;
    addUnit({ id: code, geoType: 'city', city: `${name}市`, coordinates: [110 + c * 0.5, 27 + c * 0.3] }, c * 100);
    COUNTIES.forEach((county, k) => {
      const countyCode = `${code}${String(k + 1).padStart(2, '0')}`;
      addUnit(
        {
          id: countyCode,
          geoType: 'county',
          city: `${name}市`,
          county,
          coordinates: [110 + c * 0.5 + k * 0.04, 27 + c * 0.3],
        },
        c * 100 + k + 1,
      );
      TOWNS.forEach((town, t) => {
        const coordinates: [number, number] = [
          Number((110 + c * 0.5 + k * 0.04 + t * 0.002).toFixed(6)),
          Number((27 + c * 0.3 + t * 0.002).toFixed(6)),
        ];
        addUnit(
          {
            id: `${countyCode}${String(t + 1).padStart(3, '0')}`,
            geoType: 'town',
            city: `${name}市`,
            county,
            town,
            coordinates,
          },
          c * 100 + k + 1,
        );
      });
    });
  });
  const accountCount = Math.min(3000, Math.max(60, Math.round(entries / 330)));
  const uuid = () => {
    const h = hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
  };
  // Every unit has a clerk when there are enough (else random units have one); the rest in random units.
  const shuffled = [...units];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  const accounts = Array.from({ length: accountCount }, (_, i) => ({
    id: uuid(),
    username: `clerk${String(i + 1).padStart(4, '0')}`,
    unit: i < shuffled.length ? shuffled[i]! : pick(units),
  }));
  // A county's accounts (with its towns'); a city's own units form an area of their own.
  const byArea = new Map<number, number[]>();
  accounts.forEach((a, i) => (byArea.get(a.unit.area) ?? byArea.set(a.unit.area, []).get(a.unit.area)!).push(i));

  // Entries per file: 1 (the upload that stored it) plus a heavy-tailed share (Lomax, alpha 1.67)
  // of the rest: ~20% of files have one entry, half 3 or fewer, 1% over 40, a few hundred over 100.
  const fileCount = Math.max(1, Math.round(entries / 5));
  const maxPerFile = Math.min(800, accountCount);
  const weights = Array.from({ length: fileCount }, () => (1 - random()) ** -0.6 - 1);
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const perFile = weights.map((w) =>
    Math.min(maxPerFile, 1 + Math.floor(((entries - fileCount) * w) / weightSum + random())),
  );
  for (let left = entries - perFile.reduce((a, b) => a + b, 0); left !== 0;) {
    const f = Math.floor(random() * fileCount);
    if (left > 0 && perFile[f]! < maxPerFile) {
      perFile[f]!++;
      left--;
    } else if (left < 0 && perFile[f]! > 1) {
      perFile[f]!--;
      left++;
    }
  }

  type Entry = {
    file: number;
    account: number;
    count: number;
    first: number;
    last: number;
    name: string;
    lastName: string;
    type: string;
  };
  const ledger: Entry[] = [];
  type File = {
    fileId: string;
    /** Its catalog number: files are numbered in the order they were stored. */
    fileNo: number;
    md5: string;
    sha256: string;
    length: number;
    name: string;
    type: string;
    stored: number;
    collision: boolean;
  };
  const files: File[] = [];
  const db = new Database(databaseFile(dataDir));
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -2000000');
  const insertDay = db.prepare(
    `INSERT INTO upload_days (file_no, unit_id, day, week, month, city, county, town, file_length, uploads, saved_uploads)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertFile = db.prepare(
    `INSERT INTO catalog (file_no, file_id, md5, sha256, length, chunk_size, chunk_count, file_name, content_type, upload_date, md5_collision)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertEntry = db.prepare(
    `INSERT INTO ledger (user_id, user_name, unit_id, unit, file_no, upload_time, last_upload_time, upload_file_name, last_upload_file_name, last_content_type, upload_count)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // The secondary indexes are built once after the rows, which takes a fraction of the time of
  // updating them row by row, and the per-file sums (ledger_files, kept by triggers) are made
  // afresh by openEmbeddedDatabase, as for a data directory made before them: the same rows either way.
  const indexes = db
    .prepare<[], { name: string; sql: string }>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('catalog', 'ledger', 'upload_days')",
    )
    .all();
  for (const index of indexes) db.exec(`DROP INDEX ${index.name}`);
  for (const { name } of db
    .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'ledger'")
    .all())
    db.exec(`DROP TRIGGER ${name}`);
  db.exec('DROP TABLE ledger_files');
  let uploads = 0;
  const dayRows: [file: number, ...row: unknown[]][] = [];
  const weeks = new Map(days.map((d) => [d, weekOf(d)]));
  db.transaction(() => {
    for (let f = 0; f < fileCount; f++) {
      const [topic, ext] = pick(TOPICS);
      const name = `${topic}${2020 + Math.floor(random() * 7)}第${1 + Math.floor(random() * 300)}号.${ext}`;
      const variant = () =>
        random() < 0.5 ? name.replace(`.${ext}`, `(副本).${ext}`) : `${String(1 + Math.floor(random() * 99))}-${name}`;
      const type = CONTENT_TYPES[ext]!;
      const day0 = Math.floor(random() * DAYS);
      const stored = officeTime(day0);
      const file: File = {
        fileId: hex(24),
        fileNo: 0,
        md5: hex(32),
        sha256: hex(64),
        // 10 KB to 50 MB, evenly on a log scale.
        length: Math.round(10_240 * Math.exp(random() * Math.log(5120))),
        name,
        type,
        stored,
        collision: false,
      };
      files.push(file);

      // Who uploaded it: the first uploader, then others, mostly of the same county for a
      // file few units have, from anywhere in the province for a widely shared one.
      const count = perFile[f]!;
      const first = Math.floor(random() * accountCount);
      const chosen = new Set([first]);
      const near = byArea.get(accounts[first]!.unit.area)!;
      while (chosen.size < count) {
        const local = count <= 50 && random() < 0.7 && chosen.size < near.length;
        chosen.add(local ? pick(near) : Math.floor(random() * accountCount));
      }
      // Its tallies per unit and day.
      const tally = new Map<string, { unit: SeedUnit; day: number; uploads: number; saved: number }>();
      for (const account of chosen) {
        const storer = account === first;
        const n = uploadCount(random);
        // The days of its uploads: 1 to 3, a day to two weeks apart.
        let day = storer ? day0 : Math.min(DAYS - 1, day0 + Math.floor(-Math.log(1 - random()) * 30));
        let firstTime = storer ? stored : officeTime(day);
        if (!storer && firstTime <= stored) firstTime = stored + 1000 + Math.floor(random() * HOUR_MS);
        const on = [day];
        for (let k = 1 + Math.floor(random() * Math.min(3, n)); on.length < k;) {
          day += 1 + Math.floor(random() * 14);
          if (day >= DAYS) break;
          on.push(day);
        }
        const perDay = on.map(() => 1);
        for (let extra = n - perDay.length; extra > 0; extra--) perDay[Math.floor(random() * perDay.length)]!++;
        const lastTime =
          n === 1
            ? firstTime
            : on.length === 1
              ? firstTime + 1000 + Math.floor(random() * 2 * HOUR_MS)
              : officeTime(on[on.length - 1]!);
        const own = storer ? name : random() < 0.85 ? name : variant();
        ledger.push({
          file: f,
          account,
          count: n,
          first: firstTime,
          last: lastTime,
          name: own,
          lastName: n > 1 && random() < 0.2 ? variant() : own,
          type,
        });
        uploads += n;
        const unit = accounts[account]!.unit;
        on.forEach((d, i) => {
          const key = `${unit.unit.id} ${d}`;
          const t = tally.get(key) ?? tally.set(key, { unit, day: d, uploads: 0, saved: 0 }).get(key)!;
          t.uploads += perDay[i]!;
          // Every upload saved the file's size except the one that stored it.
          t.saved += perDay[i]! - (storer && i === 0 ? 1 : 0);
        });
      }
      for (const t of tally.values()) {
        const d = days[t.day]!;
        const u = t.unit.unit;
        dayRows.push([
          f,
          u.id,
          d,
          weeks.get(d)!,
          monthOf(d),
          u.city,
          u.county ?? null,
          u.town ?? null,
          file.length,
          t.uploads,
          t.saved,
        ]);
      }
    }

    // A few dozen MD5 collisions: a later file with an earlier one's MD5 (another SHA-256); the commit flags both.
    const collisionPairs = Math.max(1, Math.round(fileCount / 5000));
    for (let p = 0; p < collisionPairs; p++) {
      const [a, b] = [files[Math.floor(random() * fileCount)]!, files[Math.floor(random() * fileCount)]!].sort(
        (x, y) => x.stored - y.stored,
      ) as [File, File];
      if (a === b || a.collision || b.collision) continue;
      b.md5 = a.md5;
      a.collision = b.collision = true;
    }
    // Rows in the order the archive would have written them.
    let fileNo = 0;
    for (const f of [...files].sort((a, b) => a.stored - b.stored)) {
      f.fileNo = ++fileNo;
      insertFile.run(
        f.fileNo,
        f.fileId,
        f.md5,
        f.sha256,
        f.length,
        CHUNK_SIZE,
        Math.ceil(f.length / CHUNK_SIZE),
        f.name,
        f.type,
        f.stored,
        f.collision ? 1 : 0,
      );
    }
    ledger.sort((a, b) => a.first - b.first);
    for (const e of ledger) {
      const a = accounts[e.account]!;
      insertEntry.run(
        a.id,
        a.username,
        a.unit.unit.id,
        a.unit.json,
        files[e.file]!.fileNo,
        e.first,
        e.last,
        e.name,
        e.lastName,
        e.type,
        e.count,
      );
    }
    for (const [file, ...row] of dayRows) insertDay.run(files[file]!.fileNo, ...row);
  })();
  for (const index of indexes) db.exec(index.sql);
  db.pragma('journal_mode = WAL');
  db.close();
  openEmbeddedDatabase(dataDir).close();
  // The county with the most entries, and its city.
  const perCounty = new Map<number, number>();
  for (const e of ledger)
    if (accounts[e.account]!.unit.unit.county)
      perCounty.set(accounts[e.account]!.unit.area, (perCounty.get(accounts[e.account]!.unit.area) ?? 0) + 1);
  const busiestArea = [...perCounty].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  const busiest = units.find((u) => u.area === busiestArea && u.unit.geoType === 'county')!.unit;
  return {
    files: fileCount,
    entries: ledger.length,
    uploads,
    uploadDays: dayRows.length,
    accounts: accountCount,
    units: units.length,
    collisionPairs: files.filter((f) => f.collision).length / 2,
    firstDay: days[0]!,
    lastDay: days[DAYS - 1]!,
    city: busiest.city,
    county: busiest.county!,
    fileWord: '通知',
  };
}

/** UploadCount of an entry: mostly 1, ~15% 2, ~5% 3 to 20 (fewer the more). */
function uploadCount(random: () => number): number {
  const r = random();
  return r < 0.8 ? 1 : r < 0.95 ? 2 : 3 + Math.floor(random() ** 2 * 18);
}
