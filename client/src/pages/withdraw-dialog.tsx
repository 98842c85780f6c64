import { useState } from 'preact/hooks';
import { useModal } from './modal.js';
import { WITHDRAWAL_REASONS, type WithdrawalReason } from '../../../shared/withdrawals.js';
import { describeError, translator, type Language, type MessageKey } from '../i18n/index.js';
import { formatCount } from './format.js';

export const REASON_KEYS: Record<WithdrawalReason, MessageKey> = {
  wrong_file: 'reasonWrongFile',
  wrong_unit: 'reasonWrongUnit',
  repeated: 'reasonRepeated',
  must_not_keep: 'reasonMustNotKeep',
  other: 'reasonOther',
};

/**
 * 撤回 asks why, and says before anything happens what it does to the counts (they drop, and come
 * back on 恢复 within the trash's days). A modal `<dialog>`: Esc or 取消 closes it and focus
 * returns to the button that opened it. A refusal from the server stays in the dialog.
 */
export function WithdrawDialog({
  language,
  what,
  count,
  trashDays,
  onWithdraw,
  onClose,
}: {
  language: Language;
  /** TRASH_DAYS: how long a restore stays possible. */
  trashDays: number;
  /** What is withdrawn, in words: a file's name, or "整批" for a receipt. */
  what: string;
  count: number;
  onWithdraw: (reason: WithdrawalReason, note: string) => Promise<void>;
  onClose: () => void;
}) {
  const t = translator(language);
  const dialog = useModal();
  const [reason, setReason] = useState<WithdrawalReason | null>(null);
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!reason) return setError(t('withdrawPickReason'));
    if (reason === 'other' && !note.trim()) return setError(t('withdrawNoteRequired'));
    setBusy(true);
    setError(null);
    try {
      await onWithdraw(reason, note.trim());
      dialog.current?.close();
    } catch (e) {
      setError(describeError(language, e));
      setBusy(false);
    }
  };
  return (
    <dialog
      ref={dialog}
      class="withdraw"
      aria-labelledby="withdraw-title"
      aria-describedby="withdraw-effect"
      onClose={onClose}
    >
      <form onSubmit={(e) => void submit(e)}>
        <h2 id="withdraw-title">{t('withdrawTitle', { what, count: formatCount(language, count) })}</h2>
        <p id="withdraw-effect" class="withdraw-effect">
          {t('withdrawEffect', { days: trashDays })}
        </p>
        <fieldset>
          <legend>{t('withdrawReason')}</legend>
          {WITHDRAWAL_REASONS.map((r) => (
            <label key={r} class="choice">
              <input
                type="radio"
                name="withdraw-reason"
                value={r}
                checked={reason === r}
                onChange={() => {
                  setReason(r);
                  setError(null);
                }}
              />{' '}
              {t(REASON_KEYS[r])}
            </label>
          ))}
        </fieldset>
        {reason === 'other' && (
          <label class="field">
            <span>{t('withdrawNote')}</span>
            <textarea
              rows={2}
              maxLength={500}
              // Said by the dialog in the page's words, not the browser's own bubble.
              aria-required="true"
              value={note}
              onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)}
            />
          </label>
        )}
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <div class="upload-actions">
          <button type="submit" class="danger" disabled={busy}>
            {t('withdrawConfirm', { count: formatCount(language, count) })}
          </button>
          <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </dialog>
  );
}
