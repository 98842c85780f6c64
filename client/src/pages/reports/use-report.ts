import { useEffect, useState } from 'preact/hooks';
import type { ReportName } from '../../../../shared/reports.js';
import type { ArchiveApi } from '../../api.js';

export interface Loaded<T> {
  /** The latest answer; kept while the next one of the same grouping loads, so the table does not flicker. */
  data: T | null;
  error: unknown;
  loading: boolean;
}

/** One report request per distinct query (`null`: none needed). */
export function useReport<T>(api: ArchiveApi, name: ReportName, query: URLSearchParams | null): Loaded<T> {
  const key = query?.toString() ?? null;
  const [state, setState] = useState<{ key: string | null; data: T | null; error: unknown }>({
    key: null,
    data: null,
    error: null,
  });
  useEffect(() => {
    if (key === null) return;
    let current = true;
    api.report<T>(name, new URLSearchParams(key)).then(
      (data) => current && setState({ key, data, error: null }),
      (error: unknown) => current && setState({ key, data: null, error }),
    );
    return () => {
      current = false;
    };
  }, [name, key]);
  // Rows of another grouping have other columns: they are not kept while the new ones load.
  const sameShape =
    state.key !== null &&
    key !== null &&
    new URLSearchParams(state.key).get('group') === new URLSearchParams(key).get('group');
  return {
    data: sameShape ? state.data : null,
    error: state.key === key ? state.error : null,
    loading: key !== null && state.key !== key,
  };
}
