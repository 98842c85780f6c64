import type { NearDuplicateFile, NearDuplicateRow, NearDuplicatesReport } from '../../../../shared/reports.js';
import { translator } from '../../i18n/index.js';
import { Technical } from '../controls.js';
import { formatBytes, formatCount, formatTime, unitPlace } from '../format.js';
import { ReportFilters } from './filters.js';
import type { Column } from './table.js';
import { useReport } from './use-report.js';
import { TableSection, useView, type TabProps } from './view.js';

const percent = (x: number) => `${Math.round(x * 100)}%`;

/** How alike two documents are, 0 to 1: the highest of the measures that found them (64-bit SimHash). */
export function similarityOf(row: Pick<NearDuplicateRow, 'hamming' | 'jaccard' | 'containment'>): number {
  return Math.max(row.jaccard, row.containment, row.hamming === null ? 0 : 1 - row.hamming / 64);
}

/** Pairs of documents found nearly the same; each row shows, below it, where the two texts differ. */
export function NearDuplicatesTab({ api, language, params, show }: TabProps) {
  const t = translator(language);
  const view = useView('near-duplicates', { language, params, show });
  const loaded = useReport<NearDuplicatesReport>(api, 'near-duplicates', view.query);
  const n = (value: number) => formatCount(language, value);
  const status = loaded.data?.status;

  const document = (f: NearDuplicateFile) => (
    <div class="near-file">
      <span class="name">{f.fileName}</span>
      <span class="meta">
        {formatBytes(f.fileLength)} · {f.units.map(unitPlace).join(t('listSeparator'))}
      </span>
    </div>
  );
  // One figure for everyone; how it was found (the methods' own measures) only in the details.
  const similarity = (row: NearDuplicateRow) => (
    <>
      {t('similarityValue', { percent: percent(similarityOf(row)) })}
      <Technical language={language}>
        {row.method === 'simhash'
          ? t('methodSimhash', { hamming: n(row.hamming ?? 0) })
          : row.method === 'jaccard'
            ? t('methodJaccard', { jaccard: percent(row.jaccard) })
            : t('methodContainment', { containment: percent(row.containment) })}
      </Technical>
    </>
  );

  const columns: Column<NearDuplicateRow>[] = [
    { label: t('colDocumentA'), cell: (row) => document(row.a) },
    { label: t('colDocumentB'), cell: (row) => document(row.b) },
    { label: t('colSimilarity'), sort: 'jaccard', cell: (row) => similarity(row) },
    { label: t('colFound'), sort: 'foundAt', cell: (row) => formatTime(language, row.foundAt) },
  ];

  const differences = (row: NearDuplicateRow) => (
    <div class="near-diff" role="group" aria-label={t('differsIn')}>
      <blockquote lang="zh">{row.a.snippet || t('noDifference')}</blockquote>
      <blockquote lang="zh">{row.b.snippet || t('noDifference')}</blockquote>
    </div>
  );

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
      <TableSection
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
