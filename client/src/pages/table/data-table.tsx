import type { ComponentChildren } from 'preact';
import { Fragment } from 'preact';
import { translator, type Language } from '../../i18n/index.js';
import type { Sorting } from '../reports/query.js';

export interface Column<Row> {
  /** Header text. */
  label: string;
  /** The API sort field behind this column, when the table sorts by it. */
  sort?: string;
  /** Right-aligned figures. */
  numeric?: boolean;
  /** The cells' class, beside `num` (for styles and tests). */
  className?: string;
  /** Its cells are the rows' headers (`<th scope="row">`). */
  rowHeader?: boolean;
  cell(row: Row): ComponentChildren;
}

export interface DataTableProps<Row> {
  language: Language;
  caption: string;
  columns: Column<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string;
  /** Attributes of a row's `<tr>` (`data-*` for styles and tests). */
  rowAttributes?: (row: Row) => Record<string, string>;
  /** The order the server gave the rows; headers say it (`aria-sort`). */
  sorting?: Sorting;
  /** Given: headers with a sort field are buttons (click again to reverse). */
  onSort?: (sort: string) => void;
  /** Shown under a row, across the table (an expanded row's details), or null. */
  detail?: (row: Row) => ComponentChildren | null;
  busy?: boolean;
  /** The table's class (default `report`). */
  tableClass?: string;
}

/** A table of rows in the order the server sent them, named by its (visually hidden) caption. */
export function DataTable<Row>({
  language,
  caption,
  columns,
  rows,
  rowKey,
  rowAttributes,
  sorting,
  onSort,
  detail,
  busy,
  tableClass = 'report',
}: DataTableProps<Row>) {
  return (
    <div class="table-scroll">
      <table class={tableClass} aria-busy={busy ? 'true' : undefined}>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <HeaderCell key={column.label} language={language} column={column} sorting={sorting} onSort={onSort} />
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const key = rowKey(row);
            const more = detail?.(row) ?? null;
            return (
              <Fragment key={key}>
                <tr data-key={key} {...rowAttributes?.(row)}>
                  {columns.map((column) => {
                    const className =
                      [column.numeric && 'num', column.className].filter(Boolean).join(' ') || undefined;
                    return column.rowHeader ? (
                      <th key={column.label} scope="row" class={className}>
                        {column.cell(row)}
                      </th>
                    ) : (
                      <td key={column.label} class={className}>
                        {column.cell(row)}
                      </td>
                    );
                  })}
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

function HeaderCell<Row>({
  language,
  column,
  sorting,
  onSort,
}: {
  language: Language;
  column: Column<Row>;
  sorting: Sorting | undefined;
  onSort: ((sort: string) => void) | undefined;
}) {
  const t = translator(language);
  const { sort } = column;
  /** The order the rows are in by this column, if they are. */
  const order = sort !== undefined && sort === sorting?.sort ? sorting.order : undefined;
  const sortable = sort !== undefined && onSort !== undefined;
  return (
    <th
      scope="col"
      class={column.numeric ? 'num' : undefined}
      aria-sort={order ? (order === 'asc' ? 'ascending' : 'descending') : sortable ? 'none' : undefined}
    >
      {sortable ? (
        <button type="button" class="sort" onClick={() => onSort(sort)} title={t('sortBy', { column: column.label })}>
          {column.label}
          <span aria-hidden="true" class={`arrow ${order ?? 'none'}`} />
        </button>
      ) : (
        column.label
      )}
    </th>
  );
}
