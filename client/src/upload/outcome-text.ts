import { reasonParts, SKIPPED_AS_UPLOADED, type ReceiptOutcome } from '../../../shared/receipts.js';
import { ApiError, NetworkError } from '../errors.js';
import { describeError, isErrorCode, translator, type Language } from '../i18n/index.js';
import { formatBytes } from '../pages/format.js';

/**
 * Why a file failed, in the clerk's words: an archive error code (its message), or the page's own
 * (`unreadable`, `network`, `payload_too_large` with the limit as its message).
 */
export function reasonText(language: Language, code: string, message = ''): string {
  const t = translator(language);
  if (code === 'payload_too_large' && /^\d+$/.test(message))
    return t('fileTooLarge', { limit: formatBytes(Number(message)) });
  if (code === 'unreadable') return t('hashFailed');
  if (code === SKIPPED_AS_UPLOADED) return t('reasonAlreadyUploaded');
  if (code === 'network') return describeError(language, new NetworkError());
  if (isErrorCode(code)) return describeError(language, new ApiError(0, code, message));
  return describeError(language, new Error(message || code));
}

/** A receipt's reason (see receiptReason) in the reader's words. */
export function receiptReasonText(language: Language, reason: string): string {
  const { code, limitBytes } = reasonParts(reason);
  return reasonText(language, code, limitBytes === undefined ? '' : String(limitBytes));
}

/** One word for how a file ended (a receipt's 结果 column). */
export function outcomeWord(language: Language, outcome: ReceiptOutcome): string {
  const t = translator(language);
  return t(
    outcome === 'instant'
      ? 'outcomeInstant'
      : outcome === 'stored'
        ? 'outcomeStored'
        : outcome === 'duplicate'
          ? 'outcomeDuplicate'
          : outcome === 'skipped'
            ? 'outcomeSkipped'
            : 'outcomeFailed',
  );
}
