import { ReportCalendar } from '../../server/services/calendar.js';
import type { Account } from '../../server/store/accounts/port.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { CatalogEntry } from '../../server/store/catalog/port.js';
import { collisionsQuery, crossUnitQuery, repeatUploadersQuery, savingsQuery } from '../../shared/reports.js';
import type { Unit } from '../../shared/schemas.js';
import { ReportService } from '../../server/services/reports.js';
import { countUpload, randomContent, stageBytes, testAccount } from './content.js';

/**
 * A small archive whose report answers were worked out by hand (server/store/reports/conformance.ts
 * lists them). Two cities; 江城市 has two counties that each have a town named 城关镇.
 *
 *  #  who    unit (江城市 unless said)  file            time (UTC)          day (Asia/Shanghai)
 *  1  alice  东县                     F1 1000 B stored 2026-03-02T02:00  03-02
 *  2  alice  东县                     F1               2026-03-03T02:00  03-03
 *  3  alice  东县                     F1               2026-03-10T02:00  03-10
 *  4  bob    东县                     F1 "通知(副本)"   2026-03-03T03:00  03-03
 *  5  carol  东县/城关镇               F1               2026-03-04T02:00  03-04
 *  6  dave   西县                     F1               2026-03-04T05:00  03-04
 *  7  dave   西县                     F1               2026-03-05T05:00  03-05
 *  8  gina   河市                     F1               2026-03-02T16:30  03-03 (00:30 local: not UTC's 03-02)
 *  9  erin   西县/城关镇               F2 3000 B stored 2026-03-05T01:00  03-05
 * 10  erin   西县/城关镇               F2               2026-04-01T01:00  04-01
 * 11  frank  江城市 (the city itself)   F2               2026-04-02T01:00  04-02
 * 12  bob    东县                     F3  500 B stored 2026-03-06T01:00  03-06
 * 13  bob    东县                     F3               2026-03-06T02:00  03-06
 * 14  bob    东县                     F3               2026-03-07T01:00  03-07
 * 15  gina   河市                     F4 7000 B stored 2026-03-08T01:00  03-08
 * 16  frank  江城市                    C1  200 B stored 2026-02-01T01:00  02-01
 * 17  carol  东县/城关镇               C2  300 B stored 2026-02-02T01:00  02-02  (C2 has C1's MD5, another SHA-256)
 * 18  carol  东县/城关镇               C2               2026-03-09T01:00  03-09
 */
export const UNITS = {
  city: { id: 'u-city', geoType: 'city', city: '江城市' },
  dong: { id: 'u-dong', geoType: 'county', city: '江城市', county: '东县' },
  dongTown: { id: 'u-dong-cg', geoType: 'town', city: '江城市', county: '东县', town: '城关镇' },
  xi: { id: 'u-xi', geoType: 'county', city: '江城市', county: '西县' },
  xiTown: { id: 'u-xi-cg', geoType: 'town', city: '江城市', county: '西县', town: '城关镇' },
  he: { id: 'u-he', geoType: 'city', city: '河市' },
} satisfies Record<string, Unit>;

const person = (name: string, unit: Unit, displayName: string | null = null): Account =>
  testAccount({ id: `a-${name}`, username: name, unit, displayName });

/**
 * The uploaders. Their accounts are in the store with their display names (dave and frank have
 * none), except gina's: an uploader of an earlier version whose account is not here.
 */
export const PEOPLE = {
  alice: person('alice', UNITS.dong, '艾丽'),
  bob: person('bob', UNITS.dong, '鲍勃'),
  carol: person('carol', UNITS.dongTown, '柯萝'),
  dave: person('dave', UNITS.xi),
  erin: person('erin', UNITS.xiTown, '尔琳'),
  frank: person('frank', UNITS.city),
  gina: person('gina', UNITS.he),
};
const WITHOUT_ACCOUNT: ReadonlySet<keyof typeof PEOPLE> = new Set(['gina']);

export const FILES = {
  F1: { name: '通知.pdf', length: 1000 },
  F2: { name: '会议纪要.docx', length: 3000 },
  F3: { name: '报表.xlsx', length: 500 },
  F4: { name: '照片.jpg', length: 7000 },
  C1: { name: '扫描件A.pdf', length: 200 },
  C2: { name: '扫描件B.pdf', length: 300 },
} as const;
export type FileKey = keyof typeof FILES;

type Upload = [who: keyof typeof PEOPLE, file: FileKey, at: string, fileName?: string];

/** In the order of the table above: ledger entries are created in this order. */
const UPLOADS: Upload[] = [
  ['alice', 'F1', '2026-03-02T02:00:00Z'],
  ['alice', 'F1', '2026-03-03T02:00:00Z'],
  ['alice', 'F1', '2026-03-10T02:00:00Z'],
  ['bob', 'F1', '2026-03-03T03:00:00Z', '通知(副本).pdf'],
  ['carol', 'F1', '2026-03-04T02:00:00Z'],
  ['dave', 'F1', '2026-03-04T05:00:00Z'],
  ['dave', 'F1', '2026-03-05T05:00:00Z'],
  ['gina', 'F1', '2026-03-02T16:30:00Z'],
  ['erin', 'F2', '2026-03-05T01:00:00Z'],
  ['erin', 'F2', '2026-04-01T01:00:00Z'],
  ['frank', 'F2', '2026-04-02T01:00:00Z'],
  ['bob', 'F3', '2026-03-06T01:00:00Z'],
  ['bob', 'F3', '2026-03-06T02:00:00Z'],
  ['bob', 'F3', '2026-03-07T01:00:00Z'],
  ['gina', 'F4', '2026-03-08T01:00:00Z'],
  ['frank', 'C1', '2026-02-01T01:00:00Z'],
  ['carol', 'C2', '2026-02-02T01:00:00Z'],
  ['carol', 'C2', '2026-03-09T01:00:00Z'],
];

export const REPORT_TIME_ZONE = 'Asia/Shanghai';

/** Creates the uploaders' accounts, stores the six files and records the eighteen uploads; returns the catalog entries. */
export async function seedReportArchive(store: ArchiveStore): Promise<Record<FileKey, CatalogEntry>> {
  for (const [who, account] of Object.entries(PEOPLE))
    if (!WITHOUT_ACCOUNT.has(who as keyof typeof PEOPLE)) await store.accounts.create(account);
  const calendar = new ReportCalendar(REPORT_TIME_ZONE);
  const firstUpload = (file: FileKey) => new Date(UPLOADS.find((u) => u[1] === file)![2]);
  const entries = {} as Record<FileKey, CatalogEntry>;
  for (const key of Object.keys(FILES) as FileKey[]) {
    const staged = await stageBytes(store, randomContent(FILES[key].length));
    // C2 is given C1's MD5: a real collision is too costly to make, and the catalog only compares hashes.
    const contentKey = key === 'C2' ? { ...staged.key, md5: entries.C1.md5 } : staged.key;
    const { entry } = await store.content.commit(staged.stagingId, {
      key: contentKey,
      fileName: FILES[key].name,
      contentType: 'application/octet-stream',
      uploadDate: firstUpload(key),
    });
    entries[key] = entry;
  }
  const seen = new Set<FileKey>();
  for (const [who, file, time, fileName] of UPLOADS) {
    const at = new Date(time);
    await countUpload(store, {
      account: PEOPLE[who],
      fileId: entries[file].fileId,
      fileName: fileName ?? FILES[file].name,
      contentType: 'application/octet-stream',
      at,
      day: calendar.dayOf(at),
      fileLength: FILES[file].length,
      carriedBytes: !seen.has(file),
    });
    seen.add(file);
  }
  return entries;
}

/** What the archive answers about its files: listings, reports and entries. */
export async function archiveAnswers(store: ArchiveStore, files: Record<FileKey, CatalogEntry>) {
  const reports = new ReportService(store.reports, new ReportCalendar(REPORT_TIME_ZONE), store.accounts);
  const page = { limit: 50, offset: 0 };
  const account = PEOPLE.alice.id;
  return {
    all: await store.unitFiles.list({ accountId: account, ...page }),
    bySize: await store.unitFiles.list({ accountId: account, sort: 'size', ...page }),
    unit: await store.unitFiles.list({ unitId: UNITS.dong.id, accountId: account, sort: 'name', ...page }),
    county: await store.unitFiles.list({ subtree: { city: '江城市', county: '东县' }, accountId: account, ...page }),
    named: await store.unitFiles.list({ accountId: account, nameContains: '副本', ...page }),
    uploadedBy: await store.unitFiles.list({ accountId: account, uploaderId: PEOPLE.bob.id, ...page }),
    repeats: await reports.repeatUploaders(repeatUploadersQuery.parse({})),
    repeatUnits: await reports.repeatUploaders(repeatUploadersQuery.parse({ group: 'unit' })),
    crossUnit: await reports.crossUnit(crossUnitQuery.parse({})),
    crossUnitInCity: await reports.crossUnit(crossUnitQuery.parse({ city: '江城市' })),
    savings: await reports.savings(savingsQuery.parse({})),
    savingsByDay: await reports.savings(savingsQuery.parse({ group: 'day' })),
    collisions: await reports.collisions(collisionsQuery.parse({})),
    entries: await Promise.all(Object.values(files).map((f) => store.ledger.entriesForFile(f.fileId))),
    inScope: await Promise.all(
      Object.values(files).map((f) => store.ledger.hasUploadInScope(f.fileId, { unitId: UNITS.dong.id })),
    ),
    latest: await Promise.all(
      Object.values(files).map((f) => store.ledger.latestUploadInScope(f.fileId, { subtree: { city: '江城市' } })),
    ),
  };
}
