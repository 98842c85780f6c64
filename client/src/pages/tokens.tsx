import { useEffect, useState } from 'preact/hooks';
import {
  personLabel,
  TOKEN_LABEL_RULE,
  TOKEN_SCOPES,
  type TokenScope,
  type TokenView,
} from '../../../shared/accounts.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { formatTime } from './format.js';
import { formText } from './form-text.js';
import { ConfirmAction, CopyButton, ErrorNote } from './controls.js';
import { Field, FormProblem, useCheckedForm } from './field.js';
import { nameProblems } from './typed-name.js';

/** The expiries offered; `never` for scripts that must not stop on their own. */
const EXPIRIES = ['30', '90', '365', 'never'] as const;
const DEFAULT_EXPIRY = '365';
/** The scopes each role may give its tokens ("accounts": administrators only). */
const offeredScopes = (admin: boolean): readonly TokenScope[] =>
  admin ? TOKEN_SCOPES : TOKEN_SCOPES.filter((s) => s !== 'accounts');
const SCOPE_WORDS = { tokens: 'tokenScopeTokens', accounts: 'tokenScopeAccounts' } as const;

/**
 * 我的令牌: the caller's API tokens (for scanners and scripts): create with a label and expiry,
 * copy it once, revoke. Administrators also see and revoke the tokens of the accounts they reach.
 */
export function TokensPage({ api, language, admin }: { api: ArchiveApi; language: Language; admin: boolean }) {
  const t = translator(language);
  const [mine, setMine] = useState<TokenView[] | null>(null);
  const [others, setOthers] = useState<TokenView[] | null>(null);
  const [created, setCreated] = useState<{ token: string; label: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [refresh, setRefresh] = useState(0);

  useEffect(() => {
    api.tokens('mine').then(
      (r) => setMine(r.items),
      (e: unknown) => setError(describeError(language, e)),
    );
    if (admin)
      api.tokens('reach').then(
        (r) => setOthers(r.items),
        (e: unknown) => setError(describeError(language, e)),
      );
  }, [refresh]);

  const creating = useCheckedForm({
    language,
    t,
    places: { fields: ['label', 'expiry', 'scopes'], renamed: { expiresInDays: 'expiry' } },
    check: (data) => nameProblems(t, formText(data, 'label'), TOKEN_LABEL_RULE, 'label'),
    send: async (data, form) => {
      const expiry = formText(data, 'expiry');
      const label = formText(data, 'label').trim();
      const scopes = offeredScopes(admin).filter((s) => data.getAll('scopes').includes(s));
      const answer = await api.createToken({
        label,
        expiresInDays: expiry === 'never' ? null : Number(expiry),
        scopes,
      });
      setCreated({ token: answer.token, label });
      // Not form.reset(): the expiry chosen stays for the next token.
      (form.elements.namedItem('label') as HTMLInputElement).value = '';
      setRefresh((r) => r + 1);
    },
  });
  const revoke = async (id: string) => {
    try {
      await api.revokeToken(id);
      setRefresh((r) => r + 1);
    } catch (e) {
      setError(describeError(language, e));
    }
  };

  return (
    <main class="page wide" aria-labelledby="tokens-title">
      <h1 id="tokens-title">{t('tokensTitle')}</h1>
      <p class="hint">{t('tokensIntro')}</p>
      <form
        class="card panel"
        ref={creating.ref}
        onSubmit={creating.submit}
        aria-labelledby="token-create-title"
        noValidate
      >
        <h2 id="token-create-title">{t('tokenCreate')}</h2>
        <Field label={t('tokenLabel')} errors={creating.errors}>
          <input name="label" maxLength={100} placeholder={t('tokenLabelPlaceholder')} />
        </Field>
        <Field label={t('tokenExpiry')} errors={creating.errors}>
          {/* `selected`, not the select's defaultValue: Preact leaves that attribute unread. */}
          <select name="expiry">
            {EXPIRIES.map((e) => (
              <option key={e} value={e} selected={e === DEFAULT_EXPIRY}>
                {e === 'never' ? t('tokenNever') : t('tokenDays', { days: e })}
              </option>
            ))}
          </select>
        </Field>
        <fieldset class="scopes">
          <legend>{t('tokenScopes')}</legend>
          <p class="hint">{t('tokenScopesHint')}</p>
          {offeredScopes(admin).map((scope) => (
            <label class="check" key={scope}>
              <input name="scopes" type="checkbox" value={scope} /> {t(SCOPE_WORDS[scope])}
            </label>
          ))}
        </fieldset>
        <FormProblem errors={creating.errors} />
        <button type="submit" disabled={creating.busy}>
          {t('tokenCreateButton')}
        </button>
      </form>
      {created && (
        <section class="card handover" role="status" aria-labelledby="token-new-title">
          <h2 id="token-new-title">{t('tokenCreated', { label: created.label || t('tokenNoLabel') })}</h2>
          <p>
            <code class="secret token" data-secret>
              {created.token}
            </code>
          </p>
          <p>
            <CopyButton language={language} text={created.token} />
          </p>
          <p class="hint">{t('tokenOnce')}</p>
          <button type="button" onClick={() => setCreated(null)}>
            {t('handoverDone')}
          </button>
        </section>
      )}
      <ErrorNote error={error} />
      <h2>{t('tokensMine')}</h2>
      <TokenTable language={language} tokens={mine} owners={false} onRevoke={(id) => void revoke(id)} />
      {admin && (
        <>
          <h2>{t('tokensOfReach')}</h2>
          <TokenTable
            language={language}
            tokens={others?.filter((tk) => !mine?.some((m) => m.id === tk.id)) ?? null}
            owners
            onRevoke={(id) => void revoke(id)}
          />
        </>
      )}
    </main>
  );
}

function TokenTable({
  language,
  tokens,
  owners,
  onRevoke,
}: {
  language: Language;
  tokens: TokenView[] | null;
  owners: boolean;
  onRevoke: (id: string) => void;
}) {
  const t = translator(language);
  if (tokens === null) return <p>{t('loading')}</p>;
  if (tokens.length === 0) return <p>{t('tokensNone')}</p>;
  return (
    <div class="table-scroll">
      <table class="files">
        <thead>
          <tr>
            <th scope="col">{t('tokenLabel')}</th>
            {owners && <th scope="col">{t('colUser')}</th>}
            <th scope="col">{t('tokenScopes')}</th>
            <th scope="col">{t('tokenCreatedAt')}</th>
            <th scope="col">{t('tokenExpiresAt')}</th>
            <th scope="col">{t('tokenLastUsed')}</th>
            <th scope="col">{t('accountActions')}</th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((tk) => (
            <tr key={tk.id} data-token={tk.id}>
              <td class="name">{tk.label || t('tokenNoLabel')}</td>
              {owners && <td>{personLabel(tk.username, tk.displayName, language)}</td>}
              <td class="scopes">
                {tk.scopes.length === 0
                  ? t('tokenScopesNone')
                  : tk.scopes.map((s) => t(SCOPE_WORDS[s])).join(t('listSeparator'))}
              </td>
              <td>{formatTime(language, tk.createdAt)}</td>
              <td>
                {tk.expiresAt ? formatTime(language, tk.expiresAt) : t('tokenNever')}
                {tk.expired && <span class="badge state-disabled"> {t('tokenExpired')}</span>}
              </td>
              <td>{tk.lastUsedAt ? formatTime(language, tk.lastUsedAt) : t('tokenNeverUsed')}</td>
              <td class="actions">
                <ConfirmAction
                  language={language}
                  label={t('tokenRevoke')}
                  on={tk.label || tk.id}
                  question={t('tokenRevokeConfirm')}
                  confirm={t('tokenRevoke')}
                  onConfirm={() => onRevoke(tk.id)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
