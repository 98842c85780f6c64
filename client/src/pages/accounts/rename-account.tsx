import type { AccountSummary } from '../../../../shared/accounts.js';
import type { ArchiveApi } from '../../api.js';
import { translator, type Language } from '../../i18n/index.js';
import { Field, FormProblem, useCheckedForm } from '../field.js';
import { formText } from '../form-text.js';
import { displayNameProblems } from '../typed-name.js';

/** An administrator changes an account's name (empty removes it), in a panel above the list. */
export function RenameAccount({
  api,
  language,
  account,
  onDone,
}: {
  api: ArchiveApi;
  language: Language;
  account: AccountSummary;
  onDone: (changed: boolean) => void;
}) {
  const t = translator(language);
  const { ref, errors, busy, submit } = useCheckedForm({
    language,
    t,
    places: { fields: ['displayName'] },
    check: (form) => displayNameProblems(t, formText(form, 'displayName')),
    send: async (form) => {
      await api.updateAccount(account.id, { displayName: formText(form, 'displayName').trim() });
      onDone(true);
    },
  });
  return (
    <form class="card panel" ref={ref} onSubmit={submit} aria-labelledby="rename-title" noValidate>
      <h2 id="rename-title">{t('accountRenameTitle', { user: account.username })}</h2>
      <Field label={t('displayName')} hint={t('displayNameOptional')} errors={errors}>
        <input name="displayName" autoComplete="off" defaultValue={account.displayName ?? ''} autoFocus />
      </Field>
      <FormProblem errors={errors} />
      <div class="toolbar">
        <button type="submit" disabled={busy}>
          {t('saveNameButton')}
        </button>
        <button type="button" class="secondary" onClick={() => onDone(false)}>
          {t('cancel')}
        </button>
      </div>
    </form>
  );
}
