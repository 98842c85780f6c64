import { useState } from 'preact/hooks';
import {
  nearDuplicateKind,
  similarityOf,
  type NearDuplicateFile,
  type NearDuplicateRow,
  type NearDuplicatesReport,
} from '../../../../shared/reports.js';
import type { ArchiveApi } from '../../api.js';
import { describeError, translator, type Language } from '../../i18n/index.js';
import { withParams } from '../../route.js';
import { FileLink, Technical } from '../controls.js';
import { pageUrl } from '../file-preview.js';
import { drawable } from '../../../../shared/file-types.js';
import { formText } from '../form-text.js';
import { formatBytes, formatCount, formatTime, unitPlace } from '../format.js';
import { ReportFilters } from './filters.js';
import { textDifferences, type DiffPart } from './text-diff.js';
import type { Column } from '../table/data-table.js';
import { useReport } from './use-report.js';
import { ReportSection, Switch, useView, type TabProps } from './view.js';

const STATUSES = ['open', 'reviewed', 'all'] as const;
type Status = (typeof STATUSES)[number];
const STATUS_LABEL = { open: 'pairsOpen', reviewed: 'pairsReviewed', all: 'pairsAll' } as const;
type Review = NearDuplicateRow['review'];

const percent = (x: number) => `${Math.round(x * 100)}%`;

const METHOD_LABEL = {
  simhash: 'methodSimhash',
  jaccard: 'methodJaccard',
  containment: 'methodContainment',
  image: 'methodImage',
} as const;
/** Scans a browser shows as they are (a TIFF it does not). */

/** Pairs of documents found nearly the same; each row shows, below it, where the two texts differ. */
export function NearDuplicatesTab({ api, language, params, show, units }: TabProps) {
  const t = translator(language);
  const view = useView('near-duplicates', { language, params, show, units });
  const loaded = useReport<NearDuplicatesReport>(api, 'near-duplicates', view.query);
  const n = (value: number) => formatCount(language, value);
  const status = loaded.data?.status;
  const shown = (STATUSES as readonly string[]).includes(params.get('status') ?? '')
    ? (params.get('status') as Status)
    : 'open';
  // Reviews given or taken back on this page, shown at once (the list is read again on the next view).
  const [reviews, setReviews] = useState<Record<string, Review>>({});
  const keyOf = (row: NearDuplicateRow) => `${row.a.fileId}:${row.b.fileId}`;

  const document = (f: NearDuplicateFile) => (
    <div class="near-file">
      <FileLink fileId={f.fileId} fileName={f.fileName} contentType={f.contentType} />
      <span class="meta">
        {formatBytes(f.fileLength)} · {f.units.map(unitPlace).join(t('listSeparator'))}
      </span>
    </div>
  );
  // One figure for everyone; how it was found, in words, under 详情 (the algorithms and their
  // measures are in the tab's help text).
  const similarity = (row: NearDuplicateRow) => (
    <>
      {nearDuplicateKind(row) === 'rescan' && <span class="near-kind">{t('kindRescan')}</span>}
      {row.pages && <span class="near-kind">{t('kindPages')}</span>}
      {row.pages && (
        <span class="near-page-count">
          {t('pagesMatching', {
            matching: n(row.pages.matches.length),
            pagesA: n(row.pages.a),
            pagesB: n(row.pages.b),
          })}
        </span>
      )}
      {t('similarityValue', { percent: percent(similarityOf(row)) })}
      <Technical language={language}>{t(METHOD_LABEL[row.method])}</Technical>
    </>
  );

  const columns: Column<NearDuplicateRow>[] = [
    { label: t('colDocumentA'), cell: (row) => document(row.a) },
    { label: t('colDocumentB'), cell: (row) => document(row.b) },
    { label: t('colSimilarity'), sort: 'jaccard', cell: (row) => similarity(row) },
    { label: t('colFound'), sort: 'foundAt', cell: (row) => formatTime(language, row.foundAt) },
    {
      label: t('colHandled'),
      cell: (row) => {
        const key = keyOf(row);
        return (
          <PairReview
            api={api}
            language={language}
            row={row}
            review={key in reviews ? reviews[key]! : row.review}
            onChange={(review) => setReviews((all) => ({ ...all, [key]: review }))}
          />
        );
      },
    },
  ];

  const differences = (row: NearDuplicateRow) => {
    const kind = nearDuplicateKind(row);
    const pages =
      kind === 'pages' ? (
        <PageMatches row={row} language={language} />
      ) : (
        kind === 'rescan' && (
          // The same page scanned again: both first pages side by side, as the server draws them
          // (a JPEG, a TIFF or a scanned PDF alike).
          <div class="near-pages" role="group" aria-label={t('kindRescan')}>
            <ScanPage file={row.a} page={1} language={language} />
            <ScanPage file={row.b} page={1} language={language} />
          </div>
        )
      );
    if (row.method === 'image')
      return (
        <>
          {pages}
          <p class="hint">{t('imageNoText')}</p>
        </>
      );
    const [a, b] = textDifferences(row.a.snippet, row.b.snippet);
    const quote = (snippet: string, parts: DiffPart[]) => (
      <blockquote lang="zh">
        {snippet
          ? parts.map((part, i) => (part.differs ? <mark key={i}>{part.text}</mark> : part.text))
          : t('noDifference')}
      </blockquote>
    );
    return (
      <>
        {pages}
        <div class="near-diff" role="group" aria-label={t('differsIn')}>
          {quote(row.a.snippet, a)}
          {quote(row.b.snippet, b)}
          <p class="hint">{t('diffMarked')}</p>
        </div>
      </>
    );
  };

  return (
    <div class="report-tab" data-report="near-duplicates">
      <p class="hint">{t('nearDuplicatesHint')}</p>
      <Technical language={language}>{t('nearDuplicatesDetails')}</Technical>
      {status && (
        <p class="status" role="status">
          {t('nearDuplicatesStatus', {
            fingerprinted: n(status.fingerprinted),
            skipped: n(status.skipped),
            pairs: n(status.pairs),
            queued: n(status.queued),
            running: n(status.running),
            failed: n(status.failed),
          })}
        </p>
      )}
      {status && status.failures.length > 0 && (
        <div class="alarm" role="alert">
          <p>{t('nearDuplicatesFailed')}</p>
          <ul>
            {status.failures.map((f) => (
              <li key={f.fileId}>
                <span class="name">{f.fileName ?? f.fileId}</span>: {f.error}
              </li>
            ))}
          </ul>
        </div>
      )}
      <ReportFilters view={view} error={loaded.error} daysLabel={t('filterFoundDays')} />
      <Switch
        label={t('pairsStatus')}
        options={STATUSES.map((s) => [s, t(STATUS_LABEL[s])])}
        value={shown}
        onChange={(s) => show(withParams(params, { status: s === 'open' ? null : s, offset: null }))}
      />
      <ReportSection
        view={view}
        loaded={loaded}
        caption={t('tabNearDuplicates')}
        columns={columns}
        rowKey={(row) => `${row.a.fileId}:${row.b.fileId}`}
        detail={differences}
        empty={t('noNearDuplicates')}
      />
    </div>
  );
}

/**
 * A pair's handling: 已处理 with who, when and the note, and a way back; or a button that asks
 * for a note and marks it handled.
 */
function PairReview({
  api,
  language,
  row,
  review,
  onChange,
}: {
  api: ArchiveApi;
  language: Language;
  row: NearDuplicateRow;
  review: Review;
  onChange: (review: Review) => void;
}) {
  const t = translator(language);
  const [editing, setEditing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const act = async (work: () => Promise<Review>) => {
    setBusy(true);
    setError(null);
    try {
      onChange(await work());
      setEditing(false);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const problem = error !== null && (
    <p class="error" role="alert">
      {describeError(language, error)}
    </p>
  );
  if (review)
    return (
      <div class="pair-review" data-reviewed="true">
        <strong>{t('pairHandled')}</strong>
        <span class="meta">{t('pairHandledBy', { user: review.userName, time: formatTime(language, review.at) })}</span>
        {review.note && <p class="note">{review.note}</p>}
        <button
          type="button"
          class="secondary"
          disabled={busy}
          onClick={() => void act(async () => (await api.reopenPair(row.a.fileId, row.b.fileId), null))}
        >
          {t('pairReopen')}
        </button>
        {problem}
      </div>
    );
  if (!editing)
    return (
      <button type="button" class="secondary" onClick={() => setEditing(true)}>
        {t('pairMarkHandled')}
      </button>
    );
  const submit = (event: Event) => {
    event.preventDefault();
    const note = formText(new FormData(event.currentTarget as HTMLFormElement), 'note');
    void act(() => api.reviewPair(row.a.fileId, row.b.fileId, note));
  };
  return (
    <form class="pair-review" onSubmit={submit}>
      <label>
        <span>{t('pairNote')}</span>
        <textarea name="note" maxLength={500} rows={2} />
      </label>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {t('pairConfirm')}
        </button>
        <button type="button" class="secondary" onClick={() => setEditing(false)}>
          {t('cancel')}
        </button>
      </div>
      {problem}
    </form>
  );
}

/**
 * Two scans sharing pages, one row for the two documents: the matching pages listed (A's page ↔
 * B's, each with its similarity), and the chosen pair of pages (the first, until another is
 * picked) side by side.
 */
function PageMatches({ row, language }: { row: NearDuplicateRow; language: Language }) {
  const t = translator(language);
  const [chosen, choose] = useState(0);
  const matches = row.pages?.matches ?? [];
  // Matched on their whole texts but on no single page (paginated otherwise): the first pages.
  const shown = matches[chosen] ?? matches[0] ?? { a: 1, b: 1 };
  return (
    <>
      {matches.length > 0 && (
        <ol class="page-matches" aria-label={t('pageMatches')}>
          {matches.map((m, i) => (
            <li key={`${m.a}-${m.b}`}>
              <button type="button" class="secondary" aria-pressed={m === shown} onClick={() => choose(i)}>
                {t('pageMatch', { a: m.a, b: m.b, percent: percent(m.similarity) })}
              </button>
            </li>
          ))}
        </ol>
      )}
      <div class="near-pages" role="group" aria-label={t('kindPages')}>
        <ScanPage key={`a${shown.a}`} file={row.a} page={shown.a} numbered language={language} />
        <ScanPage key={`b${shown.b}`} file={row.b} page={shown.b} numbered language={language} />
      </div>
    </>
  );
}

/** A page of a scan as the server draws it, with its file's name, units and date (and its page number). */
function ScanPage({
  file,
  page,
  numbered = false,
  language,
}: {
  file: NearDuplicateFile;
  page: number;
  numbered?: boolean;
  language: Language;
}) {
  const t = translator(language);
  return (
    <figure>
      <PageThumbnail file={file} page={page} noPreview={t('pageNoPreview')} />
      <figcaption>
        <FileLink fileId={file.fileId} fileName={file.fileName} contentType={file.contentType} /> ·{' '}
        {file.units.map(unitPlace).join(t('listSeparator'))} · {formatTime(language, file.uploadDate)}
        {numbered && ` · ${t('pageNumber', { page })}`}
      </figcaption>
    </figure>
  );
}

/**
 * A file's page, drawn by the server; what it cannot draw (or may not show: a file outside the
 * administrator's reach is not found) says so instead of a broken image.
 */
function PageThumbnail({ file, page, noPreview }: { file: NearDuplicateFile; page: number; noPreview: string }) {
  const [failed, setFailed] = useState(false);
  if (failed || !drawable(file.contentType, file.fileName)) return <p class="hint">{noPreview}</p>;
  return (
    <img src={pageUrl(file.fileId, page, 480)} alt={file.fileName} loading="lazy" onError={() => setFailed(true)} />
  );
}
