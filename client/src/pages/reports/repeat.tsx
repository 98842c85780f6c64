import type { RepeatUploaderRow, RepeatUserRow, ReportPage, ReportUnit } from '../../../../shared/reports.js';
import { translator } from '../../i18n/index.js';
import { withParams } from '../../route.js';
import { unitPlace } from '../format.js';
import { ReportFilters } from './filters.js';
import { REPEAT_GROUPS, repeatGroup } from './query.js';
import { repeatColumns, repeatRowKey } from './repeat-columns.js';
import { useReport } from './use-report.js';
import { ReportSection, Switch, useView, type TabProps } from './view.js';

const GROUP_LABEL = { entry: 'groupEntry', user: 'groupUser', unit: 'groupUnit' } as const;

/** Who keeps uploading the same files: per entry (user, unit, file), per user or per unit; a user or unit opens its entries. */
export function RepeatTab({ api, language, params, show, units }: TabProps) {
  const t = translator(language);
  const view = useView('repeat-uploaders', { language, params, show, units });
  const group = repeatGroup(params);
  const loaded = useReport<ReportPage<RepeatUploaderRow>>(api, 'repeat-uploaders', view.query);

  /** Entries of one user, or of one unit's subtree. */
  const entriesOf = (changes: Record<string, string | null>) =>
    show(withParams(params, { group: null, sort: null, order: null, offset: null, ...changes }));
  // A user's entries in that unit, and a unit's own entries (not its subtree's).
  const ofUser = (row: RepeatUserRow) => entriesOf({ user: row.userName, unitId: row.unit.id });
  const ofUnit = (unit: ReportUnit) => entriesOf({ user: null, unitId: unit.id });
  const columns = repeatColumns(language, group, { ofUser, ofUnit });

  // The unit's place names from its rows (all of them are its), else its id.
  const onlyUnitName = (unitId: string) => {
    const shown = loaded.data?.items[0]?.unit;
    return shown?.id === unitId ? unitPlace(shown) : unitId;
  };

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
      <Switch
        label={t('copiesSwitch')}
        options={[
          ['include', t('copiesInclude')],
          ['exclude', t('copiesExclude')],
        ]}
        value={params.get('copies') === 'exclude' ? 'exclude' : 'include'}
        onChange={(c) => show(withParams(params, { copies: c === 'include' ? null : c, offset: null }))}
      />
      <p class="hint">{t('copiesHint')}</p>
      {params.get('unitId') && (
        <p class="hint">
          {t('onlyUnit', { unit: onlyUnitName(params.get('unitId')!) })}{' '}
          <button type="button" class="link" onClick={() => show(withParams(params, { unitId: null, offset: null }))}>
            {t('showAllUnits')}
          </button>
        </p>
      )}
      <ReportSection
        view={view}
        loaded={loaded}
        caption={t('tabRepeat')}
        columns={columns}
        rowKey={repeatRowKey(group)}
      />
    </div>
  );
}
