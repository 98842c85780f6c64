import { useState } from 'preact/hooks';
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
import type { Column } from './table/data-table.js';
import { TableSection, type ListPage } from './table/table-section.js';
import { useLoaded, type Loaded } from './table/use-loaded.js';

/** The expiries offered; `never` for scripts that must not stop on their own. */
const EXPIRIES = ['30', '90', '365', 'never'] as const;
const DEFAULT_EXPIRY = '365';
/** The scopes each role may give its tokens ("accounts": administrators only). */
const offeredScopes = (admin: boolean): readonly TokenScope[] =>
  admin ? TOKEN_SCOPES : TOKEN_SCOPES.filter((s) => s !== 'accounts');
const SCOPE_WORDS = { tokens: 'tokenScopeTokens', accounts: 'tokenScopeAccounts' } as const;

/**
 * 扫描仪和程序接入 (under 我的账号): the caller's API tokens (for scanners and scripts): create with a label and expiry,
 * copy it once, revoke. Administrators also see and revoke the tokens of the accounts they reach.
 */
export function TokensPage({ api, language, admin }: { api: ArchiveApi; language: Language; admin: boolean }) {
  const t = translator(language);
  const [created, setCreated] = useState<{ token: string; label: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [refresh, setRefresh] = useState(0);

  const mine = useLoaded(`mine ${refresh}`, () => api.tokens('mine').then(listOf));
  const reach = useLoaded(admin ? `reach ${refresh}` : null, () => api.tokens('reach').then(listOf));
  // The caller's own tokens are listed once, above.
  const others = {
    ...reach,
    data: reach.data && listOf({ items: reach.data.items.filter((tk) => !isIn(mine.data, tk)) }),
  };

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
      {/* Reached from 我的账号: the way back. */}
      <nav class="trail" aria-label={t('navPassword')}>
        <a href="#/password">{t('navPassword')}</a>
        <span aria-hidden="true"> › </span>
        <span aria-current="page">{t('tokensTitle')}</span>
      </nav>
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
      <TokenTable language={language} label={t('tokensMine')} tokens={mine} owners={false} onRevoke={revoke} />
      {admin && (
        <>
          <h2>{t('tokensOfReach')}</h2>
          <TokenTable language={language} label={t('tokensOfReach')} tokens={others} owners onRevoke={revoke} />
        </>
      )}
    </main>
  );
}

const listOf = ({ items }: { items: TokenView[] }): ListPage<TokenView> => ({ items, total: items.length });
const isIn = (list: ListPage<TokenView> | null, token: TokenView) => !!list?.items.some((tk) => tk.id === token.id);

function TokenTable({
  language,
  label,
  tokens,
  owners,
  onRevoke,
}: {
  language: Language;
  label: string;
  tokens: Loaded<ListPage<TokenView>>;
  owners: boolean;
  onRevoke: (id: string) => Promise<void>;
}) {
  const t = translator(language);
  const columns: Column<TokenView>[] = [
    { label: t('tokenLabel'), className: 'name', cell: (tk) => tk.label || t('tokenNoLabel') },
    ...(owners
      ? [{ label: t('colUser'), cell: (tk: TokenView) => personLabel(tk.username, tk.displayName, language) }]
      : []),
    {
      label: t('tokenScopes'),
      className: 'scopes',
      cell: (tk) =>
        tk.scopes.length === 0
          ? t('tokenScopesNone')
          : tk.scopes.map((s) => t(SCOPE_WORDS[s])).join(t('listSeparator')),
    },
    { label: t('tokenCreatedAt'), cell: (tk) => formatTime(language, tk.createdAt) },
    {
      label: t('tokenExpiresAt'),
      cell: (tk) => (
        <>
          {tk.expiresAt ? formatTime(language, tk.expiresAt) : t('tokenNever')}
          {tk.expired && <span class="badge state-disabled"> {t('tokenExpired')}</span>}
        </>
      ),
    },
    {
      label: t('tokenLastUsed'),
      cell: (tk) => (tk.lastUsedAt ? formatTime(language, tk.lastUsedAt) : t('tokenNeverUsed')),
    },
    {
      label: t('accountActions'),
      className: 'actions',
      cell: (tk) => (
        <ConfirmAction
          language={language}
          label={t('tokenRevoke')}
          on={tk.label || tk.id}
          question={t('tokenRevokeConfirm')}
          confirm={t('tokenRevoke')}
          onConfirm={() => void onRevoke(tk.id)}
        />
      ),
    },
  ];
  return (
    <TableSection
      language={language}
      label={label}
      loaded={tokens}
      count={null}
      empty={t('tokensNone')}
      columns={columns}
      rowKey={(tk) => tk.id}
      rowAttributes={(tk) => ({ 'data-token': tk.id })}
      tableClass="files"
    />
  );
}
