import { useState } from 'preact/hooks';
import { ROLES, type Role } from '../../../../shared/accounts.js';
import { ARCHIVE_UNIT_ID } from '../../../../shared/units.js';
import type { ArchiveApi } from '../../api.js';
import { translator, type Language } from '../../i18n/index.js';
import { Field, FormProblem, useCheckedForm } from '../field.js';
import { formText } from '../form-text.js';
import { displayNameProblems } from '../typed-name.js';
import { UnitPicker, type PickedUnit } from '../unit-picker.js';
import { roleName } from './account-words.js';
import type { SheetEntry } from './opening-sheet.js';

/** An administrator creates an account in a unit of their reach; it goes, with its one-time password, to the 账号开通单. */
export function CreateAccount({
  api,
  language,
  topLevel,
  onCreated,
}: {
  api: ArchiveApi;
  language: Language;
  /** The caller belongs to the archive itself: it may make top-level administrators. */
  topLevel: boolean;
  onCreated: (entry: SheetEntry) => void;
}) {
  const t = translator(language);
  const [unit, setUnit] = useState<PickedUnit | null>(null);
  const [role, setRole] = useState<Role>('clerk');
  const { ref, errors, busy, submit } = useCheckedForm({
    language,
    t,
    places: {
      fields: ['username', 'displayName', 'role', 'unitId'],
      codes: { conflict: { field: 'username', text: t('usernameTaken') } },
    },
    check: (form): Record<string, string> => ({
      ...displayNameProblems(t, formText(form, 'displayName')),
      ...(unit ? {} : { unitId: t('accountPickUnit') }),
    }),
    send: async (form) => {
      const unitId = unit === ARCHIVE_UNIT_ID ? ARCHIVE_UNIT_ID : unit!.id;
      const displayName = formText(form, 'displayName').trim();
      const created = await api.createAccount({
        username: formText(form, 'username').trim(),
        ...(displayName && { displayName }),
        role,
        unitId,
      });
      onCreated({
        username: created.account.username,
        displayName: created.account.displayName,
        unitText: created.account.unitText,
        password: created.oneTimePassword,
        kind: 'created',
      });
    },
  });

  return (
    <form class="card panel" ref={ref} onSubmit={submit} aria-labelledby="create-title" noValidate>
      <h2 id="create-title">{t('accountCreate')}</h2>
      <Field label={t('username')} errors={errors}>
        <input name="username" required maxLength={64} autoComplete="off" />
      </Field>
      <Field label={t('displayName')} hint={t('displayNameOptional')} errors={errors}>
        <input name="displayName" autoComplete="off" />
      </Field>
      <Field label={t('accountRole')} errors={errors}>
        <select name="role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {roleName(t, r)}
            </option>
          ))}
        </select>
      </Field>
      <UnitPicker
        api={api}
        language={language}
        value={unit}
        onChange={setUnit}
        allowArchive={topLevel && role === 'admin'}
        idPrefix="create-unit"
        error={errors.unitId}
      />
      <FormProblem errors={errors} />
      <button type="submit" disabled={busy}>
        {t('accountCreateButton')}
      </button>
    </form>
  );
}
