import type { ComponentChildren, Ref } from 'preact';
import { useState } from 'preact/hooks';
import { MIN_PASSWORD_LENGTH, type AccountView, type SessionView } from '../../../shared/schemas.js';
import type { ArchiveApi } from '../api.js';
import { translator, type Language, type Translate } from '../i18n/index.js';
import { Field, FormProblem, useCheckedForm, type ErrorPlaces, type FieldErrors } from './field.js';
import { displayNameProblems } from './typed-name.js';
import { formText } from './form-text.js';

interface Props {
  api: ArchiveApi;
  language: Language;
  languageSwitch: ComponentChildren;
}

/** A page of one form on a card, in the middle of the screen (before the app's own pages). */
function CardPage(props: {
  languageSwitch: ComponentChildren;
  form: Ref<HTMLFormElement>;
  onSubmit: (event: Event) => void;
  titleId: string;
  title: string;
  children: ComponentChildren;
}) {
  return (
    <main class="centered">
      <div class="corner">{props.languageSwitch}</div>
      <form class="card" ref={props.form} onSubmit={props.onSubmit} aria-labelledby={props.titleId} noValidate>
        <h1 id={props.titleId}>{props.title}</h1>
        {props.children}
      </form>
    </main>
  );
}

export function LoginPage({ api, language, languageSwitch, onLogin }: Props & { onLogin: (s: SessionView) => void }) {
  const t = translator(language);
  // A wrong login is the form's: which of the two was wrong is not said.
  const { ref, errors, busy, submit } = useCheckedForm({
    language,
    t,
    places: { fields: ['username', 'password'] },
    send: async (form) => onLogin(await api.login(formText(form, 'username'), formText(form, 'password'))),
  });

  return (
    <CardPage languageSwitch={languageSwitch} form={ref} onSubmit={submit} titleId="login-title" title={t('appTitle')}>
      <h2>{t('loginTitle')}</h2>
      <Field label={t('username')} errors={errors}>
        <input name="username" autoComplete="username" required maxLength={64} autoFocus />
      </Field>
      <Field label={t('password')} errors={errors}>
        <input name="password" type="password" autoComplete="current-password" required maxLength={1024} />
      </Field>
      <FormProblem errors={errors} />
      <button type="submit" disabled={busy}>
        {busy ? t('loggingIn') : t('loginButton')}
      </button>
    </CardPage>
  );
}

/** The current password, and the new one twice, as both password forms ask for them. */
function PasswordFields({ language, errors }: { language: Language; errors: FieldErrors }) {
  const t = translator(language);
  return (
    <>
      <Field label={t('currentPassword')} errors={errors}>
        <input name="currentPassword" type="password" autoComplete="current-password" required maxLength={1024} />
      </Field>
      <Field label={t('newPassword', { min: MIN_PASSWORD_LENGTH })} errors={errors}>
        <input
          name="newPassword"
          type="password"
          autoComplete="new-password"
          required
          minLength={MIN_PASSWORD_LENGTH}
          maxLength={1024}
        />
      </Field>
      <Field label={t('confirmPassword')} errors={errors}>
        <input name="confirmPassword" type="password" autoComplete="new-password" required maxLength={1024} />
      </Field>
    </>
  );
}

/** What a password form refuses before sending: a new password typed differently twice, or the current one again. */
function passwordProblems(t: Translate, form: FormData): Record<string, string> {
  const current = formText(form, 'currentPassword');
  const next = formText(form, 'newPassword');
  const again = formText(form, 'confirmPassword');
  const problems: Record<string, string> = {};
  if (next && current && next === current) problems.newPassword = t('passwordSameAsCurrent');
  if (next && again && next !== again) problems.confirmPassword = t('passwordsDiffer');
  return problems;
}

/** The server's refusals at the password fields: its policy's codes at the new one, a wrong password at the current one. */
function passwordPlaces(t: Translate): ErrorPlaces {
  const atNew = { field: 'newPassword' };
  return {
    fields: ['currentPassword', 'newPassword'],
    codes: {
      login_failed: { field: 'currentPassword', text: t('currentPasswordWrong') },
      password_too_short: atNew,
      password_is_username: atNew,
      password_repetitive: atNew,
      password_too_common: atNew,
    },
  };
}

/**
 * 我的账号, from the top bar: the owner's own name (shown beside the login wherever the archive
 * names them), and the password change.
 */
export function OwnAccountPage(props: OwnAccountProps) {
  const t = translator(props.language);
  return (
    <main class="page own-account" aria-labelledby="own-account-title">
      <h1 id="own-account-title">{t('navPassword')}</h1>
      <OwnNameForm {...props} />
      <OwnPasswordForm {...props} />
      <section class="card" aria-labelledby="own-access-title">
        <h2 id="own-access-title">{t('accessTitle')}</h2>
        <p>{t('accessIntro')}</p>
        <a href="#/tokens">{t('accessManage')}</a>
      </section>
    </main>
  );
}

interface OwnAccountProps {
  api: ArchiveApi;
  language: Language;
  account: AccountView;
  /** The session as a change left it (a name shows in the top bar, a new password comes with a new session). */
  onChanged: (s: SessionView) => void;
}

/** The owner names itself; empty removes the name. */
function OwnNameForm({ api, language, account, onChanged }: OwnAccountProps) {
  const t = translator(language);
  const [saved, setSaved] = useState<'saved' | 'removed' | null>(null);
  const { ref, errors, busy, submit } = useCheckedForm({
    language,
    t,
    places: { fields: ['displayName'] },
    check: (form) => displayNameProblems(t, formText(form, 'displayName')),
    send: async (form) => {
      setSaved(null);
      const view = await api.setOwnName(formText(form, 'displayName').trim());
      setSaved(view.account.displayName === null ? 'removed' : 'saved');
      onChanged(view);
    },
  });
  return (
    <form class="card" ref={ref} onSubmit={submit} aria-labelledby="own-name-title" noValidate>
      <h2 id="own-name-title">{t('ownNameTitle')}</h2>
      <Field label={t('displayName')} hint={t('ownNameHint')} errors={errors}>
        <input name="displayName" autoComplete="name" defaultValue={account.displayName ?? ''} />
      </Field>
      <FormProblem errors={errors} />
      <p role="status">{saved && t(saved === 'saved' ? 'ownNameSaved' : 'ownNameRemoved')}</p>
      <button type="submit" disabled={busy}>
        {t('saveNameButton')}
      </button>
    </form>
  );
}

/** The owner's password change: other logins end; API tokens go too if asked. */
function OwnPasswordForm({ api, language, onChanged }: OwnAccountProps) {
  const t = translator(language);
  const [done, setDone] = useState<number | null>(null);
  const { ref, errors, busy, submit } = useCheckedForm({
    language,
    t,
    places: passwordPlaces(t),
    check: (form) => passwordProblems(t, form),
    send: async (form) => {
      const view = await api.changePassword(
        formText(form, 'currentPassword'),
        formText(form, 'newPassword'),
        form.get('revokeTokens') === 'on',
      );
      setDone(view.tokensRevoked);
      onChanged(view);
    },
  });
  if (done !== null) {
    return (
      <section class="card" aria-labelledby="own-password-title">
        <h2 id="own-password-title">{t('ownPasswordTitle')}</h2>
        <p role="status">
          {t('ownPasswordChanged')} {done > 0 ? t('tokensRevoked', { count: done }) : ''}
        </p>
      </section>
    );
  }
  return (
    <form class="card" ref={ref} onSubmit={submit} aria-labelledby="own-password-title" noValidate>
      <h2 id="own-password-title">{t('ownPasswordTitle')}</h2>
      <p>{t('ownPasswordHint')}</p>
      <PasswordFields language={language} errors={errors} />
      <label class="check">
        <input name="revokeTokens" type="checkbox" /> {t('revokeTokens')}
      </label>
      <FormProblem errors={errors} />
      <button type="submit" disabled={busy}>
        {t('changePasswordButton')}
      </button>
    </form>
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
  const { ref, errors, busy, submit } = useCheckedForm({
    language,
    t,
    places: passwordPlaces(t),
    check: (form) => passwordProblems(t, form),
    send: async (form) =>
      onChanged(await api.changePassword(formText(form, 'currentPassword'), formText(form, 'newPassword'))),
  });

  return (
    <CardPage
      languageSwitch={languageSwitch}
      form={ref}
      onSubmit={submit}
      titleId="password-title"
      title={t('changePasswordTitle')}
    >
      <PasswordFields language={language} errors={errors} />
      <FormProblem errors={errors} />
      <button type="submit" disabled={busy}>
        {t('changePasswordButton')}
      </button>
    </CardPage>
  );
}
