import { describeError, translator, type Language } from '../../i18n/index.js';
import type { FolderUpload } from '../../upload/folder-upload.js';

/** The ended list's receipt (上传清单): a link once saved, a note while it is saved, a retry when saving failed. */
export function ReceiptPanel({ language, upload }: { language: Language; upload: FolderUpload }) {
  const t = translator(language);
  const receipt = upload.receipt;
  switch (receipt.kind) {
    case 'saved':
      return (
        <p class="receipt-link">
          <a href={`#/receipts/${receipt.id}`}>{t('receiptView')}</a>
        </p>
      );
    case 'saving':
      return <p class="hint">{t('receiptSaving')}</p>;
    case 'failed':
      return (
        <p class="error">
          {t('receiptFailed', { reason: describeError(language, receipt.error) })}{' '}
          <button type="button" class="secondary small" onClick={() => upload.saveReceipt()}>
            {t('receiptSaveAgain')}
          </button>
        </p>
      );
    default:
      return null;
  }
}
