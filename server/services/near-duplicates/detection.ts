import { setTimeout as delay } from 'node:timers/promises';
import type {
  NearDuplicateRow,
  NearDuplicateStatus,
  NearDuplicatesQuery,
  NearDuplicatesReport,
} from '../../../shared/reports.js';
import { NEAR_DUPLICATE_SORTS, defaultOrder } from '../../../shared/reports.js';
import type { Logger } from '../../log.js';
import type { ArchiveStore } from '../../store/archive-store.js';
import type { CatalogEntry } from '../../store/catalog/port.js';
import type { NearDuplicatePair, NearFingerprint, PageFingerprint } from '../../store/near-duplicates/port.js';
import type { Batches, NearDuplicateReportQuery, Unpaged } from '../../store/reports/port.js';
import type { ReportCalendar } from '../calendar.js';
import { comparedByPage, documentPair, matchingPages, pageTextKeys, scanPages } from './document-pairs.js';
import { EXTRACTABLE_MAX_BYTES } from './extraction.js';
import { DEFAULT_SETTINGS, nearDuplicateMethod, similarity } from './fingerprint.js';
import type { FingerprinterOnFirstUse, NearDuplicateMethod, NearDuplicateSettings } from './fingerprint.js';
import { imagePages, lookupKeys, pageImageKeys, pageImageProbes } from './lookup-keys.js';
import { imageDistance } from './page-image.js';
import { RecognisedTexts } from './recognised-texts.js';
import { differences } from './snippets.js';
import { type Compared, InProcessTextReader, type Read, type TextReader } from './text-reader.js';

/** A fingerprinting attempt that failed is tried again after 1, 2, 4, 8 minutes; then it is reported as failed. */
const MAX_ATTEMPTS = 5;
const RETRY_BASE_MS = 60_000;
/** Candidates compared per file at most (a text that shares keys with thousands is boilerplate). */
const MAX_CANDIDATES = 200;
const LEASE_MS = 5 * 60_000;
const BATCH = 8;
/** The job record keeping the settings the stored fingerprints, keys and pairs were made with. */
export const NEAR_DUPLICATE_SETTINGS_RECORD = 'near-duplicate-settings';
/**
 * The job record of the catalogued files still to be fingerprinted again after a rebuild or a change
 * of settings: the catalog's order from after `after`, about `left` files (null: none).
 */
const BACKLOG_RECORD = 'near-duplicate-backlog';
/** Feeding the backlog takes its record's lease for a moment; one left by a crash ends this soon. */
const BACKLOG_LEASE_MS = 30_000;

interface Backlog {
  after: string | null;
  left: number;
}

export interface NearDuplicateOptions {
  store: Pick<ArchiveStore, 'catalog' | 'content' | 'nearDuplicates' | 'fingerprintQueue' | 'reports' | 'jobs'>;
  /** Its settings are what the service reads; the fingerprinter itself only the default reader makes. */
  fingerprinter: FingerprinterOnFirstUse;
  calendar: ReportCalendar;
  /** Who takes jobs: unique per process. */
  holder: string;
  logger?: Pick<Logger, 'warn' | 'error' | 'info'>;
  clock?: () => Date;
  /** Where documents are read and fingerprinted: by default on the calling thread (the server uses a thread of its own). */
  reader?: TextReader;
  /** Receives the texts a round read (its jobs' files that have one): search by content indexes them. */
  onTexts?: (texts: ReadonlyArray<{ fileId: string; text: string; terms: string[] }>) => Promise<void>;
  /** How fingerprinting gives way to uploads (tests set it, and a monotonic clock and a sleep of their own). */
  pacing?: Partial<Pacing>;
}

/**
 * Fingerprinting is background work on the cores that receive uploads: while files keep arriving
 * (one queued in the last `quietMs`), its rounds take at most `busyShare` of the time, each
 * followed by a pause; once they stop, the queue is worked through without pauses. (Rounds back
 * to back, with PDF.js searching random-byte .pdf files for objects, took a bulk import of 10,000
 * small files from 18 s to 40 s on two cores.)
 */
export interface Pacing {
  busyShare: number;
  quietMs: number;
  /** Milliseconds from any fixed point (performance.now). */
  elapsed: () => number;
  sleep: (ms: number, wake: AbortSignal) => Promise<void>;
}

const DEFAULT_PACING: Pacing = {
  busyShare: 0.2,
  quietMs: 2000,
  elapsed: () => performance.now(),
  sleep: (ms, wake) => delay(ms, undefined, { signal: wake, ref: false }).catch(() => {}),
};

/**
 * Near-duplicate detection: files are queued as they are committed and fingerprinted in the
 * background (any instance takes jobs under a lease), so uploads never wait; each new
 * fingerprint is looked up in the index (SimHash blocks, LSH bands), candidates are compared on
 * their texts, and the pairs found are kept for the administrators' report.
 */
export class NearDuplicateService {
  private readonly clock: () => Date;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly pacing: Pacing;
  private readonly reader: TextReader;
  /** When a file was last queued (pacing.elapsed), and the signal that ends a pause at stop(). */
  private lastQueued = -Infinity;
  private wake = new AbortController();
  /** Milliseconds paused between images' pages in the round under way (not counted as its work). */
  private pausedInRound = 0;
  private readonly recognised = new RecognisedTexts();

  constructor(private readonly deps: NearDuplicateOptions) {
    this.clock = deps.clock ?? (() => new Date());
    this.pacing = { ...DEFAULT_PACING, ...deps.pacing };
    this.reader = deps.reader ?? new InProcessTextReader(deps.fingerprinter);
  }

  /** Queues committed files. Never fails the upload that called it: a file missed here is caught by a rebuild. */
  async enqueue(fileIds: readonly string[]): Promise<void> {
    if (fileIds.length === 0) return;
    try {
      await this.deps.store.fingerprintQueue.enqueue(fileIds, this.clock());
      this.lastQueued = this.pacing.elapsed();
      this.kick();
    } catch (err) {
      this.deps.logger?.warn(
        { err, fileIds },
        'could not queue files for near-duplicate detection (run `archive near-duplicates rebuild`)',
      );
    }
  }

  /** Works through due jobs every `intervalMs`, and soon after a file is queued. */
  start(intervalMs: number): void {
    this.stopped = false;
    this.wake = new AbortController();
    this.timer = setInterval(() => this.kick(), intervalMs).unref();
    this.kick();
  }

  /** Stops taking jobs; the one in hand ends first (a job cut short is taken again after its lease). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.wake.abort();
    await this.running;
  }

  private kick(): void {
    if (this.stopped || this.running || !this.timer) return;
    this.running = this.drain()
      .catch((err: unknown) => this.deps.logger?.error({ err }, 'near-duplicate detection failed'))
      .finally(() => (this.running = undefined));
  }

  private async drain(): Promise<void> {
    const { elapsed, sleep, busyShare, quietMs } = this.pacing;
    while (!this.stopped) {
      const started = elapsed();
      this.pausedInRound = 0;
      if ((await this.runDue()) === 0) return;
      const ended = elapsed();
      if (ended - this.lastQueued < quietMs && !this.stopped)
        await sleep(((ended - started - this.pausedInRound) * (1 - busyShare)) / busyShare, this.wake.signal);
      // The event loop turns after every round: on the embedded store a round whose files fail at
      // once (their bytes missing) is promises alone, and rounds back to back left requests, timers
      // and signals unserved until the whole queue was done (100,000 such files: minutes).
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Between two pages of an image: OCR takes seconds a page, so a many-page scan gives way to
   * uploads page by page, by the rule rounds follow (a page, then a pause four times as long
   * while files keep arriving); a stop ends the image here (its job is taken again later).
   */
  private readonly betweenPages = async (pageMs: number): Promise<void> => {
    const { elapsed, sleep, busyShare, quietMs } = this.pacing;
    if (this.stopped) throw new Stopping();
    const now = elapsed();
    if (now - this.lastQueued < quietMs) {
      await sleep((pageMs * (1 - busyShare)) / busyShare, this.wake.signal);
      this.pausedInRound += elapsed() - now;
    }
    if (this.stopped) throw new Stopping();
  };

  /**
   * Takes and runs the jobs due now (a few at a time); returns how many ran. The round's
   * fingerprints and pairs are recorded together at its end (one transaction on the embedded
   * store), and files of one round are compared with each other too.
   */
  async runDue(limit = BATCH): Promise<number> {
    const { fingerprintQueue, nearDuplicates } = this.deps.store;
    let jobs = await fingerprintQueue.take(this.deps.holder, this.clock(), LEASE_MS, limit);
    // The files of a rebuild come only when no upload's file is waiting, as many as the round has room for.
    if (jobs.length < limit && (await this.feedBacklog(limit - jobs.length, new Set(jobs.map((j) => j.fileId)))) > 0)
      jobs = [...jobs, ...(await fingerprintQueue.take(this.deps.holder, this.clock(), LEASE_MS, limit - jobs.length))];
    const texts = new Map<string, Read>();
    const round = new Round();
    const finished: string[] = [];
    for (const job of jobs) {
      try {
        await this.fingerprintFile(job.fileId, texts, round);
        finished.push(job.fileId);
      } catch (err) {
        if (this.stopped && (err as Error)?.message === Stopping.MESSAGE) continue; // taken again when its lease ends
        const message = (err as Error)?.message ?? String(err);
        const retryAt =
          job.attempts < MAX_ATTEMPTS
            ? new Date(this.clock().getTime() + RETRY_BASE_MS * 2 ** (job.attempts - 1))
            : null;
        this.deps.logger?.warn(
          { err, fileId: job.fileId, attempts: job.attempts, retryAt },
          'near-duplicate fingerprinting failed',
        );
        await fingerprintQueue.fail(job.fileId, this.deps.holder, message, retryAt);
      }
    }
    // Recorded before the jobs end: a crash in between leaves them to be done again, never lost.
    await nearDuplicates.addPairs(round.pairs);
    await nearDuplicates.put(round.fingerprints);
    await this.deps.onTexts?.(round.texts);
    for (const fileId of finished) await fingerprintQueue.done(fileId, this.deps.holder);
    return jobs.length;
  }

  /** Forgets every fingerprint and pair and queues every catalogued file again, under this instance's settings; returns how many. */
  async rebuild(): Promise<number> {
    const count = await this.requeueAll();
    const { jobs } = this.deps.store;
    if (await jobs.acquire(NEAR_DUPLICATE_SETTINGS_RECORD, this.deps.holder, this.clock(), LEASE_MS))
      await jobs.release(NEAR_DUPLICATE_SETTINGS_RECORD, this.deps.holder, this.deps.fingerprinter.settings);
    return count;
  }

  /**
   * Forgets the index and makes every catalogued file a backlog to fingerprint again. The files are
   * not queued here: queued all at once (2,000,000 of them, OCR of every scan among them: days of
   * work), every file uploaded meanwhile would wait behind them, unfingerprinted and unsearchable.
   * Rounds take them a few at a time from the backlog when no other file waits (`runDue`).
   */
  private async requeueAll(): Promise<number> {
    const { catalog, nearDuplicates, jobs } = this.deps.store;
    await nearDuplicates.clear();
    const left = await catalog.count();
    // The backlog's lease is held only while a slice is fed: a moment, or BACKLOG_LEASE_MS after a crash.
    const deadline = Date.now() + 2 * BACKLOG_LEASE_MS;
    while (!(await jobs.acquire(BACKLOG_RECORD, this.deps.holder, this.clock(), BACKLOG_LEASE_MS))) {
      if (Date.now() > deadline) throw new Error('the near-duplicate backlog is held by another instance');
      await delay(200);
    }
    await jobs.release(BACKLOG_RECORD, this.deps.holder, { after: null, left } satisfies Backlog);
    return left;
  }

  /**
   * Queues the backlog's next `count` files (none when another instance is feeding it); returns how
   * many. Files fingerprinted since the rebuild began (uploaded meanwhile), and those of the round
   * in hand (`taken`), are passed over: the index was cleared, so what it holds is new.
   */
  private async feedBacklog(count: number, taken: ReadonlySet<string>): Promise<number> {
    const { jobs, catalog, fingerprintQueue, nearDuplicates } = this.deps.store;
    if (!(await jobs.get(BACKLOG_RECORD))?.state) return 0;
    if (!(await jobs.acquire(BACKLOG_RECORD, this.deps.holder, this.clock(), BACKLOG_LEASE_MS))) return 0;
    let backlog = (await jobs.get(BACKLOG_RECORD))?.state as Backlog | null | undefined; // read again under the lease
    let queued = 0;
    try {
      while (backlog && queued < count) {
        const wanted = count - queued;
        const page = await catalog.scan(backlog.after ?? undefined, wanted);
        const due: string[] = [];
        for (const { fileId } of page) if (!taken.has(fileId) && !(await nearDuplicates.get(fileId))) due.push(fileId);
        await fingerprintQueue.requeue(due, this.clock());
        queued += due.length;
        backlog =
          page.length < wanted
            ? null
            : { after: page[page.length - 1]!.fileId, left: Math.max(0, backlog.left - due.length) };
      }
      return queued;
    } finally {
      await jobs.release(BACKLOG_RECORD, this.deps.holder, backlog ?? null);
    }
  }

  /** Files of the backlog not queued yet (about: files stored or deleted since it began are not counted). */
  private async backlogLeft(): Promise<number> {
    const backlog = (await this.deps.store.jobs.get(BACKLOG_RECORD))?.state as Backlog | null | undefined;
    return backlog ? backlog.left : 0;
  }

  /**
   * Makes the stored index answer to this instance's settings: fingerprints, lookup keys (their
   * bands follow the thresholds) and pairs made under other settings are rebuilt from nothing
   * (every stored file queued again). One instance does it, under a lease; an index recorded
   * without settings was made with the defaults. Returns the files queued, 0 when nothing changed.
   */
  async adoptSettings(): Promise<number> {
    const settings = this.deps.fingerprinter.settings;
    const { jobs } = this.deps.store;
    const recorded = async () =>
      (await jobs.get(NEAR_DUPLICATE_SETTINGS_RECORD))?.state as NearDuplicateSettings | undefined;
    const before = await recorded();
    if (before && sameSettings(before, settings)) return 0;
    if (!(await jobs.acquire(NEAR_DUPLICATE_SETTINGS_RECORD, this.deps.holder, this.clock(), LEASE_MS))) return 0; // another instance is at it
    // Read again under the lease: another instance may have adopted them meanwhile.
    const made = (await recorded()) ?? DEFAULT_SETTINGS;
    const queued = sameSettings(made, settings) ? 0 : await this.requeueAll();
    if (queued > 0)
      this.deps.logger?.info(
        { settings, before: made, queued },
        'near-duplicate settings changed: every stored file is fingerprinted again',
      );
    await jobs.release(NEAR_DUPLICATE_SETTINGS_RECORD, this.deps.holder, settings);
    return queued;
  }

  /** Queues failed files again (an administrator fixed what made them fail). */
  async retryFailed(): Promise<number> {
    let count = 0;
    for (let failed; (failed = await this.deps.store.fingerprintQueue.failures(1000)).length > 0;) {
      await this.deps.store.fingerprintQueue.requeue(
        failed.map((f) => f.fileId),
        this.clock(),
      );
      count += failed.length;
    }
    return count;
  }

  async status(): Promise<NearDuplicateStatus> {
    const { nearDuplicates, fingerprintQueue, catalog } = this.deps.store;
    const [counts, queue, failed, backlog] = await Promise.all([
      nearDuplicates.counts(),
      fingerprintQueue.counts(this.clock()),
      fingerprintQueue.failures(20),
      this.backlogLeft(),
    ]);
    const failures = await Promise.all(
      failed.map(async (job) => ({
        fileId: job.fileId,
        fileName: (await catalog.get(job.fileId))?.fileName ?? null,
        attempts: job.attempts,
        error: job.error ?? '',
        at: job.dueAt.toISOString(),
      })),
    );
    return { ...counts, ...queue, queued: queue.queued + backlog, failures };
  }

  /** The administrators' report: the pairs found (one page), and how the fingerprinting stands. */
  async report(
    q: Omit<NearDuplicatesQuery, 'format' | 'status'> & Partial<Pick<NearDuplicatesQuery, 'status'>>,
  ): Promise<NearDuplicatesReport> {
    const page = await this.deps.store.reports.nearDuplicates({
      ...this.pairQuery(q),
      limit: q.limit,
      offset: q.offset,
    });
    return { ...page, limit: q.limit, offset: q.offset, status: await this.status() };
  }

  /** Every pair the report selects, `batch` at a time (an export). */
  reportRows(
    q: Omit<NearDuplicatesQuery, 'format' | 'status' | 'limit' | 'offset'> &
      Partial<Pick<NearDuplicatesQuery, 'status'>>,
    batch: number,
  ): Batches<NearDuplicateRow> {
    return this.deps.store.reports.nearDuplicateBatches(this.pairQuery(q), batch);
  }

  private pairQuery(
    q: Omit<NearDuplicatesQuery, 'format' | 'status' | 'limit' | 'offset'> &
      Partial<Pick<NearDuplicatesQuery, 'status'>>,
  ): Unpaged<NearDuplicateReportQuery> {
    const status = q.status ?? 'open';
    const sort = q.sort ?? NEAR_DUPLICATE_SORTS[0];
    return {
      from: q.from ? this.deps.calendar.startOf(q.from) : undefined,
      to: q.to ? this.deps.calendar.endOf(q.to) : undefined,
      unit: q.city ? { city: q.city, county: q.county, town: q.town } : undefined,
      fileName: q.q,
      method: q.method,
      ...(status !== 'all' ? { status } : {}),
      sort,
      order: q.order ?? defaultOrder(sort),
    };
  }

  private async fingerprintFile(fileId: string, texts: Map<string, Read>, round: Round): Promise<void> {
    const { settings } = this.deps.fingerprinter;
    const entry = await this.deps.store.catalog.get(fileId);
    if (!entry) return; // gone since it was queued
    const at = this.clock();
    const own = await this.textOf(entry, texts);
    const pages = own.pageImages;
    if (!('skipped' in own)) round.read(fileId, own.text, own.terms);
    const textKeys = 'skipped' in own ? [] : [...lookupKeys(own.fingerprint, settings), ...pageTextKeys(own, settings)];
    const keys = [...textKeys, ...pageImageKeys(pages, settings)];
    const lookup = [...textKeys, ...pageImageProbes(pages, settings)];
    const pairs: NearDuplicatePair[] = [];
    const candidates = [
      ...(await this.deps.store.nearDuplicates.candidates(fileId, lookup, MAX_CANDIDATES)),
      ...round.candidates(fileId, lookup),
    ];
    for (const candidate of candidates) {
      if (comparedByPage(pages, candidate.pages)) {
        const pair = await this.pagePair(entry.fileId, own, candidate, texts, at);
        if (pair) pairs.push(pair);
        continue;
      }
      // Texts first: a page read well is compared on what it says, whatever it looks like. Two
      // scans with little text (photographs with the same caption) are compared on their images alone.
      const ownUnits = 'skipped' in own ? 0 : own.fingerprint.units;
      const imagesDecide =
        littleTextScan(ownUnits, pages, settings) && littleTextScan(candidate.units, candidate.pages, settings);
      if (!('skipped' in own) && !candidate.skipped && !imagesDecide) {
        const other = await this.deps.store.catalog.get(candidate.fileId);
        const theirs = other && (await this.textOf(other, texts));
        if (theirs && !('skipped' in theirs)) {
          const method = nearDuplicateMethod(own.fingerprint, theirs.fingerprint, settings);
          if (method) {
            pairs.push(pairOf(entry.fileId, own, candidate.fileId, theirs, method, at));
            continue;
          }
        }
      }
      const hamming = closestPages(pages, candidate.pages, settings);
      if (hamming !== null) pairs.push(imagePairOf(entry.fileId, candidate.fileId, hamming, at));
    }
    round.add(
      'skipped' in own
        ? { fileId, format: null, skipped: own.skipped, units: 0, short: true, simhash: null, keys, pages, at }
        : {
            fileId,
            format: own.format,
            skipped: null,
            units: own.fingerprint.units,
            short: own.fingerprint.short,
            simhash: own.fingerprint.short ? null : own.fingerprint.simhash,
            keys,
            pages,
            at,
          },
      pairs,
    );
  }

  /**
   * Two scans, one of several pages: one pair for the two documents (document-pairs.ts), with
   * their matching pages, whether their whole texts agree (the rule of any two files) or only
   * some of their pages do.
   */
  private async pagePair(
    fileId: string,
    own: Read,
    candidate: NearFingerprint,
    texts: Map<string, Read>,
    at: Date,
  ): Promise<NearDuplicatePair | null> {
    const { settings } = this.deps.fingerprinter;
    const other = candidate.skipped ? undefined : await this.deps.store.catalog.get(candidate.fileId);
    const theirs = other && (await this.textOf(other, texts));
    const theirPages = theirs ? theirs.pageImages : candidate.pages;
    const ownUnits = 'skipped' in own ? 0 : own.fingerprint.units;
    const imagesDecide =
      littleTextScan(ownUnits, own.pageImages, settings) && littleTextScan(candidate.units, theirPages, settings);
    let whole: NearDuplicatePair | null = null;
    if (!imagesDecide && !('skipped' in own) && theirs && !('skipped' in theirs)) {
      const method = nearDuplicateMethod(own.fingerprint, theirs.fingerprint, settings);
      if (method) whole = pairOf(fileId, own, candidate.fileId, theirs, method, at);
    }
    const matches = matchingPages(scanPages(own.pageImages, own), scanPages(theirPages, theirs), settings);
    return documentPair(
      fileId,
      candidate.fileId,
      { a: own.pageImages.length, b: theirPages.length },
      matches,
      whole,
      at,
    );
  }

  /** A file's text and fingerprint, read from the store (kept for the jobs of one round). */
  private async textOf(entry: CatalogEntry, texts: Map<string, Read>): Promise<Read> {
    const cached = texts.get(entry.fileId) ?? this.recognised.get(entry.fileId);
    if (cached) return cached;
    let read: Read;
    if (entry.length > EXTRACTABLE_MAX_BYTES)
      read = { skipped: `larger than ${EXTRACTABLE_MAX_BYTES / 1024 / 1024} MiB`, pageImages: [] };
    else {
      // Into a buffer of its own, which a reading thread can take over without a copy.
      const bytes = new Uint8Array(entry.length);
      let at = 0;
      for await (const part of this.deps.store.content.read(entry)) {
        bytes.set(part as Uint8Array, at);
        at += (part as Uint8Array).byteLength;
      }
      const file = { name: entry.fileName, contentType: entry.contentType };
      read = await this.reader.read(at === bytes.byteLength ? bytes : bytes.subarray(0, at), file, this.betweenPages);
      if (!('skipped' in read) && read.recognised) this.recognised.set(entry.fileId, read);
    }
    texts.set(entry.fileId, read);
    return read;
  }
}

/** What one round of jobs found, recorded at its end; its files are candidates of each other meanwhile. */
class Round {
  readonly fingerprints: NearFingerprint[] = [];
  readonly pairs: NearDuplicatePair[] = [];
  /** The texts of the round's own files (not of their candidates). */
  readonly texts: Array<{ fileId: string; text: string; terms: string[] }> = [];
  private readonly byKey = new Map<number, NearFingerprint[]>();

  add(fingerprint: NearFingerprint, pairs: NearDuplicatePair[]): void {
    // A file queued twice (a rebuild while it waited) counts once.
    if (this.fingerprints.some((f) => f.fileId === fingerprint.fileId)) return;
    this.fingerprints.push(fingerprint);
    this.pairs.push(...pairs);
    for (const key of fingerprint.keys) this.byKey.set(key, [...(this.byKey.get(key) ?? []), fingerprint]);
  }

  read(fileId: string, text: string, terms: string[]): void {
    if (!this.texts.some((t) => t.fileId === fileId)) this.texts.push({ fileId, text, terms });
  }

  candidates(fileId: string, keys: readonly number[]): NearFingerprint[] {
    const found = new Map<string, NearFingerprint>();
    for (const key of keys) for (const f of this.byKey.get(key) ?? []) if (f.fileId !== fileId) found.set(f.fileId, f);
    return [...found.values()];
  }
}

function pairOf(
  idA: string,
  a: Compared,
  idB: string,
  b: Compared,
  method: NearDuplicateMethod,
  foundAt: Date,
): NearDuplicatePair {
  const [first, second, firstId, secondId] = idA < idB ? [a, b, idA, idB] : [b, a, idB, idA];
  const s = similarity(first.fingerprint, second.fingerprint);
  const short = first.fingerprint.short || second.fingerprint.short;
  const [snippetA, snippetB] = differences(first.text, second.text);
  return {
    fileA: firstId,
    fileB: secondId,
    method,
    hamming: short ? null : s.hamming,
    jaccard: round(s.jaccard),
    containment: round(s.containment),
    snippetA,
    snippetB,
    foundAt,
  };
}

/**
 * The distance of the closest two pages, one of each file, paired on their images (both with
 * little text, within maxImageHamming bits, their ink in the same place on the page), or null
 * when no two are.
 */
export function closestPages(
  a: readonly PageFingerprint[],
  b: readonly PageFingerprint[],
  settings: NearDuplicateSettings,
): number | null {
  let closest: number | null = null;
  for (const p of imagePages(a, settings))
    for (const q of imagePages(b, settings)) {
      const d = imageDistance(p, q, settings);
      if (d !== null && (closest === null || d < closest)) closest = d;
    }
  return closest;
}

/**
 * A scan whose whole text is little (under imageMaxUnits units, or none): two such are paired on
 * their pages' images alone, since a few words (a caption, a date) say little about the page.
 */
export function littleTextScan(
  units: number,
  pages: readonly PageFingerprint[],
  settings: NearDuplicateSettings,
): boolean {
  return pages.length > 0 && units < settings.imageMaxUnits;
}

/** Two files with a page that looks the same (the texts, too little to compare, play no part). */
function imagePairOf(idA: string, idB: string, hamming: number, foundAt: Date): NearDuplicatePair {
  const [fileA, fileB] = idA < idB ? [idA, idB] : [idB, idA];
  return { fileA, fileB, method: 'image', hamming, jaccard: 0, containment: 0, snippetA: '', snippetB: '', foundAt };
}

/** A read given up because the service is stopping (through a reading thread it is a message, hence the fixed one). */
class Stopping extends Error {
  static readonly MESSAGE = 'near-duplicate detection is stopping';
  constructor() {
    super(Stopping.MESSAGE);
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000;

const sameSettings = (a: NearDuplicateSettings, b: NearDuplicateSettings) =>
  (Object.keys(DEFAULT_SETTINGS) as Array<keyof NearDuplicateSettings>).every((key) => a[key] === b[key]);
