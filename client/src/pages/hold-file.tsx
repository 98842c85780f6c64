import { useState } from 'preact/hooks';
import { useModal } from './modal.js';
import { HOLD_REASON_MAX } from '../../../shared/holds.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { RowAction } from './controls.js';
import { answered, RetryKey } from '../request-keys.js';

/**
 * 冻结 on one file of 本单位文件, for administrators: a button that asks for the reason in a modal
 * `<dialog>` (Esc or 取消 closes it, focus returns to the button) and says what a hold prevents.
 */
export function HoldFileButton({
  api,
  language,
  file,
}: {
  api: ArchiveApi;
  language: Language;
  file: { fileId: string; fileName: string };
}) {
  const t = translator(language);
  const [open, setOpen] = useState(false);
  const [done, setDone] = useState(false);
  // Kept while the dialog closes and opens again: the same hold sent again after its answer was lost is placed once.
  const [retry] = useState(() => new RetryKey());
  return (
    <>
      <RowAction label={t('holdFile')} on={file.fileName} onClick={() => setOpen(true)} />
      {done && (
        <span role="status" class="notice small">
          {t('holdsActive')}
        </span>
      )}
      {open && (
        <HoldFileDialog
          language={language}
          name={file.fileName}
          onHold={async (reason) => {
            const request = { files: [file.fileId], reason };
            await answered(retry, api.placeHold(request, retry.for(request)));
            setDone(true);
          }}
          onClose={() => setOpen(false)}
        />
      )}
    </>
  );
}

function HoldFileDialog({
  language,
  name,
  onHold,
  onClose,
}: {
  language: Language;
  name: string;
  onHold: (reason: string) => Promise<void>;
  onClose: () => void;
}) {
  const t = translator(language);
  const dialog = useModal();
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!reason.trim()) return setError(t('holdsReasonRequired'));
    setBusy(true);
    setError(null);
    try {
      await onHold(reason.trim());
      dialog.current?.close();
    } catch (e) {
      setError(describeError(language, e));
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialog} class="withdraw" aria-labelledby="hold-title" aria-describedby="hold-effect" onClose={onClose}>
      <form onSubmit={(e) => void submit(e)}>
        <h2 id="hold-title">{t('holdFileTitle', { name })}</h2>
        <p id="hold-effect" class="withdraw-effect">
          {t('holdFileEffect')}
        </p>
        <label class="field">
          <span>{t('holdsReason')}</span>
          <textarea
            rows={2}
            maxLength={HOLD_REASON_MAX}
            aria-required="true"
            value={reason}
            onInput={(e) => {
              setReason((e.target as HTMLTextAreaElement).value);
              setError(null);
            }}
          />
        </label>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <div class="upload-actions">
          <button type="submit" class="danger" disabled={busy}>
            {t('holdsPlace')}
          </button>
          <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </dialog>
  );
}
