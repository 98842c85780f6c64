import type { ComponentChildren } from 'preact';
import { Fragment } from 'preact';
import { csvUrl } from '../../api.js';
import { translator, type Language } from '../../i18n/index.js';
import { formatCount } from '../format.js';
import { PAGE_SIZES, type Paging, type Sorting } from './query.js';

export interface Column<Row> {
  /** Header text. */
  label: string;
  /** The API sort field behind this column, when the table sorts by it. */
  sort?: string;
  /** Right-aligned figures. */
  numeric?: boolean;
  /** The cells' class, beside `num` (for styles and tests). */
  className?: string;
  cell(row: Row): ComponentChildren;
}

interface TableProps<Row> {
  language: Language;
  caption: string;
  columns: Column<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string;
  sorting: Sorting;
  onSort: (sort: string) => void;
  /** Shown under a row, across the table (an expanded row's details), or null. */
  detail?: (row: Row) => ComponentChildren | null;
  busy?: boolean;
  /** The table's class (default `report`). */
  tableClass?: string;
}

/** A report table: headers sort it (click again to reverse), as the server orders it. */
export function ReportTable<Row>({
  language,
  caption,
  columns,
  rows,
  rowKey,
  sorting,
  onSort,
  detail,
  busy,
  tableClass = 'report',
}: TableProps<Row>) {
  const t = translator(language);
  return (
    <div class="table-scroll">
      <table class={tableClass} aria-busy={busy ? 'true' : undefined}>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => {
              const active = column.sort !== undefined && column.sort === sorting.sort;
              return (
                <th
                  key={column.label}
                  scope="col"
                  class={column.numeric ? 'num' : undefined}
                  aria-sort={
                    active ? (sorting.order === 'asc' ? 'ascending' : 'descending') : column.sort ? 'none' : undefined
                  }
                >
                  {column.sort ? (
                    <button
                      type="button"
                      class="sort"
                      onClick={() => onSort(column.sort!)}
                      title={t('sortBy', { column: column.label })}
                    >
                      {column.label}
                      <span aria-hidden="true" class={`arrow ${active ? sorting.order : 'none'}`} />
                    </button>
                  ) : (
                    column.label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const key = rowKey(row);
            const more = detail?.(row) ?? null;
            return (
              <Fragment key={key}>
                <tr data-key={key}>
                  {columns.map((column) => (
                    <td
                      key={column.label}
                      class={[column.numeric && 'num', column.className].filter(Boolean).join(' ') || undefined}
                    >
                      {column.cell(row)}
                    </td>
                  ))}
                </tr>
                {more !== null && (
                  <tr class="detail">
                    <td colSpan={columns.length}>{more}</td>
                  </tr>
                )}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** "Rows 51–100 of 230", previous / next, and the page size. */
export function Pager({
  language,
  total,
  paging,
  onPage,
}: {
  language: Language;
  total: number;
  paging: Paging;
  onPage: (paging: Paging) => void;
}) {
  const t = translator(language);
  const { limit, offset } = paging;
  const first = total === 0 ? 0 : Math.min(offset + 1, total);
  const last = Math.min(offset + limit, total);
  const n = (value: number) => formatCount(language, value);
  return (
    <nav class="pager" aria-label={t('pagination')}>
      <button
        type="button"
        disabled={offset === 0}
        onClick={() => onPage({ limit, offset: Math.max(0, offset - limit) })}
      >
        {t('previousPage')}
      </button>
      <span class="range" aria-live="polite">
        {t('rowsOf', { first: n(first), last: n(last), total: n(total) })}
      </span>
      <button
        type="button"
        disabled={offset + limit >= total}
        onClick={() => onPage({ limit, offset: offset + limit })}
      >
        {t('nextPage')}
      </button>
      <label class="page-size">
        {t('pageSize')}
        <select value={String(limit)} onChange={(e) => onPage({ limit: Number(e.currentTarget.value), offset: 0 })}>
          {PAGE_SIZES.map((size) => (
            <option key={size} value={String(size)}>
              {size}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}

/** A CSV download of the same request (the whole selection, up to the API's page limit). */
export function ExportLink({ language, url, total }: { language: Language; url: string; total: number }) {
  const t = translator(language);
  return (
    <a class="export" href={csvUrl(url, language)} download>
      {t('exportCsvAll', { total: formatCount(language, total) })}
    </a>
  );
}
