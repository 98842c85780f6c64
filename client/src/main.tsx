import './zod-config.js';
import { render, type ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { SessionView } from '../../shared/schemas.js';
import { ArchiveApi } from './api.js';
import { ApiError, describeError, translator, type Language } from './i18n/index.js';
import { initialLanguage, saveLanguage } from './i18n/saved-language.js';
import { AdminPages, loadAdminPages } from './pages/admin-pages.js';
import { askFirstAccountsPageAhead } from './pages/accounts/account-query.js';
import { showTimesIn, unitPlace } from './pages/format.js';
import { LoginPage, OwnAccountPage, PasswordPage } from './pages/login.js';
import { MyUploadsPage } from './pages/my-uploads.js';
import { ReceiptsPage } from './pages/receipts.js';
import { TrashPage } from './pages/trash.js';
import { FileUploadsPage } from './pages/file-uploads.js';
import { TokensPage } from './pages/tokens.js';
import { ARCHIVE_UNIT_ID } from '../../shared/units.js';
import { UploadPage } from './pages/upload.js';
import { routeFromHash, type PageName, type Route } from './route.js';
import './styles.css';

/** Pages for administrators only: a clerk who follows a link to one gets the upload page (the API refuses them anyway). */
const ADMIN_PAGES: ReadonlySet<PageName> = new Set([
  'reports',
  'audit',
  'fixity',
  'accounts',
  'units',
  'holds',
  'disposals',
]);

function App({ api }: { api: ArchiveApi }) {
  const [language, setLanguage] = useState<Language>(initialLanguage);
  const [session, setSession] = useState<SessionView | null | undefined>(undefined);
  const [route, setRoute] = useState<Route>(() => routeFromHash(location.hash));
  const [startupError, setStartupError] = useState<string | null>(null);
  const t = translator(language);

  useEffect(() => {
    saveLanguage(language);
    document.title = t('appTitle');
  }, [language]);
  useEffect(() => {
    api.session().then(setSession, (error: unknown) => setStartupError(describeError(language, error)));
    // Opened on an administrator's page (a bookmark, a reload): its chunk loads beside the session.
    if (ADMIN_PAGES.has(route.page)) loadAdminPages(route.page).catch(() => {});
    // The accounts page's first rows are asked for now too, not once the session and chunk are in.
    if (route.page === 'accounts') askFirstAccountsPageAhead(api);
    const onHash = () => setRoute(routeFromHash(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  const switchLanguage = (
    <button
      type="button"
      class="link"
      lang={language === 'en' ? 'zh-CN' : 'en'}
      title={t('languageLabel')}
      onClick={() => setLanguage(language === 'en' ? 'zh-CN' : 'en')}
    >
      {t('language')}
    </button>
  );

  if (session === undefined) {
    return <main class="centered">{startupError ? <p role="alert">{startupError}</p> : <p>{t('loading')}</p>}</main>;
  }
  if (session === null)
    return <LoginPage api={api} language={language} languageSwitch={switchLanguage} onLogin={setSession} />;
  if (session.mustChangePassword)
    return <PasswordPage api={api} language={language} languageSwitch={switchLanguage} onChanged={setSession} />;

  const logout = async () => {
    try {
      await api.logout();
    } catch (error) {
      // Showing the login page while the session still works would leave it open on a shared computer.
      if (!(error instanceof ApiError && error.status === 401)) return setStartupError(describeError(language, error));
    }
    setStartupError(null);
    setSession(null);
  };
  // Before the pages render: their times are the archive's, as in its exports.
  showTimesIn(session.timeZone);
  const unit =
    session.account.unit.id === ARCHIVE_UNIT_ID ? t('unitArchiveInSentence') : unitPlace(session.account.unit);
  const isAdmin = session.account.role === 'admin';
  const who = session.account.displayName
    ? t('signedInAsNamed', { name: session.account.displayName, user: session.account.username, unit })
    : t('signedInAs', { user: session.account.username, unit });
  const page: PageName = ADMIN_PAGES.has(route.page) && !isAdmin ? 'upload' : route.page;
  return (
    <>
      <header class="topbar">
        <strong class="brand">{t('appTitle')}</strong>
        <nav aria-label={t('appTitle')}>
          <NavLink to="upload" current={page}>
            {t('navUpload')}
          </NavLink>
          <NavLink to="files" current={page}>
            {t('navMyUploads')}
          </NavLink>
          <NavLink to="receipts" current={page}>
            {t('navReceipts')}
          </NavLink>
          <NavLink to="trash" current={page}>
            {t('navTrash')}
          </NavLink>
          {isAdmin && (
            <>
              <NavLink to="reports" current={page}>
                {t('navReports')}
              </NavLink>
              <NavLink to="audit" current={page}>
                {t('navAudit')}
              </NavLink>
              <NavLink to="fixity" current={page}>
                {t('navFixity')}
              </NavLink>
              <NavLink to="accounts" current={page}>
                {t('navAccounts')}
              </NavLink>
              <NavLink to="units" current={page}>
                {t('navUnits')}
              </NavLink>
              <NavLink to="holds" current={page}>
                {t('navHolds')}
              </NavLink>
              <NavLink to="disposals" current={page}>
                {t('navDisposals')}
              </NavLink>
            </>
          )}
        </nav>
        {/* Cut short where the bar is full: the whole of it as the title. */}
        <span class="who" title={who}>
          {who}
        </span>
        {/* Tokens (扫描仪和程序接入) are reached from 我的账号: few clerks need them. */}
        <NavLink to="password" current={page === 'tokens' ? 'password' : page}>
          {t('navPassword')}
        </NavLink>
        {switchLanguage}
        {/* Quiet: logging out is not what the page is for. */}
        <button type="button" class="link logout" onClick={() => void logout()}>
          {t('logout')}
        </button>
      </header>
      {startupError && (
        <p role="alert" class="error banner">
          {startupError}
        </p>
      )}
      {/* The upload page stays mounted while the clerk browses, so transfers go on. */}
      <UploadPage
        api={api}
        language={language}
        account={session.account}
        maxFileSize={session.maxFileSize}
        trashDays={session.trashDays}
        hidden={page !== 'upload'}
      />
      {page === 'files' && (
        <MyUploadsPage
          api={api}
          language={language}
          params={route.params}
          admin={isAdmin}
          canDispose={isAdmin && session.reach === null}
          trashDays={session.trashDays}
        />
      )}
      {page === 'receipts' && (
        <ReceiptsPage
          api={api}
          language={language}
          trashDays={session.trashDays}
          canDispose={isAdmin && session.reach === null}
          account={session.account}
          {...(route.id ? { id: route.id } : {})}
        />
      )}
      {page === 'trash' && <TrashPage api={api} language={language} admin={isAdmin} trashDays={session.trashDays} />}
      {page === 'file-uploads' && route.id && (
        <FileUploadsPage
          api={api}
          language={language}
          fileId={route.id}
          admin={isAdmin}
          trashDays={session.trashDays}
        />
      )}
      {page === 'password' && (
        <OwnAccountPage api={api} language={language} account={session.account} onChanged={setSession} />
      )}
      {page === 'tokens' && <TokensPage api={api} language={language} admin={isAdmin} />}
      {ADMIN_PAGES.has(page) && (
        <AdminPages api={api} language={language} route={route} reach={session.reach} self={session.account.id} />
      )}
    </>
  );
}

render(<App api={new ArchiveApi()} />, document.getElementById('app')!);

/** A link in the top bar to one of the app's pages, marked as the current page where it is. */
function NavLink({ to, current, children }: { to: PageName; current: PageName; children: ComponentChildren }) {
  return (
    <a href={`#/${to}`} aria-current={to === current ? 'page' : undefined}>
      {children}
    </a>
  );
}
