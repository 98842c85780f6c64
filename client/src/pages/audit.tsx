import { useEffect, useState } from 'preact/hooks';
import { auditNoteTechnical, auditNoteText } from '../../../shared/audit-notes.js';
import { AUDIT_ACTIONS, type AuditEventView, type AuditList } from '../../../shared/schemas.js';
import { auditUrl, type ArchiveApi } from '../api.js';
import { auditActionName, translator, type Language } from '../i18n/index.js';
import { auditHash, go, withParams } from '../route.js';
import { formatCount, formatTime, unitPlace } from './format.js';
import { FilterForm, UnitFields, type Values } from './reports/filters.js';
import { Technical } from './controls.js';
import { Field } from './field.js';
import { DEFAULT_PAGE_SIZE, pagingOf, type Paging } from './reports/query.js';
import { ExportLink, Pager } from './reports/table.js';

const FILTERS = ['from', 'to', 'action', 'user', 'city', 'county', 'town', 'q'] as const;
/**
 * The newest event of the first page, plus 1 ms: later pages ask for events before it, so events
 * recorded meanwhile (this page's own viewing among them) do not shift the pages being read.
 */
const UNTIL = 'until';

/** `<input type="datetime-local">` works in local time without a zone; the address keeps ISO 8601. */
function localInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}
function isoOf(local: string | null): string | null {
  if (!local) return null;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** 至 includes its minute, as every date range of the app includes its last day: the API's `to` is exclusive. */
function endOfMinute(iso: string): string {
  const at = Date.parse(iso);
  return Number.isNaN(at) ? iso : new Date(at + 60_000).toISOString();
}

/** The API query: the filters, and `to` held at the first page's newest event once the reader pages on. */
function auditQuery(params: URLSearchParams, overrides: Partial<Paging> = {}): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of FILTERS) {
    const value = params.get(name)?.trim();
    if (value) query.set(name, name === 'to' ? endOfMinute(value) : value);
  }
  const until = params.get(UNTIL);
  if (until) query.set('to', until);
  const { limit, offset } = { ...pagingOf(params), ...overrides };
  query.set('limit', String(limit));
  query.set('offset', String(offset));
  return query;
}

/** The audit log for administrators: who did what, when, from where; newest first. */
export function AuditPage({ api, language, params }: { api: ArchiveApi; language: Language; params: URLSearchParams }) {
  const t = translator(language);
  const query = auditQuery(params);
  const key = query.toString();
  const [state, setState] = useState<{ key: string; list: AuditList | null; error: unknown }>({
    key: '',
    list: null,
    error: null,
  });
  useEffect(() => {
    let current = true;
    api.audit(new URLSearchParams(key)).then(
      (list) => current && setState({ key, list, error: null }),
      (error: unknown) => current && setState({ key, list: null, error }),
    );
    return () => {
      current = false;
    };
  }, [key]);

  const show = (next: URLSearchParams) => go(auditHash(next));
  const paging = pagingOf(params);
  const { list, error } = state;
  const loading = state.key !== key;
  // Pages are held at the newest event of the first page shown for these filters; a list still
  // shown for the filters before (its answer not back yet) must not set it, or the events after
  // its newest one would vanish from every page.
  const firstPageNewest = !loading && list?.offset === 0 ? list.items[0]?.at : undefined;
  const page = (next: Paging) => {
    const until =
      params.get(UNTIL) ?? (firstPageNewest ? new Date(Date.parse(firstPageNewest) + 1).toISOString() : null);
    show(
      withParams(params, {
        limit: next.limit === DEFAULT_PAGE_SIZE ? null : next.limit,
        offset: next.offset || null,
        [UNTIL]: until,
      }),
    );
  };
  const filter = (values: Values) =>
    show(
      withParams(params, {
        ...values,
        from: isoOf(values.from ?? null),
        to: isoOf(values.to ?? null),
        offset: null,
        [UNTIL]: null,
      }),
    );
  const n = (value: number) => formatCount(language, value);

  return (
    <main class="page wide" aria-labelledby="audit-title">
      <h1 id="audit-title">{t('auditTitle')}</h1>
      <FilterForm key={params.toString()} language={language} names={FILTERS} onApply={filter} error={error}>
        {(errors) => (
          <>
            <fieldset class="dates">
              <legend>{t('filterTimes')}</legend>
              <Field label={t('fromTime')} errors={errors}>
                <input type="datetime-local" name="from" defaultValue={localInput(params.get('from'))} />
              </Field>
              <Field label={t('toTime')} errors={errors}>
                <input type="datetime-local" name="to" defaultValue={localInput(params.get('to'))} />
              </Field>
            </fieldset>
            <UnitFields language={language} params={params} errors={errors} />
            <div class="more-fields">
              <Field label={t('colAction')} errors={errors}>
                {/* The filter in force stays chosen (a select's defaultValue is not read by Preact). */}
                <select name="action">
                  <option value="">{t('allActions')}</option>
                  {AUDIT_ACTIONS.map((action) => (
                    <option key={action} value={action} selected={action === params.get('action')}>
                      {auditActionName(language, action)}
                    </option>
                  ))}
                </select>
              </Field>
              <Field label={t('filterUser')} errors={errors}>
                <input name="user" maxLength={64} defaultValue={params.get('user') ?? ''} />
              </Field>
              <Field label={t('filterText')} errors={errors} class="wide">
                <input type="search" name="q" maxLength={200} defaultValue={params.get('q') ?? ''} />
              </Field>
            </div>
          </>
        )}
      </FilterForm>
      {list === null && error === null && <p>{t('loading')}</p>}
      {list !== null && (
        <section class="table-section" aria-label={t('auditTitle')}>
          <div class="table-tools">
            <span class="count">{t('rowsTotal', { total: n(list.total) })}</span>
            {params.get(UNTIL) && (
              <span class="held">
                {t('auditHeld', { time: formatTime(language, params.get(UNTIL)!, true) })}{' '}
                <a href={auditHash(withParams(params, { [UNTIL]: null, offset: null }))}>{t('auditNewest')}</a>
              </span>
            )}
            {loading && <span class="loading">{t('loading')}</span>}
            <ExportLink language={language} url={auditUrl(auditQuery(params))} total={list.total} />
          </div>
          {list.items.length === 0 ? (
            <p class="empty">{t('noRows')}</p>
          ) : (
            <div class="table-scroll">
              <table class="report audit" aria-busy={loading ? 'true' : undefined}>
                <thead>
                  <tr>
                    <th scope="col" aria-sort="descending">
                      {t('colTime')}
                    </th>
                    <th scope="col">{t('colAction')}</th>
                    <th scope="col">{t('colUser')}</th>
                    <th scope="col">{t('colUnit')}</th>
                    <th scope="col">{t('colAddress')}</th>
                    <th scope="col">{t('colName')}</th>
                    <th scope="col">{t('colDetail')}</th>
                  </tr>
                </thead>
                <tbody>
                  {list.items.map((e) => (
                    <EventRow key={e.id} language={language} event={e} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {list.total > 0 && <Pager language={language} total={list.total} paging={paging} onPage={page} />}
        </section>
      )}
    </main>
  );
}

function EventRow({ language, event }: { language: Language; event: AuditEventView }) {
  return (
    <tr data-action={event.action}>
      <td class="time">{formatTime(language, event.at, true)}</td>
      <td class="action">{auditActionName(language, event.action)}</td>
      <td class="user">{event.userName}</td>
      <td class="unit">{event.unit ? unitPlace(event.unit) : ''}</td>
      <td class="address">{event.address ?? ''}</td>
      <td class="name">{event.fileName ?? ''}</td>
      <td class="detail">
        <AuditDetail language={language} event={event} />
      </td>
    </tr>
  );
}

/** The note in the reader's words, what only an investigator needs under 详情; an older event's English detail there. */
function AuditDetail({ language, event }: { language: Language; event: AuditEventView }) {
  if (event.note === null) return event.detail ? <Technical language={language}>{event.detail}</Technical> : null;
  const technical = auditNoteTechnical(event.note);
  return (
    <>
      {auditNoteText(language, event.note)}
      {technical && <Technical language={language}>{technical}</Technical>}
    </>
  );
}
