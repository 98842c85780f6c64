import type { ComponentChildren } from 'preact';
import { personLabel, type AccountSummary } from '../../../../shared/accounts.js';
import type { ArchiveApi } from '../../api.js';
import { translator, type Language } from '../../i18n/index.js';
import { ConfirmAction, Pager, RowAction } from '../controls.js';
import { formatTime } from '../format.js';
import type { Column } from '../table/data-table.js';
import { TableSection } from '../table/table-section.js';
import { useLoaded } from '../table/use-loaded.js';
import { ACCOUNTS_PAGE_SIZE, accountsPage, type AccountFilterValues } from './account-query.js';
import { roleName, STATE_KEYS } from './account-words.js';

/** What can be done to an account from its row. */
export interface AccountRowActions {
  reset: (account: AccountSummary) => void;
  unblock: (account: AccountSummary) => void;
  rename: (account: AccountSummary) => void;
  setDisabled: (account: AccountSummary, disabled: boolean) => void;
}

/**
 * The accounts the filters select, a page at a time, read again when `refresh` changes (an
 * account changed), each row with its actions.
 */
export function AccountList({
  api,
  language,
  filters,
  offset,
  onOffset,
  refresh,
  self,
  actions,
}: {
  api: ArchiveApi;
  language: Language;
  filters: AccountFilterValues;
  offset: number;
  onOffset: (offset: number) => void;
  refresh: number;
  /** The caller's own account id. */
  self: string;
  actions: AccountRowActions;
}) {
  const t = translator(language);
  const loaded = useLoaded(JSON.stringify({ filters, offset, refresh }), () => accountsPage(api, filters, offset));
  // A filtered list is counted up to 1,000: beyond, "more than 1,000", and the pager goes on.
  const more = loaded.data?.totalCapped ?? false;
  return (
    <TableSection
      language={language}
      label={t('accountsTitle')}
      loaded={loaded}
      count={(total) => t(more ? 'accountsCountMore' : 'accountsCount', { total })}
      empty={t('noRows')}
      columns={accountColumns(language, (a) => (
        <AccountActions account={a} own={a.id === self} language={language} actions={actions} />
      ))}
      rowKey={(a) => a.id}
      rowAttributes={(a) => ({ 'data-account': a.username })}
      tableClass="files accounts"
      pager={(total) => (
        <Pager
          language={language}
          total={total}
          size={ACCOUNTS_PAGE_SIZE}
          offset={offset}
          onOffset={onOffset}
          more={more}
        />
      )}
    />
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

/**
 * A row's actions: rename, reset the password (asked first; not one's own, which is changed, not
 * reset: a reset would end one's session), unblock (when throttled), disable (asked first) or enable.
 */
function AccountActions({
  account: a,
  own,
  language,
  actions,
}: {
  account: AccountSummary;
  /** The caller's own account. */
  own: boolean;
  language: Language;
  actions: AccountRowActions;
}) {
  const t = translator(language);
  return (
    <>
      <RowAction label={t('accountRename')} on={a.username} onClick={() => actions.rename(a)} />
      {!own && (
        <ConfirmAction
          language={language}
          label={t('accountReset')}
          on={a.username}
          question={t('accountResetConfirm', { user: a.username })}
          confirm={t('accountResetYes')}
          onConfirm={() => actions.reset(a)}
        />
      )}
      {a.state === 'throttled' && (
        <RowAction label={t('accountUnblock')} on={a.username} onClick={() => actions.unblock(a)} />
      )}
      {a.state === 'disabled' ? (
        <RowAction label={t('accountEnable')} on={a.username} onClick={() => actions.setDisabled(a, false)} />
      ) : (
        <ConfirmAction
          language={language}
          label={t('accountDisable')}
          on={a.username}
          question={t('accountDisableConfirm', { user: a.username })}
          confirm={t('accountDisableYes')}
          onConfirm={() => actions.setDisabled(a, true)}
        />
      )}
    </>
  );
}
