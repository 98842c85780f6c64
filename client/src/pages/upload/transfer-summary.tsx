import { translator, type Language } from '../../i18n/index.js';
import type { FolderUpload } from '../../upload/folder-upload.js';
import { formatCount } from '../format.js';
import type { Counts } from './transfer-rows.js';

/** The list's tally in words and as a bar (its `data-*` for tests), and what can be done with the whole list. */
export function TransferSummary({
  language,
  upload,
  counts,
  onRetry,
  onClear,
}: {
  language: Language;
  upload: FolderUpload;
  counts: Counts;
  onRetry: () => void;
  onClear: () => void;
}) {
  const t = translator(language);
  const n = (value: number) => formatCount(language, value);
  const items = upload.items;
  const total = items.length;
  const finished = counts.instant + counts.stored + counts.failed + counts.skipped;
  const retryable = items.filter((i) => i.outcome?.kind === 'failed' && i.outcome.retry && i.file).length;
  return (
    <>
      <p
        class="summary"
        data-total={total}
        data-instant={counts.instant}
        data-stored={counts.stored}
        data-failed={counts.failed}
        data-skipped={counts.skipped}
      >
        {t('progressAll', { done: n(finished), total: n(total) })}
        {t('summarySeparator')}
        {t('summary', {
          total: n(total),
          instant: n(counts.instant),
          stored: n(counts.stored),
          failed: n(counts.failed),
          active: n(counts.unfinished),
        })}
        {counts.skipped > 0 && t('summarySkipped', { skipped: n(counts.skipped) })}
      </p>
      <progress class="overall" max={Math.max(1, total)} value={finished} aria-label={t('resultsTitle')} />
      <div class="upload-actions">
        {upload.active &&
          (upload.paused ? (
            <button type="button" onClick={() => upload.resume()}>
              {t('resumeAll')}
            </button>
          ) : (
            <button type="button" class="secondary" onClick={() => upload.pause()}>
              {t('pauseAll')}
            </button>
          ))}
        {retryable > 0 && !upload.paused && (
          <button type="button" onClick={onRetry}>
            {t('retryFailed', { count: n(retryable) })}
          </button>
        )}
        {/* Only a list that ended may be cleared: an unfinished one holds the keys that keep its files from counting twice. */}
        {!upload.active && total > 0 && counts.unfinished === 0 && (
          <button type="button" class="secondary" onClick={onClear}>
            {t('clearList')}
          </button>
        )}
      </div>
    </>
  );
}
