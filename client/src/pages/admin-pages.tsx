import { useEffect, useState } from 'preact/hooks';
import type { ArchiveApi } from '../api.js';
import { translator, type Language } from '../i18n/index.js';
import type { PageName, Route } from '../route.js';
import type { SessionView } from '../../../shared/schemas.js';

type AdminModule = typeof import('./admin.js');
type ReportsModule = typeof import('./reports/index.js');
let loading: Promise<AdminModule> | null = null;
let loadingReports: Promise<ReportsModule> | null = null;

/**
 * Starts loading an administrators' page (once): the app calls it at its start when it opens on
 * one of them, so the chunk arrives while the session is asked for, not after. The reports are a
 * chunk of their own, with Chart.js (five sixths of the pages' code): the accounts page, say,
 * does not wait for it to be read (issue 43).
 */
export function loadAdminPages(page: PageName): Promise<unknown> {
  return page === 'reports' ? loadReports() : loadAdmin();
}

const loadAdmin = () => (loading ??= import('./admin.js'));
const loadReports = () => (loadingReports ??= import('./reports/index.js'));

/**
 * The reports, the audit log, accounts and units, loaded on first use: clerks, who never see them, never download
 * them (Chart.js alone would add a third to the app's size), and only the reports wait for Chart.js.
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
  const reports = route.page === 'reports';
  const [admin, setAdmin] = useState<AdminModule | null>(null);
  const [reportsPage, setReportsPage] = useState<ReportsModule | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    const done = reports ? loadReports().then(setReportsPage) : loadAdmin().then(setAdmin);
    done.catch(() => {
      // Usually a release replaced the chunk while the page was open; a reload fetches the new one.
      if (reports) loadingReports = null;
      else loading = null;
      setFailed(true);
    });
  }, [reports]);
  if (failed) {
    return (
      <main class="page">
        <p role="alert" class="error">
          {t('loadFailed')}
        </p>
      </main>
    );
  }
  if (reports)
    return reportsPage ? (
      <reportsPage.ReportsPage
        api={api}
        language={language}
        report={route.report}
        params={route.params}
        reach={reach}
      />
    ) : (
      <main class="page">{t('loading')}</main>
    );
  if (!admin) return <main class="page">{t('loading')}</main>;
  const pages = admin;
  if (route.page === 'fixity') return <pages.FixityPage api={api} language={language} topLevel={topLevel} />;
  if (route.page === 'accounts')
    return <pages.AccountsPage api={api} language={language} topLevel={topLevel} self={self} />;
  if (route.page === 'disposals')
    return <pages.DisposalsPage api={api} language={language} params={route.params} reach={reach} />;
  if (route.page === 'units') return <pages.UnitsPage api={api} language={language} topLevel={topLevel} />;
  if (route.page === 'holds') return <pages.HoldsPage api={api} language={language} />;
  return <pages.AuditPage api={api} language={language} params={route.params} reach={reach} />;
}
