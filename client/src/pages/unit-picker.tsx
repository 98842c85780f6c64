import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { ARCHIVE_UNIT_ID, type UnitView } from '../../../shared/units.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { ErrorNote } from './controls.js';
import { Control } from './field.js';

/** A unit, or the archive itself (top-level administrators). */
export type PickedUnit = UnitView | typeof ARCHIVE_UNIT_ID;

/** How long typing may pause before the search runs. */
const SEARCH_DELAY_MS = 250;

interface Level {
  options: UnitView[];
  selected: string;
}

/**
 * A unit from the directory, within the administrator's reach: searched by name or code, or
 * chosen level by level (province, city, county, town). `allowArchive` offers the archive itself.
 */
export function UnitPicker({
  api,
  language,
  value,
  onChange,
  allowArchive = false,
  idPrefix,
  error: problem,
}: {
  api: ArchiveApi;
  language: Language;
  value: PickedUnit | null;
  onChange: (unit: PickedUnit | null) => void;
  allowArchive?: boolean;
  idPrefix: string;
  /** What is wrong with the choice (none made, one refused): shown at the search, which then takes the focus. */
  error?: string | undefined;
}) {
  const t = translator(language);
  const [levels, setLevels] = useState<Level[]>([]);
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<UnitView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const searchTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const searchId = useId();

  useEffect(() => {
    api.units({ limit: 500 }).then(
      (top) => setLevels([{ options: top.items, selected: '' }]),
      (e: unknown) => setError(describeError(language, e)),
    );
  }, []);

  useEffect(() => {
    clearTimeout(searchTimer.current);
    if (query.trim() === '') return setFound(null);
    let current = true;
    searchTimer.current = setTimeout(() => {
      api.units({ q: query.trim(), limit: 20 }).then(
        (result) => current && setFound(result.items),
        (e: unknown) => current && setError(describeError(language, e)),
      );
    }, SEARCH_DELAY_MS);
    return () => {
      current = false;
    };
  }, [query]);

  /** A choice at one level: the levels below are replaced by its children. */
  const choose = async (depth: number, id: string) => {
    const unit = levels[depth]?.options.find((u) => u.id === id);
    const kept = levels.slice(0, depth + 1).map((l, i) => (i === depth ? { ...l, selected: id } : l));
    setLevels(kept);
    onChange(
      unit ??
        (depth > 0 ? (levels[depth - 1]!.options.find((u) => u.id === levels[depth - 1]!.selected) ?? null) : null),
    );
    if (!unit) return;
    try {
      const children = await api.units({ parent: unit.id, limit: 500 });
      if (children.items.length > 0) setLevels([...kept, { options: children.items, selected: '' }]);
    } catch (e) {
      setError(describeError(language, e));
    }
  };

  const pickFound = (unit: UnitView) => {
    onChange(unit);
    setQuery('');
    setFound(null);
  };

  const chosen =
    value === ARCHIVE_UNIT_ID
      ? t('unitArchive')
      : value
        ? `${value.path}${value.code ? ` (${value.code})` : ''}`
        : null;
  return (
    <fieldset class="unit-picker">
      <legend>{t('unitLabel')}</legend>
      <p class="picked" aria-live="polite" id={`${idPrefix}-picked`}>
        {chosen ? t('unitChosen', { unit: chosen }) : t('unitNoneChosen')}
      </p>
      <div class="field">
        <label for={searchId}>{t('unitSearch')}</label>
        <Control id={searchId} error={problem}>
          <input
            type="search"
            value={query}
            maxLength={60}
            placeholder={t('unitSearchPlaceholder')}
            onInput={(e) => setQuery(e.currentTarget.value)}
          />
        </Control>
      </div>
      {found !== null && (
        <ul class="unit-results" aria-label={t('unitSearchResults')}>
          {found.length === 0 && <li>{t('unitNoMatch')}</li>}
          {found.map((unit) => (
            <li key={unit.id}>
              <button type="button" class="link" onClick={() => pickFound(unit)}>
                {unit.path}
              </button>{' '}
              <span class="code">{unit.code ?? t('unitCustom')}</span>
            </li>
          ))}
        </ul>
      )}
      {levels.length === 1 && levels[0]!.options.length === 0 && <p class="hint">{t('unitDirectoryEmpty')}</p>}
      <div class="cascade">
        {levels.map((level, depth) => (
          <label key={depth}>
            <span class="visually-hidden">{t('unitLevel', { n: depth + 1 })}</span>
            <select value={level.selected} onChange={(e) => void choose(depth, e.currentTarget.value)}>
              <option value="">{depth === 0 ? t('unitChooseTop') : t('unitChooseBelow')}</option>
              {level.options.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.name}
                </option>
              ))}
            </select>
          </label>
        ))}
      </div>
      {allowArchive && (
        <label class="check">
          <input
            type="checkbox"
            checked={value === ARCHIVE_UNIT_ID}
            onChange={(e) => onChange(e.currentTarget.checked ? ARCHIVE_UNIT_ID : null)}
          />
          <span>{t('unitArchiveChoice')}</span>
        </label>
      )}
      <ErrorNote error={error} />
    </fieldset>
  );
}
