import { useEffect, useState } from 'preact/hooks';
import { translator, type Language } from '../../i18n/index.js';
import type { WaitingState } from '../../upload/retry-waits.js';

/**
 * While requests wait to be tried again: why, when the next try goes (counted down each second),
 * and 立即重试. Not a live region: a screen reader hears the outage once from the page's
 * announcement, not every second of the countdown.
 */
export function RetryBanner({
  language,
  waiting,
  onRetryNow,
}: {
  language: Language;
  waiting: WaitingState | undefined;
  onRetryNow: () => void;
}) {
  const t = translator(language);
  const [now, setNow] = useState(() => Date.now());
  const retryAt = waiting?.retryAt;
  useEffect(() => {
    if (retryAt === undefined) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [retryAt]);
  if (!waiting) return null;
  const seconds = retryAt === undefined ? 0 : Math.max(1, Math.ceil((retryAt - now) / 1000));
  const offline = waiting.cause === 'offline';
  const text =
    retryAt === undefined
      ? t(offline ? 'outageTrying' : 'busyTrying')
      : t(offline ? 'outageWaiting' : 'busyWaiting', { seconds });
  return (
    <div class="retry-banner" data-cause={waiting.cause} data-seconds={retryAt === undefined ? '' : seconds}>
      <p>{text}</p>
      <button type="button" onClick={onRetryNow} disabled={retryAt === undefined}>
        {t('retryNow')}
      </button>
    </div>
  );
}
