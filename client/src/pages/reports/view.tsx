import type { ComponentChildren } from 'preact';
import type { ReportName, ReportPage } from '../../../../shared/reports.js';
import { reportUrl, type ArchiveApi } from '../../api.js';
import { translator, type Language } from '../../i18n/index.js';
import { withParams } from '../../route.js';
import type { Values } from './filters.js';
import { DEFAULT_PAGE_SIZE, nextSorting, pagingOf, reportQuery, sortingOf } from './query.js';
import type { Paging } from './query.js';
import type { Column } from '../table/data-table.js';
import { TableSection } from '../table/table-section.js';
import type { Loaded } from '../table/use-loaded.js';
import { ExportLink, Pager } from './table.js';
import type { UnitLevels } from '../unit-levels.js';

/** What every report table gets from the reports page. */
export interface TabProps {
  api: ArchiveApi;
  language: Language;
  params: URLSearchParams;
  /** Shows another view of this table (a new history entry: Back returns). */
  show: (params: URLSearchParams) => void;
  /** The unit filter's choices, kept while the reports are open. */
  units: UnitLevels;
}

/** A table's view state from the hash, and the changes a reader can make to it. */
export type View = ReturnType<typeof useView>;

/** A table's view state from the hash, and the changes a reader can make to it. */
export function useView(
  report: ReportName,
  { language, params, show, units }: Pick<TabProps, 'language' | 'params' | 'show' | 'units'>,
) {
  const sorting = sortingOf(report, params);
  const paging = pagingOf(params);
  return {
    report,
    language,
    params,
    units,
    sorting,
    paging,
    query: reportQuery(report, params),
    /** New filters start at the first page. */
    filter: (values: Values) => show(withParams(params, { ...values, offset: null })),
    sort: (field: string) => {
      const next = nextSorting(sorting, field);
      show(withParams(params, { sort: next.sort, order: next.order, offset: null }));
    },
    page: (next: Paging) =>
      show(
        withParams(params, {
          limit: next.limit === DEFAULT_PAGE_SIZE ? null : next.limit,
          offset: next.offset || null,
        }),
      ),
  };
}

/** A report's table with its pager and its CSV export (the filter form above says why a view was refused). */
export function ReportSection<Row>({
  view,
  loaded,
  caption,
  columns,
  rowKey,
  detail,
  empty,
}: {
  view: View;
  loaded: Loaded<ReportPage<Row>>;
  caption: string;
  columns: Column<Row>[];
  rowKey: (row: Row) => string;
  detail?: (row: Row) => ComponentChildren | null;
  empty?: string;
}) {
  const { language, report, params } = view;
  const t = translator(language);
  return (
    <TableSection
      language={language}
      label={caption}
      loaded={loaded}
      showError={false}
      empty={empty ?? t('noRows')}
      tools={(page) => (
        <ExportLink language={language} url={reportUrl(report, reportQuery(report, params))} total={page.total} />
      )}
      columns={columns}
      rowKey={rowKey}
      detail={detail}
      sorting={view.sorting}
      onSort={view.sort}
      pager={(total) => <Pager language={language} total={total} paging={view.paging} onPage={view.page} />}
    />
  );
}

/** One of a few views (aria-pressed buttons). */
export function Switch<T extends string>({
  label,
  options,
  value,
  onChange,
}: {
  label: string;
  options: Array<[T, string]>;
  value: T;
  onChange: (value: T) => void;
}) {
  return (
    <div class="switch" role="group" aria-label={label}>
      <span class="switch-label">{label}</span>
      {options.map(([option, text]) => (
        <button
          key={option}
          type="button"
          aria-pressed={option === value}
          onClick={() => option !== value && onChange(option)}
        >
          {text}
        </button>
      ))}
    </div>
  );
}
