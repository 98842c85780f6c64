import { useState } from 'preact/hooks';
import type { CrossUnitRow, ReportPage } from '../../../../shared/reports.js';
import { personLabel } from '../../../../shared/accounts.js';
import { translator } from '../../i18n/index.js';
import { formatBytes, formatCount, formatTime, unitPlace } from '../format.js';
import { ReportFilters } from './filters.js';
import type { Column } from '../table/data-table.js';
import { useReport } from './use-report.js';
import { ReportSection, useView, type TabProps } from './view.js';

/** Files several units uploaded; a row opens to show each unit, its users and dates. */
export function CrossUnitTab({ api, language, params, show, units }: TabProps) {
  const t = translator(language);
  const view = useView('cross-unit', { language, params, show, units });
  const loaded = useReport<ReportPage<CrossUnitRow>>(api, 'cross-unit', view.query);
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const n = (value: number) => formatCount(language, value);
  const time = (iso: string) => formatTime(language, iso);
  const toggle = (fileId: string) => {
    const next = new Set(open);
    if (!next.delete(fileId)) next.add(fileId);
    setOpen(next);
  };

  const columns: Column<CrossUnitRow>[] = [
    {
      label: t('colName'),
      sort: 'fileName',
      cell: (row) => (
        <button
          type="button"
          class="link expand"
          aria-expanded={open.has(row.fileId)}
          aria-controls={open.has(row.fileId) ? `uploaders-${row.fileId}` : undefined}
          onClick={() => toggle(row.fileId)}
          title={t(open.has(row.fileId) ? 'hideUploaders' : 'showUploaders')}
        >
          <span class="name">{row.fileName}</span>
        </button>
      ),
    },
    { label: t('colSize'), sort: 'fileLength', numeric: true, cell: (row) => formatBytes(row.fileLength) },
    { label: t('colUnits'), sort: 'units', numeric: true, cell: (row) => n(row.units) },
    { label: t('colUsers'), sort: 'users', numeric: true, cell: (row) => n(row.users) },
    {
      label: t('colUploads'),
      sort: 'uploads',
      numeric: true,
      // Every upload of the file, where each can be withdrawn.
      cell: (row) => (
        <a href={`#/file-uploads/${row.fileId}`} class="uploads-link" title={t('fileUploadsLink')}>
          {n(row.uploads)}
        </a>
      ),
    },
    { label: t('colFirstUpload'), sort: 'firstUploadTime', cell: (row) => time(row.firstUploadTime) },
    { label: t('colLastUpload'), sort: 'lastUploadTime', cell: (row) => time(row.lastUploadTime) },
    {
      label: t('colOpen'),
      cell: (row) => (
        <a href={`/api/files/${row.fileId}`} download={row.fileName} aria-label={`${t('download')} ${row.fileName}`}>
          {t('download')}
        </a>
      ),
    },
  ];

  const uploaders = (row: CrossUnitRow) =>
    !open.has(row.fileId) ? null : (
      <table class="uploaders" id={`uploaders-${row.fileId}`} aria-label={t('uploadersOf', { name: row.fileName })}>
        <thead>
          <tr>
            <th scope="col">{t('colUnit')}</th>
            <th scope="col">{t('colUserNames')}</th>
            <th scope="col" class="num">
              {t('colUploads')}
            </th>
            <th scope="col">{t('colFirstUpload')}</th>
            <th scope="col">{t('colLastUpload')}</th>
          </tr>
        </thead>
        <tbody>
          {row.uploaders.map((u) => (
            <tr key={u.unit.id}>
              <td>{unitPlace(u.unit)}</td>
              <td>
                {u.userNames
                  .map((login, i) => personLabel(login, u.userDisplayNames[i], language))
                  .join(t('listSeparator'))}
              </td>
              <td class="num">{n(u.uploads)}</td>
              <td>{time(u.firstUploadTime)}</td>
              <td>{time(u.lastUploadTime)}</td>
            </tr>
          ))}
        </tbody>
        {row.units > row.uploaders.length && (
          <tfoot>
            <tr>
              <td colSpan={5}>{t('moreUnits', { count: n(row.units - row.uploaders.length) })}</td>
            </tr>
          </tfoot>
        )}
      </table>
    );

  return (
    <div class="report-tab" data-report="cross-unit">
      <ReportFilters view={view} error={loaded.error} min={{ least: 2, label: t('minUnits') }} />
      <ReportSection
        view={view}
        loaded={loaded}
        caption={t('tabCrossUnit')}
        columns={columns}
        rowKey={(row) => row.fileId}
        detail={uploaders}
      />
    </div>
  );
}
