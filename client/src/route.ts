import { REPORTS, type ReportName } from '../../shared/reports.js';

/**
 * Where the app is, read from the location hash: `#/upload`, `#/files`, `#/reports/<table>?…`,
 * `#/audit?…`, `#/fixity`, `#/password`, `#/accounts`, `#/units`, `#/tokens`, `#/receipts[/<id>]`, `#/trash`, `#/holds`,
 * `#/disposals?…`, `#/file-uploads/<file id>`. Filters live in the hash's query, so a reload or a shared link shows the same view.
 */
export type PageName =
  | 'upload'
  | 'files'
  | 'receipts'
  | 'trash'
  | 'disposals'
  | 'file-uploads'
  | 'reports'
  | 'audit'
  | 'fixity'
  | 'password'
  | 'accounts'
  | 'units'
  | 'tokens'
  | 'holds';

const PLAIN_PAGES: ReadonlySet<string> = new Set([
  'files',
  'trash',
  'disposals',
  'audit',
  'fixity',
  'password',
  'accounts',
  'units',
  'tokens',
  'holds',
]);

export interface Route {
  page: PageName;
  /** The report table, for `reports`. */
  report: ReportName;
  params: URLSearchParams;
  /** The receipt, for `receipts/<id>`; the file, for `file-uploads/<id>`. */
  id?: string;
}

/** The table `#/reports` opens on. */
export const DEFAULT_REPORT: ReportName = 'repeat-uploaders';

export function routeFromHash(hash: string): Route {
  const [path = '', query = ''] = hash.replace(/^#/, '').split('?', 2);
  const [, page = '', sub = ''] = path.split('/');
  const params = new URLSearchParams(query);
  if (page === 'reports') {
    const report = (REPORTS as readonly string[]).includes(sub) ? (sub as ReportName) : DEFAULT_REPORT;
    return { page, report, params };
  }
  if (page === 'receipts') return { page, report: DEFAULT_REPORT, params, ...(sub ? { id: sub } : {}) };
  if (page === 'file-uploads' && sub) return { page, report: DEFAULT_REPORT, params, id: sub };
  if (PLAIN_PAGES.has(page)) return { page: page as PageName, report: DEFAULT_REPORT, params };
  return { page: 'upload', report: DEFAULT_REPORT, params };
}

/** Parameters without empty values, in a stable order (so equal views give equal links). */
export function cleanParams(params: URLSearchParams | Record<string, string | null | undefined>): URLSearchParams {
  const entries = params instanceof URLSearchParams ? [...params.entries()] : Object.entries(params);
  const clean = new URLSearchParams();
  for (const [name, value] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (value !== null && value !== undefined && value !== '') clean.set(name, value);
  }
  return clean;
}

export function reportHash(report: ReportName, params: URLSearchParams): string {
  const query = cleanParams(params).toString();
  return `#/reports/${report}${query ? `?${query}` : ''}`;
}

/** A page's link with its parameters (filters, sorting, paging), e.g. `#/files?q=…`. */
export function pageHash(page: Exclude<PageName, 'reports'>, params: URLSearchParams): string {
  const query = cleanParams(params).toString();
  return `#/${page}${query ? `?${query}` : ''}`;
}

export function auditHash(params: URLSearchParams): string {
  return pageHash('audit', params);
}

/** The current parameters with some changed (null or '' removes one). */
export function withParams(
  params: URLSearchParams,
  changes: Record<string, string | number | null | undefined>,
): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const [name, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === '') next.delete(name);
    else next.set(name, String(value));
  }
  return next;
}

/** A new history entry, so the browser's Back button undoes a filter or a drill-down. */
export function go(hash: string): void {
  if (location.hash !== hash) location.hash = hash;
}
