import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { AccountView } from '../../../shared/schemas.js';
import type { ArchiveApi } from '../api.js';
import { Hasher } from '../hashing/hasher.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { filesFromDrop, filesFromInput, type ChosenFile } from '../upload/chosen-files.js';
import { byCodePoints, FolderUpload, type UploadItem } from '../upload/folder-upload.js';
import { tusSender } from '../upload/large-upload.js';
import { reasonText } from '../upload/outcome-text.js';
import { ProgressAnnouncer } from '../upload/progress-announcement.js';
import { ResumeIndex } from '../upload/resume-index.js';
import { IndexedDbJournal } from '../upload/indexeddb-journal.js';
import { MemoryJournal, type UploadJournal } from '../upload/upload-journal.js';
import { BodyLiveRegion } from './controls.js';
import { formatBytes, formatCount } from './format.js';
import { VirtualList } from './virtual-list.js';

type Filter = 'all' | 'instant' | 'stored' | 'failed' | 'unfinished';
const FILTERS: readonly Filter[] = ['all', 'instant', 'stored', 'failed', 'unfinished'];
/** The list re-renders at most this often, whatever the number of files. */
const RENDER_INTERVAL_MS = 250;
const ROW_HEIGHT = 34;
/** Hashing workers: one per core, up to four (each also runs an MD5 worker for large files). */
const HASH_WORKERS = Math.max(1, Math.min(4, navigator.hardwareConcurrency || 2));

type Row =
  | { kind: 'folder'; folder: string; total: number; finished: number; failed: number }
  | { kind: 'file'; item: UploadItem };

function kindOf(item: UploadItem): Exclude<Filter, 'all'> {
  if (item.outcome?.kind === 'failed') return 'failed';
  if (item.outcome?.kind === 'instant') return 'instant';
  if (item.outcome) return 'stored';
  return 'unfinished';
}

/** Finished (in any way) first? No: failures first, then what is moving, then the rest in path order. */
function rank(item: UploadItem): number {
  if (item.phase === 'failed') return 0;
  if (!item.outcome && item.phase !== 'waiting') return 1;
  return 2;
}

function failureText(language: Language, item: UploadItem): string {
  return item.outcome?.kind === 'failed' ? reasonText(language, item.outcome.code, item.outcome.message) : '';
}

function statusText(language: Language, item: UploadItem): string {
  const t = translator(language);
  const outcome = item.outcome;
  if (outcome) {
    switch (outcome.kind) {
      case 'instant':
        return t('statusInstant', { count: outcome.uploadCount });
      case 'stored':
        return t('statusStored');
      case 'duplicate':
        return t('statusDuplicate', { count: outcome.uploadCount });
      case 'failed':
        return t('statusFailed', { reason: failureText(language, item) });
    }
  }
  const percent = item.size > 0 ? ` ${Math.floor((100 * item.progress) / item.size)}%` : '';
  switch (item.phase) {
    case 'hashing':
      return item.progress > 0 ? `${t('hashing')}${percent}` : t('hashing');
    case 'twin':
      return t('waitingForTwin');
    case 'checking':
      return t('checking');
    case 'proving':
      return t('proving');
    case 'sending':
      return item.progress > 0 ? `${t('sending')}${percent}` : t('sending');
    default:
      return item.file ? t('waiting') : t('needsFile');
  }
}

function journalFor(accountId: string): UploadJournal {
  return typeof indexedDB === 'undefined' ? new MemoryJournal() : new IndexedDbJournal(accountId);
}

export function UploadPage({
  api,
  language,
  account,
  maxFileSize,
  hidden,
}: {
  api: ArchiveApi;
  language: Language;
  account: AccountView;
  maxFileSize: number;
  hidden: boolean;
}) {
  const t = translator(language);
  const [, setVersion] = useState(0);
  const [filter, setFilter] = useState<Filter>('all');
  const [restoredUnfinished, setRestoredUnfinished] = useState(0);
  const [dragging, setDragging] = useState(false);
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(() => new Set());
  const folderInput = useRef<HTMLInputElement>(null);
  const fileInput = useRef<HTMLInputElement>(null);

  const upload = useMemo(() => {
    const hasher = new Hasher(HASH_WORKERS);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const instance = new FolderUpload({
      api,
      hasher,
      // Per account: another clerk on this browser never sees or continues these files.
      journal: journalFor(account.id),
      sendLarge: tusSender(() => api.csrfToken, new ResumeIndex(account.id)),
      maxFileSize,
      saveReceipt: (id, receipt) => api.putReceipt(id, receipt),
      onChange: () => {
        timer ??= setTimeout(() => {
          timer = undefined;
          setVersion((v) => v + 1);
        }, RENDER_INTERVAL_MS);
      },
    });
    return Object.assign(instance, {
      dispose: () => {
        clearTimeout(timer);
        hasher.dispose();
      },
    });
  }, [account.id]);

  const announcer = useMemo(() => new ProgressAnnouncer(), [upload]);

  useEffect(() => {
    void upload.restore().then(() => setRestoredUnfinished(upload.items.filter((i) => !i.outcome).length));
    const leave = () => void upload.flush();
    addEventListener('pagehide', leave);
    return () => {
      removeEventListener('pagehide', leave);
      void upload.flush();
      upload.pause();
      upload.dispose();
    };
  }, [upload]);

  const add = (files: ChosenFile[]) => {
    if (files.length === 0) return;
    setRestoredUnfinished(0);
    // Files dropped while a list is under way, or has files not finished (after a reload), join it
    // (the same folder continues); after a list that ended, failures included, a new one starts
    // (the ended one stays as its receipt).
    const ended = !upload.active && upload.items.length > 0 && upload.items.every((i) => i.outcome);
    // Asked for once the ended list is gone, so its summary is not taken for the new one's.
    const start = () => {
      announcer.began();
      return upload.add(files);
    };
    if (ended) void upload.clear().then(start);
    else void start();
  };

  const items = upload.items;
  const counts = { instant: 0, stored: 0, failed: 0, unfinished: 0 };
  const folders = new Map<string, { total: number; finished: number; failed: number; items: UploadItem[] }>();
  for (const item of items) {
    counts[kindOf(item)]++;
    let folder = folders.get(item.folder);
    if (!folder) folders.set(item.folder, (folder = { total: 0, finished: 0, failed: 0, items: [] }));
    folder.total++;
    if (item.outcome) folder.finished++;
    if (item.outcome?.kind === 'failed') folder.failed++;
    if (filter === 'all' || kindOf(item) === filter) folder.items.push(item);
  }
  const total = items.length;
  const finished = counts.instant + counts.stored + counts.failed;
  const retryable = items.filter((i) => i.outcome?.kind === 'failed' && i.outcome.retry && i.file).length;
  const rows: Row[] = [];
  const byFolder = [...folders].sort(([a], [b]) => byCodePoints(a, b));
  for (const [folder, group] of byFolder) {
    if (group.items.length === 0) continue;
    if (byFolder.length > 1 || folder !== '') rows.push({ kind: 'folder', folder, ...group });
    if (collapsed.has(folder)) continue;
    group.items.sort((a, b) => rank(a) - rank(b) || byCodePoints(a.path, b.path));
    for (const item of group.items) rows.push({ kind: 'file', item });
  }

  const n = (value: number) => formatCount(language, value);
  const announcement = announcer.say(
    { active: upload.active, total, finished },
    {
      start: (all) => t('announceStart', { count: n(all) }),
      progress: (done, all) => t('progressAll', { done: n(done), total: n(all) }),
      end: () => t('announceEnd', { instant: n(counts.instant), stored: n(counts.stored), failed: n(counts.failed) }),
    },
    Date.now(),
  );

  const toggle = (folder: string) => {
    const next = new Set(collapsed);
    if (next.has(folder)) next.delete(folder);
    else next.add(folder);
    setCollapsed(next);
  };

  const filterLabel = (f: Filter) =>
    t(
      f === 'all'
        ? 'filterAll'
        : f === 'instant'
          ? 'filterInstant'
          : f === 'stored'
            ? 'filterStored'
            : f === 'failed'
              ? 'filterFailed'
              : 'filterUnfinished',
    );

  return (
    <main class="page" hidden={hidden} aria-labelledby="upload-title">
      <h1 id="upload-title">{t('uploadTitle')}</h1>
      <p class="hint">{t('uploadHint')}</p>
      <div
        class={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          event.preventDefault();
          setDragging(false);
          if (event.dataTransfer) void filesFromDrop(event.dataTransfer).then(add);
        }}
      >
        <p class="drop-text">{t('dropHere')}</p>
        <div class="drop-actions">
          <button type="button" onClick={() => folderInput.current?.click()}>
            {t('chooseFolder')}
          </button>
          <button type="button" class="secondary" onClick={() => fileInput.current?.click()}>
            {t('chooseFiles')}
          </button>
        </div>
        <p class="drop-limit">{t('sizeLimit', { limit: formatBytes(maxFileSize) })}</p>
        <input
          ref={folderInput}
          type="file"
          multiple
          hidden
          {...{ webkitdirectory: true }}
          aria-label={t('chooseFolder')}
          onChange={(event) => {
            const input = event.currentTarget;
            add(filesFromInput(input.files));
            input.value = '';
          }}
        />
        <input
          ref={fileInput}
          type="file"
          multiple
          hidden
          aria-label={t('chooseFiles')}
          onChange={(event) => {
            const input = event.currentTarget;
            add(filesFromInput(input.files));
            input.value = '';
          }}
        />
      </div>
      {/* The one live region for the list's progress (the summary above changes four times a second),
          outside this page, so a clerk reading another page still hears how the upload goes. */}
      <BodyLiveRegion text={announcement} />
      {restoredUnfinished > 0 && (
        <p class="notice" role="status">
          {t('unfinishedBanner', { count: formatCount(language, restoredUnfinished) })}
        </p>
      )}
      <section aria-labelledby="results-title" class="results" hidden={total === 0}>
        <h2 id="results-title">{t('resultsTitle')}</h2>
        <p
          class="summary"
          data-total={total}
          data-instant={counts.instant}
          data-stored={counts.stored}
          data-failed={counts.failed}
        >
          {t('progressAll', { done: formatCount(language, finished), total: formatCount(language, total) })}
          {t('summarySeparator')}
          {t('summary', {
            total: formatCount(language, total),
            instant: formatCount(language, counts.instant),
            stored: formatCount(language, counts.stored),
            failed: formatCount(language, counts.failed),
            active: formatCount(language, counts.unfinished),
          })}
        </p>
        <progress class="overall" max={Math.max(1, total)} value={finished} aria-label={t('resultsTitle')} />
        <div class="upload-actions">
          {upload.active &&
            (upload.paused ? (
              <button type="button" onClick={() => upload.resume()}>
                {t('resumeAll')}
              </button>
            ) : (
              <button type="button" class="secondary" onClick={() => upload.pause()}>
                {t('pauseAll')}
              </button>
            ))}
          {retryable > 0 && !upload.paused && (
            <button
              type="button"
              onClick={() => {
                announcer.began();
                upload.retryFailed();
              }}
            >
              {t('retryFailed', { count: formatCount(language, retryable) })}
            </button>
          )}
          {/* Only a list that ended may be cleared: an unfinished one holds the keys that keep its files from counting twice. */}
          {!upload.active && total > 0 && counts.unfinished === 0 && (
            <button
              type="button"
              class="secondary"
              onClick={() => void upload.clear().then(() => setRestoredUnfinished(0))}
            >
              {t('clearList')}
            </button>
          )}
        </div>
        {upload.receipt.kind === 'saved' && (
          <p class="receipt-link">
            <a href={`#/receipts/${upload.receipt.id}`}>{t('receiptView')}</a>
          </p>
        )}
        {upload.receipt.kind === 'saving' && <p class="hint">{t('receiptSaving')}</p>}
        {upload.receipt.kind === 'failed' && (
          <p class="error">
            {t('receiptFailed', { reason: describeError(language, upload.receipt.error) })}{' '}
            <button type="button" class="secondary small" onClick={() => upload.saveReceipt()}>
              {t('receiptSaveAgain')}
            </button>
          </p>
        )}
        <div class="filters" role="group" aria-label={t('resultsTitle')}>
          {FILTERS.map((f) => (
            <button type="button" aria-pressed={filter === f} onClick={() => setFilter(f)}>
              {filterLabel(f)}
              {f !== 'all' && ` (${formatCount(language, counts[f])})`}
            </button>
          ))}
        </div>
        <VirtualList
          key={filter}
          class="outcomes"
          label={t('resultsTitle')}
          count={rows.length}
          rowHeight={ROW_HEIGHT}
          maxHeight={ROW_HEIGHT * 14}
          row={(index) => {
            const row = rows[index]!;
            if (row.kind === 'folder')
              return (
                <li class="folder" key={`folder:${row.folder}`} data-folder={row.folder}>
                  <button
                    type="button"
                    class="link"
                    aria-expanded={!collapsed.has(row.folder)}
                    onClick={() => toggle(row.folder)}
                  >
                    {row.folder || t('looseFiles')}
                  </button>
                  <span class="count">
                    {formatCount(language, row.finished)} / {formatCount(language, row.total)}
                    {row.failed > 0 && ` · ${t('folderFailed', { count: formatCount(language, row.failed) })}`}
                  </span>
                </li>
              );
            const { item } = row;
            const name = item.folder ? item.path.slice(item.folder.length + 1) : item.path;
            return (
              <li
                key={item.path}
                data-name={item.path}
                data-status={item.outcome?.kind ?? item.phase}
                title={item.path}
              >
                <span class="name">{name}</span>
                <span class="size">{formatBytes(item.size)}</span>
                <span class="status" title={statusText(language, item)}>
                  {statusText(language, item)}
                </span>
              </li>
            );
          }}
        />
      </section>
    </main>
  );
}
