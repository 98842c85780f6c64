import { ApiError, describeError, translator, type Language, type MessageKey } from '../../i18n/index.js';

/** The server's filter rules (shared/reports.ts) that an administrator can break, in their own words. */
const KNOWN_RULES: Array<[RegExp, MessageKey]> = [
  [/county needs city/, 'ruleCountyNeedsCity'],
  [/town needs county/, 'ruleTownNeedsCounty'],
  [/from is after to/, 'ruleFromAfterTo'],
];

/** What went wrong with a report request: the translated rule, or the server's own message (it names the field). */
export function describeReportError(language: Language, error: unknown): string {
  // The filters' only "not found": a unit outside the reach (from a link; the unit filter offers none).
  if (error instanceof ApiError && error.code === 'not_found') return translator(language)('ruleUnitOutsideReach');
  if (error instanceof ApiError && error.code === 'validation_failed') {
    const known = KNOWN_RULES.find(([pattern]) => pattern.test(error.message));
    if (known) return translator(language)(known[1]);
    return translator(language)('invalidFilter', { message: error.message });
  }
  return describeError(language, error);
}
