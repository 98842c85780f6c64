import type {
  RepeatEntryRow,
  RepeatUnitRow,
  RepeatUploaderRow,
  RepeatUserRow,
  ReportUnit,
} from '../../../../shared/reports.js';
import { personLabel } from '../../../../shared/accounts.js';
import { translator, type Language } from '../../i18n/index.js';
import { FileLink } from '../controls.js';
import { formatBytes, formatCount, formatTime, unitPlace } from '../format.js';
import type { Column } from '../table/data-table.js';
import type { RepeatGroup } from './query.js';

/**
 * The repeat report's columns for each grouping: an entry (user, unit, file), a user, a unit;
 * a user's or a unit's name opens its entries.
 */
export function repeatColumns(
  language: Language,
  group: RepeatGroup,
  { ofUser, ofUnit }: { ofUser: (row: RepeatUserRow) => void; ofUnit: (unit: ReportUnit) => void },
): Column<RepeatUploaderRow>[] {
  const t = translator(language);
  const n = (value: number) => formatCount(language, value);
  const time = (iso: string) => formatTime(language, iso);
  const person = (row: RepeatEntryRow | RepeatUserRow) => personLabel(row.userName, row.userDisplayName, language);

  const unitColumn = { label: t('colUnit'), cell: (row: { unit: ReportUnit }) => unitPlace(row.unit) };
  const timeColumns = [
    {
      label: t('colFirstUpload'),
      sort: 'firstUploadTime',
      cell: (row: { firstUploadTime: string }) => time(row.firstUploadTime),
    },
    {
      label: t('colLastUpload'),
      sort: 'lastUploadTime',
      cell: (row: { lastUploadTime: string }) => time(row.lastUploadTime),
    },
  ];
  const totalsColumns = [
    {
      label: t('colRepeatFiles'),
      sort: 'files',
      numeric: true,
      cell: (row: RepeatUserRow | RepeatUnitRow) => n(row.files),
    },
    {
      label: t('colUploads'),
      sort: 'uploads',
      numeric: true,
      cell: (row: RepeatUserRow | RepeatUnitRow) => n(row.uploads),
    },
    {
      label: t('colRepeatUploads'),
      sort: 'repeatUploads',
      numeric: true,
      cell: (row: RepeatUserRow | RepeatUnitRow) => n(row.repeatUploads),
    },
    // Next to the repeats: which of them were copies inside one upload, which re-sends.
    {
      label: t('colCopies'),
      numeric: true,
      cell: (row: RepeatUserRow | RepeatUnitRow) => n(row.copies),
    },
    {
      label: t('colResends'),
      numeric: true,
      cell: (row: RepeatUserRow | RepeatUnitRow) => n(row.resends),
    },
    {
      label: t('colRepeatBytes'),
      sort: 'repeatBytes',
      numeric: true,
      cell: (row: RepeatUserRow | RepeatUnitRow) => formatBytes(row.repeatBytes),
    },
  ];

  return {
    entry: [
      { label: t('colUser'), sort: 'userName', cell: (row: RepeatEntryRow) => person(row) },
      unitColumn,
      {
        label: t('colName'),
        sort: 'fileName',
        cell: (row: RepeatEntryRow) => <FileLink fileId={row.fileId} fileName={row.fileName} />,
      },
      {
        label: t('colSize'),
        sort: 'fileLength',
        numeric: true,
        cell: (row: RepeatEntryRow) => formatBytes(row.fileLength),
      },
      {
        label: t('colUploads'),
        sort: 'uploadCount',
        numeric: true,
        // The uploads behind the count, where each can be withdrawn.
        cell: (row: RepeatEntryRow) => (
          <a href={`#/file-uploads/${row.fileId}`} class="uploads-link" title={t('fileUploadsLink')}>
            {n(row.uploadCount)}
          </a>
        ),
      },
      { label: t('colCopies'), numeric: true, cell: (row: RepeatEntryRow) => n(row.copies) },
      { label: t('colResends'), numeric: true, cell: (row: RepeatEntryRow) => n(row.resends) },
      ...timeColumns,
    ] as Column<RepeatEntryRow>[],
    user: [
      {
        label: t('colUser'),
        sort: 'userName',
        cell: (row: RepeatUserRow) => (
          <button
            type="button"
            class="link drill"
            onClick={() => ofUser(row)}
            title={t('showEntriesOf', { name: person(row) })}
          >
            {person(row)}
          </button>
        ),
      },
      unitColumn,
      ...totalsColumns,
      ...timeColumns,
    ] as Column<RepeatUserRow>[],
    unit: [
      {
        label: t('colUnit'),
        cell: (row: RepeatUnitRow) => (
          <button
            type="button"
            class="link drill"
            onClick={() => ofUnit(row.unit)}
            title={t('showEntriesOf', { name: unitPlace(row.unit) })}
          >
            {unitPlace(row.unit)}
          </button>
        ),
      },
      { label: t('colUsers'), sort: 'users', numeric: true, cell: (row: RepeatUnitRow) => n(row.users) },
      ...totalsColumns,
      ...timeColumns,
    ] as Column<RepeatUnitRow>[],
  }[group];
}

/** A row's key: its entry, its user in a unit, or its unit. */
export const repeatRowKey = (group: RepeatGroup) => (row: RepeatUploaderRow) =>
  group === 'entry'
    ? `${(row as RepeatEntryRow).userId}/${row.unit.id}/${(row as RepeatEntryRow).fileId}`
    : group === 'user'
      ? `${(row as RepeatUserRow).userId}/${row.unit.id}`
      : row.unit.id;
