/**
 * Whether a tus request that failed with `status` (0: no answer) is tried again, as the browser
 * and the importer both do: a network failure, a 5xx, a lock another instance still holds (409,
 * 423) or a 429, while retries remain. A full disk (507) does not empty itself between retries.
 */
export function tusShouldRetry(status: number, attempt: number, retries: number): boolean {
  if (status === 507) return false;
  return attempt < retries && (status === 0 || status >= 500 || status === 409 || status === 423 || status === 429);
}
