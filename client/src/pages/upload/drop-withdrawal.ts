import { useEffect, useMemo, useState } from 'preact/hooks';
import { cleanUploadPath } from '../../../../shared/file-name.js';
import type { ReceiptRowView, ReceiptView } from '../../../../shared/receipts.js';
import type { WithdrawalReason } from '../../../../shared/withdrawals.js';
import type { ArchiveApi } from '../../api.js';
import type { FolderUpload, UploadItem } from '../../upload/folder-upload.js';

/**
 * What of an ended drop can be withdrawn, read from its receipt as the archive keeps it: each
 * counted row names its upload (`uploadId`) and says whether it is withdrawn. The page's own
 * answers carry no upload ids, and the receipt is also what 撤回本次上传 names; read again after
 * each withdrawal and whenever the page is shown again (the clerk may have withdrawn or restored
 * on the receipt's page or in 回收站 meanwhile).
 */
export interface DropWithdrawal {
  receiptId: string;
  /** The drop's name, as its receipt has it (its folder, or its first file's). */
  title: string;
  /** The receipt's row of a file of the list (rows are kept under the path the archive cleaned). */
  rowOf(item: UploadItem): ReceiptRowView | undefined;
  /** Rows still counted, by upload id: what 撤回本次上传 takes. */
  open: number;
  withdrawn: number;
  /** Withdraws some uploads, or the whole drop (by its receipt); the receipt is read again after. */
  withdraw(what: { uploads: string[] } | { receipt: true }, reason: WithdrawalReason, note: string): Promise<number>;
}

/** A receipt row the clerk may still withdraw. */
export const withdrawable = (row: ReceiptRowView | undefined): row is ReceiptRowView & { uploadId: string } =>
  row?.uploadId !== undefined && row.withdrawal === undefined;

export function useDropWithdrawal({
  api,
  upload,
  hidden,
}: {
  api: ArchiveApi;
  upload: FolderUpload;
  hidden: boolean;
}): DropWithdrawal | undefined {
  const [receipt, setReceipt] = useState<ReceiptView | undefined>(undefined);
  const saved = upload.receipt.kind === 'saved' && !upload.active ? upload.receipt.id : undefined;
  const load = async (id: string) => {
    const view = await api.receipt(id);
    // Kept only while it is still this list's receipt (a new drop may have started meanwhile).
    setReceipt(upload.receipt.kind === 'saved' && upload.receipt.id === id ? view : undefined);
  };
  useEffect(() => {
    if (saved === undefined || hidden) {
      if (saved === undefined) setReceipt(undefined);
      return;
    }
    // A receipt that cannot be read now offers no 撤回; the receipt's own page says why.
    load(saved).catch(() => setReceipt(undefined));
    // upload.receipt is a new object after each save: the rows are read again.
  }, [saved, upload.receipt, hidden]);

  const byPath = useMemo(() => new Map(receipt?.rows.map((row) => [row.path, row])), [receipt]);
  if (saved === undefined || receipt?.id !== saved) return undefined;
  return {
    receiptId: saved,
    title: receipt.title,
    rowOf: (item) => byPath.get(cleanUploadPath(item.path)),
    open: receipt.rows.filter(withdrawable).length,
    withdrawn: receipt.rows.filter((row) => row.withdrawal !== undefined).length,
    async withdraw(what, reason, note) {
      const request = { reason, ...(note ? { note } : {}) };
      const answer = await api.withdraw(
        'receipt' in what ? { ...request, receipt: saved } : { ...request, uploads: what.uploads },
      );
      await load(saved);
      return answer.withdrawn.length;
    },
  };
}
