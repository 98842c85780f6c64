import { useState } from 'preact/hooks';
import { HOLD_REASON_MAX, HOLD_STATES, type HoldState, type HoldView } from '../../../shared/holds.js';
import { ARCHIVE_UNIT_ID } from '../../../shared/units.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language, type MessageKey } from '../i18n/index.js';
import { ConfirmAction, ErrorNote, Pager } from './controls.js';
import { Field, FormProblem, useCheckedForm } from './field.js';
import { formatCount, formatTime } from './format.js';
import { TableSection } from './table/table-section.js';
import { useLoaded } from './table/use-loaded.js';
import { UnitPicker, type PickedUnit } from './unit-picker.js';
import { answered, RetryKey } from '../request-keys.js';

const PAGE_SIZE = 50;

const reasonOf = (form: FormData): string => {
  const reason = form.get('reason');
  return typeof reason === 'string' ? reason.trim() : '';
};

const STATE_KEYS: Record<HoldState, MessageKey> = {
  active: 'holdsStateActive',
  lifted: 'holdsStateLifted',
  all: 'holdsStateAll',
};

/**
 * 冻结, for administrators: the holds of their reach (what is held, why, by whom and when, lifted
 * or not), 解除冻结 after a confirmation that says what it lets happen again, and a form to hold
 * every file of a unit. Files are held one by one from 本单位文件.
 */
export function HoldsPage({ api, language }: { api: ArchiveApi; language: Language }) {
  const t = translator(language);
  const [state, setState] = useState<HoldState>('active');
  const [offset, setOffset] = useState(0);
  // Bumped after a change, so the list is read again.
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<string | null>(null);
  // What was done, worded when shown (so it follows a change of language).
  const [done, setDone] = useState<{ key: MessageKey; what?: string } | null>(null);
  const loaded = useLoaded(`${state}:${offset}:${version}`, () => api.holds({ state, limit: PAGE_SIZE, offset }));
  const lift = (hold: HoldView) => {
    setError(null);
    setDone(null);
    api.liftHold(hold.id).then(
      () => {
        setDone({ key: 'holdsLifted' });
        setVersion((v) => v + 1);
      },
      (e: unknown) => setError(describeError(language, e)),
    );
  };
  const scopeText = (hold: HoldView) =>
    hold.scope.kind === 'unit'
      ? t('holdsScopeUnit', { path: hold.scope.unit.path })
      : t('holdsScopeFiles', { count: formatCount(language, hold.scope.files.length) });
  return (
    <main class="page wide" aria-labelledby="holds-title">
      <h1 id="holds-title">{t('holdsTitle')}</h1>
      <p class="hint">{t('holdsHint')}</p>
      <PlaceUnitHold
        api={api}
        language={language}
        onPlaced={(what) => {
          setError(null);
          setDone({ key: 'holdsPlaced', what });
          setState('active');
          setOffset(0);
          setVersion((v) => v + 1);
        }}
      />
      <ErrorNote error={error} />
      {done && (
        <p role="status" class="notice">
          {t(done.key, { what: done.what ?? '' })}
        </p>
      )}
      <div class="inline-form">
        <label>
          <span>{t('holdsShow')}</span>
          <select
            value={state}
            onChange={(e) => {
              setState(e.currentTarget.value as HoldState);
              setOffset(0);
            }}
          >
            {HOLD_STATES.map((s) => (
              <option key={s} value={s}>
                {t(STATE_KEYS[s])}
              </option>
            ))}
          </select>
        </label>
      </div>
      <TableSection
        language={language}
        label={t('holdsTitle')}
        loaded={loaded}
        empty={t('holdsEmpty')}
        columns={[
          {
            label: t('holdsColScope'),
            className: 'name',
            cell: (hold: HoldView) =>
              hold.scope.kind === 'files' ? (
                <details class="also">
                  <summary>{scopeText(hold)}</summary>
                  <ul>
                    {hold.scope.files.map((f) => (
                      <li key={f.id}>{f.name}</li>
                    ))}
                  </ul>
                </details>
              ) : (
                scopeText(hold)
              ),
          },
          { label: t('holdsColReason'), className: 'reason', cell: (hold) => hold.reason },
          {
            label: t('holdsColPlaced'),
            cell: (hold) =>
              t('holdsPlacedBy', { user: hold.placedBy.username, time: formatTime(language, hold.placedAt) }),
          },
          {
            label: t('holdsColState'),
            cell: (hold) =>
              hold.active ? (
                <strong>{t('holdsActive')}</strong>
              ) : (
                t('holdsLiftedBy', {
                  user: hold.liftedBy?.username ?? '',
                  time: hold.liftedAt ? formatTime(language, hold.liftedAt) : '',
                })
              ),
          },
          {
            label: t('trashAction'),
            className: 'action',
            cell: (hold) =>
              hold.active && (
                <ConfirmAction
                  language={language}
                  label={t('holdsLift')}
                  on={scopeText(hold)}
                  question={t('holdsLiftQuestion')}
                  confirm={t('holdsLiftConfirm')}
                  onConfirm={() => lift(hold)}
                />
              ),
          },
        ]}
        rowKey={(hold) => hold.id}
        rowAttributes={(hold) => ({ 'data-active': hold.active ? 'yes' : 'no' })}
        tableClass="files holds"
        pager={(total) => (
          <Pager language={language} total={total} size={PAGE_SIZE} offset={offset} onOffset={setOffset} />
        )}
      />
    </main>
  );
}

/** 冻结一个单位: a unit of the reach (the picker offers only those) and the reason. */
function PlaceUnitHold({
  api,
  language,
  onPlaced,
}: {
  api: ArchiveApi;
  language: Language;
  onPlaced: (what: string) => void;
}) {
  const t = translator(language);
  const [unit, setUnit] = useState<PickedUnit | null>(null);
  const [formKey, setFormKey] = useState(0);
  // Placing the same hold again after its answer was lost places it once.
  const [retry] = useState(() => new RetryKey());
  const { ref, errors, busy, submit } = useCheckedForm({
    language,
    t,
    places: { fields: ['unit', 'reason'] },
    check: (form): Record<string, string> => ({
      ...(unit && unit !== ARCHIVE_UNIT_ID ? {} : { unit: t('holdsPickUnit') }),
      ...(reasonOf(form) ? {} : { reason: t('holdsReasonRequired') }),
    }),
    send: async (form) => {
      const picked = unit as Exclude<PickedUnit, typeof ARCHIVE_UNIT_ID>;
      const request = { unit: picked.id, reason: reasonOf(form) };
      await answered(retry, api.placeHold(request, retry.for(request)));
      setUnit(null);
      setFormKey((k) => k + 1);
      onPlaced(picked.path);
    },
  });
  return (
    <details class="card panel">
      <summary>{t('holdsNew')}</summary>
      <form key={formKey} ref={ref} onSubmit={submit} noValidate>
        <UnitPicker api={api} language={language} value={unit} onChange={setUnit} idPrefix="hold" error={errors.unit} />
        <Field label={t('holdsReason')} errors={errors}>
          <textarea name="reason" rows={2} maxLength={HOLD_REASON_MAX} aria-required="true" />
        </Field>
        <FormProblem errors={errors} />
        <button type="submit" class="danger" disabled={busy}>
          {t('holdsPlace')}
        </button>
      </form>
    </details>
  );
}
