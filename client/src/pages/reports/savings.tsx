import type { SavingsPeriodRow, SavingsReport, SavingsRow, SavingsUnitRow } from '../../../../shared/reports.js';
import { BarChart } from '../../charts/bar-chart.js';
import { translator, type Language, type Translate } from '../../i18n/index.js';
import { withParams } from '../../route.js';
import { byteUnit, formatBytes, formatCount, formatDay, formatMonth } from '../format.js';
import { ReportFilters } from './filters.js';
import { CHART_LIMIT, reportQuery, SAVINGS_GROUPS, savingsGroup, type SavingsGroup } from './query.js';
import type { Column } from '../table/data-table.js';
import { useReport } from './use-report.js';
import { ReportSection, Switch, useView, type TabProps } from './view.js';

/** The unit level the rows are at: one below the filter (a town filter keeps the town). */
type Level = 'city' | 'county' | 'town';
const levelOf = (params: URLSearchParams): Level =>
  params.get('county') ? 'town' : params.get('city') ? 'county' : 'city';

const isPeriod = (row: SavingsRow): row is SavingsPeriodRow => 'period' in row;

/** A unit row's name; null at a level means the units of the level above itself ("沧州市本级"). */
function unitLabel(t: Translate, row: SavingsUnitRow, level: Level): string {
  const name = row[level];
  if (name) return name;
  return t('ownUnits', { unit: (level === 'town' ? row.county : row.city) ?? row.city });
}

function periodLabel(t: Translate, language: Language, group: SavingsGroup, period: string): string {
  if (group === 'month') return formatMonth(language, period);
  if (group === 'week') return t('weekOf', { day: formatDay(language, period) });
  return formatDay(language, period);
}

const GROUP_LABEL = { unit: 'groupUnit', day: 'groupDay', week: 'groupWeek', month: 'groupMonth' } as const;

/** Space saved: the totals, a chart (per unit, drilling down on click, or over time) and the table. */
export function SavingsTab({ api, language, params, show, units }: TabProps) {
  const t = translator(language);
  const view = useView('savings', { language, params, show, units });
  const group = savingsGroup(params);
  const level = levelOf(params);
  const table = useReport<SavingsReport>(api, 'savings', view.query);

  // The chart shows the whole selection: this page when it holds every row, else a request of its
  // own (the biggest units, or the newest periods, up to the export limit).
  const page = table.loading ? null : table.data;
  const complete = page !== null && page.offset === 0 && page.items.length >= page.total;
  const chartQuery =
    page === null || complete
      ? null
      : reportQuery('savings', params, {
          sort: group === 'unit' ? 'savedBytes' : 'period',
          order: 'desc',
          limit: CHART_LIMIT,
          offset: 0,
        });
  const chartAnswer = useReport<SavingsReport>(api, 'savings', chartQuery);
  const chartRows = sortForChart(group, (complete ? page.items : chartAnswer.data?.items) ?? []);

  const label = (row: SavingsRow) =>
    isPeriod(row) ? periodLabel(t, language, group, row.period) : unitLabel(t, row, level);
  const canDrill = (row: SavingsRow): row is SavingsUnitRow =>
    !isPeriod(row) && !!row[level] && !(level === 'town' && params.get('town'));
  const drill = (row: SavingsUnitRow) =>
    show(
      withParams(params, {
        city: row.city,
        county: level === 'city' ? null : row.county,
        town: level === 'town' ? row.town : null,
        offset: null,
      }),
    );

  const n = (value: number) => formatCount(language, value);
  const summary = (page ?? table.data)?.summary;
  const columns: Column<SavingsRow>[] = [
    group === 'unit'
      ? {
          label: t(level === 'city' ? 'colCity' : level === 'county' ? 'colCounty' : 'colTown'),
          sort: 'unit',
          cell: (row) =>
            canDrill(row) ? (
              <button
                type="button"
                class="link drill"
                onClick={() => drill(row)}
                title={t('drillDown', { unit: label(row) })}
              >
                {label(row)}
              </button>
            ) : (
              label(row)
            ),
        }
      : { label: t('colPeriod'), sort: 'period', cell: label },
    { label: t('colUploads'), sort: 'uploads', numeric: true, cell: (row) => n(row.uploads) },
    { label: t('colSavedUploads'), sort: 'savedUploads', numeric: true, cell: (row) => n(row.savedUploads) },
    { label: t('colSavedBytes'), sort: 'savedBytes', numeric: true, cell: (row) => formatBytes(row.savedBytes) },
  ];

  const chartTitle =
    group === 'unit' ? t('chartSavedPerUnit') : t('chartSavedOverTime', { period: t(GROUP_LABEL[group]) });
  const axis = byteUnit(Math.max(0, ...chartRows.map((row) => row.savedBytes)));
  // A bar that cannot be drilled into is said to be one, as the legend says it of the hatched bars.
  const noDrill = (row: SavingsRow) => (group === 'unit' && !canDrill(row) ? t('chartNoDrillMark') : '');
  const described = chartRows.slice(0, 12).map((row) => `${label(row)} ${formatBytes(row.savedBytes)}${noDrill(row)}`);
  const chartSummary = `${chartTitle}: ${described.join(t('listSeparator'))}${chartRows.length > described.length ? t('andMore', { count: formatCount(language, chartRows.length - described.length) }) : ''}`;

  return (
    <div class="report-tab" data-report="savings">
      <ReportFilters view={view} error={table.error} />
      <Switch
        label={t('groupBy')}
        options={SAVINGS_GROUPS.map((g) => [g, t(GROUP_LABEL[g])])}
        value={group}
        onChange={(g) =>
          show(withParams(params, { group: g === 'unit' ? null : g, sort: null, order: null, offset: null }))
        }
      />
      {summary && (
        <dl class="figures" aria-label={t('savingsSummary')}>
          <div>
            <dt>{t('colUploads')}</dt>
            <dd data-figure="uploads">{n(summary.uploads)}</dd>
          </div>
          <div>
            <dt>{t('colSavedUploads')}</dt>
            <dd data-figure="savedUploads">
              {n(summary.savedUploads)}
              {summary.uploads > 0 && (
                <small>
                  {' '}
                  (
                  {new Intl.NumberFormat(language, { style: 'percent', maximumFractionDigits: 1 }).format(
                    summary.savedUploads / summary.uploads,
                  )}
                  )
                </small>
              )}
            </dd>
          </div>
          <div class="main">
            <dt>{t('colSavedBytes')}</dt>
            <dd data-figure="savedBytes">{formatBytes(summary.savedBytes)}</dd>
          </div>
        </dl>
      )}
      {chartRows.length > 0 && (
        <figure class="chart-figure">
          <figcaption>
            {chartTitle}
            {group === 'unit' && chartRows.some(canDrill) && <span class="hint"> {t('chartDrillHint')}</span>}
          </figcaption>
          <BarChart
            labels={chartRows.map(label)}
            values={chartRows.map((row) => row.savedBytes / axis.divisor)}
            measure={t('colSavedBytes')}
            summary={chartSummary}
            tick={(value) => `${formatCount(language, value)} ${axis.unit}`}
            describe={(i) => formatBytes(chartRows[i]!.savedBytes)}
            onSelect={group === 'unit' ? (i) => canDrill(chartRows[i]!) && drill(chartRows[i]) : undefined}
            inert={group === 'unit' ? (i) => !canDrill(chartRows[i]!) : undefined}
            legend={{ selectable: t('chartLegendDrill'), inert: t('chartLegendNoDrill') }}
          />
        </figure>
      )}
      <ReportSection
        view={view}
        loaded={table}
        caption={chartTitle}
        columns={columns}
        rowKey={(row) => (isPeriod(row) ? row.period : [row.city, row.county, row.town].join('/'))}
      />
    </div>
  );
}

/** Units by space saved, biggest first; periods oldest first. */
function sortForChart(group: SavingsGroup, rows: SavingsRow[]): SavingsRow[] {
  if (group === 'unit') return [...rows].sort((a, b) => b.savedBytes - a.savedBytes);
  return [...rows].sort((a, b) => ((a as SavingsPeriodRow).period < (b as SavingsPeriodRow).period ? -1 : 1));
}
