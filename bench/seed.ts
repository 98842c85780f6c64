import { createHash, randomBytes } from 'node:crypto';
import { ReportCalendar } from '../server/services/calendar.js';
import { NearDuplicateService } from '../server/services/near-duplicates/detection.js';
import { Fingerprinter } from '../server/services/near-duplicates/fingerprint.js';
import { TextIndexing } from '../server/services/text-search.js';
import type { ContentKey } from '../server/store/catalog/port.js';
import type { SeededCatalogEntry } from '../server/store/catalog/seeding.js';
import { openEmbeddedSeeding, openEmbeddedStore } from '../server/store/embedded.js';
import type { SeededUpload } from '../server/store/ledger/seeding.js';
import { nextDay } from '../shared/calendar.js';
import type { Unit } from '../shared/schemas.js';

/** A catalog entry's key for seed number i (deterministic, so lookups can aim at hits). */
export const seedKey = (i: number): ContentKey => ({
  md5: createHash('md5').update(`file ${i}`).digest('hex'),
  sha256: createHash('sha256').update(`file ${i}`).digest('hex'),
  length: 1000 + (i % 100000),
});

/**
 * Fills an embedded store's catalog with `count` entries through the catalog's seeding
 * (server/store/catalog/seeding.ts). Only for benchmarks: these entries have no bytes.
 */
export async function seedCatalog(dataDir: string, count: number): Promise<void> {
  await startedOnceEmpty(dataDir);
  const seeding = openEmbeddedSeeding({ dataDir, chunkSize: 261_120 });
  try {
    await seeding.catalog.seed(
      (function* (): Generator<SeededCatalogEntry> {
        for (let i = 0; i < count; i++)
          yield {
            fileId: randomBytes(12).toString('hex'),
            key: seedKey(i),
            fileName: 'seed.pdf',
            contentType: 'application/pdf',
            uploadDate: new Date(),
          };
      })(),
    );
  } finally {
    await seeding.close();
  }
}

/**
 * Does in a store about to be seeded what a server's first start in an empty archive does once:
 * records the near-duplicate settings and the search index's backfill. Seeded files have no bytes
 * to read: a server finding neither record would queue every one of them, and spend the run
 * failing them in the background (a soak's 100,000, each failure logged; the province's
 * 2,000,000), which no archive in service does.
 */
async function startedOnceEmpty(dataDir: string): Promise<void> {
  const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
  try {
    const holder = 'bench-seeding';
    const detection = new NearDuplicateService({
      store,
      fingerprinter: Fingerprinter.onFirstUse(),
      calendar: new ReportCalendar('Asia/Shanghai'),
      holder,
    });
    const queued = (await detection.adoptSettings()) + (await new TextIndexing({ store, holder }).backfill());
    if (queued !== 0) throw new Error(`${dataDir} is not empty: seed an empty archive`);
  } finally {
    await store.close();
  }
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
  /** Of them, withdrawn after the seeding (reversed by the ledger: out of every count). */
  withdrawn: number;
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
  /** The unit with the most ledger entries (its 本单位文件 is the longest), how many, and one of its clerks' login. */
  largestUnit: { unit: Unit; entries: number; clerk: string };
}

/** An account the seeding is to upload as, in an area of neighbouring units (a county and its towns). */
export interface SeedAccount {
  id: string;
  username: string;
  unit: Unit;
  area: string;
}

/**
 * Fills an embedded store with a province's uploads for the reports: `entries` ledger entries
 * over `entries / 5` catalog files, through the seeding of the catalog and of the ledger
 * (server/store/catalog/seeding.ts, ledger/seeding.ts: the rows the commit and `Ledger.count` of each upload, in time
 * order, would write; no bytes behind the catalog entries). Units: 10 cities x 10 counties x 20
 * towns plus the county and city units; a few thousand accounts; each file uploaded by ~5
 * entries, some by hundreds of units; upload counts mostly 1, ~15% 2, ~5% 3-20; two years of days
 * in `timeZone`. Every upload is recorded under its key (`seedActionKey`), and `withdrawnShare` of
 * them (every tenth by default, in count order) is withdrawn once all are seeded: reversed by the
 * ledger's seeding as the ledger's `reverseMany` reverses withdrawals (SeededUpload.withdrawal, as
 * `withdrawSeededShare` does after it), so every total is as if they had never been counted.
 * `given` accounts (the province-scale run's, in the divisions of UNIT_REGIONS, made in the
 * accounts store beforehand) take the place of the made-up units' clerks. Deterministic.
 */
export async function seedReportData(
  dataDir: string,
  entries: number,
  timeZone: string,
  withdrawnShare = 0.1,
  given?: SeedAccount[],
): Promise<ReportSeed> {
  await startedOnceEmpty(dataDir);
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
  type SeedUnit = { unit: Unit; area: number | string };
  const units: SeedUnit[] = [];
  const addUnit = (unit: Unit, area: number) => units.push({ unit, area });
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
  const accountCount = given?.length ?? Math.min(3000, Math.max(60, Math.round(entries / 330)));
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
  const accounts: Array<{ unit: SeedUnit; record: { id: string; username: string; unit: Unit } }> = given
    ? given.map((a) => ({
        unit: { unit: a.unit, area: a.area },
        record: { id: a.id, username: a.username, unit: a.unit },
      }))
    : Array.from({ length: accountCount }, (_, i) => {
        const id = uuid();
        const username = `clerk${String(i + 1).padStart(4, '0')}`;
        const unit = i < shuffled.length ? shuffled[i]! : pick(units);
        return { unit, record: { id, username, unit: unit.unit } };
      });
  // A county's accounts (with its towns'); a city's own units form an area of their own.
  const byArea = new Map<number | string, number[]>();
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

  /**
   * The ledger entries, in columns (ten million objects would take gigabytes): each one's file and
   * account, its first name and last (its type is its file's).
   */
  const ledger = { file: [] as number[], account: [] as number[], name: [] as string[], lastName: [] as string[] };
  type File = {
    fileId: string;
    md5: string;
    sha256: string;
    length: number;
    name: string;
    type: string;
    stored: number;
    collision: boolean;
  };
  const files: File[] = [];
  // The uploads (a million and a half), in columns: each is made a record when the seeding reads
  // it, in time order.
  const upload = {
    entry: [] as number[],
    at: [] as number[],
    day: [] as number[],
    /** 0: the entry's own name, 1: its last one, 2: also carried the bytes (its file's first upload). */
    kind: [] as number[],
  };
  const addUpload = (entry: number, at: number, day: number, kind: number) => {
    upload.entry.push(entry);
    upload.at.push(at);
    upload.day.push(day);
    upload.kind.push(kind);
  };
  for (let f = 0; f < fileCount; f++) {
    if (f > 0 && f % Math.ceil(fileCount / 10) === 0)
      console.log(
        `        seeding: ${f} of ${fileCount} files and their uploads drawn (${Math.round((100 * f) / fileCount)}%); ${memory()}`,
      );
    const [topic, ext] = pick(TOPICS);
    const name = `${topic}${2020 + Math.floor(random() * 7)}第${1 + Math.floor(random() * 300)}号.${ext}`;
    const variant = () =>
      random() < 0.5 ? name.replace(`.${ext}`, `(副本).${ext}`) : `${String(1 + Math.floor(random() * 99))}-${name}`;
    const type = CONTENT_TYPES[ext]!;
    const day0 = Math.floor(random() * DAYS);
    const stored = officeTime(day0);
    const file: File = {
      fileId: hex(24),
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
      const e = ledger.file.length;
      ledger.file.push(f);
      ledger.account.push(account);
      ledger.name.push(own);
      ledger.lastName.push(n > 1 && random() < 0.2 ? variant() : own);
      // Its uploads: the first and the last at their times, those in between a millisecond
      // apart after the first (on its day), before the last (on its), or from noon (between).
      const lastDay = on.length - 1;
      on.forEach((d, i) => {
        for (let k = 0; k < perDay[i]!; k++) {
          const firstOne = i === 0 && k === 0;
          const lastOne = n > 1 && i === lastDay && k === perDay[i]! - 1;
          const at = firstOne
            ? firstTime
            : lastOne
              ? lastTime
              : i === 0
                ? firstTime + k
                : i === lastDay
                  ? lastTime - (perDay[i]! - 1 - k)
                  : dayStart[d]! + 12 * HOUR_MS + k;
          addUpload(e, at, d, lastOne ? 1 : firstOne && storer ? 2 : 0);
        }
      });
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
  // The files in the order they were stored, then the uploads in the order they were counted.
  const seeding = openEmbeddedSeeding({
    dataDir,
    chunkSize: CHUNK_SIZE,
    progress: (line) => console.log(`        seeding: ${line}; ${memory()}`),
  });
  // Every 1/withdrawnShare-th upload in count order withdrawn, once all are seeded.
  const step = withdrawnShare > 0 ? Math.max(1, Math.round(1 / withdrawnShare)) : 0;
  let seeded;
  try {
    await seeding.catalog.seed(
      [...files]
        .sort((a, b) => a.stored - b.stored)
        .map((f) => ({
          fileId: f.fileId,
          key: { md5: f.md5, sha256: f.sha256, length: f.length },
          fileName: f.name,
          contentType: f.type,
          uploadDate: new Date(f.stored),
        })),
    );
    // The catalog has the checksums now: 2,000,000 files' take half a gigabyte of the province's
    // data set, which the ledger's seeding needs the memory for.
    for (const f of files) f.md5 = f.sha256 = '';
    const order = Uint32Array.from(upload.at.keys()).sort((a, b) => upload.at[a]! - upload.at[b]! || a - b);
    const started = performance.now();
    seeded = await seeding.ledger.seed(
      (function* (): Generator<SeededUpload> {
        for (const [n, u] of order.entries()) {
          // A progress line every tenth (the province-scale run seeds for many minutes).
          if (n > 0 && n % Math.ceil(order.length / 10) === 0) {
            const seconds = (performance.now() - started) / 1000;
            console.log(
              `        seeding: ${n} of ${order.length} uploads counted (${Math.round((100 * n) / order.length)}%, ${seconds.toFixed(0)} s, ${(n / seconds).toFixed(0)}/s); ${memory()}`,
            );
          }
          const e = upload.entry[u]!;
          const file = files[ledger.file[e]!]!;
          const kind = upload.kind[u]!;
          const key = seedActionKey(n);
          yield {
            key,
            // Always there (undefined if not withdrawn): an object spread into would be made a slower, larger one.
            withdrawal: step > 0 && n % step === step - 1 ? `bench-withdrawal:${key}` : undefined,
            account: accounts[ledger.account[e]!]!.record,
            fileId: file.fileId,
            fileName: kind === 1 ? ledger.lastName[e]! : ledger.name[e]!,
            contentType: file.type,
            at: new Date(upload.at[u]!),
            day: days[upload.day[u]!]!,
            fileLength: file.length,
            carriedBytes: kind === 2,
          };
        }
      })(),
    );
  } finally {
    await seeding.close();
  }
  // The county with the most entries, and its city; and the unit with the most files (本单位文件).
  const perCounty = new Map<string, number>();
  const perUnit = new Map<string, number>();
  for (const account of ledger.account) {
    const { unit } = accounts[account]!.unit;
    if (unit.county) {
      const county = `${unit.city}\u0000${unit.county}`;
      perCounty.set(county, (perCounty.get(county) ?? 0) + 1);
    }
    perUnit.set(unit.id, (perUnit.get(unit.id) ?? 0) + 1);
  }
  const [busiestCity, busiestCounty] = [...perCounty].reduce((a, b) => (b[1] > a[1] ? b : a))[0].split('\u0000') as [
    string,
    string,
  ];
  const [largestUnit, largestEntries] = [...perUnit].reduce((a, b) => (b[1] > a[1] ? b : a));
  const largestClerk = accounts.find((a) => a.record.unit.id === largestUnit)!.record;
  return {
    files: fileCount,
    entries: ledger.file.length,
    uploads: seeded.uploads,
    withdrawn: seeded.withdrawn,
    uploadDays: seeded.uploadDays,
    accounts: accountCount,
    units: units.length,
    collisionPairs: files.filter((f) => f.collision).length / 2,
    firstDay: days[0]!,
    lastDay: days[DAYS - 1]!,
    city: busiestCity,
    county: busiestCounty,
    fileWord: '通知',
    largestUnit: { unit: largestClerk.unit, entries: largestEntries, clerk: largestClerk.username },
  };
}

/** The bench process's memory, for the progress lines (a province's data set takes gigabytes). */
const memory = () => {
  const { heapUsed, rss } = process.memoryUsage();
  return `heap ${(heapUsed / 1e6).toFixed(0)} MB, RSS ${(rss / 1e6).toFixed(0)} MB (peak ${(process.resourceUsage().maxRSS / 1e3).toFixed(0)} MB)`;
};

/** UploadCount of an entry: mostly 1, ~15% 2, ~5% 3 to 20 (fewer the more). */
function uploadCount(random: () => number): number {
  const r = random();
  return r < 0.8 ? 1 : r < 0.95 ? 2 : 3 + Math.floor(random() ** 2 * 18);
}

/** The key of the seeded upload counted `n`th (0-based): in count order, so the ledger's records are written in key order. */
export const seedActionKey = (n: number) => `seed:${String(n).padStart(8, '0')}`;

/** Reversals made at once (one call of `reverseMany`, a few transactions). */
const WITHDRAW_BATCH = 5000;

/**
 * Withdraws `share` of the `uploads` seeded (evenly spread: every 1/share-th in count order)
 * through the ledger's `reverseMany`, printing its progress; answers how many. For a store no
 * process has open.
 */
export async function withdrawSeededShare(dataDir: string, uploads: number, share: number): Promise<number> {
  if (share <= 0) return 0;
  const step = Math.max(1, Math.round(1 / share));
  const keys: string[] = [];
  for (let n = step - 1; n < uploads; n += step) keys.push(seedActionKey(n));
  const store = openEmbeddedStore({ dataDir, chunkSize: CHUNK_SIZE });
  const started = performance.now();
  try {
    let reported = 0;
    for (let at = 0; at < keys.length; at += WITHDRAW_BATCH) {
      const answers = await store.ledger.reverseMany(
        keys
          .slice(at, at + WITHDRAW_BATCH)
          .map((actionKey) => ({ actionKey, changeKey: `bench-withdrawal:${actionKey}` })),
      );
      const refused = answers.find((a) => a !== 'reversed');
      if (refused) throw new Error(`seeding: the ledger answered "${refused}" to a withdrawal`);
      const done = Math.min(keys.length, at + WITHDRAW_BATCH);
      if (done === keys.length || done - reported >= keys.length / 10) {
        reported = done;
        const seconds = (performance.now() - started) / 1000;
        console.log(
          `        seeding: ${done} of ${keys.length} uploads withdrawn (${Math.round((100 * done) / keys.length)}%, ${seconds.toFixed(0)} s, ${(done / seconds).toFixed(0)}/s)`,
        );
      }
    }
  } finally {
    await store.close();
  }
  return keys.length;
}
