import { translator, type Language } from '../../i18n/index.js';
import type { FolderUpload } from '../../upload/folder-upload.js';
import { roughDuration, secondsLeft, transferBytes, type RateMeter } from '../../upload/transfer-rate.js';
import { formatBytes, formatCount } from '../format.js';
import type { Counts } from './transfer-rows.js';

/** The list's tally in words and as a bar (its `data-*` for tests), and what can be done with the whole list. */
export function TransferSummary({
  language,
  upload,
  counts,
  onRetry,
  onClear,
  meter,
}: {
  language: Language;
  upload: FolderUpload;
  counts: Counts;
  onRetry: () => void;
  onClear: () => void;
  meter: RateMeter;
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
      {/* One line: what is left and how fast on the left, what can be done on the right (as a 网盘 transfer list). */}
      <div class="transfer-bar">
        <TransferRate language={language} upload={upload} meter={meter} />
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
      </div>
    </>
  );
}

/** 剩余 38 MB · 约 1 分钟 · 2.1 MB/秒: what is left to send, how long that takes at the speed of the last seconds. */
function TransferRate({ language, upload, meter }: { language: Language; upload: FolderUpload; meter: RateMeter }) {
  const t = translator(language);
  const now = Date.now();
  const { sent, remaining } = transferBytes(upload.items);
  // Paused, or nothing to send: the speed of before would mislead when it goes on.
  if (!upload.active || upload.paused) {
    meter.reset();
    return null;
  }
  meter.add(now, sent);
  // While requests wait to be retried, the banner says when; a speed of 0 would say nothing more.
  const rate = upload.waits.state ? undefined : meter.rate(now);
  const left = secondsLeft(remaining, rate);
  const parts = [t('remaining', { size: formatBytes(remaining) })];
  if (left !== undefined && remaining > 0) {
    const { unit, value } = roughDuration(left);
    const count = formatCount(language, value);
    parts.push(t(unit === 'seconds' ? 'aboutSeconds' : unit === 'minutes' ? 'aboutMinutes' : 'aboutHours', { count }));
  }
  if (rate !== undefined) parts.push(t('speed', { size: formatBytes(Math.round(rate)) }));
  return (
    <p class="transfer-rate" data-remaining={remaining} data-rate={rate === undefined ? '' : Math.round(rate)}>
      {parts.join(' · ')}
    </p>
  );
}
