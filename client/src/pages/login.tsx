import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { MIN_PASSWORD_LENGTH, type SessionView } from '../../../shared/schemas.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { formText } from './form-text.js';

interface Props {
  api: ArchiveApi;
  language: Language;
  languageSwitch: ComponentChildren;
}

/** A form that sends once at a time and keeps the last error to show. */
function useFormAction(action: (form: FormData) => Promise<void>) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = (event: Event): void => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    action(form).catch((e: unknown) => {
      setError(e);
      setBusy(false);
    });
  };
  return { error, busy, submit };
}

function ErrorMessage({ language, error }: { language: Language; error: unknown }) {
  return error === null ? null : (
    <p role="alert" class="error">
      {describeError(language, error)}
    </p>
  );
}

/** A page of one form on a card, in the middle of the screen (before the app's own pages). */
function CardPage(props: {
  languageSwitch: ComponentChildren;
  onSubmit: (event: Event) => void;
  titleId: string;
  title: string;
  children: ComponentChildren;
}) {
  return (
    <main class="centered">
      <div class="corner">{props.languageSwitch}</div>
      <form class="card" onSubmit={props.onSubmit} aria-labelledby={props.titleId}>
        <h1 id={props.titleId}>{props.title}</h1>
        {props.children}
      </form>
    </main>
  );
}

export function LoginPage({ api, language, languageSwitch, onLogin }: Props & { onLogin: (s: SessionView) => void }) {
  const t = translator(language);
  const { error, busy, submit } = useFormAction(async (form) =>
    onLogin(await api.login(formText(form, 'username'), formText(form, 'password'))),
  );

  return (
    <CardPage languageSwitch={languageSwitch} onSubmit={submit} titleId="login-title" title={t('appTitle')}>
      <h2>{t('loginTitle')}</h2>
      <label>
        {t('username')}
        <input name="username" autoComplete="username" required maxLength={64} autoFocus />
      </label>
      <label>
        {t('password')}
        <input name="password" type="password" autoComplete="current-password" required maxLength={1024} />
      </label>
      <ErrorMessage language={language} error={error} />
      <button type="submit" disabled={busy}>
        {busy ? t('loggingIn') : t('loginButton')}
      </button>
    </CardPage>
  );
}

/** The current and the new password, as both password forms ask for them. */
function PasswordFields({ language }: { language: Language }) {
  const t = translator(language);
  return (
    <>
      <label>
        {t('currentPassword')}
        <input name="currentPassword" type="password" autoComplete="current-password" required />
      </label>
      <label>
        {t('newPassword', { min: MIN_PASSWORD_LENGTH })}
        <input
          name="newPassword"
          type="password"
          autoComplete="new-password"
          required
          minLength={MIN_PASSWORD_LENGTH}
        />
      </label>
    </>
  );
}

/** A clerk's own password change, from the top bar: other logins end; API tokens go too if asked. */
export function OwnPasswordPage({
  api,
  language,
  onChanged,
}: {
  api: ArchiveApi;
  language: Language;
  onChanged: (s: SessionView) => void;
}) {
  const t = translator(language);
  const [done, setDone] = useState<number | null>(null);
  const { error, busy, submit } = useFormAction(async (form) => {
    const view = await api.changePassword(
      formText(form, 'currentPassword'),
      formText(form, 'newPassword'),
      form.get('revokeTokens') === 'on',
    );
    setDone(view.tokensRevoked);
    onChanged(view);
  });
  if (done !== null) {
    return (
      <main class="page">
        <p role="status">
          {t('ownPasswordChanged')} {done > 0 ? t('tokensRevoked', { count: done }) : ''}
        </p>
      </main>
    );
  }
  return (
    <main class="page">
      <form class="card" onSubmit={submit} aria-labelledby="own-password-title">
        <h1 id="own-password-title">{t('ownPasswordTitle')}</h1>
        <p>{t('ownPasswordHint')}</p>
        <PasswordFields language={language} />
        <label class="check">
          <input name="revokeTokens" type="checkbox" /> {t('revokeTokens')}
        </label>
        <ErrorMessage language={language} error={error} />
        <button type="submit" disabled={busy}>
          {t('changePasswordButton')}
        </button>
      </form>
    </main>
  );
}

/** Accounts created with a one-time password must choose their own before anything else. */
export function PasswordPage({
  api,
  language,
  languageSwitch,
  onChanged,
}: Props & { onChanged: (s: SessionView) => void }) {
  const t = translator(language);
  const { error, busy, submit } = useFormAction(async (form) =>
    onChanged(await api.changePassword(formText(form, 'currentPassword'), formText(form, 'newPassword'))),
  );

  return (
    <CardPage
      languageSwitch={languageSwitch}
      onSubmit={submit}
      titleId="password-title"
      title={t('changePasswordTitle')}
    >
      <PasswordFields language={language} />
      <ErrorMessage language={language} error={error} />
      <button type="submit" disabled={busy}>
        {t('changePasswordButton')}
      </button>
    </CardPage>
  );
}
