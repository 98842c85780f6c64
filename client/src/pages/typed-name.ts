import { DISPLAY_NAME_RULE } from '../../../shared/accounts.js';
import { typedName, type NameRule } from '../../../shared/typed-name.js';
import type { Translate } from '../i18n/index.js';

/**
 * What a name field refuses before sending, by the server's own rule (shared/typed-name.ts), at
 * the field: names of people (姓名), of units, of API tokens.
 */
export function nameProblems(t: Translate, typed: string, rule: NameRule, field: string): Record<string, string> {
  const checked = typedName(typed, rule);
  if (checked.ok) return {};
  const person = rule === DISPLAY_NAME_RULE;
  switch (checked.problem) {
    case 'empty':
      return { [field]: t('fieldRequired') };
    case 'too_long':
      return { [field]: t(person ? 'displayNameTooLong' : 'nameTooLong', { max: checked.max }) };
    case 'hidden_character':
      return { [field]: person ? t('displayNameHidden') : t('nameHidden', { character: checked.character }) };
    case 'path_separator':
      return { [field]: t('unitNameSlash', { character: checked.character }) };
    case 'no_visible_character':
      return { [field]: t('nameNoVisible') };
  }
}

/** A person's name (姓名): the account pages and 我的账号 ask for one. */
export function displayNameProblems(t: Translate, typed: string, field = 'displayName'): Record<string, string> {
  return nameProblems(t, typed, DISPLAY_NAME_RULE, field);
}
