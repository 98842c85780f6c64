import type { CollisionRow, ReportPage } from '../../../../shared/reports.js';
import { translator } from '../../i18n/index.js';
import { formatBytes, formatCount, formatTime } from '../format.js';
import { ReportFilters } from './filters.js';
import type { Column } from './table.js';
import { useReport } from './use-report.js';
import { TableSection, useView, type TabProps } from './view.js';

/** Stored files that share an MD5 with different content: the MD5 alone would have merged them. */
export function CollisionsTab({ api, language, params, show }: TabProps) {
  const t = translator(language);
  const view = useView('collisions', { language, params, show });
  const loaded = useReport<ReportPage<CollisionRow>>(api, 'collisions', view.query);
  const n = (value: number) => formatCount(language, value);

  const columns: Column<CollisionRow>[] = [
    { label: 'MD5', sort: 'md5', cell: (row) => <code>{row.md5}</code> },
    { label: t('colName'), sort: 'fileName', cell: (row) => <span class="name">{row.fileName}</span> },
    { label: t('colSize'), sort: 'fileLength', numeric: true, cell: (row) => formatBytes(row.fileLength) },
    {
      label: 'SHA-256',
      cell: (row) => (
        <code title={row.sha256} aria-label={row.sha256}>
          {row.sha256.slice(0, 12)}…
        </code>
      ),
    },
    { label: t('colFirstStored'), sort: 'uploadDate', cell: (row) => formatTime(language, row.uploadDate) },
    { label: t('colUploads'), sort: 'uploads', numeric: true, cell: (row) => n(row.uploads) },
    { label: t('colFilesWithMd5'), numeric: true, cell: (row) => n(row.filesWithMd5) },
  ];

  return (
    <div class="report-tab" data-report="collisions">
      <p class="hint">{t('collisionsHint')}</p>
      <ReportFilters view={view} min={{ least: 1, label: t('minUploads') }} />
      <TableSection
        view={view}
        loaded={loaded}
        caption={t('tabCollisions')}
        columns={columns}
        rowKey={(row) => row.fileId}
        empty={t('noCollisions')}
      />
    </div>
  );
}
