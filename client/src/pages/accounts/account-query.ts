import { accountsPath, type ArchiveApi } from '../../api.js';
import type { AccountList } from '../../../../shared/accounts.js';

/** The list's filters: a name to search for, a role, a state (empty: any). */
export interface AccountFilterValues {
  q: string;
  role: string;
  state: string;
}

export const NO_ACCOUNT_FILTERS: AccountFilterValues = { q: '', role: '', state: '' };

export const ACCOUNTS_PAGE_SIZE = 50;

/** The accounts page's request for the accounts these filters select, the page at `offset`. */
export function accountsPage(api: ArchiveApi, filters: AccountFilterValues, offset: number): Promise<AccountList> {
  return api.accounts({ ...filters, limit: ACCOUNTS_PAGE_SIZE, offset });
}

/**
 * The page's first request, asked for as the app starts on it (beside the session and the
 * administrators' chunk, not after them: issue 43's first rows in a second). Kept apart from the
 * page, in the app's main chunk, so the path is the one accountsPage asks for.
 */
export function askFirstAccountsPageAhead(api: ArchiveApi): void {
  api.ahead(accountsPath({ ...NO_ACCOUNT_FILTERS, limit: ACCOUNTS_PAGE_SIZE, offset: 0 }));
}
