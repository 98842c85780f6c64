import type { CollisionRow, ReportPage } from '../../../../shared/reports.js';
import { translator } from '../../i18n/index.js';
import { FileLink, Technical } from '../controls.js';
import { formatBytes, formatCount, formatTime } from '../format.js';
import { ReportFilters } from './filters.js';
import type { Column } from '../table/data-table.js';
import { useReport } from './use-report.js';
import { ReportSection, useView, type TabProps } from './view.js';

/** Stored files that share an MD5 with different content (待核查文件): the MD5 alone would have merged them. */
export function CollisionsTab({ api, language, params, show, units }: TabProps) {
  const t = translator(language);
  const view = useView('collisions', { language, params, show, units });
  const loaded = useReport<ReportPage<CollisionRow>>(api, 'collisions', view.query);
  const n = (value: number) => formatCount(language, value);

  const columns: Column<CollisionRow>[] = [
    { label: t('colName'), sort: 'fileName', cell: (row) => <FileLink fileId={row.fileId} fileName={row.fileName} /> },
    { label: t('colSize'), sort: 'fileLength', numeric: true, cell: (row) => formatBytes(row.fileLength) },
    { label: t('colFirstStored'), sort: 'uploadDate', cell: (row) => formatTime(language, row.uploadDate) },
    { label: t('colUploads'), sort: 'uploads', numeric: true, cell: (row) => n(row.uploads) },
    { label: t('colFilesWithMd5'), numeric: true, cell: (row) => n(row.filesWithMd5) },
    // The hashes, for whoever traces the files' origin: out of sight until asked for.
    {
      label: t('colChecksums'),
      sort: 'md5',
      cell: (row) => (
        <Technical language={language}>
          <dl class="checksums">
            <dt>MD5</dt>
            <dd>
              <code>{row.md5}</code>
            </dd>
            <dt>SHA-256</dt>
            <dd>
              <code>{row.sha256}</code>
            </dd>
          </dl>
        </Technical>
      ),
    },
  ];

  return (
    <div class="report-tab" data-report="collisions">
      <p class="hint">{t('collisionsHint')}</p>
      <Technical language={language}>{t('collisionsDetails')}</Technical>
      <ReportFilters view={view} error={loaded.error} min={{ least: 1, label: t('minUploads') }} />
      <ReportSection
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
