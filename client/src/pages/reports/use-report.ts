import type { ReportName } from '../../../../shared/reports.js';
import type { ArchiveApi } from '../../api.js';
import { useLoaded, type Loaded } from '../table/use-loaded.js';

/** Rows of another grouping have other columns: they are not kept while the new ones load. */
const sameGroup = (shown: string, next: string) =>
  new URLSearchParams(shown).get('group') === new URLSearchParams(next).get('group');

/** One report request per distinct query (`null`: none needed). */
export function useReport<T>(api: ArchiveApi, name: ReportName, query: URLSearchParams | null): Loaded<T> {
  // A tab is mounted for one report only (the page keys it by the report's name).
  return useLoaded(query?.toString() ?? null, (key) => api.report<T>(name, new URLSearchParams(key)), sameGroup);
}
