import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { translator, type Language, type MessageKey } from '../../i18n/index.js';
import {
  Field,
  FormProblem,
  focusFirstInvalid,
  NO_ERRORS,
  placeError,
  useCheckedForm,
  type FieldErrors,
} from '../field.js';
import { formText } from '../form-text.js';
import { DateInput, setDayField } from '../date-field.js';
import { UnitFields } from '../unit-filter.js';
import type { UnitLevels } from '../unit-levels.js';
import { PERIODS, periodDays, type Period } from './periods.js';
import { describeReportError } from './problem.js';

export type Values = Record<string, string | null>;

/** What the report filters need of a table's view (useView's, in view.tsx, is one). */
export interface FilteredView {
  language: Language;
  params: URLSearchParams;
  units: UnitLevels;
  /** Applies new filters. */
  filter: (values: Values) => void;
}

/**
 * A filter form over the hash parameters: its fields start from the current view, and applying
 * it replaces them (empty fields are dropped). Remounted (keyed) when the view changes elsewhere.
 *
 * A field the browser finds wrong stops the form; a view the server refuses (`error`, for the
 * view the form shows) is shown at the field it names, or below the form. Either way the first
 * field with a problem takes the focus, unless the reader is busy elsewhere on the page.
 */
export function FilterForm({
  language,
  names,
  onApply,
  error,
  check,
  children,
}: {
  language: Language;
  /** The parameters this form owns: "clear" empties them. */
  names: readonly string[];
  onApply: (values: Values) => void;
  /** Why the server refused the view shown, if it did. */
  error: unknown;
  /** What the fields' own constraints cannot say is wrong, by field. */
  check?: (form: FormData) => Record<string, string>;
  children: (errors: FieldErrors) => ComponentChildren;
}) {
  const t = translator(language);
  const checked = useCheckedForm({
    language,
    t,
    ...(check && { check }),
    places: { fields: names },
    send: async (form) => onApply(Object.fromEntries(names.map((name) => [name, formText(form, name).trim() || null]))),
  });
  const refused =
    error === null || error === undefined
      ? NO_ERRORS
      : placeError(language, error, { fields: names, describe: (e) => describeReportError(language, e) });
  const errors = Object.keys(checked.errors).length > 0 ? checked.errors : refused;
  const refusedKey = JSON.stringify(refused);
  useEffect(() => {
    const active = document.activeElement;
    if (active === null || active === document.body || checked.ref.current?.contains(active))
      focusFirstInvalid(checked.ref.current);
  }, [refusedKey]);
  return (
    <form
      class="filter-bar"
      role="search"
      aria-label={t('filters')}
      ref={checked.ref}
      onSubmit={checked.submit}
      noValidate
    >
      {children(errors)}
      <div class="actions">
        <button type="submit">{t('applyFilters')}</button>
        <button
          type="button"
          class="secondary"
          onClick={() => onApply(Object.fromEntries(names.map((name) => [name, null])))}
        >
          {t('clearFilters')}
        </button>
      </div>
      <FormProblem errors={errors} />
    </form>
  );
}

/** 从 … 至 …: two days, both included, in the page's language (the form sends `from` and `to` as YYYY-MM-DD). */
export function DayFields({
  language,
  params,
  errors,
}: {
  language: Language;
  params: URLSearchParams;
  errors: FieldErrors;
}) {
  const t = translator(language);
  return (
    <>
      <Field label={t('fromDay')} errors={errors}>
        <DateInput name="from" language={language} label={t('fromDay')} defaultValue={params.get('from') ?? ''} />
      </Field>
      <Field label={t('toDay')} errors={errors}>
        <DateInput name="to" language={language} label={t('toDay')} defaultValue={params.get('to') ?? ''} />
      </Field>
    </>
  );
}

export const REPORT_FILTERS = ['from', 'to', 'city', 'county', 'town', 'q', 'min', 'user'] as const;

/** The report tables' filters: days, unit subtree, minimum count (where the table has one), file name, user. */
export function ReportFilters({
  view: { language, params, filter: onApply, units },
  error,
  min,
  user,
  daysLabel,
}: {
  /** The table's view: its filters are read from its parameters, and applied through it. */
  view: FilteredView;
  /** Why the server refused the table's view, if it did. */
  error: unknown;
  /** The table's smallest `min`, when it takes one. */
  min?: { least: number; label: string };
  user?: boolean;
  /** What the days filter selects by, where it is not the upload day. */
  daysLabel?: string;
}) {
  const t = translator(language);
  const names = REPORT_FILTERS.filter((name) => (name !== 'min' || min) && (name !== 'user' || user));
  // The table's own default minimum stays out of the link.
  const apply = (values: Values) =>
    onApply(min && values.min === String(min.least) ? { ...values, min: null } : values);
  return (
    <FilterForm key={params.toString()} language={language} names={names} onApply={apply} error={error}>
      {(errors) => (
        <>
          <fieldset class="dates">
            <legend>{daysLabel ?? t('filterDays')}</legend>
            <DayFields language={language} params={params} errors={errors} />
            <QuickPeriods language={language} params={params} />
          </fieldset>
          <UnitFields language={language} params={params} errors={errors} levels={units} />
          <div class="more-fields">
            {min && (
              <Field label={min.label} errors={errors}>
                <input
                  type="number"
                  name="min"
                  min={min.least}
                  max={1_000_000}
                  step={1}
                  defaultValue={params.get('min') ?? String(min.least)}
                  class="narrow"
                />
              </Field>
            )}
            {user && (
              <Field label={t('filterUser')} errors={errors}>
                <input name="user" maxLength={64} defaultValue={params.get('user') ?? ''} />
              </Field>
            )}
            <Field label={t('filterFileName')} errors={errors} class="wide">
              <input type="search" name="q" maxLength={200} defaultValue={params.get('q') ?? ''} />
            </Field>
          </div>
        </>
      )}
    </FilterForm>
  );
}

/**
 * The unit filter as a path (all units › city › county › town), each step a link up to it. An
 * administrator of a subtree starts at its own unit (沧州市 / 青县 › 清州镇): the steps above it
 * are out of its reach, so they are neither shown as places to go nor links (the server would
 * narrow them back anyway).
 */
export function UnitTrail({
  language,
  params,
  hrefFor,
  reach,
}: {
  language: Language;
  params: URLSearchParams;
  hrefFor: (params: URLSearchParams) => string;
  /** What the administrator reaches (null: the whole archive). */
  reach: { city: string; county?: string; town?: string } | null;
}) {
  const t = translator(language);
  const names = ['city', 'county', 'town'] as const;
  const levels = names.filter((name, i, all) => all.slice(0, i + 1).every((n) => params.get(n)));
  // The levels the reach fixes (one for a city's administrator, two for a county's) make one step.
  const fixed = reach ? names.filter((n) => reach[n]).length : 0;
  if (levels.length === 0 || levels.length < fixed) return null;
  const upTo = (depth: number) => {
    const next = new URLSearchParams(params);
    next.delete('offset');
    names.slice(depth).forEach((name) => next.delete(name));
    return hrefFor(next);
  };
  const steps: Array<{ key: string; text: string; depth: number }> = [
    fixed === 0
      ? { key: 'all', text: t('allUnits'), depth: 0 }
      : {
          key: 'own',
          text: levels
            .slice(0, fixed)
            .map((n) => params.get(n))
            .join(' / '),
          depth: fixed,
        },
    ...levels.slice(fixed).map((name, i) => ({ key: name, text: params.get(name)!, depth: fixed + i + 1 })),
  ];
  return (
    <nav class="trail" aria-label={t('unitTrail')}>
      {steps.map((step, i) => (
        <span key={step.key}>
          {i > 0 && <span aria-hidden="true"> › </span>}
          {i === steps.length - 1 ? (
            <strong aria-current="location">{step.text}</strong>
          ) : (
            <a href={upTo(step.depth)}>{step.text}</a>
          )}
        </span>
      ))}
    </nav>
  );
}

const NAMES: Record<Period, MessageKey> = {
  thisMonth: 'periodThisMonth',
  lastMonth: 'periodLastMonth',
  thisQuarter: 'periodThisQuarter',
  thisYear: 'periodThisYear',
  lastYear: 'periodLastYear',
};

/**
 * One click for the periods administrators report on: fills the form's two days and applies it,
 * so the other filters stay as they are. The chosen one shows pressed.
 */
export function QuickPeriods({ language, params }: { language: Language; params: URLSearchParams }) {
  const t = translator(language);
  const today = new Date();
  const choose = (event: Event, period: Period) => {
    const form = (event.currentTarget as HTMLElement).closest('form');
    if (!form) return;
    const { from, to } = periodDays(period, today);
    setDayField(form, 'from', from, language);
    setDayField(form, 'to', to, language);
    form.requestSubmit();
  };
  return (
    <div class="quick-periods" role="group" aria-label={t('quickPeriods')}>
      {PERIODS.map((period) => {
        const { from, to } = periodDays(period, today);
        const chosen = params.get('from') === from && params.get('to') === to;
        return (
          <button
            key={period}
            type="button"
            class="secondary"
            aria-pressed={chosen ? 'true' : 'false'}
            onClick={(event) => choose(event, period)}
          >
            {t(NAMES[period])}
          </button>
        );
      })}
    </div>
  );
}
