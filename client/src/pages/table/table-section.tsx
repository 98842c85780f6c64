import type { ComponentChildren } from 'preact';
import { describeError, translator } from '../../i18n/index.js';
import { ErrorNote } from '../controls.js';
import { formatCount } from '../format.js';
import { DataTable, type DataTableProps } from './data-table.js';
import type { Loaded } from './use-loaded.js';

/** A page of a list as the API answers it: some rows, and how many there are in all. */
export interface ListPage<Row> {
  items: Row[];
  total: number;
}

export interface TableSectionProps<Row> extends Omit<DataTableProps<Row>, 'caption' | 'rows' | 'busy'> {
  /** The section's name, and the table's caption. */
  label: string;
  loaded: Loaded<ListPage<Row>>;
  /** Said when the list is empty. */
  empty: string;
  /** The count beside the table (default "共 N 条"); null: none. */
  count?: ((total: number) => string) | null;
  /** More tools beside the count (a CSV link, a note). */
  tools?: (page: ListPage<Row>) => ComponentChildren;
  /** Under the table when there are rows: the pager. */
  pager?: (total: number) => ComponentChildren;
  /** Say why the list could not be read here (pages whose filter form says it pass false). */
  showError?: boolean;
}

/**
 * A list page's table: 正在加载… until the first answer, then the count (and 正在加载… while
 * the next page loads, the table `aria-busy`), the table or what an empty list says, and the pager.
 */
export function TableSection<Row>({
  language,
  label,
  loaded,
  empty,
  count,
  tools,
  pager,
  showError = true,
  ...table
}: TableSectionProps<Row>) {
  const t = translator(language);
  const { data, error, loading } = loaded;
  const counted =
    count === undefined ? (total: number) => t('rowsTotal', { total: formatCount(language, total) }) : count;
  return (
    <section class="table-section" aria-label={label}>
      {showError && error !== null && <ErrorNote error={describeError(language, error)} />}
      {data === null && error === null && <p>{t('loading')}</p>}
      {data !== null && (
        <>
          {(counted || tools || loading) && (
            <div class="table-tools">
              {counted && <span class="count">{counted(data.total)}</span>}
              {loading && <span class="loading">{t('loading')}</span>}
              {tools?.(data)}
            </div>
          )}
          {data.items.length === 0 ? (
            <p class="empty">{empty}</p>
          ) : (
            <DataTable language={language} caption={label} rows={data.items} busy={loading} {...table} />
          )}
          {data.total > 0 && pager?.(data.total)}
        </>
      )}
    </section>
  );
}
