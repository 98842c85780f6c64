import Uppy from '@uppy/core';
import Dashboard from '@uppy/dashboard';
import enUS from '@uppy/locales/lib/en_US.js';
import zhCN from '@uppy/locales/lib/zh_CN.js';
import '@uppy/core/css/style.min.css';
import '@uppy/dashboard/css/style.min.css';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { AccountView } from '../../../shared/schemas.js';
import { TUS_ENDPOINT } from '../../../shared/schemas.js';
import type { ArchiveApi } from '../api.js';
import { Hasher } from '../hashing/hasher.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { ArchiveUploader, HashReadError } from '../upload/archive-uploader.js';
import type { ArchiveBody, ArchiveFile, ArchiveMeta, Outcome } from '../upload/archive-uploader.js';
import { ResumeIndex } from '../upload/resume-index.js';
import { useGoldenRetriever } from '../upload/restore.js';

interface Row {
  id: string;
  name: string;
  outcome: Outcome;
}

type Filter = 'all' | 'instant' | 'stored' | 'failed';
const ROWS_PER_PAGE = 100;
/** Uploads in parallel: a few keep the line busy without starving the hashing of the next file. */
const PARALLEL_UPLOADS = 3;

function outcomeText(language: Language, outcome: Outcome): string {
  const t = translator(language);
  switch (outcome.kind) {
    case 'instant':
      return t('statusInstant', { count: outcome.uploadCount });
    case 'stored':
      return t('statusStored');
    case 'duplicate':
      return t('statusDuplicate', { count: outcome.uploadCount });
    case 'failed':
      return t('statusFailed', {
        reason: outcome.error instanceof HashReadError ? t('hashFailed') : describeError(language, outcome.error),
      });
  }
}

const uppyLocale = (language: Language) => (language === 'zh-CN' ? zhCN : enUS);

function matches(filter: Filter, outcome: Outcome): boolean {
  if (filter === 'all') return true;
  if (filter === 'stored') return outcome.kind === 'stored' || outcome.kind === 'duplicate';
  return outcome.kind === filter;
}

export function UploadPage({
  api,
  language,
  account,
  hidden,
}: {
  api: ArchiveApi;
  language: Language;
  account: AccountView;
  hidden: boolean;
}) {
  const t = translator(language);
  const target = useRef<HTMLDivElement>(null);
  const languageRef = useRef(language);
  languageRef.current = language;
  const [rows, setRows] = useState<Map<string, Row>>(() => new Map());
  const [counts, setCounts] = useState({ total: 0, active: 0 });
  const [filter, setFilter] = useState<Filter>('all');
  const [page, setPage] = useState(0);

  const uppy = useMemo(() => {
    const hasher = new Hasher(1);
    // Per account: another clerk on this browser never sees or resumes these files.
    const instance = new Uppy<ArchiveMeta, ArchiveBody>({
      id: `archive-${account.id}`,
      autoProceed: true,
      locale: uppyLocale(language),
    });
    let pending = new Map<string, Row | null>();
    let scheduled = false;
    // A thousand-file batch changes in bursts: render the results and counts once per frame.
    const flush = () => {
      scheduled = false;
      const batch = pending;
      pending = new Map();
      setRows((previous) => {
        const next = new Map(previous);
        for (const [id, row] of batch) {
          if (row) next.set(id, row);
          else next.delete(id);
        }
        return next;
      });
      const files = instance.getFiles();
      setCounts({ total: files.length, active: files.filter((f) => !f.progress.uploadComplete && !f.error).length });
    };
    const schedule = () => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(flush);
    };
    instance.use(ArchiveUploader, {
      api,
      hasher,
      resumeIndex: new ResumeIndex(account.id),
      label: (key) => translator(languageRef.current)(key),
      onOutcome: (file: ArchiveFile, outcome: Outcome) => {
        if (outcome.kind === 'failed') {
          // In the clerk's language, where Uppy would show the library's English text.
          const text = outcomeText(languageRef.current, outcome);
          instance.setFileState(file.id, { error: text });
          instance.info(
            { message: instance.i18n('failedToUpload', { file: file.name ?? '' }), details: text },
            'error',
            8000,
          );
        }
        pending.set(file.id, {
          id: file.id,
          name: file.meta.relativePath || file.name || '',
          outcome,
        });
        schedule();
      },
      tus: {
        endpoint: TUS_ENDPOINT,
        limit: PARALLEL_UPLOADS,
        headers: (): Record<string, string> => (api.csrfToken ? { 'X-CSRF-Token': api.csrfToken } : {}),
        allowedMetaFields: ['name', 'type', 'md5', 'sha256', 'idempotencyKey'],
        // The archive's own resume index (per account, by content) does this; tus-js-client's
        // would keep file names and hashes in storage shared by every account on this browser.
        storeFingerprintForResuming: false,
        // Longer than a crashed server instance's upload lock (a 30 s lease) lasts, so an upload
        // cut off by a crash resumes on another instance instead of failing (tus-js-client retries
        // on network errors, 409 and 423).
        retryDelays: [0, 1000, 3000, 5000, 10000, 15000, 20000, 30000],
      },
    });
    const stopRestoring = useGoldenRetriever(instance);
    const forget = (ids: string[]) => {
      for (const id of ids) pending.set(id, null);
      schedule();
    };
    instance.on('files-added', schedule);
    instance.on('restored', schedule);
    instance.on('upload-success', schedule);
    instance.on('file-removed', (file) => forget([file.id]));
    instance.on('upload-retry', (file) => file && forget([file.id]));
    instance.on('retry-all', (files) => forget(files.map((f) => f.id)));
    return Object.assign(instance, { hasher, stopRestoring });
  }, [account.id]);

  useEffect(() => {
    uppy.use(Dashboard, {
      inline: true,
      target: target.current!,
      width: '100%',
      height: 460,
      showProgressDetails: true,
      proudlyDisplayPoweredByUppy: false,
      fileManagerSelectionType: 'both',
      showRemoveButtonAfterComplete: false,
      // Files start on their own (autoProceed); a start button next to the fingerprinting progress only confuses.
      hideUploadButton: true,
      hideProgressDetails: false,
      theme: 'light',
    } as never);
    return () => {
      uppy.stopRestoring();
      uppy.destroy();
      uppy.hasher.dispose();
    };
  }, [uppy]);

  useEffect(() => {
    uppy.setOptions({ locale: uppyLocale(language) });
  }, [language, uppy]);

  const all = [...rows.values()];
  const ended = {
    instant: all.filter((r) => r.outcome.kind === 'instant').length,
    stored: all.filter((r) => r.outcome.kind === 'stored' || r.outcome.kind === 'duplicate').length,
    failed: all.filter((r) => r.outcome.kind === 'failed').length,
  };
  const shown = all.filter((r) => matches(filter, r.outcome));
  const pages = Math.max(1, Math.ceil(shown.length / ROWS_PER_PAGE));
  const current = Math.min(page, pages - 1);

  return (
    <main class="page" hidden={hidden} aria-labelledby="upload-title">
      <h1 id="upload-title">{t('uploadTitle')}</h1>
      <p class="hint">{t('uploadHint')}</p>
      <div ref={target} class="dashboard" />
      <section aria-labelledby="results-title" class="results">
        <h2 id="results-title">{t('resultsTitle')}</h2>
        <p class="summary" data-instant={ended.instant} data-stored={ended.stored} data-failed={ended.failed}>
          {t('summary', { total: counts.total, ...ended, active: counts.active })}
        </p>
        <div class="filters" role="group" aria-label={t('resultsTitle')}>
          {(['all', 'instant', 'stored', 'failed'] as const).map((f) => (
            <button type="button" aria-pressed={filter === f} onClick={() => (setFilter(f), setPage(0))}>
              {t(
                f === 'all'
                  ? 'filterAll'
                  : f === 'instant'
                    ? 'filterInstant'
                    : f === 'stored'
                      ? 'filterStored'
                      : 'filterFailed',
              )}
            </button>
          ))}
        </div>
        <ul class="outcomes">
          {shown.slice(current * ROWS_PER_PAGE, (current + 1) * ROWS_PER_PAGE).map((row) => (
            <li key={row.id} data-status={row.outcome.kind} data-name={row.name}>
              <span class="name">{row.name}</span>
              <span class="status">{outcomeText(language, row.outcome)}</span>
            </li>
          ))}
        </ul>
        {pages > 1 && (
          <nav class="pager" aria-label={t('pageOf', { page: current + 1, pages })}>
            <button type="button" disabled={current === 0} onClick={() => setPage(current - 1)}>
              {t('previousPage')}
            </button>
            <span>{t('pageOf', { page: current + 1, pages })}</span>
            <button type="button" disabled={current >= pages - 1} onClick={() => setPage(current + 1)}>
              {t('nextPage')}
            </button>
          </nav>
        )}
      </section>
    </main>
  );
}
