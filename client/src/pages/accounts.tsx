import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import {
  ACCOUNT_STATES,
  IMPORT_COLUMNS_ZH,
  personLabel,
  type AccountState,
  type AccountSummary,
  type ImportProblem,
  type KeptImportView,
} from '../../../shared/accounts.js';
import { ROLES, type Role } from '../../../shared/schemas.js';
import { ARCHIVE_UNIT_ID } from '../../../shared/units.js';
import { ImportRefused, keptImportUrl, type ArchiveApi } from '../api.js';
import { describeError, translator, type Language, type Translate } from '../i18n/index.js';
import { Field, FormProblem, useCheckedForm } from './field.js';
import { displayNameProblems } from './typed-name.js';
import { formatTime } from './format.js';
import { formText } from './form-text.js';
import { ConfirmAction, CopyButton, ErrorNote, Pager, RowAction } from './controls.js';
import { UnitPicker, type PickedUnit } from './unit-picker.js';
import type { Column } from './table/data-table.js';
import { TableSection } from './table/table-section.js';
import { useLoaded } from './table/use-loaded.js';

const PAGE_SIZE = 50;

/** A one-time password to hand over, shown once. */
interface Handover {
  username: string;
  password: string;
  kind: 'created' | 'reset';
}

export const roleName = (t: Translate, role: Role) => (role === 'admin' ? t('roleAdmin') : t('roleClerk'));

const STATE_KEYS = {
  active: 'stateActive',
  must_change_password: 'stateMustChange',
  throttled: 'stateThrottled',
  disabled: 'stateDisabled',
} as const satisfies Record<AccountState, string>;

/** The template offered for download: the columns, and one example row. */
const TEMPLATE = `\uFEFF${IMPORT_COLUMNS_ZH.join(',')}\r\nzhangsan,档案员,130922100,张三\r\n`;

/**
 * The rows of the import's answer, the header left out. Its fields may be quoted (a name with a
 * comma) but never hold a line break: names, units and passwords cannot.
 */
function csvBody(text: string): string[][] {
  const lines = text
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/)
    .slice(1);
  return lines.map((line) =>
    Array.from(line.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g), ([, quoted, plain]) =>
      quoted !== undefined ? quoted.replace(/""/g, '"') : (plain ?? ''),
    ),
  );
}

/**
 * 账号管理: the accounts within the administrator's reach, searchable and paged, with creating,
 * importing, password resets, unblocking, disabling and enabling.
 */
export function AccountsPage({
  api,
  language,
  topLevel,
}: {
  api: ArchiveApi;
  language: Language;
  /** The caller belongs to the archive itself: it may make top-level administrators. */
  topLevel: boolean;
}) {
  const t = translator(language);
  const [filters, setFilters] = useState<{ q: string; role: string; state: string }>({ q: '', role: '', state: '' });
  const [offset, setOffset] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [panel, setPanel] = useState<'none' | 'create' | 'import'>('none');
  const [renaming, setRenaming] = useState<AccountSummary | null>(null);
  const [handover, setHandover] = useState<Handover | null>(null);
  const [refresh, setRefresh] = useState(0);
  // Imports whose passwords the server keeps (a reload or a dropped connection lost the answer).
  const [kept, setKept] = useState<KeptImportView[]>([]);
  const [shownImport, setShownImport] = useState<string | null>(null);

  useEffect(() => {
    api.keptImports().then(
      (r) => setKept(r.items),
      () => {},
    );
  }, [refresh]);

  const loaded = useLoaded(JSON.stringify({ filters, offset, refresh }), () =>
    api.accounts({ ...filters, limit: PAGE_SIZE, offset }),
  );

  const act = async (work: () => Promise<unknown>) => {
    setError(null);
    try {
      await work();
      setRefresh((r) => r + 1);
    } catch (e) {
      setError(describeError(language, e));
    }
  };

  const search = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setOffset(0);
    setFilters({ q: formText(form, 'q').trim(), role: formText(form, 'role'), state: formText(form, 'state') });
  };

  return (
    <main class="page wide" aria-labelledby="accounts-title">
      <h1 id="accounts-title">{t('accountsTitle')}</h1>
      <p class="hint">{t('accountsIntro')}</p>
      <div class="toolbar">
        <button
          type="button"
          onClick={() => setPanel(panel === 'create' ? 'none' : 'create')}
          aria-expanded={panel === 'create'}
        >
          {t('accountCreate')}
        </button>
        <button
          type="button"
          class="secondary"
          onClick={() => setPanel(panel === 'import' ? 'none' : 'import')}
          aria-expanded={panel === 'import'}
        >
          {t('accountImport')}
        </button>
      </div>
      {panel === 'create' && (
        <CreateAccount
          api={api}
          language={language}
          topLevel={topLevel}
          onCreated={(h) => {
            setHandover(h);
            setPanel('none');
            setRefresh((r) => r + 1);
          }}
        />
      )}
      {panel === 'import' && (
        <ImportAccounts
          api={api}
          language={language}
          onImported={(keptUrl) => {
            setShownImport(keptUrl);
            setRefresh((r) => r + 1);
          }}
        />
      )}
      {/* The import whose answer the panel shows is not listed again. */}
      <KeptImports
        language={language}
        items={kept.filter((k) => keptImportUrl(k.id) !== shownImport)}
        onTaken={(id) => setKept((items) => items.filter((k) => k.id !== id))}
      />
      {handover && <HandoverNote language={language} handover={handover} onClose={() => setHandover(null)} />}
      {renaming && (
        <RenameAccount
          key={renaming.id}
          api={api}
          language={language}
          account={renaming}
          onDone={(changed) => {
            setRenaming(null);
            if (changed) setRefresh((r) => r + 1);
          }}
        />
      )}
      <form role="search" class="search filters-row" onSubmit={search}>
        <label>
          <span class="visually-hidden">{t('accountSearch')}</span>
          <input name="q" type="search" placeholder={t('accountSearch')} maxLength={64} defaultValue={filters.q} />
        </label>
        <label>
          <span class="visually-hidden">{t('accountRole')}</span>
          <select name="role" defaultValue={filters.role}>
            <option value="">{t('accountAllRoles')}</option>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {roleName(t, r)}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span class="visually-hidden">{t('accountState')}</span>
          <select name="state" defaultValue={filters.state}>
            <option value="">{t('accountAllStates')}</option>
            {ACCOUNT_STATES.map((s) => (
              <option key={s} value={s}>
                {t(STATE_KEYS[s])}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">{t('searchButton')}</button>
      </form>
      <ErrorNote error={error} />
      <TableSection
        language={language}
        label={t('accountsTitle')}
        loaded={loaded}
        count={(total) => t('accountsCount', { total })}
        empty={t('noRows')}
        columns={accountColumns(language, (a) => (
          <AccountActions
            account={a}
            language={language}
            onReset={() =>
              void act(async () => {
                const r = await api.resetPassword(a.id);
                setHandover({ username: a.username, password: r.oneTimePassword, kind: 'reset' });
              })
            }
            onUnblock={() => void act(() => api.unblock(a.id))}
            onRename={() => setRenaming(a)}
            onDisable={(disabled) =>
              void act(async () => {
                await api.updateAccount(a.id, { disabled });
              })
            }
          />
        ))}
        rowKey={(a) => a.id}
        rowAttributes={(a) => ({ 'data-account': a.username })}
        tableClass="files accounts"
        pager={(total) => (
          <Pager language={language} total={total} size={PAGE_SIZE} offset={offset} onOffset={setOffset} />
        )}
      />
    </main>
  );
}

/** Who, with which role, in which unit, in what state, last seen when, with how many tokens; and what can be done. */
function accountColumns(
  language: Language,
  actions: (account: AccountSummary) => ComponentChildren,
): Column<AccountSummary>[] {
  const t = translator(language);
  return [
    {
      label: t('colUser'),
      rowHeader: true,
      className: 'name',
      cell: (a) => personLabel(a.username, a.displayName, language),
    },
    { label: t('accountRole'), cell: (a) => roleName(t, a.role) },
    {
      label: t('unitLabel'),
      className: 'unit',
      cell: (a) => (
        <>
          {a.topLevel && !a.unitText ? t('unitArchive') : a.unitText || t('unitNotInDirectory')}
          {a.unit?.code && <span class="code"> {a.unit.code}</span>}
        </>
      ),
    },
    {
      label: t('accountState'),
      cell: (a) => <span class={`badge state-${a.state}`}>{t(STATE_KEYS[a.state])}</span>,
    },
    {
      label: t('accountLastLogin'),
      cell: (a) => (a.lastLoginAt ? formatTime(language, a.lastLoginAt) : t('accountNeverLoggedIn')),
    },
    { label: t('accountTokens'), numeric: true, cell: (a) => a.tokens },
    { label: t('accountActions'), className: 'actions', cell: actions },
  ];
}

function AccountActions({
  account: a,
  language,
  onReset,
  onUnblock,
  onRename,
  onDisable,
}: {
  account: AccountSummary;
  language: Language;
  onReset: () => void;
  onUnblock: () => void;
  onRename: () => void;
  onDisable: (disabled: boolean) => void;
}) {
  const t = translator(language);
  return (
    <>
      <RowAction label={t('accountRename')} on={a.username} onClick={onRename} />
      <RowAction label={t('accountReset')} on={a.username} onClick={onReset} />
      {a.state === 'throttled' && <RowAction label={t('accountUnblock')} on={a.username} onClick={onUnblock} />}
      {a.state === 'disabled' ? (
        <RowAction label={t('accountEnable')} on={a.username} onClick={() => onDisable(false)} />
      ) : (
        <ConfirmAction
          language={language}
          label={t('accountDisable')}
          on={a.username}
          question={t('accountDisableConfirm', { user: a.username })}
          confirm={t('accountDisableYes')}
          onConfirm={() => onDisable(true)}
        />
      )}
    </>
  );
}

function CreateAccount({
  api,
  language,
  topLevel,
  onCreated,
}: {
  api: ArchiveApi;
  language: Language;
  topLevel: boolean;
  onCreated: (handover: Handover) => void;
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
      onCreated({ username: created.account.username, password: created.oneTimePassword, kind: 'created' });
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

function ImportAccounts({
  api,
  language,
  onImported,
}: {
  api: ArchiveApi;
  language: Language;
  /** keptUrl: where the server keeps a copy of the answer until it is downloaded. */
  onImported: (keptUrl: string | null) => void;
}) {
  const t = translator(language);
  const [refused, setRefused] = useState<ImportRefused | null>(null);
  const [result, setResult] = useState<{ rows: string[][]; url: string; keptUrl: string | null } | null>(null);
  const [templateUrl] = useState(() => URL.createObjectURL(new Blob([TEMPLATE], { type: 'text/csv' })));
  const chosen = (form: FormData) => {
    const file = form.get('file');
    return file instanceof File && file.size > 0 ? file : null;
  };
  const { ref, errors, submit } = useCheckedForm({
    language,
    t,
    // A file the server cannot read as accounts is the file's problem.
    places: { fields: ['file'], codes: { validation_failed: { field: 'file' }, payload_too_large: { field: 'file' } } },
    check: (form): Record<string, string> => (chosen(form) ? {} : { file: t('importPickFile') }),
    send: async (form) => {
      setRefused(null);
      setResult(null);
      try {
        const { csv, keptUrl } = await api.importAccounts(chosen(form)!);
        const rows = csvBody(csv);
        setResult({ rows, url: URL.createObjectURL(new Blob([csv], { type: 'text/csv' })), keptUrl });
        onImported(keptUrl);
      } catch (e) {
        // Refused rows are listed below the form, each with its line.
        if (e instanceof ImportRefused) setRefused(e);
        else throw e;
      }
    },
  });

  return (
    <form class="card panel" ref={ref} onSubmit={submit} aria-labelledby="import-title" noValidate>
      <h2 id="import-title">{t('accountImport')}</h2>
      <p class="hint">{t('importIntro')}</p>
      <p>
        <a href={templateUrl} download={t('importTemplateName')}>
          {t('importTemplate')}
        </a>
      </p>
      <Field label={t('importFile')} errors={errors}>
        <input name="file" type="file" accept=".csv,text/csv" required />
      </Field>
      <button type="submit">{t('importButton')}</button>
      <FormProblem errors={errors} />
      {refused && (
        <div role="alert" class="error">
          <p>{t('importRefused', { count: refused.rows.length })}</p>
          <ul>
            {refused.rows.map((r) => (
              <li key={r.line}>
                {t('importRow', {
                  line: r.line,
                  user: r.username,
                  problems: (r.codes ?? [])
                    .map((p) => importProblemText(t, p))
                    .join(language === 'zh-CN' ? '；' : '; '),
                })}
              </li>
            ))}
          </ul>
        </div>
      )}
      {result && (
        <div class="handover" role="status">
          <p>{t('importDone', { count: result.rows.length })}</p>
          <p>
            <a
              href={result.url}
              download={t('importResultName')}
              // Saved here: the server's copy is no longer needed (if forgetting fails, it stays listed).
              onClick={() => {
                if (result.keptUrl) api.forgetKeptImport(result.keptUrl).catch(() => {});
              }}
            >
              {t('importDownload')}
            </a>
          </p>
          <table class="files">
            <thead>
              <tr>
                <th scope="col">{t('username')}</th>
                <th scope="col">{t('displayName')}</th>
                <th scope="col">{t('oneTimePassword')}</th>
              </tr>
            </thead>
            <tbody>
              {/* The answer's columns: username, name, role, unit, one-time password. */}
              {result.rows.map((r) => (
                <tr key={r[0]}>
                  <td>{r[0]}</td>
                  <td>{r[1]}</td>
                  <td class="secret">{r[4]}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </form>
  );
}

/**
 * The caller's imports whose one-time passwords the server still keeps, each a download served
 * once (a plain link: the session cookie goes along); nothing when there are none.
 */
function KeptImports({
  language,
  items,
  onTaken,
}: {
  language: Language;
  items: KeptImportView[];
  onTaken: (id: string) => void;
}) {
  const t = translator(language);
  if (items.length === 0) return null;
  return (
    <section class="card handover" role="status" aria-labelledby="kept-imports-title">
      <h2 id="kept-imports-title">{t('keptImportsTitle', { count: items.length })}</h2>
      <p class="hint">{t('keptImportsHint')}</p>
      <ul>
        {items.map((k) => (
          <li key={k.id}>
            {t('keptImport', { count: k.count, time: formatTime(language, k.createdAt) })}{' '}
            <a href={keptImportUrl(k.id)} download={t('importResultName')} onClick={() => onTaken(k.id)}>
              {t('keptImportDownload')}
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** An administrator changes an account's name (empty removes it), in a panel above the list. */
function RenameAccount({
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

/** A row's problem in the reader's words. */
function importProblemText(t: Translate, p: ImportProblem): string {
  switch (p.code) {
    case 'too_many_columns':
      return t('importTooManyColumns');
    case 'bad_name':
      return t('importBadName');
    case 'bad_role':
      return t('importBadRole', { role: p.role });
    case 'bad_username':
      return t('importBadUsername');
    case 'username_repeated':
      return t('importUsernameRepeated', { line: p.line });
    case 'username_taken':
      return t('importUsernameTaken');
    case 'username_unavailable':
      return t('importUsernameUnavailable');
    case 'no_unit':
      return t('importNoUnit');
    case 'unit_outside_reach':
      return t('importUnitOutside', { unit: p.unit });
  }
}
