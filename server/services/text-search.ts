import { cleanFileName } from '../../shared/file-name.js';
import type { FileTextHit, FileTextSearch, FileTextSearchQuery } from '../../shared/schemas.js';
import type { Logger } from '../log.js';
import type { Account } from '../store/accounts/port.js';
import type { ArchiveStore } from '../store/archive-store.js';
import type { ViewScope } from '../store/ledger/port.js';
import { MAX_INDEXED_CHARACTERS, type SearchTerms, snippetOf } from './search-terms.js';
import type { Principal } from './sessions.js';
import type { UnitDirectory } from './unit-directory.js';

/** The job record saying the texts of files stored before search existed were queued to be read. */
const BACKFILL_RECORD = 'file-text-backfill';
const LEASE_MS = 10 * 60_000;

/**
 * Search by content: the caller's files (a clerk's unit's, an administrator's reach's, the whole
 * archive for the top level) whose text holds every word of the query, each with a snippet of its
 * text where the words are. The store applies the view itself, so the text of a file outside it,
 * or the fact that such a file matches, never reaches this service.
 */
export class TextSearchService {
  constructor(
    private readonly store: Pick<ArchiveStore, 'fileTexts' | 'catalog' | 'ledger'>,
    private readonly directory: Pick<UnitDirectory, 'reachSubtree'>,
    private readonly terms: SearchTerms,
  ) {}

  async search(principal: Principal, query: FileTextSearchQuery): Promise<FileTextSearch> {
    const { account } = principal;
    const terms = await this.terms.ofQuery(query.q);
    const page = { limit: query.limit, offset: query.offset, terms };
    const scope = await this.viewOf(account);
    if (terms.length === 0 || scope === null) return { items: [], more: false, ...page };
    const found = await this.store.fileTexts.search({ terms, scope, limit: query.limit, offset: query.offset });
    // The page's names looked up together: on MongoDB each is a round trip or two.
    const shown = await Promise.all(found.hits.map((hit) => this.shownAs(hit.fileId, scope)));
    const items: FileTextHit[] = [];
    found.hits.forEach((hit, i) => {
      if (shown[i]) items.push({ ...shown[i], fileId: hit.fileId, snippet: snippetOf(hit.text, terms) });
    });
    return { items, more: found.more, ...page };
  }

  /** Which files a caller sees: its unit's (a clerk), its reach's, all (undefined), or none (null). */
  private async viewOf(account: Account): Promise<ViewScope | undefined | null> {
    if (account.role !== 'admin') return { unitId: account.unit.id };
    const subtree = await this.directory.reachSubtree(account);
    return subtree === undefined ? undefined : subtree === null ? null : { subtree };
  }

  /** A file's name and type as the view's list shows them (its latest upload there; the catalog's for the whole archive). */
  private async shownAs(
    fileId: string,
    scope: ViewScope | undefined,
  ): Promise<Omit<FileTextHit, 'fileId' | 'snippet'> | undefined> {
    const entry = await this.store.catalog.get(fileId);
    if (!entry) return undefined; // deleted since the search
    if (!scope) return { fileName: entry.fileName, contentType: entry.contentType, fileLength: entry.length };
    const upload = await this.store.ledger.latestUploadInScope(fileId, scope);
    if (!upload) return undefined; // withdrawn since the search
    return {
      fileName: cleanFileName(upload.lastUploadFileName),
      contentType: upload.lastContentType,
      fileLength: entry.length,
    };
  }
}

/** A file's text as its reading found it, with its search terms (cut where it was read). */
export interface ReadText {
  fileId: string;
  text: string;
  terms: string[];
}

/**
 * Puts the texts read in the background (near-duplicate detection reads every stored file's text,
 * or recognises it in an image) into the search index, and queues once the files stored before
 * search existed, so that their texts are read too.
 */
export class TextIndexing {
  constructor(
    private readonly deps: {
      store: Pick<ArchiveStore, 'fileTexts' | 'catalog' | 'fingerprintQueue' | 'jobs'>;
      holder: string;
      clock?: () => Date;
      logger?: Pick<Logger, 'info'>;
    },
  ) {}

  private now(): Date {
    return this.deps.clock?.() ?? new Date();
  }

  async index(texts: readonly ReadText[]): Promise<void> {
    if (texts.length === 0) return;
    const entries = [];
    for (const { fileId, text, terms } of texts)
      entries.push({ fileId, text: text.slice(0, MAX_INDEXED_CHARACTERS), terms });
    await this.deps.store.fileTexts.put(entries);
  }

  /**
   * Queues, once for the archive (by one instance, under a lease), the catalogued files whose text
   * the index lacks, to be read by the background queue; returns how many.
   */
  async backfill(): Promise<number> {
    const { jobs, catalog, fileTexts, fingerprintQueue } = this.deps.store;
    if ((await jobs.get(BACKFILL_RECORD))?.state) return 0;
    if (!(await jobs.acquire(BACKFILL_RECORD, this.deps.holder, this.now(), LEASE_MS))) return 0;
    const done = (await jobs.get(BACKFILL_RECORD))?.state; // read again under the lease: another instance may have done it
    if (done) {
      await jobs.release(BACKFILL_RECORD, this.deps.holder, done);
      return 0;
    }
    let queued = 0;
    for (let after: string | undefined; ;) {
      const page = await catalog.scan(after, 1000);
      if (page.length === 0) break;
      const missing = [];
      for (const entry of page) if (!(await fileTexts.has(entry.fileId))) missing.push(entry.fileId);
      await fingerprintQueue.enqueue(missing, this.now());
      queued += missing.length;
      after = page[page.length - 1]!.fileId;
    }
    if (queued > 0) this.deps.logger?.info({ queued }, 'files stored before search by content are queued to be read');
    await jobs.release(BACKFILL_RECORD, this.deps.holder, { queuedAt: this.now().toISOString(), queued });
    return queued;
  }
}
