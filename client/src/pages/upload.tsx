import { useEffect, useState } from 'preact/hooks';
import type { AccountView } from '../../../shared/schemas.js';
import type { ArchiveApi } from '../api.js';
import { translator, type Language } from '../i18n/index.js';
import { BodyLiveRegion } from './controls.js';
import { formatCount } from './format.js';
import { useDropWithdrawal } from './upload/drop-withdrawal.js';
import { DropZone } from './upload/drop-zone.js';
import { ReceiptPanel } from './upload/receipt-panel.js';
import { RepeatPrompt } from './upload/repeat-prompt.js';
import { RetryBanner } from './upload/retry-banner.js';
import { TransferList } from './upload/transfer-list.js';
import { countItems } from './upload/transfer-rows.js';
import { TransferSummary } from './upload/transfer-summary.js';
import { useFolderUpload } from './upload/use-folder-upload.js';
import { WithdrawBar, type Withdrawing } from './upload/withdraw-bar.js';

/**
 * 上传档案: a folder or files dropped or chosen, hashed, checked, sent; the list's outcomes and its
 * receipt; once it ended, 撤回 for a file, the files picked, or the whole drop.
 */
export function UploadPage({
  api,
  language,
  account,
  maxFileSize,
  trashDays,
  hidden,
}: {
  api: ArchiveApi;
  language: Language;
  account: AccountView;
  maxFileSize: number;
  /** TRASH_DAYS, from the session: what the withdrawal dialog promises. */
  trashDays: number;
  hidden: boolean;
}) {
  const t = translator(language);
  const { upload, announcer, meter, restoredUnfinished, add, retryFailed, clear } = useFolderUpload({
    api,
    account,
    maxFileSize,
  });
  const counts = countItems(upload.items);
  const total = upload.items.length;
  const finished = counts.instant + counts.stored + counts.failed + counts.skipped;
  const waiting = upload.waits.state;
  const withdrawal = useDropWithdrawal({ api, upload, hidden });
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [withdrawing, setWithdrawing] = useState<Withdrawing | null>(null);
  // A new drop, or the list read again, starts with nothing picked.
  useEffect(() => setSelected(new Set()), [withdrawal?.receiptId, withdrawal?.open]);
  const pick = (uploadId: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(uploadId);
    else next.delete(uploadId);
    setSelected(next);
  };

  const n = (value: number) => formatCount(language, value);
  const announcement = announcer.say(
    { active: upload.active, total, finished, waiting: waiting?.cause === 'offline' },
    {
      start: (all) => t('announceStart', { count: n(all) }),
      progress: (done, all) => t('progressAll', { done: n(done), total: n(all) }),
      end: () =>
        t('announceEnd', { instant: n(counts.instant), stored: n(counts.stored), failed: n(counts.failed) }) +
        (counts.skipped > 0 ? t('announceSkipped', { skipped: n(counts.skipped) }) : ''),
      waiting: () => t('announceOutage'),
      recovered: () => t('announceRecovered'),
    },
    Date.now(),
  );

  return (
    <main class="page" hidden={hidden} aria-labelledby="upload-title">
      <h1 id="upload-title">{t('uploadTitle')}</h1>
      {/* Read before the first drop; while files move, the list needs the room more. */}
      {!upload.active && <p class="hint">{t('uploadHint')}</p>}
      <DropZone language={language} maxFileSize={maxFileSize} onFiles={add} compact={upload.active} />
      <RetryBanner language={language} waiting={waiting} onRetryNow={() => upload.waits.retryNow()} />
      {/* The one live region for the list's progress (the summary above changes four times a second),
          outside this page, so a clerk reading another page still hears how the upload goes. */}
      <BodyLiveRegion text={announcement} />
      {restoredUnfinished > 0 && (
        <p class="notice" role="status">
          {t('unfinishedBanner', { count: n(restoredUnfinished) })}
        </p>
      )}
      <section aria-labelledby="results-title" class="results" hidden={total === 0}>
        <h2 id="results-title">{t('resultsTitle')}</h2>
        {upload.question && <RepeatPrompt language={language} question={upload.question} />}
        <TransferSummary
          language={language}
          upload={upload}
          counts={counts}
          onRetry={retryFailed}
          onClear={clear}
          meter={meter}
        />
        <ReceiptPanel language={language} upload={upload} />
        {withdrawal && (
          <WithdrawBar
            language={language}
            withdrawal={withdrawal}
            selected={selected}
            withdrawing={withdrawing}
            onWithdrawing={setWithdrawing}
            onWithdrawn={() => setSelected(new Set())}
            trashDays={trashDays}
          />
        )}
        <TransferList
          language={language}
          items={upload.items}
          counts={counts}
          stalled={waiting !== undefined}
          withdrawal={
            withdrawal && {
              withdrawal,
              selected,
              onPick: pick,
              onWithdraw: (uploadId, path) => setWithdrawing({ uploads: [uploadId], what: path }),
            }
          }
        />
      </section>
    </main>
  );
}
