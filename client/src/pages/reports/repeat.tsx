import { FileLink } from '../controls.js';
import type {
  RepeatEntryRow,
  RepeatUnitRow,
  RepeatUploaderRow,
  RepeatUserRow,
  ReportPage,
  ReportUnit,
} from '../../../../shared/reports.js';
import { personLabel } from '../../../../shared/accounts.js';
import { translator } from '../../i18n/index.js';
import { withParams } from '../../route.js';
import { formatBytes, formatCount, formatTime, unitPlace } from '../format.js';
import { ReportFilters } from './filters.js';
import { REPEAT_GROUPS, repeatGroup } from './query.js';
import type { Column } from '../table/data-table.js';
import { useReport } from './use-report.js';
import { ReportSection, Switch, useView, type TabProps } from './view.js';

const GROUP_LABEL = { entry: 'groupEntry', user: 'groupUser', unit: 'groupUnit' } as const;

/** Who keeps uploading the same files: per entry (user, unit, file), per user or per unit; a user or unit opens its entries. */
export function RepeatTab({ api, language, params, show, units }: TabProps) {
  const t = translator(language);
  const view = useView('repeat-uploaders', { language, params, show, units });
  const group = repeatGroup(params);
  const loaded = useReport<ReportPage<RepeatUploaderRow>>(api, 'repeat-uploaders', view.query);
  const n = (value: number) => formatCount(language, value);
  const time = (iso: string) => formatTime(language, iso);
  const person = (row: RepeatEntryRow | RepeatUserRow) => personLabel(row.userName, row.userDisplayName, language);

  /** Entries of one user, or of one unit's subtree. */
  const entriesOf = (changes: Record<string, string | null>) =>
    show(withParams(params, { group: null, sort: null, order: null, offset: null, ...changes }));
  // A user's entries in that unit, and a unit's own entries (not its subtree's).
  const ofUser = (row: RepeatUserRow) => entriesOf({ user: row.userName, unitId: row.unit.id });
  const ofUnit = (unit: ReportUnit) => entriesOf({ user: null, unitId: unit.id });

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
    {
      label: t('colRepeatBytes'),
      sort: 'repeatBytes',
      numeric: true,
      cell: (row: RepeatUserRow | RepeatUnitRow) => formatBytes(row.repeatBytes),
    },
  ];

  const columns = {
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
      { label: t('colUploads'), sort: 'uploadCount', numeric: true, cell: (row: RepeatEntryRow) => n(row.uploadCount) },
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
  }[group] as Column<RepeatUploaderRow>[];

  // The unit's place names from its rows (all of them are its), else its id.
  const onlyUnitName = (unitId: string) => {
    const shown = loaded.data?.items[0]?.unit;
    return shown?.id === unitId ? unitPlace(shown) : unitId;
  };

  const rowKey = (row: RepeatUploaderRow) =>
    group === 'entry'
      ? `${(row as RepeatEntryRow).userId}/${row.unit.id}/${(row as RepeatEntryRow).fileId}`
      : group === 'user'
        ? `${(row as RepeatUserRow).userId}/${row.unit.id}`
        : row.unit.id;

  return (
    <div class="report-tab" data-report="repeat-uploaders">
      <ReportFilters view={view} error={loaded.error} min={{ least: 2, label: t('minUploads') }} user />
      <Switch
        label={t('groupBy')}
        options={REPEAT_GROUPS.map((g) => [g, t(GROUP_LABEL[g])])}
        value={group}
        onChange={(g) =>
          show(
            withParams(params, {
              group: g === 'entry' ? null : g,
              unitId: null,
              sort: null,
              order: null,
              offset: null,
            }),
          )
        }
      />
      {params.get('unitId') && (
        <p class="hint">
          {t('onlyUnit', { unit: onlyUnitName(params.get('unitId')!) })}{' '}
          <button type="button" class="link" onClick={() => show(withParams(params, { unitId: null, offset: null }))}>
            {t('showAllUnits')}
          </button>
        </p>
      )}
      <ReportSection view={view} loaded={loaded} caption={t('tabRepeat')} columns={columns} rowKey={rowKey} />
    </div>
  );
}
