import { useState } from 'preact/hooks';
import { useModal } from './modal.js';
import { DISPOSAL_CONFIRMATION, type DisposalRequest } from '../../../shared/disposals.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { go } from '../route.js';

/**
 * 销毁, confirmed twice: first the dialog says what happens (the bytes go for every unit, every
 * upload leaves the counts, the trash's too, and it cannot be undone); then the administrator
 * gives the reason and the 审批文号 and types 销毁. A modal `<dialog>`: Esc or 取消 closes it. A
 * refusal from the server (a held file, say) stays in the dialog.
 */
export function DisposeDialog({
  language,
  what,
  onDispose,
  onClose,
}: {
  language: Language;
  /** What is disposed of, in words: a file's name, or a receipt's files. */
  what: string;
  onDispose: (fields: Pick<DisposalRequest, 'reason' | 'approvalRef' | 'confirm'>) => Promise<void>;
  onClose: () => void;
}) {
  const t = translator(language);
  const dialog = useModal();
  const [step, setStep] = useState<1 | 2>(1);
  const [reason, setReason] = useState('');
  const [approvalRef, setApprovalRef] = useState('');
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (step === 1) return setStep(2);
    if (!reason.trim() || !approvalRef.trim()) return setError(t('disposeFieldsRequired'));
    if (typed.trim() !== DISPOSAL_CONFIRMATION) return setError(t('disposeTypeMismatch'));
    setBusy(true);
    setError(null);
    try {
      await onDispose({ reason: reason.trim(), approvalRef: approvalRef.trim(), confirm: DISPOSAL_CONFIRMATION });
      dialog.current?.close();
    } catch (e) {
      setError(describeError(language, e));
      setBusy(false);
    }
  };
  const input = (set: (v: string) => void) => (e: Event) => {
    set((e.target as HTMLInputElement).value);
    setError(null);
  };
  return (
    <dialog
      ref={dialog}
      class="withdraw dispose"
      aria-labelledby="dispose-title"
      aria-describedby="dispose-effect"
      onClose={onClose}
    >
      <form onSubmit={(e) => void submit(e)}>
        <h2 id="dispose-title">{t('disposeTitle', { what })}</h2>
        <p id="dispose-effect" class="withdraw-effect">
          {t('disposeEffect')}
        </p>
        {step === 2 && (
          <>
            <label class="field">
              <span>{t('disposeReason')}</span>
              <textarea rows={2} maxLength={500} aria-required="true" value={reason} onInput={input(setReason)} />
            </label>
            <label class="field">
              <span>{t('disposeApprovalRef')}</span>
              <input
                type="text"
                maxLength={100}
                aria-required="true"
                value={approvalRef}
                onInput={input(setApprovalRef)}
              />
            </label>
            <label class="field">
              <span>{t('disposeTypeConfirm')}</span>
              <input
                type="text"
                maxLength={10}
                aria-required="true"
                autoComplete="off"
                value={typed}
                onInput={input(setTyped)}
              />
            </label>
          </>
        )}
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <div class="upload-actions">
          <button type="submit" class="danger" disabled={busy}>
            {step === 1 ? t('disposeNext') : t('disposeConfirm')}
          </button>
          <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </dialog>
  );
}

/**
 * A 销毁 button for top-level administrators, with its dialog: files by id, or a receipt's. Once
 * done it opens the register, where the entries are.
 */
export function DisposeButton({
  api,
  language,
  what,
  target,
  label,
  small = false,
}: {
  api: ArchiveApi;
  language: Language;
  what: string;
  target: { fileIds: string[] } | { receipt: string };
  /** The button's accessible name, when more than its text. */
  label?: string;
  small?: boolean;
}) {
  const t = translator(language);
  const [open, setOpen] = useState(false);
  return (
    <>
      <button
        type="button"
        class={small ? 'secondary small danger-text' : 'secondary danger-text'}
        aria-label={label}
        onClick={() => setOpen(true)}
      >
        {'receipt' in target ? t('disposeWhole') : t('dispose')}
      </button>
      {open && (
        <DisposeDialog
          language={language}
          what={what}
          onDispose={async (fields) => {
            await api.dispose({ ...fields, ...target });
            go('#/disposals');
          }}
          onClose={() => setOpen(false)}
        />
      )}
    </>
  );
}
