import type { FunctionComponent } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { REPORTS, type ReportName } from '../../../../shared/reports.js';
import type { ArchiveApi } from '../../api.js';
import { translator, type Language } from '../../i18n/index.js';
import { go, reportHash, withParams } from '../../route.js';
import type { SessionView } from '../../../../shared/schemas.js';
import { formatCount } from '../format.js';
import { CollisionsTab } from './collisions.js';
import { CrossUnitTab } from './cross-unit.js';
import { NearDuplicatesTab } from './near-duplicates.js';
import { UnitTrail } from './filters.js';
import { carriedFilters } from './query.js';
import { RepeatTab } from './repeat.js';
import { SavingsTab } from './savings.js';
import type { TabProps } from './view.js';
import { UnitLevels } from '../unit-levels.js';

const TAB_LABEL = {
  'repeat-uploaders': 'tabRepeat',
  'cross-unit': 'tabCrossUnit',
  savings: 'tabSavings',
  collisions: 'tabCollisions',
  'near-duplicates': 'tabNearDuplicates',
} as const;
const TABS: Record<ReportName, FunctionComponent<TabProps>> = {
  'repeat-uploaders': RepeatTab,
  'cross-unit': CrossUnitTab,
  savings: SavingsTab,
  collisions: CollisionsTab,
  'near-duplicates': NearDuplicatesTab,
};

/** The administrators' reports: one table at a time, its view (filters, sorting, page) in the address. */
export function ReportsPage({
  api,
  language,
  report,
  params,
  reach,
}: {
  api: ArchiveApi;
  language: Language;
  report: ReportName;
  params: URLSearchParams;
  /** What the administrator reaches (null: the whole archive): its reports open there. */
  reach: SessionView['reach'];
}) {
  const t = translator(language);
  const Tab = TABS[report];
  const units = useMemo(() => new UnitLevels(api, reach), [api, reach]);
  const outsideReach = reach !== null && !params.get('city');
  useEffect(() => {
    // The server narrows every report to the reach anyway; the filters then say so.
    if (outsideReach) location.replace(reportHash(report, withParams(params, reach)));
  }, [outsideReach, report]);
  if (outsideReach) return null;
  return (
    <main class="page wide" aria-labelledby="reports-title">
      <h1 id="reports-title">{t('reportsTitle')}</h1>
      <CollisionBanner api={api} language={language} />
      <nav class="tabs" aria-label={t('reportTables')}>
        {REPORTS.map((name) => (
          <a
            key={name}
            href={reportHash(name, carriedFilters(params))}
            aria-current={name === report ? 'page' : undefined}
          >
            {t(TAB_LABEL[name])}
          </a>
        ))}
      </nav>
      <UnitTrail language={language} params={params} reach={reach} hrefFor={(next) => reportHash(report, next)} />
      <Tab
        key={report}
        api={api}
        language={language}
        params={params}
        show={(next) => go(reportHash(report, next))}
        units={units}
      />
    </main>
  );
}

/** MD5 collisions anywhere in the archive are rare and serious: said on top of every table. */
function CollisionBanner({ api, language }: { api: ArchiveApi; language: Language }) {
  const t = translator(language);
  const [total, setTotal] = useState(0);
  useEffect(() => {
    // Whether the banner shows is not worth an error of its own: the tables report failures.
    api.collisionCount().then(
      (count) => setTotal(count.total),
      () => undefined,
    );
  }, []);
  if (total === 0) return null;
  return (
    <p class="alarm" role="alert">
      <strong>{t('collisionsBanner', { count: formatCount(language, total) })}</strong>{' '}
      <a href={reportHash('collisions', new URLSearchParams())}>{t('collisionsShow')}</a>
    </p>
  );
}
