/**
 * Stable error codes shared by server and client. The client translates a code into the
 * clerk's language; the server's English `message` is the fallback and the log text.
 */
export const ERROR_CODES = [
  'bad_request',
  'validation_failed',
  'password_too_short',
  'password_is_username',
  'password_repetitive',
  'password_too_common',
  'unauthenticated',
  'login_failed',
  'login_throttled',
  'login_busy',
  'account_disabled',
  'csrf_failed',
  'cross_site_request',
  'forbidden',
  'token_scope_missing',
  'claim_rejected',
  'not_found',
  'conflict',
  'offset_mismatch',
  'upload_expired',
  'upload_locked',
  'unsupported_media_type',
  'unsupported_protocol',
  'payload_too_large',
  'headers_too_large',
  'request_timeout',
  'checksum_mismatch',
  'idempotency_key_reused',
  'withdrawal_too_late',
  'already_withdrawn',
  'already_restored',
  'file_on_hold',
  'already_disposed',
  'already_purged',
  'range_not_satisfiable',
  'rate_limited',
  'content_damaged',
  'storage_full',
  'store_unavailable',
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** What a `conflict` is about (its `details.reason`), so the client can say it in the reader's words. */
export const CONFLICT_REASONS = [
  'own_account_disabled',
  'own_role',
  /** An administrator resets its own password: it would end its session; it changes it instead. */
  'own_password_reset',
  'last_top_admin',
  'fixity_running',
  'unit_name_taken',
  'username_taken',
  'too_many_tokens',
  /** Said to administrators below the top level: the name may be another county's (issue 39). */
  'username_unavailable',
] as const;
export type ConflictReason = (typeof CONFLICT_REASONS)[number];

/** Body of every error response. */
export interface ErrorBody {
  error: ErrorCode;
  message: string;
  /** What a form needs to point at the problem: the offending `field`, an import's bad `rows`. */
  details?: Record<string, unknown>;
}
