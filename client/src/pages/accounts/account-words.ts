import type { AccountState, Role } from '../../../../shared/accounts.js';
import type { Translate } from '../../i18n/index.js';

/** A role in the reader's words. */
export const roleName = (t: Translate, role: Role) => (role === 'admin' ? t('roleAdmin') : t('roleClerk'));

/** The text of each account state (the list's badges and its filter). */
export const STATE_KEYS = {
  active: 'stateActive',
  must_change_password: 'stateMustChange',
  throttled: 'stateThrottled',
  disabled: 'stateDisabled',
} as const satisfies Record<AccountState, string>;
