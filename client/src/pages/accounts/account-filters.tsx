import { ACCOUNT_STATES, ROLES } from '../../../../shared/accounts.js';
import { translator, type Language } from '../../i18n/index.js';
import { formText } from '../form-text.js';
import type { AccountFilterValues } from './account-query.js';
import { roleName, STATE_KEYS } from './account-words.js';

/** The search form above the list: its fields start from the filters shown. */
export function AccountFilters({
  language,
  filters,
  onSearch,
}: {
  language: Language;
  filters: AccountFilterValues;
  onSearch: (filters: AccountFilterValues) => void;
}) {
  const t = translator(language);
  const search = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    onSearch({ q: formText(form, 'q').trim(), role: formText(form, 'role'), state: formText(form, 'state') });
  };
  return (
    <form role="search" class="search filters-row" onSubmit={search}>
      <label>
        <span class="visually-hidden">{t('accountSearch')}</span>
        <input name="q" type="search" placeholder={t('accountSearch')} maxLength={64} defaultValue={filters.q} />
      </label>
      <label>
        <span class="visually-hidden">{t('accountRole')}</span>
        <select name="role" defaultValue={filters.role}>
          <option value="">{t('accountAllRoles')}</option>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {roleName(t, r)}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span class="visually-hidden">{t('accountState')}</span>
        <select name="state" defaultValue={filters.state}>
          <option value="">{t('accountAllStates')}</option>
          {ACCOUNT_STATES.map((s) => (
            <option key={s} value={s}>
              {t(STATE_KEYS[s])}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">{t('searchButton')}</button>
    </form>
  );
}
