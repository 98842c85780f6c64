import { useState } from 'preact/hooks';
import type { AccountSummary } from '../../../../shared/accounts.js';
import type { ArchiveApi } from '../../api.js';
import { describeError, type Language } from '../../i18n/index.js';
import type { SheetEntry } from './opening-sheet.js';

/**
 * What an administrator does to a listed account (reset its password, unblock, disable or enable
 * it), with the last action's error; `refresh` counts the changes, so that the list and the kept
 * imports read again after each (`changed` counts one made elsewhere on the page).
 */
export function useAccountActions({
  api,
  language,
  onHandover,
}: {
  api: ArchiveApi;
  language: Language;
  /** A reset's one-time password, to hand over (on the 账号开通单). */
  onHandover: (entry: SheetEntry) => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const [refresh, setRefresh] = useState(0);
  const changed = () => setRefresh((r) => r + 1);

  const act = async (work: () => Promise<unknown>) => {
    setError(null);
    try {
      await work();
      changed();
    } catch (e) {
      setError(describeError(language, e));
    }
  };

  return {
    error,
    refresh,
    changed,
    reset: (a: AccountSummary) =>
      void act(async () => {
        const r = await api.resetPassword(a.id);
        onHandover({
          username: a.username,
          displayName: r.account.displayName,
          unitText: r.account.unitText,
          password: r.oneTimePassword,
          kind: 'reset',
        });
      }),
    unblock: (a: AccountSummary) => void act(() => api.unblock(a.id)),
    setDisabled: (a: AccountSummary, disabled: boolean) =>
      void act(async () => {
        await api.updateAccount(a.id, { disabled });
      }),
  };
}
