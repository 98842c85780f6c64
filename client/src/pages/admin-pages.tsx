import { useEffect, useState } from 'preact/hooks';
import type { ArchiveApi } from '../api.js';
import { translator, type Language } from '../i18n/index.js';
import type { Route } from '../route.js';
import type { SessionView } from '../../../shared/schemas.js';

type AdminModule = typeof import('./admin.js');
let loading: Promise<AdminModule> | null = null;

/**
 * Starts loading the administrators' pages (once): the app calls it at its start when it opens on
 * one of them, so the chunk arrives while the session is asked for, not after.
 */
export function loadAdminPages(): Promise<AdminModule> {
  return (loading ??= import('./admin.js'));
}

/**
 * The reports, the audit log, accounts and units, loaded on first use: clerks, who never see them, never download
 * them (Chart.js alone would add a third to the app's size).
 */
export function AdminPages({
  api,
  language,
  route,
  reach,
  self,
}: {
  api: ArchiveApi;
  language: Language;
  route: Route;
  /** What the administrator reaches (null: the whole archive). */
  reach: SessionView['reach'];
  /** The administrator's own account id. */
  self: string;
}) {
  const topLevel = reach === null;
  const t = translator(language);
  const [pages, setPages] = useState<AdminModule | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    loadAdminPages().then(setPages, () => {
      // Usually a release replaced the chunk while the page was open; a reload fetches the new one.
      loading = null;
      setFailed(true);
    });
  }, []);
  if (failed) {
    return (
      <main class="page">
        <p role="alert" class="error">
          {t('loadFailed')}
        </p>
      </main>
    );
  }
  if (!pages) return <main class="page">{t('loading')}</main>;
  if (route.page === 'reports')
    return (
      <pages.ReportsPage api={api} language={language} report={route.report} params={route.params} reach={reach} />
    );
  if (route.page === 'fixity') return <pages.FixityPage api={api} language={language} topLevel={topLevel} />;
  if (route.page === 'accounts')
    return <pages.AccountsPage api={api} language={language} topLevel={topLevel} self={self} />;
  if (route.page === 'disposals')
    return <pages.DisposalsPage api={api} language={language} params={route.params} reach={reach} />;
  if (route.page === 'units') return <pages.UnitsPage api={api} language={language} topLevel={topLevel} />;
  if (route.page === 'holds') return <pages.HoldsPage api={api} language={language} />;
  return <pages.AuditPage api={api} language={language} params={route.params} reach={reach} />;
}
