import { useState } from 'preact/hooks';
import type { AccountSummary } from '../../../shared/accounts.js';
import { keptImportUrl, type ArchiveApi } from '../api.js';
import { translator, type Language } from '../i18n/index.js';
import { ErrorNote } from './controls.js';
import { AccountFilters, NO_ACCOUNT_FILTERS, type AccountFilterValues } from './accounts/account-filters.js';
import { AccountList } from './accounts/account-list.js';
import { CreateAccount } from './accounts/create-account.js';
import { HandoverNote, type Handover } from './accounts/handover-note.js';
import { ImportAccounts } from './accounts/import-accounts.js';
import { KeptImports, useKeptImports } from './accounts/kept-imports.js';
import { RenameAccount } from './accounts/rename-account.js';
import { useAccountActions } from './accounts/use-account-actions.js';

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
  const [filters, setFilters] = useState<AccountFilterValues>(NO_ACCOUNT_FILTERS);
  const [offset, setOffset] = useState(0);
  const [panel, setPanel] = useState<'none' | 'create' | 'import'>('none');
  const [renaming, setRenaming] = useState<AccountSummary | null>(null);
  const [handover, setHandover] = useState<Handover | null>(null);
  // The import whose answer the import panel shows (its kept copy is not listed again).
  const [shownImport, setShownImport] = useState<string | null>(null);
  const actions = useAccountActions({ api, language, onHandover: setHandover });
  const { kept, taken } = useKeptImports(api, actions.refresh);
  const toggle = (which: 'create' | 'import') => setPanel(panel === which ? 'none' : which);

  return (
    <main class="page wide" aria-labelledby="accounts-title">
      <h1 id="accounts-title">{t('accountsTitle')}</h1>
      <p class="hint">{t('accountsIntro')}</p>
      <div class="toolbar">
        <button type="button" onClick={() => toggle('create')} aria-expanded={panel === 'create'}>
          {t('accountCreate')}
        </button>
        <button type="button" class="secondary" onClick={() => toggle('import')} aria-expanded={panel === 'import'}>
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
            actions.changed();
          }}
        />
      )}
      {panel === 'import' && (
        <ImportAccounts
          api={api}
          language={language}
          onImported={(keptUrl) => {
            setShownImport(keptUrl);
            actions.changed();
          }}
        />
      )}
      <KeptImports
        language={language}
        items={kept.filter((k) => keptImportUrl(k.id) !== shownImport)}
        onTaken={taken}
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
            if (changed) actions.changed();
          }}
        />
      )}
      <AccountFilters
        language={language}
        filters={filters}
        onSearch={(next) => {
          setOffset(0);
          setFilters(next);
        }}
      />
      <ErrorNote error={actions.error} />
      <AccountList
        api={api}
        language={language}
        filters={filters}
        offset={offset}
        onOffset={setOffset}
        refresh={actions.refresh}
        actions={{ ...actions, rename: setRenaming }}
      />
    </main>
  );
}
