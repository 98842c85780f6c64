import { useEffect, useState } from 'preact/hooks';
import { personLabel, type AccountSummary } from '../../../shared/accounts.js';
import { ARCHIVE_UNIT_ID, UNIT_NAME_RULE, type UnitView } from '../../../shared/units.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { formText } from './form-text.js';
import { ErrorNote } from './controls.js';
import { Field, FormProblem, useCheckedForm } from './field.js';
import { roleName } from './accounts/account-words.js';
import { UnitPicker, type PickedUnit } from './unit-picker.js';
import { nameProblems } from './typed-name.js';

/**
 * 单位: the unit directory as a tree, limited to the administrator's reach, with search; adding
 * and renaming units; and (top level) the accounts of earlier versions still to be given a unit.
 */
export function UnitsPage({ api, language, topLevel }: { api: ArchiveApi; language: Language; topLevel: boolean }) {
  const t = translator(language);
  const [top, setTop] = useState<UnitView[] | null>(null);
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<{ items: UnitView[]; total: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [refresh, setRefresh] = useState(0);

  useEffect(() => {
    api.units({ limit: 500 }).then(
      (list) => setTop(list.items),
      (e: unknown) => setError(describeError(language, e)),
    );
  }, [refresh]);
  useEffect(() => {
    if (!query) return setFound(null);
    api.units({ q: query, limit: 100 }).then(setFound, (e: unknown) => setError(describeError(language, e)));
  }, [query, refresh]);

  return (
    <main class="page wide" aria-labelledby="units-title">
      <h1 id="units-title">{t('unitsTitle')}</h1>
      <p class="hint">{t('unitsIntro')}</p>
      <form
        role="search"
        class="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(formText(new FormData(e.currentTarget), 'q').trim());
        }}
      >
        <label>
          <span class="visually-hidden">{t('unitSearch')}</span>
          <input name="q" type="search" maxLength={60} placeholder={t('unitSearchPlaceholder')} />
        </label>
        <button type="submit">{t('searchButton')}</button>
      </form>
      <ErrorNote error={error} />
      {found && (
        <section aria-labelledby="found-title">
          <h2 id="found-title">{t('unitFound', { total: found.total })}</h2>
          <ul class="unit-list">
            {found.items.map((u) => (
              <li key={u.id}>
                {u.path} <span class="code">{u.code ?? t('unitCustom')}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {topLevel && <AddUnit api={api} language={language} parent={null} onAdded={() => setRefresh((r) => r + 1)} />}
      {top === null && !error && <p>{t('loading')}</p>}
      {top && (
        <ul class="tree" role="tree" aria-label={t('unitsTitle')}>
          {top.map((u) => (
            <UnitNode
              key={`${u.id}-${refresh}`}
              api={api}
              language={language}
              unit={u}
              depth={1}
              open={top.length === 1}
            />
          ))}
        </ul>
      )}
      {topLevel && <Unmapped api={api} language={language} />}
    </main>
  );
}

function UnitNode({
  api,
  language,
  unit,
  depth,
  open: initiallyOpen,
}: {
  api: ArchiveApi;
  language: Language;
  unit: UnitView;
  depth: number;
  open: boolean;
}) {
  const t = translator(language);
  const [open, setOpen] = useState(initiallyOpen);
  const [children, setChildren] = useState<UnitView[] | null>(null);
  const [name, setName] = useState(unit.name);
  const [mode, setMode] = useState<'none' | 'add' | 'rename'>('none');
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);

  useEffect(() => {
    if (!open) return;
    api.units({ parent: unit.id, limit: 500 }).then(
      (list) => setChildren(list.items),
      (e: unknown) => setError(describeError(language, e)),
    );
  }, [open, version]);

  // Known to be a leaf once its children were asked for (a town may have units added under it).
  const leaf = children !== null && children.length === 0;
  return (
    <li role="treeitem" aria-level={depth} aria-expanded={leaf ? undefined : open} data-unit={unit.id}>
      <div class="node">
        {leaf ? (
          <span class="twisty" aria-hidden="true" />
        ) : (
          <button
            type="button"
            class={open ? 'twisty open' : 'twisty'}
            aria-label={open ? t('unitCollapse', { unit: name }) : t('unitExpand', { unit: name })}
            onClick={() => setOpen(!open)}
          ></button>
        )}
        <span class="unit-name">{name}</span>
        <span class="code">{unit.code ?? t('unitCustom')}</span>
        <button type="button" class="link small" onClick={() => setMode(mode === 'add' ? 'none' : 'add')}>
          {t('unitAddBelow')}
        </button>
        {unit.level === 'custom' && (
          <button type="button" class="link small" onClick={() => setMode(mode === 'rename' ? 'none' : 'rename')}>
            {t('unitRename')}
          </button>
        )}
      </div>
      {mode === 'add' && (
        <AddUnit
          api={api}
          language={language}
          parent={unit}
          onAdded={() => {
            setMode('none');
            setOpen(true);
            setVersion((v) => v + 1);
          }}
        />
      )}
      {mode === 'rename' && (
        <UnitNameForm
          language={language}
          label={t('unitNewName')}
          button={t('unitRenameButton')}
          name={name}
          onName={async (next) => {
            setName((await api.renameUnit(unit.id, next)).name);
            setMode('none');
          }}
        />
      )}
      <ErrorNote error={error} />
      {open && children && children.length > 0 && (
        <ul role="group">
          {children.map((c) => (
            <UnitNode key={c.id} api={api} language={language} unit={c} depth={depth + 1} open={false} />
          ))}
        </ul>
      )}
    </li>
  );
}

function AddUnit({
  api,
  language,
  parent,
  onAdded,
}: {
  api: ArchiveApi;
  language: Language;
  parent: UnitView | null;
  onAdded: () => void;
}) {
  const t = translator(language);
  return (
    <UnitNameForm
      language={language}
      label={parent ? t('unitAddUnder', { unit: parent.name }) : t('unitAddTop')}
      button={t('unitAddButton')}
      placeholder={t('unitAddPlaceholder')}
      onName={async (name) => {
        await api.addUnit(parent?.id ?? null, name);
        onAdded();
      }}
    />
  );
}

/** A unit's name, for a new unit or a new name: a name taken there already is refused at the field. */
function UnitNameForm({
  language,
  label,
  button,
  name = '',
  placeholder,
  onName,
}: {
  language: Language;
  label: string;
  button: string;
  name?: string;
  placeholder?: string;
  onName: (name: string) => Promise<void>;
}) {
  const t = translator(language);
  const { ref, errors, submit } = useCheckedForm({
    language,
    t,
    places: { fields: ['name'], codes: { conflict: { field: 'name', text: t('unitNameTaken') } } },
    check: (form) => nameProblems(t, formText(form, 'name'), UNIT_NAME_RULE, 'name'),
    send: async (form, element) => {
      await onName(formText(form, 'name').trim());
      element.reset();
    },
  });
  return (
    <form class="inline-form" ref={ref} onSubmit={submit} noValidate>
      <Field label={label} errors={errors}>
        <input name="name" defaultValue={name} required maxLength={60} placeholder={placeholder} />
      </Field>
      <button type="submit" class="small">
        {button}
      </button>
      <FormProblem errors={errors} />
    </form>
  );
}

/** Unmapped accounts asked for at a time (更多 asks for the next as many). */
const UNMAPPED_PAGE = 100;
/** The most the server answers at once: an assignment reloads the accounts shown, up to this. */
const UNMAPPED_MOST = 500;

/** Accounts of earlier versions whose units the directory does not hold: each given one here. */
function Unmapped({ api, language }: { api: ArchiveApi; language: Language }) {
  const t = translator(language);
  const [items, setItems] = useState<AccountSummary[] | null>(null);
  /** Whether the server may have more than those shown (the last page asked for was full). */
  const [more, setMore] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [refresh, setRefresh] = useState(0);
  const load = (offset: number, limit: number) =>
    api.unmapped({ limit, offset }).then(
      (r) => {
        setItems((shown) => (offset === 0 ? r.items : [...(shown ?? []), ...r.items]));
        setMore(r.items.length === limit);
      },
      (e: unknown) => setError(describeError(language, e)),
    );
  useEffect(() => {
    // After an assignment the accounts shown are asked for again (the assigned one gone from them).
    void load(0, Math.min(UNMAPPED_MOST, Math.max(UNMAPPED_PAGE, items?.length ?? 0)));
  }, [refresh]);
  if (items === null && !error) return null;
  return (
    <section aria-labelledby="unmapped-title" class="unmapped">
      <h2 id="unmapped-title">{t('unmappedTitle')}</h2>
      <ErrorNote error={error} />
      {items && items.length === 0 && <p>{t('unmappedNone')}</p>}
      {items && items.length > 0 && <p class="hint">{t('unmappedIntro')}</p>}
      {items?.map((a) => (
        <AssignUnit key={a.id} api={api} language={language} account={a} onAssigned={() => setRefresh((r) => r + 1)} />
      ))}
      {items && more && (
        <button type="button" class="small" onClick={() => void load(items.length, UNMAPPED_PAGE)}>
          {t('unmappedMore')}
        </button>
      )}
    </section>
  );
}

function AssignUnit({
  api,
  language,
  account,
  onAssigned,
}: {
  api: ArchiveApi;
  language: Language;
  account: AccountSummary;
  onAssigned: () => void;
}) {
  const t = translator(language);
  const [unit, setUnit] = useState<PickedUnit | null>(null);
  const { ref, errors, submit } = useCheckedForm({
    language,
    t,
    places: { fields: ['unitId'] },
    check: (): Record<string, string> => (unit ? {} : { unitId: t('accountPickUnit') }),
    send: async () => {
      await api.updateAccount(account.id, { unitId: unit === ARCHIVE_UNIT_ID ? ARCHIVE_UNIT_ID : unit!.id });
      onAssigned();
    },
  });
  return (
    <form class="card panel" ref={ref} onSubmit={submit} data-account={account.username} noValidate>
      <p>
        <strong>{personLabel(account.username, account.displayName, language)}</strong> ({roleName(t, account.role)}) —{' '}
        {t('unmappedWas', { unit: account.unitText })}
      </p>
      <UnitPicker
        api={api}
        language={language}
        value={unit}
        onChange={setUnit}
        allowArchive={account.role === 'admin'}
        idPrefix={`assign-${account.id}`}
        error={errors.unitId}
      />
      <FormProblem errors={errors} />
      <button type="submit">{t('unmappedAssign')}</button>
    </form>
  );
}
