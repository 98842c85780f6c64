import { ERROR_CODES, type ErrorCode } from '../../../shared/errors.js';
import type { AuditAction } from '../../../shared/schemas.js';
import { ApiError, NetworkError } from '../errors.js';
import { formatBytes } from '../pages/format.js';
import { AUDIT_ACTION_NAMES } from '../../../shared/audit-notes.js';
import { CONFLICT_MESSAGES, ERROR_MESSAGES, MESSAGES, type Language, type MessageKey } from './messages.js';

export type { Language, MessageKey };
export { ApiError, NetworkError };

const ENGLISH_PLURALS = new Intl.PluralRules('en');

/**
 * Puts values into a message. `{n, plural, one {# row} other {# rows}}` picks the English form
 * for n (`#` is n); Chinese messages have no plural forms and never use it.
 */
export function fill(template: string, vars: Record<string, string | number>): string {
  return template
    .replace(
      /\{(\w+), plural, one \{([^{}]*)\} other \{([^{}]*)\}\}/g,
      (whole, name: string, one: string, other: string) => {
        const value = vars[name];
        if (value === undefined) return whole;
        const form = ENGLISH_PLURALS.select(Number(String(value).replace(/,/g, ''))) === 'one' ? one : other;
        return form.replace(/#/g, String(value));
      },
    )
    .replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

export type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

export function translator(language: Language): Translate {
  return (key, vars = {}) => fill(MESSAGES[language][key], vars);
}

export function auditActionName(language: Language, action: AuditAction): string {
  return AUDIT_ACTION_NAMES[language][action] ?? action;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** A wait in words: seconds under two minutes, else whole minutes. */
function waitWords(language: Language, seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  if (language === 'zh-CN') return s < 120 ? `${s} 秒` : `${Math.ceil(s / 60)} 分钟`;
  return s < 120 ? `${s} second${s === 1 ? '' : 's'}` : `${Math.ceil(s / 60)} minutes`;
}

/** What went wrong and what to do, in the clerk's language. */
export function describeError(language: Language, error: unknown): string {
  const t = translator(language);
  if (error instanceof ApiError) {
    const { limitBytes, reason, withdrawDays, fileName, holdReason, action } = error.details;
    if (
      error.code === 'conflict' &&
      typeof reason === 'string' &&
      Object.prototype.hasOwnProperty.call(CONFLICT_MESSAGES[language], reason)
    )
      return CONFLICT_MESSAGES[language][reason as keyof (typeof CONFLICT_MESSAGES)[Language]];
    return fill(ERROR_MESSAGES[language][error.code], {
      wait: waitWords(language, error.retryAfterSeconds ?? 60),
      message: error.message,
      limit: typeof limitBytes === 'number' ? formatBytes(limitBytes) : t('limitUnknown'),
      // WITHDRAW_DAYS as the server has it (30 unless configured).
      days: typeof withdrawDays === 'number' ? withdrawDays : 30,
      // 冻结: the held file, the hold's reason, and what it was kept from.
      fileName: typeof fileName === 'string' ? fileName : '',
      holdReason: typeof holdReason === 'string' ? holdReason : '',
      heldAction: t(
        action === 'purge' ? 'heldActionPurge' : action === 'dispose' ? 'heldActionDispose' : 'heldActionWithdraw',
      ),
    });
  }
  if (error instanceof NetworkError) return t('networkError');
  return t('unknownError', { message: error instanceof Error ? error.message : String(error) });
}
