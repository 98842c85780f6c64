import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Principal } from '../server/services/sessions.js';
import { SearchTerms } from '../server/services/search-terms.js';
import { TextSearchService } from '../server/services/text-search.js';
import type { ArchiveStore } from '../server/store/archive-store.js';
import type { SeededCatalogEntry } from '../server/store/catalog/seeding.js';
import { openEmbeddedSeeding, openEmbeddedStore, type StoreSeeding } from '../server/store/embedded.js';
import type { FileText } from '../server/store/file-texts/port.js';
import type { UploadRecord } from '../server/store/ledger/port.js';
import { openMongoSeeding, openMongoStore } from '../server/store/mongo.js';
import type { Unit } from '../shared/schemas.js';
import { Random } from './near-duplicates/edits.js';

export interface TextSearchResult {
  store: 'embedded' | 'mongodb';
  pages: number;
  /** Distinct terms per page on average, and the words drawn per page. */
  termsPerPage: number;
  wordsPerPage: number;
  /** Null when a kept archive was measured again (nothing seeded or indexed). */
  seedSeconds: number | null;
  /** Putting every page's text and terms through `fileTexts.put`, 1,000 a call. */
  indexSeconds: number | null;
  databaseMb: number | null;
  /** Segmenting pages of real length with jieba (search mode), per page. */
  segmentMsPerPage: number;
  cases: Array<{
    label: string;
    runs: number;
    found: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    /** The process's CPU time per search (user + system), p99: what the search costs whatever else runs. */
    cpuP99Ms: number;
    /** The set the store walked, and the files it read (`fileTexts.search` once more, after the runs). */
    plan: string;
    examined: number | undefined;
  }>;
}

const PAGES_PER_PUT = 1000;
/** Words drawn for a page: a page of an A4 document holds about 600 characters, some 300 words. */
const WORDS_PER_PAGE = 300;
const UNITS = 200;
const COUNTIES = 10;

/**
 * Search by content over `pages` pages of text (one file each), in process through the service as
 * the route calls it (segmenting the query, the store's search in the caller's view, the names and
 * snippets of a page of 20): each page's words drawn from jieba's dictionary by its frequencies
 * (common words in most pages, rare ones in few, as in real text), its terms the words drawn; the
 * files spread over 200 towns of 10 counties, each uploaded once. Queries: words of several
 * frequencies, for the top-level administrator (the whole archive), a county's and a town's clerk.
 * On MongoDB the database (`bench_text_…`) is left there: a benchmark does not use the driver.
 */
export async function benchTextSearch(
  pages: number,
  options: { runs?: number; mongoUri?: string; keepDir?: string } = {},
): Promise<TextSearchResult> {
  const runs = options.runs ?? 100;
  // A kept archive (embedded only) is seeded and indexed once, then measured again as it is: an
  // indexed million pages takes most of an hour to build on the shared machine.
  const keep = options.mongoUri ? undefined : options.keepDir;
  if (keep) fs.mkdirSync(keep, { recursive: true });
  const dataDir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-text-'));
  const reuse = keep !== undefined && fs.readdirSync(keep).length > 0;
  const mongo = options.mongoUri
    ? { uri: options.mongoUri, dbName: `bench_text_${randomBytes(4).toString('hex')}`, chunkSize: 261_120 }
    : undefined;
  try {
    const vocabulary = loadVocabulary();
    const rng = new Random(20261129);
    const started = performance.now();
    const { files, units } = reuse
      ? { files: [], units: townsOf() }
      : await seed(mongo ? await openMongoSeeding(mongo) : openEmbeddedSeeding({ dataDir, chunkSize: 261_120 }), pages);
    const seedSeconds = reuse ? null : (performance.now() - started) / 1000;
    const store: ArchiveStore = mongo
      ? await openMongoStore(mongo)
      : openEmbeddedStore({ dataDir, chunkSize: 261_120 });
    try {
      if (reuse && (await store.fileTexts.count()) !== pages)
        throw new Error(`${dataDir} holds ${await store.fileTexts.count()} pages' texts, not ${pages}`);
      let indexMs = 0;
      let terms = 0;
      for (let first = 0; first < (reuse ? 0 : pages); first += PAGES_PER_PUT) {
        const batch: FileText[] = [];
        for (let i = first; i < Math.min(pages, first + PAGES_PER_PUT); i++) {
          const words = Array.from({ length: WORDS_PER_PAGE }, () => vocabulary.draw(rng));
          const distinct = [...new Set(words)];
          terms += distinct.length;
          batch.push({ fileId: files[i]!, text: words.join(''), terms: distinct });
        }
        const t = performance.now();
        await store.fileTexts.put(batch);
        indexMs += performance.now() - t;
        if ((first + PAGES_PER_PUT) % 100_000 === 0)
          console.log(`        … ${first + PAGES_PER_PUT} pages indexed, ${(indexMs / 1000).toFixed(0)} s`);
      }
      const searchTerms = new SearchTerms();
      const sample = Array.from({ length: 20 }, () =>
        Array.from({ length: WORDS_PER_PAGE }, () => vocabulary.draw(rng)).join(''),
      );
      await searchTerms.ofText(sample[0]!); // loads the dictionary
      const seg = performance.now();
      for (const text of sample) await searchTerms.ofText(text);
      const segmentMsPerPage = (performance.now() - seg) / sample.length;

      const service = new TextSearchService(
        store,
        {
          reachSubtree: async (account) =>
            account.unit.id === 'archive' ? undefined : { city: '沧州市', county: account.unit.county! },
        },
        searchTerms,
      );
      const principal = (role: 'clerk' | 'admin', unit: Unit): Principal =>
        ({ account: { id: `${role}-${unit.id}`, role, unit }, via: 'session' }) as unknown as Principal;
      const top = principal('admin', { id: 'archive', geoType: 'city', city: '' });
      const county = principal('admin', units[0]!);
      const clerk = principal('clerk', units[0]!);
      // A word of about this rank that a query keeps whole (jieba may cut a dictionary word in two).
      const chosen = new Map<number, string>();
      for (const rank of [30, 60, 1000, 1500, 10_000, 20_000, 100_000])
        for (let r = rank; ; r++) {
          const candidate = vocabulary.searchable(r);
          const kept = await searchTerms.ofQuery(candidate);
          if (kept.length === 1 && kept[0] === candidate) {
            chosen.set(rank, candidate);
            break;
          }
        }
      const word = (rank: number) => chosen.get(rank)!;
      const cases: Array<[string, Principal, string]> = [
        [`top level, a common word (${word(30)})`, top, word(30)],
        [`top level, a word of rank 1,000 (${word(1000)})`, top, word(1000)],
        [`top level, a rare word (${word(100_000)})`, top, word(100_000)],
        [`top level, two common words`, top, `${word(30)} ${word(60)}`],
        [`top level, a common and a rare word`, top, `${word(30)} ${word(20_000)}`],
        [`county (a tenth), a common word`, county, word(30)],
        [`county, a word of rank 1,000`, county, word(1000)],
        [`town clerk (1/${UNITS}), a common word`, clerk, word(30)],
        [`town clerk, a word of rank 1,000`, clerk, word(1000)],
        [`town clerk, a word of rank 10,000`, clerk, word(10_000)],
        [`town clerk, two words of rank 1,000`, clerk, `${word(1000)} ${word(1500)}`],
        [`town clerk, a word in no page`, clerk, '鲲鹏扶摇'],
      ];
      const results: TextSearchResult['cases'] = [];
      for (const [label, who, q] of cases) {
        const times: number[] = [];
        const cpu: number[] = [];
        let found = 0;
        for (let r = 0; r < runs; r++) {
          const t = performance.now();
          const c = process.cpuUsage();
          found = (await service.search(who, { q, limit: 20, offset: 0 })).items.length;
          const used = process.cpuUsage(c);
          times.push(performance.now() - t);
          cpu.push((used.user + used.system) / 1000);
        }
        times.sort((a, b) => a - b);
        cpu.sort((a, b) => a - b);
        const viewed =
          who.account.unit.id === 'archive'
            ? undefined
            : who.account.role === 'clerk'
              ? { unitId: who.account.unit.id }
              : { subtree: { city: '沧州市', county: who.account.unit.county! } };
        const walked = await store.fileTexts.search({
          terms: await searchTerms.ofQuery(q),
          scope: viewed,
          limit: 20,
          offset: 0,
        });
        results.push({
          label,
          runs,
          found,
          p50Ms: times[Math.floor((times.length - 1) / 2)]!,
          p99Ms: times[Math.min(times.length - 1, Math.ceil(times.length * 0.99) - 1)]!,
          maxMs: times[times.length - 1]!,
          cpuP99Ms: cpu[Math.min(cpu.length - 1, Math.ceil(cpu.length * 0.99) - 1)]!,
          plan: walked.plan,
          examined: walked.examined,
        });
      }
      return {
        store: mongo ? 'mongodb' : 'embedded',
        pages,
        termsPerPage: reuse ? NaN : terms / pages,
        wordsPerPage: WORDS_PER_PAGE,
        seedSeconds,
        indexSeconds: reuse ? null : indexMs / 1000,
        databaseMb: mongo ? null : databaseMb(dataDir),
        segmentMsPerPage,
        cases: results,
      };
    } finally {
      await store.close();
    }
  } finally {
    if (!keep) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Every page a file of its own, uploaded once by a clerk of one of the towns (round robin). */
async function seed(seeding: StoreSeeding, pages: number): Promise<{ files: string[]; units: Unit[] }> {
  const units = townsOf();
  const files: string[] = [];
  const at = Date.UTC(2026, 0, 1);
  try {
    const entries: SeededCatalogEntry[] = [];
    for (let i = 0; i < pages; i++) {
      const fileId = randomBytes(12).toString('hex');
      files.push(fileId);
      entries.push({
        fileId,
        key: { md5: randomBytes(16).toString('hex'), sha256: randomBytes(32).toString('hex'), length: 2000 + i },
        fileName: `卷${i % 500}/第${i}页.txt`,
        contentType: 'text/plain',
        uploadDate: new Date(at + i),
      });
    }
    await seeding.catalog.seed(entries);
    const uploads: UploadRecord[] = files.map((fileId, i) => {
      const unit = units[i % UNITS]!;
      return {
        account: { id: `clerk-${unit.id}`, username: `clerk-${unit.id}`, unit },
        fileId,
        fileName: `卷${i % 500}/第${i}页.txt`,
        contentType: 'text/plain',
        at: new Date(at + i),
        day: '2026-01-01',
        fileLength: 2000 + i,
        carriedBytes: true,
      };
    });
    await seeding.ledger.seed(uploads);
    return { files, units };
  } finally {
    await seeding.close();
  }
}

/** The 200 towns of 10 counties the pages are uploaded in. */
function townsOf(): Unit[] {
  return Array.from({ length: UNITS }, (_, u) => ({
    id: `town-${u}`,
    geoType: 'town',
    city: '沧州市',
    county: `第${u % COUNTIES}县`,
    town: `第${u}镇`,
  }));
}

/**
 * jieba's dictionary (its words with their frequencies in a large corpus): words drawn by
 * frequency, and the word of a given rank among those a query keeps as one term.
 */
function loadVocabulary() {
  const require = createRequire(import.meta.url);
  const lines = fs.readFileSync(require.resolve('@node-rs/jieba/dict.txt'), 'utf8').split('\n');
  const words: Array<{ word: string; freq: number }> = [];
  for (const line of lines) {
    const [word, freq] = line.split(' ');
    if (word && /^[\p{Script=Han}]{2,}$/u.test(word) && Number(freq) > 0) words.push({ word, freq: Number(freq) });
  }
  words.sort((a, b) => b.freq - a.freq);
  const cumulative = new Float64Array(words.length);
  let sum = 0;
  for (let i = 0; i < words.length; i++) cumulative[i] = sum += words[i]!.freq;
  return {
    draw(rng: Random): string {
      const x = rng.next() * sum;
      let lo = 0;
      let hi = words.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid]! < x) lo = mid + 1;
        else hi = mid;
      }
      return words[lo]!.word;
    },
    searchable(rank: number): string {
      return words[Math.min(rank, words.length - 1)]!.word;
    },
  };
}

function databaseMb(dataDir: string): number {
  let bytes = 0;
  for (const name of fs.readdirSync(dataDir)) {
    const stat = fs.statSync(path.join(dataDir, name));
    if (stat.isFile()) bytes += stat.size;
  }
  return bytes / 1024 / 1024;
}
