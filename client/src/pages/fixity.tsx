import { useEffect, useState } from 'preact/hooks';
import type { VerificationResult } from '../../../shared/verification.js';
import type { ArchiveApi, VerificationView } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { Technical } from './controls.js';
import { formatBytes, formatCount, formatTime } from './format.js';

/** How often the page asks again while a check runs (its progress is saved every few seconds). */
const POLL_MS = 2_000;

/**
 * The fixity check for administrators: the last result (or the progress of one running), and, for
 * the archive's top level (the server lets only them: the check reads the whole archive), starting one.
 */
export function FixityPage({ api, language, topLevel }: { api: ArchiveApi; language: Language; topLevel: boolean }) {
  const t = translator(language);
  const n = (value: number) => formatCount(language, value);
  const [view, setView] = useState<VerificationView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // Apart from the view's: reading the view again after a refusal must not clear why it was refused.
  const [startError, setStartError] = useState<string | null>(null);
  const [refresh, setRefresh] = useState(0);
  const running = view?.last?.state === 'running';

  useEffect(() => {
    let current = true;
    api.verification().then(
      (v) => {
        if (!current) return;
        setView(v);
        setError(null);
      },
      (e: unknown) => current && setError(describeError(language, e)),
    );
    return () => {
      current = false;
    };
  }, [refresh, language]);
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(() => setRefresh((r) => r + 1), POLL_MS);
    return () => clearTimeout(timer);
  }, [running, view]);

  const start = async () => {
    setNotice(null);
    setStartError(null);
    try {
      await api.startVerification();
      setNotice(t('fixityStarted'));
    } catch (e) {
      setStartError(describeError(language, e));
    }
    setRefresh((r) => r + 1);
  };

  const last = view?.last ?? null;
  return (
    <main class="page wide" aria-labelledby="fixity-title">
      <h1 id="fixity-title">{t('fixityTitle')}</h1>
      <p>{t('fixityIntro')}</p>
      <Technical language={language}>{t('fixityDetails')}</Technical>
      {view && view.intervalHours > 0 && <p>{t('fixitySchedule', { hours: n(view.intervalHours) })}</p>}
      {/* "Start a check here" is for those who may. */}
      {view && view.intervalHours === 0 && topLevel && (
        <>
          <p>{t('fixityScheduleOff')}</p>
          <Technical language={language}>{t('fixityScheduleOffDetails')}</Technical>
        </>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {topLevel ? (
        <p>
          <button type="button" onClick={() => void start()} disabled={!view || running}>
            {t('fixityStart')}
          </button>{' '}
          <span role="status">{notice}</span>
        </p>
      ) : (
        <p class="hint">{t('fixityTopLevelOnly')}</p>
      )}
      {startError && (
        <p role="alert" class="error">
          {startError}
        </p>
      )}
      {view && !last && <p class="empty">{t('fixityNever')}</p>}
      {last && <Result language={language} result={last} />}
    </main>
  );
}

const STATE_KEYS = {
  running: 'fixityStateRunning',
  interrupted: 'fixityStateInterrupted',
  passed: 'fixityStatePassed',
  failed: 'fixityStateFailed',
} as const;

function Result({ language, result }: { language: Language; result: VerificationResult }) {
  const t = translator(language);
  const n = (value: number) => formatCount(language, value);
  const problems = result.missing + result.corrupted;
  // A check of an empty archive passes, but says so: "no problems" of nothing read would reassure wrongly.
  const empty = result.state === 'passed' && result.totalFiles === 0;
  const state = empty ? 'empty' : result.state;
  return (
    <section class="fixity-result" aria-live="polite">
      <h2 class={`fixity-state ${state}`} data-state={state}>
        {t(empty ? 'fixityStateEmpty' : STATE_KEYS[result.state])}
      </h2>
      {empty && <p>{t('fixityEmpty')}</p>}
      <ul class="fixity-facts">
        <li>
          {t('fixityStartedAt', {
            time: formatTime(language, result.startedAt, true),
            host: result.host,
            trigger: t(result.trigger === 'schedule' ? 'fixityTriggerSchedule' : 'fixityTriggerCommand'),
          })}
        </li>
        {result.finishedAt && <li>{t('fixityFinishedAt', { time: formatTime(language, result.finishedAt, true) })}</li>}
        <li>
          {t('fixityProgress', {
            files: n(result.files),
            total: n(result.totalFiles),
            bytes: formatBytes(result.bytes),
          })}
        </li>
        <li>{t('fixityCounts', { missing: n(result.missing), corrupted: n(result.corrupted) })}</li>
        {result.checksummed > 0 && <li>{t('fixityChecksummed', { files: n(result.checksummed) })}</li>}
      </ul>
      {result.problems.length > 0 && (
        <>
          <p>{t('fixityProblemsShown', { shown: n(result.problems.length), total: n(problems) })}</p>
          <div class="table-scroll">
            <table class="report fixity">
              <thead>
                <tr>
                  <th scope="col">{t('colName')}</th>
                  <th scope="col">{t('fixityKind')}</th>
                  <th scope="col">{t('colDetail')}</th>
                </tr>
              </thead>
              <tbody>
                {result.problems.map((p) => (
                  <tr key={p.fileId}>
                    <td class="name">
                      {p.fileName}
                      <br />
                      {formatBytes(p.fileLength)}
                    </td>
                    <td>{t(p.kind === 'missing' ? 'fixityKindMissing' : 'fixityKindCorrupted')}</td>
                    <td class="detail">
                      {/* For whoever restores it from the backup: which file, where, and what was read. */}
                      <Technical language={language}>
                        <dl class="technical-facts">
                          <dt>{t('fixityFileId')}</dt>
                          <dd>
                            <code>{p.fileId}</code>
                          </dd>
                          {p.chunk !== null && (
                            <>
                              <dt>{t('fixityChunk')}</dt>
                              <dd>{n(p.chunk)}</dd>
                            </>
                          )}
                          <dt>{t('fixityRead')}</dt>
                          <dd>
                            <code>{p.detail}</code>
                          </dd>
                        </dl>
                      </Technical>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p>{t('fixityAdvice')}</p>
        </>
      )}
    </section>
  );
}
