import { DISPLAY_NAME_MAX, displayNameProblem } from '../../../shared/accounts.js';
import type { Translate } from '../i18n/index.js';

/**
 * What a name field (姓名) refuses before sending, by the server's own rule, at the field: the
 * account pages and 我的账号 ask for names.
 */
export function displayNameProblems(t: Translate, typed: string, field = 'displayName'): Record<string, string> {
  const problem = displayNameProblem(typed.trim());
  if (problem === 'too_long') return { [field]: t('displayNameTooLong', { max: DISPLAY_NAME_MAX }) };
  if (problem === 'hidden_characters') return { [field]: t('displayNameHidden') };
  return {};
}
