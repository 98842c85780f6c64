import { translator, type Language } from '../../i18n/index.js';
import { formatCount } from '../format.js';
import { WithdrawDialog } from '../withdraw-dialog.js';
import type { DropWithdrawal } from './drop-withdrawal.js';

/** What the withdrawal dialog is open for: some files by their uploads, or the whole drop. */
export type Withdrawing = { uploads: string[]; what: string } | { receipt: true; what: string; count: number };

/**
 * 撤回 for an ended drop: 撤回所选 (the files ticked in the list) and 撤回本次上传 (the whole drop,
 * by its receipt), each through the reason dialog; how many of the drop are withdrawn, with a link to 回收站.
 * A row's own 撤回 opens the same dialog (`withdrawing` is the page's).
 */
export function WithdrawBar({
  language,
  withdrawal,
  selected,
  withdrawing,
  onWithdrawing,
  onWithdrawn,
  trashDays,
}: {
  language: Language;
  withdrawal: DropWithdrawal;
  selected: ReadonlySet<string>;
  withdrawing: Withdrawing | null;
  onWithdrawing: (w: Withdrawing | null) => void;
  onWithdrawn: () => void;
  trashDays: number;
}) {
  const t = translator(language);
  const n = (value: number) => formatCount(language, value);
  const withdraw = async (w: Withdrawing, reason: Parameters<DropWithdrawal['withdraw']>[1], note: string) => {
    await withdrawal.withdraw('receipt' in w ? { receipt: true } : { uploads: w.uploads }, reason, note);
    onWithdrawn();
  };
  return (
    <>
      {withdrawal.open > 0 && (
        <div class="upload-actions withdraw-bar">
          <button
            type="button"
            class="secondary"
            disabled={selected.size === 0}
            onClick={() => onWithdrawing({ uploads: [...selected], what: t('withdrawSelectedWhat') })}
          >
            {t('withdrawSelected', { count: n(selected.size) })}
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() =>
              onWithdrawing({
                receipt: true,
                what: t('withdrawDropWhat', { title: withdrawal.title }),
                count: withdrawal.open,
              })
            }
          >
            {t('withdrawDrop')}
          </button>
        </div>
      )}
      {/* As the archive has it now (a restore in 回收站 shows here once the page is shown again). */}
      {withdrawal.withdrawn > 0 && (
        <p role="status" class="notice withdrawn-note">
          {t('dropWithdrawn', { count: n(withdrawal.withdrawn) })} <a href="#/trash">{t('navTrash')}</a>
        </p>
      )}
      {withdrawing && (
        <WithdrawDialog
          language={language}
          what={withdrawing.what}
          count={'receipt' in withdrawing ? withdrawing.count : withdrawing.uploads.length}
          trashDays={trashDays}
          onWithdraw={(reason, note) => withdraw(withdrawing, reason, note)}
          onClose={() => onWithdrawing(null)}
        />
      )}
    </>
  );
}
