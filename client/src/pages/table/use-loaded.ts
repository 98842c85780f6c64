import { useEffect, useState } from 'preact/hooks';

/** What a page shows of a request: its latest answer, the error that replaced it, and whether another is on its way. */
export interface Loaded<T> {
  /** The latest answer; kept while the next one loads (unless `keep` says otherwise), so the table does not flicker. */
  data: T | null;
  /** Why the request for the current key failed (null while it loads or when it did not). */
  error: unknown;
  /** A request for the current key is on its way. */
  loading: boolean;
}

/**
 * One request per distinct `key` (`null`: none needed), the answers of keys asked for before it
 * ignored. `keep(shown, next)` says whether the answer for `shown` may stay on screen while the
 * one for `next` loads (rows of another shape may not).
 */
export function useLoaded<T>(
  key: string | null,
  load: (key: string) => Promise<T>,
  keep: (shown: string, next: string) => boolean = () => true,
): Loaded<T> {
  const [state, setState] = useState<{ key: string | null; data: T | null; error: unknown }>({
    key: null,
    data: null,
    error: null,
  });
  useEffect(() => {
    if (key === null) return;
    let current = true;
    load(key).then(
      (data) => current && setState({ key, data, error: null }),
      (error: unknown) => current && setState({ key, data: null, error }),
    );
    return () => {
      current = false;
    };
  }, [key]);
  const kept = state.key !== null && key !== null && (state.key === key || keep(state.key, key));
  return {
    data: kept ? state.data : null,
    error: state.key === key ? state.error : null,
    loading: key !== null && state.key !== key,
  };
}
