import { ARCHIVE_UNIT_ID } from '../../../shared/units.js';
import { useMemo } from 'preact/hooks';
import { personLabel } from '../../../shared/accounts.js';
import { auditNoteTechnical, auditNoteText } from '../../../shared/audit-notes.js';
import { AUDIT_ACTIONS, type AuditEventView, type SessionView } from '../../../shared/schemas.js';
import { AUDIT_GROUP_NAMES } from '../../../shared/audit-notes.js';
import { auditUrl, type ArchiveApi } from '../api.js';
import { auditActionName, translator, type Language, type MessageKey } from '../i18n/index.js';
import { auditHash, go, withParams } from '../route.js';
import { archiveDayAndClock, formatTime, momentOnArchiveClock, unitPlace } from './format.js';
import { FilterForm, type Values } from './reports/filters.js';
import { Technical } from './controls.js';
import { DateInput, TimeInput } from './date-field.js';
import { Field } from './field.js';
import { formText } from './form-text.js';
import { UnitFields } from './unit-filter.js';
import { UnitLevels } from './unit-levels.js';
import { DEFAULT_PAGE_SIZE, pagingOf, type Paging } from './reports/query.js';
import { ExportLink, Pager } from './reports/table.js';
import { Switch } from './reports/view.js';
import type { Column } from './table/data-table.js';
import { TableSection } from './table/table-section.js';
import { useLoaded } from './table/use-loaded.js';

const FILTERS = ['from', 'to', 'action', 'user', 'city', 'county', 'town', 'q'] as const;
/**
 * The presets above the table. The page opens on 管理操作 (what administrators changed), not on
 * the thousands of uploads around it; 全部 (`group=all`) and the others are one click away. An
 * action chosen in the form is looked for among all events.
 */
const PRESETS = [...AUDIT_GROUP_NAMES, 'all'] as const;
type Preset = (typeof PRESETS)[number];
const PRESET_WORDS = {
  administration: 'auditGroupAdministration',
  signIn: 'auditGroupSignIn',
  files: 'auditGroupFiles',
  viewing: 'auditGroupViewing',
  all: 'auditGroupAll',
} as const satisfies Record<Preset, MessageKey>;
const DEFAULT_PRESET: Preset = 'administration';

/** The preset in force: the address's, or 全部 where an action is chosen, or the default. */
function presetOf(params: URLSearchParams): Preset {
  const given = params.get('group');
  if ((PRESETS as readonly string[]).includes(given ?? '')) return given as Preset;
  return params.get('action') ? 'all' : DEFAULT_PRESET;
}
/** The form's fields: the filters, the days of `from` and `to` with their times apart. */
const FIELDS = [...FILTERS, 'fromClock', 'toClock'] as const;
/**
 * The newest event of the first page, plus 1 ms: later pages ask for events before it, so events
 * recorded meanwhile (this page's own viewing among them) do not shift the pages being read.
 */
const UNTIL = 'until';

/**
 * A moment of the address (ISO 8601) as the form shows it: the day on the archive's clock (the
 * times of the table and the export), and its time unless it is the one an empty time stands for
 * (the day's first minute for 从, its last for 至).
 */
function localParts(iso: string | null, emptyClock: string): { day: string; clock: string } {
  const parts = iso ? archiveDayAndClock(iso) : null;
  if (!parts) return { day: '', clock: '' };
  return { day: parts.day, clock: parts.clock === emptyClock ? '' : parts.clock };
}
/** A day and time on the archive's clock (an empty time: `emptyClock`) as a moment of the address. */
function isoOf(day: string | null | undefined, clock: string | null | undefined, emptyClock: string): string | null {
  if (!day) return null;
  return momentOnArchiveClock(day, clock || emptyClock);
}
const DAY_START = '00:00';
const DAY_END = '23:59';

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
  const preset = presetOf(params);
  if (preset !== 'all') query.set('group', preset);
  const until = params.get(UNTIL);
  if (until) query.set('to', until);
  const { limit, offset } = { ...pagingOf(params), ...overrides };
  query.set('limit', String(limit));
  query.set('offset', String(offset));
  return query;
}

/** The audit log for administrators: who did what, when, from where; newest first. */
export function AuditPage({
  api,
  language,
  params,
  reach,
}: {
  api: ArchiveApi;
  language: Language;
  params: URLSearchParams;
  /** What the administrator reaches (null: the whole archive): the unit filter's choices. */
  reach: SessionView['reach'];
}) {
  const t = translator(language);
  const units = useMemo(() => new UnitLevels(api, reach), [api, reach]);
  const query = auditQuery(params);
  const key = query.toString();
  const loaded = useLoaded(key, (query) => api.audit(new URLSearchParams(query)));

  const show = (next: URLSearchParams) => go(auditHash(next));
  const paging = pagingOf(params);
  const { data: list, error, loading } = loaded;
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
        // An action chosen is looked for among all events (a preset's group might not hold it).
        group: values.action ? null : params.get('group'),
        from: isoOf(values.from, values.fromClock, DAY_START),
        to: isoOf(values.to, values.toClock, DAY_END),
        fromClock: null,
        toClock: null,
        offset: null,
        [UNTIL]: null,
      }),
    );
  // A time says nothing without its day.
  const clockWithoutDay = (form: FormData) =>
    Object.fromEntries(
      (['from', 'to'] as const)
        .filter((day) => formText(form, `${day}Clock`).trim() && !formText(form, day).trim())
        .map((day) => [`${day}Clock`, t('timeNeedsDate')]),
    );
  const from = localParts(params.get('from'), DAY_START);
  const to = localParts(params.get('to'), DAY_END);

  return (
    <main class="page wide" aria-labelledby="audit-title">
      <h1 id="audit-title">{t('auditTitle')}</h1>
      <FilterForm
        key={params.toString()}
        language={language}
        names={FIELDS}
        onApply={filter}
        error={error}
        check={clockWithoutDay}
      >
        {(errors) => (
          <>
            <fieldset class="dates">
              <legend>{t('filterTimes')}</legend>
              <Field label={t('fromTime')} errors={errors}>
                <DateInput name="from" language={language} label={t('fromTime')} defaultValue={from.day} />
              </Field>
              <Field label={t('fromClock')} errors={errors}>
                <TimeInput name="fromClock" language={language} hint={t('fromClockHint')} defaultValue={from.clock} />
              </Field>
              <Field label={t('toTime')} errors={errors}>
                <DateInput name="to" language={language} label={t('toTime')} defaultValue={to.day} />
              </Field>
              <Field label={t('toClock')} errors={errors}>
                <TimeInput name="toClock" language={language} hint={t('toClockHint')} defaultValue={to.clock} />
              </Field>
            </fieldset>
            <UnitFields language={language} params={params} errors={errors} levels={units} />
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
      <Switch
        label={t('auditPresets')}
        options={PRESETS.map((p) => [p, t(PRESET_WORDS[p])])}
        value={presetOf(params)}
        onChange={(p) =>
          show(
            withParams(params, { group: p === DEFAULT_PRESET ? null : p, action: null, offset: null, [UNTIL]: null }),
          )
        }
      />
      <TableSection
        language={language}
        label={t('auditTitle')}
        loaded={loaded}
        showError={false}
        empty={t('noRows')}
        tools={(found) => (
          <>
            {params.get(UNTIL) && (
              <span class="held">
                {t('auditHeld', { time: formatTime(language, params.get(UNTIL)!, true) })}{' '}
                <a href={auditHash(withParams(params, { [UNTIL]: null, offset: null }))}>{t('auditNewest')}</a>
              </span>
            )}
            <ExportLink language={language} url={auditUrl(auditQuery(params))} total={found.total} />
          </>
        )}
        columns={eventColumns(language)}
        rowKey={(e) => e.id}
        rowAttributes={(e) => ({ 'data-action': e.action })}
        // Newest first, always: the time column says so, and no header sorts.
        sorting={{ sort: 'at', order: 'desc' }}
        tableClass="report audit"
        pager={(total) => <Pager language={language} total={total} paging={paging} onPage={page} />}
      />
    </main>
  );
}

/** The log's columns: when, what, who, in which unit, from where, on which file, and the note. */
function eventColumns(language: Language): Column<AuditEventView>[] {
  const t = translator(language);
  return [
    { label: t('colTime'), sort: 'at', className: 'time', cell: (e) => formatTime(language, e.at, true) },
    { label: t('colAction'), className: 'action', cell: (e) => auditActionName(language, e.action) },
    // The login the event recorded, with the account's name now.
    { label: t('colUser'), className: 'user', cell: (e) => personLabel(e.userName, e.userDisplayName, language) },
    {
      label: t('colUnit'),
      className: 'unit',
      cell: (e) => (e.unit === null ? '' : e.unit.id === ARCHIVE_UNIT_ID ? t('unitArchive') : unitPlace(e.unit)),
    },
    { label: t('colAddress'), className: 'address', cell: (e) => e.address ?? '' },
    { label: t('colName'), className: 'name', cell: (e) => e.fileName ?? '' },
    { label: t('colDetail'), className: 'detail', cell: (e) => <AuditDetail language={language} event={e} /> },
  ];
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
