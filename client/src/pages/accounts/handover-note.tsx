import { translator, type Language } from '../../i18n/index.js';
import { CopyButton } from '../controls.js';

/** A one-time password to hand over, shown once. */
export interface Handover {
  username: string;
  password: string;
  kind: 'created' | 'reset';
}

/** The one-time password, once, with a copy button and what to tell the clerk. */
export function HandoverNote({
  language,
  handover,
  onClose,
}: {
  language: Language;
  handover: Handover;
  onClose: () => void;
}) {
  const t = translator(language);
  return (
    <section class="card handover" role="status" aria-labelledby="handover-title">
      <h2 id="handover-title">
        {handover.kind === 'created'
          ? t('handoverCreated', { user: handover.username })
          : t('handoverReset', { user: handover.username })}
      </h2>
      <p>
        {t('oneTimePassword')}:{' '}
        <code class="secret" data-secret>
          {handover.password}
        </code>{' '}
        <CopyButton language={language} text={handover.password} />
      </p>
      <p>{t('handoverTell', { user: handover.username })}</p>
      <p class="hint">{t('handoverOnce')}</p>
      <button type="button" onClick={onClose}>
        {t('handoverDone')}
      </button>
    </section>
  );
}
