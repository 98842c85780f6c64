import type { DisposalView } from '../../../shared/disposals.js';
import { disposalsCsvUrl, type ArchiveApi } from '../api.js';
import { translator, type Language } from '../i18n/index.js';
import { cleanParams, go, pageHash, withParams } from '../route.js';
import { Pager } from './controls.js';
import { DateInput } from './date-field.js';
import { Field, NO_ERRORS } from './field.js';
import { formatBytes, formatCount, formatTime, timeZoneShown, unitPlace } from './format.js';
import { TableSection } from './table/table-section.js';
import { useLoaded } from './table/use-loaded.js';

const PAGE_SIZE = 100;
const FILTERS = ['from', 'to', 'unit'] as const;

/** The register's query in the address: its filters and page. */
function registerQuery(params: URLSearchParams): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of FILTERS) {
    const value = params.get(name)?.trim();
    if (value) query.set(name, value);
  }
  return query;
}

/** A moment's day, in the archive's time zone (as its times). */
const day = (language: Language, iso: string | null) => {
  const timeZone = timeZoneShown();
  return iso === null
    ? ''
    : new Intl.DateTimeFormat(language, { dateStyle: 'medium', ...(timeZone && { timeZone }) }).format(new Date(iso));
};

/**
 * 销毁清册: every file disposed of (an administrator below the top: those with a unit of their
 * reach), latest first, filtered by day and unit, exported as CSV, printed on A4 with the
 * signature lines of 监销人 and 经办人.
 */
export function DisposalsPage({
  api,
  language,
  params,
}: {
  api: ArchiveApi;
  language: Language;
  params: URLSearchParams;
}) {
  const t = translator(language);
  const filters = registerQuery(params);
  const offset = Number(params.get('offset')) || 0;
  const key = `${filters}&limit=${PAGE_SIZE}&offset=${offset}`;
  const loaded = useLoaded(key, (query) => api.disposals(new URLSearchParams(query)));
  const show = (next: URLSearchParams) => go(pageHash('disposals', next));
  const apply = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    show(cleanParams(Object.fromEntries(FILTERS.map((name) => [name, (form.get(name) as string | null) ?? '']))));
  };
  const units = (d: DisposalView) => [
    ...d.units.map((u) => unitPlace(u)),
    ...(d.otherUnits > 0 ? [t('disposalOtherUnits', { count: formatCount(language, d.otherUnits) })] : []),
  ];
  const sep = language === 'zh-CN' ? '、' : ', ';
  return (
    <main class="page wide disposals" aria-labelledby="disposals-title">
      <h1 id="disposals-title">{t('disposalsTitle')}</h1>
      <p class="hint no-print">{t('disposalsHint')}</p>
      <form class="filter-bar no-print" onSubmit={apply} key={params.toString()}>
        {/* The page's own date fields: the browser's follow its language (mm/dd/yyyy in an English Chromium). */}
        <Field label={t('disposalsFrom')} errors={NO_ERRORS}>
          <DateInput
            name="from"
            language={language}
            label={t('disposalsFrom')}
            defaultValue={params.get('from') ?? ''}
          />
        </Field>
        <Field label={t('disposalsTo')} errors={NO_ERRORS}>
          <DateInput name="to" language={language} label={t('disposalsTo')} defaultValue={params.get('to') ?? ''} />
        </Field>
        <label class="field">
          <span>{t('disposalsUnit')}</span>
          <input type="text" name="unit" maxLength={100} defaultValue={params.get('unit') ?? ''} />
        </label>
        <div class="actions">
          <button type="submit">{t('disposalsApply')}</button>
          <a class="button secondary" href={disposalsCsvUrl(filters)} download>
            {t('disposalsExport')}
          </a>
          <button type="button" class="secondary" onClick={() => print()}>
            {t('disposalsPrint')}
          </button>
        </div>
      </form>
      <TableSection
        language={language}
        label={t('disposalsTitle')}
        loaded={loaded}
        empty={filters.toString() !== '' ? t('disposalsNoneMatch') : t('disposalsEmpty')}
        columns={[
          { label: t('colDisposalFile'), className: 'name', cell: (d: DisposalView) => d.fileName },
          { label: t('colDisposalUnits'), cell: (d) => units(d).join(sep) },
          { label: t('colDisposalUploaders'), cell: (d) => d.uploaders.map((u) => u.username).join(sep) },
          {
            label: t('colDisposalDates'),
            className: 'when',
            cell: (d) => {
              if (d.firstUploadAt === null) return '';
              const [first, last] = [day(language, d.firstUploadAt), day(language, d.lastUploadAt)];
              // One day is named once, not "5月3日 至 5月3日".
              return first === last ? first : t('disposalDates', { first, last });
            },
          },
          { label: t('colDisposalSize'), numeric: true, cell: (d) => formatBytes(d.size) },
          { label: t('colSystemNo'), className: 'system-no', cell: (d) => <code>{d.fileId}</code> },
          { label: t('colDisposalReason'), cell: (d) => d.reason },
          { label: t('colApprovalRef'), cell: (d) => d.approvalRef },
          { label: t('colDisposedBy'), cell: (d) => d.disposedBy.username },
          {
            label: t('colDisposedAt'),
            className: 'when',
            cell: (d) => `${formatTime(language, d.disposedAt)}${d.state === 'disposed' ? '' : t('disposalDisposing')}`,
          },
        ]}
        rowKey={(d) => d.id}
        tableClass="report register"
        pager={(total) => (
          <Pager
            language={language}
            total={total}
            size={PAGE_SIZE}
            offset={offset}
            onOffset={(next) => show(withParams(params, { offset: next || null }))}
          />
        )}
      />
      <table class="signatures print-only" aria-hidden="true">
        <tbody>
          <tr>
            <td>{t('disposalSupervisor')}</td>
            <td class="line" />
            <td>{t('disposalSignDate')}</td>
            <td class="line short" />
          </tr>
          <tr>
            <td>{t('disposalHandler')}</td>
            <td class="line" />
            <td>{t('disposalSignDate')}</td>
            <td class="line short" />
          </tr>
        </tbody>
      </table>
    </main>
  );
}
