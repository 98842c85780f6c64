import { nameProblemText, typedName, type NameRule } from '../../shared/typed-name.js';
import { ValidationError } from '../errors.js';

/**
 * A name a person typed, normalised and checked by the rule every way in shares
 * (shared/typed-name.ts): for the services and the archive command, which take names that no
 * request schema has seen. A refusal names the field (or the command's flag).
 */
export function checkedName(value: string, rule: NameRule, field: string): string {
  const typed = typedName(value, rule);
  if (typed.ok) return typed.name;
  // A command's flag is named as typed ("--city: …"); a request's field as the schemas name it.
  const what = field.startsWith('--') ? field : `Invalid ${field}`;
  throw new ValidationError(`${what}: ${nameProblemText(typed)}.`, { field });
}
