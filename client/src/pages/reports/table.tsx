import { csvUrl } from '../../api.js';
import { translator, type Language } from '../../i18n/index.js';
import { formatCount } from '../format.js';
import { PAGE_SIZES, type Paging } from './query.js';

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
