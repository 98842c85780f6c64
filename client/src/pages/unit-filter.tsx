import { useEffect, useState } from 'preact/hooks';
import type { UnitView } from '../../../shared/units.js';
import { describeError, translator, type Language, type MessageKey } from '../i18n/index.js';
import { ErrorNote } from './controls.js';
import { Field, type FieldErrors } from './field.js';
import { FILTER_LEVELS, type UnitLevels } from './unit-levels.js';

/** A level with more choices than this gets a box to find one by typing. */
const FIND_FROM = 15;

const LABELS: Record<(typeof FILTER_LEVELS)[number], MessageKey> = { city: 'city', county: 'county', town: 'town' };

/**
 * The unit filter: 市 → 县（市、区） → 乡（镇、街道）, each chosen from the directory within the
 * administrator's reach, the one below offered once the one above is chosen (so a county without
 * its city cannot be asked for), and cleared with it. The levels the reach fixes (a county
 * administrator's city and county) are shown, not offered. The form sends the names, as the
 * reports and the audit log filter by them.
 */
export function UnitFields({
  language,
  params,
  errors,
  levels,
}: {
  language: Language;
  /** The view's `city`, `county` and `town`. */
  params: URLSearchParams;
  errors: FieldErrors;
  levels: UnitLevels;
}) {
  const t = translator(language);
  const fixed = levels.fixed.length;
  const [names, setNames] = useState(() => {
    // A level counts only below a chosen one: `county` without `city` is not a choice.
    let above = true;
    return FILTER_LEVELS.map((level, depth) => {
      const name = depth < fixed ? levels.fixed[depth]! : above ? (params.get(level)?.trim() ?? '') : '';
      above = name !== '';
      return name;
    });
  });
  const [choices, setChoices] = useState<Array<UnitView[] | null>>([null, null, null]);
  const [finding, setFinding] = useState(['', '', '']);
  const [error, setError] = useState<string | null>(null);

  const key = names.join('\n');
  useEffect(() => {
    let current = true;
    // From the first open level down to the first not chosen; each level's list is asked for once.
    void (async () => {
      const found: Array<UnitView[] | null> = [null, null, null];
      let parent: UnitView | null = null;
      for (let depth = fixed; depth < FILTER_LEVELS.length; depth++) {
        if (depth > fixed && parent === null) break; // the level above is not chosen, or not in the directory
        found[depth] = await levels.choices(depth, parent);
        if (!current) return;
        setChoices([...found]);
        if (!names[depth]) break;
        parent = found[depth]!.find((u) => u.name === names[depth]) ?? null;
      }
      setChoices(found);
      setError(null);
    })().catch((e: unknown) => current && setError(describeError(language, e)));
    return () => {
      current = false;
    };
  }, [key]);

  const choose = (depth: number, name: string) => {
    setNames(names.map((n, i) => (i < depth ? n : i === depth ? name : '')));
    setFinding(finding.map((text, i) => (i > depth ? '' : text)));
  };

  return (
    <fieldset class="unit-fields">
      <legend>{t('filterUnit')}</legend>
      {FILTER_LEVELS.map((level, depth) => {
        const label = t(LABELS[level]);
        if (depth < fixed)
          return (
            <Field key={level} label={label} errors={errors}>
              <input name={level} value={names[depth]} readOnly class="fixed-unit" />
            </Field>
          );
        const listed = choices[depth];
        const find = finding[depth]!.normalize('NFKC').trim();
        const shown = (listed ?? []).filter((u) => !find || u.name.includes(find) || u.name === names[depth]);
        const others = names[depth] && !shown.some((u) => u.name === names[depth]);
        return (
          <div key={level} class="unit-level">
            <Field label={label} errors={errors}>
              <select
                name={level}
                value={names[depth]}
                disabled={depth > 0 && !names[depth - 1]}
                onChange={(e) => choose(depth, e.currentTarget.value)}
              >
                <option value="">{t('unitAny')}</option>
                {shown.map((u) => (
                  <option key={u.id} value={u.name}>
                    {u.name}
                  </option>
                ))}
                {/* A name from a link that the directory does not (or not yet) list stays chosen. */}
                {others && <option value={names[depth]}>{names[depth]}</option>}
              </select>
            </Field>
            {listed && listed.length > FIND_FROM && (
              <>
                <input
                  type="search"
                  class="unit-find"
                  aria-label={t('unitLevelFind', { level: label })}
                  placeholder={t('unitLevelFindPlaceholder')}
                  value={finding[depth]}
                  maxLength={30}
                  onInput={(e) => {
                    const text = e.currentTarget.value;
                    setFinding(finding.map((f, i) => (i === depth ? text : f)));
                  }}
                />
                <span class="field-hint" role="status">
                  {find && shown.length === 0 ? t('unitLevelNoneFound', { text: find, level: label }) : ''}
                </span>
              </>
            )}
          </div>
        );
      })}
      <ErrorNote error={error} />
    </fieldset>
  );
}
