import { useState } from 'preact/hooks';
import type { AccountSummary } from '../../../shared/accounts.js';
import { keptImportUrl, type ArchiveApi } from '../api.js';
import { translator, type Language } from '../i18n/index.js';
import { ErrorNote } from './controls.js';
import { AccountFilters } from './accounts/account-filters.js';
import { NO_ACCOUNT_FILTERS, type AccountFilterValues } from './accounts/account-query.js';
import { AccountList } from './accounts/account-list.js';
import { CreateAccount } from './accounts/create-account.js';
import { ImportAccounts } from './accounts/import-accounts.js';
import { KeptImports, useKeptImports } from './accounts/kept-imports.js';
import { OpeningSheet, useOpeningSheet } from './accounts/opening-sheet.js';
import { RenameAccount } from './accounts/rename-account.js';
import { useAccountActions } from './accounts/use-account-actions.js';

/**
 * 账号管理: the accounts within the administrator's reach, searchable and paged, with creating,
 * importing, password resets, unblocking, disabling and enabling; the one-time passwords made
 * here gather on the 账号开通单 until it is closed.
 */
export function AccountsPage({
  api,
  language,
  topLevel,
  self,
}: {
  api: ArchiveApi;
  language: Language;
  /** The caller belongs to the archive itself: it may make top-level administrators. */
  topLevel: boolean;
  /** The caller's own account id: its row offers no password reset (it changes its own password). */
  self: string;
}) {
  const t = translator(language);
  const [filters, setFilters] = useState<AccountFilterValues>(NO_ACCOUNT_FILTERS);
  const [offset, setOffset] = useState(0);
  const [panel, setPanel] = useState<'none' | 'create' | 'import'>('none');
  const [renaming, setRenaming] = useState<AccountSummary | null>(null);
  const sheet = useOpeningSheet();
  // The import whose answer the import panel shows (its kept copy is not listed again).
  const [shownImport, setShownImport] = useState<string | null>(null);
  const actions = useAccountActions({ api, language, onHandover: (entry) => sheet.add([entry]) });
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
          onCreated={(entry) => {
            sheet.add([entry]);
            setPanel('none');
            actions.changed();
          }}
        />
      )}
      {panel === 'import' && (
        <ImportAccounts
          api={api}
          language={language}
          onImported={(keptUrl, entries) => {
            setShownImport(keptUrl);
            sheet.add(entries);
            actions.changed();
          }}
        />
      )}
      <KeptImports
        language={language}
        items={kept.filter((k) => keptImportUrl(k.id) !== shownImport)}
        onTaken={taken}
      />
      <OpeningSheet language={language} entries={sheet.entries} onClose={sheet.close} />
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
        self={self}
        actions={{ ...actions, rename: setRenaming }}
      />
    </main>
  );
}
