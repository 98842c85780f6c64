import type { TokenScope } from '../shared/accounts.js';
import type { ConflictReason, ErrorCode } from '../shared/errors.js';

/**
 * Errors the archive's rules raise on purpose. Each carries a stable code; the HTTP layer
 * maps codes to statuses in one place (http/error-handler.ts). Anything else is a bug (500).
 */
export class ArchiveError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends ArchiveError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('validation_failed', message, details);
  }
}

/** A password the policy refuses (server/services/password-policy.ts); the code names the rule. */
export class WeakPasswordError extends ArchiveError {
  constructor(
    rule: 'password_too_short' | 'password_is_username' | 'password_repetitive' | 'password_too_common',
    message: string,
  ) {
    super(rule, message);
  }
}

export class BadRequestError extends ArchiveError {
  constructor(message: string) {
    super('bad_request', message);
  }
}

export class UnauthenticatedError extends ArchiveError {
  constructor(message = 'Log in, or send an API token as "Authorization: Bearer <token>".') {
    super('unauthenticated', message);
  }
}

export class LoginFailedError extends ArchiveError {
  constructor() {
    super('login_failed', 'Wrong username or password.');
  }
}

/** How long to wait, in words: "40 second(s)" or "3 minute(s)". */
export function waitText(seconds: number): string {
  return seconds < 120 ? `${seconds} second(s)` : `${Math.ceil(seconds / 60)} minute(s)`;
}

export class LoginThrottledError extends ArchiveError {
  constructor(readonly retryAfterSeconds: number) {
    super(
      'login_throttled',
      `Too many wrong passwords for this account. Wait ${waitText(retryAfterSeconds)} and try again: the right password works then.`,
    );
  }
}

/** Too many password checks waiting (password-hashing.ts): nothing was checked or counted. */
export class LoginBusyError extends ArchiveError {
  constructor(readonly retryAfterSeconds: number) {
    super(
      'login_busy',
      `The archive is checking many passwords right now. Wait ${waitText(retryAfterSeconds)} and try again.`,
    );
  }
}

export class ForbiddenError extends ArchiveError {
  constructor(message = 'Your account may not do this.') {
    super('forbidden', message);
  }
}

/** A request over an API token made without the scope it needs (shared/accounts.ts, TOKEN_SCOPES). */
export class TokenScopeError extends ArchiveError {
  constructor(
    readonly scope: TokenScope,
    message = `This API token was made without the "${scope}" scope, so it may not do this. Do it in the browser, or use a token made with that scope (POST /api/tokens with "scopes": ["${scope}"], from a browser session).`,
  ) {
    super('token_scope_missing', message, { scope });
  }
}

export class AccountDisabledError extends ArchiveError {
  constructor() {
    super('account_disabled', 'This account is disabled. Ask your archive’s administrator to enable it.');
  }
}

export class CsrfError extends ArchiveError {
  constructor() {
    super('csrf_failed', 'The security token of this page is missing or stale. Reload the page and try again.');
  }
}

export class CrossSiteError extends ArchiveError {
  constructor() {
    super(
      'cross_site_request',
      'Requests from another site are refused. Open the archive page itself and log in there.',
    );
  }
}

export class NotFoundError extends ArchiveError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('not_found', message, details);
  }
}

export class PayloadTooLargeError extends ArchiveError {
  constructor(
    readonly limitBytes: number,
    message = `The file is larger than the archive accepts (${limitBytes} bytes at most).`,
  ) {
    super('payload_too_large', message, { limitBytes });
  }
}

/** An Idempotency-Key sent again with another file: a new upload needs a new key. */
export class IdempotencyKeyReusedError extends ArchiveError {
  constructor(
    message = 'This Idempotency-Key was already used for a different file. Send each new upload with a new key; repeat a key only to retry the same upload.',
  ) {
    super('idempotency_key_reused', message);
  }
}

export class ChecksumMismatchError extends ArchiveError {
  constructor(
    readonly algorithm: 'MD5' | 'SHA-256',
    readonly declared: string,
    readonly actual: string,
  ) {
    super(
      'checksum_mismatch',
      `The received bytes have ${algorithm} ${actual}, not the declared ${declared}: the file changed or was damaged in transit. Nothing was stored; send it again.`,
      { algorithm, declared, actual },
    );
  }
}

export class RangeNotSatisfiableError extends ArchiveError {
  constructor(
    readonly size: number,
    message: string,
  ) {
    super('range_not_satisfiable', message);
  }
}

export class RateLimitedError extends ArchiveError {
  constructor(
    readonly retryAfterSeconds: number,
    why = 'Too many requests.',
  ) {
    super('rate_limited', `${why} Wait ${waitText(retryAfterSeconds)} and try again.`);
  }
}

/** Start-up configuration problems: reported as one line, with a non-zero exit. */
export class OffsetMismatchError extends ArchiveError {
  constructor(
    readonly expected: number,
    given: number,
  ) {
    super(
      'offset_mismatch',
      `The upload has ${expected} bytes, but this request continues at byte ${given}. Ask for the upload's offset (HEAD) and resume from there.`,
      { expected, given },
    );
  }
}

export class UploadExpiredError extends ArchiveError {
  constructor() {
    super('upload_expired', 'This upload was idle for too long and has expired. Start the upload again.');
  }
}

export class UploadLockedError extends ArchiveError {
  constructor() {
    super('upload_locked', 'Another request is sending bytes to this upload right now. Wait a moment, then resume.');
  }
}

export class UnsupportedMediaTypeError extends ArchiveError {
  constructor(message: string) {
    super('unsupported_media_type', message);
  }
}

export class UnsupportedProtocolError extends ArchiveError {
  constructor(message: string) {
    super('unsupported_protocol', message);
  }
}

/** Stored bytes found missing or changed: the file cannot be served as it was stored. */
export class ContentDamagedError extends ArchiveError {
  constructor(
    readonly fileId: string,
    /** Where the damage begins in the file (the start of the damaged chunk, or the first byte missing). */
    readonly offset: number,
    /** missing: bytes or chunks absent; corrupted: a chunk that does not match its checksum. */
    readonly kind: 'missing' | 'corrupted',
    readonly detail: string,
  ) {
    super(
      'content_damaged',
      `The stored bytes of this file are damaged (${detail}), so it cannot be served. An administrator has to restore it from a backup.`,
    );
  }
}

/** The store's disk is full: nothing was committed; resumable uploads keep what was written. */
export class StorageFullError extends ArchiveError {
  constructor() {
    super(
      'storage_full',
      "The archive's storage is full, so the file could not be stored. Bytes of a resumable upload received so far are kept: resume it later. Tell your administrator.",
    );
  }
}

/**
 * A sync of staged bytes failed, so only the first `keptBytes` are known to be on disk (after a
 * failed fsync, Linux may drop the pages it could not write and mark them clean, so a retried
 * sync "succeeds" over lost bytes). The store dropped the rest; a resumable upload goes back to
 * `keptBytes` and its client sends them again. Answered as the sync's own failure (`cause`).
 */
export class StagedBytesLostError extends Error {
  override name = 'StagedBytesLostError';
  constructor(
    readonly stagingId: string,
    readonly keptBytes: number,
    cause: unknown,
  ) {
    super(
      `a sync of staging area ${stagingId} failed, so only its first ${keptBytes} bytes are kept: ${(cause as Error)?.message ?? cause}`,
      { cause },
    );
  }
}

/** The database does not answer (MongoDB down or unreachable); the request may be retried. */
export class StoreUnavailableError extends ArchiveError {
  constructor() {
    super(
      'store_unavailable',
      'The archive store cannot be reached right now. Try again in a moment; if it persists, tell your administrator.',
    );
  }
}

/** The server is shutting down in the middle of this request's work; a retry (on another instance, or after the restart) continues. */
export class ServerStoppingError extends ArchiveError {
  constructor() {
    super(
      'store_unavailable',
      'The archive is restarting. Try again in a moment: uploads continue where they stopped.',
    );
  }
}

/** A clerk's own upload older than WITHDRAW_DAYS: only an administrator withdraws it now. */
export class WithdrawalTooLateError extends ArchiveError {
  constructor(withdrawDays: number, count: number, uploads: string[]) {
    super(
      'withdrawal_too_late',
      `${count > 1 ? `${count} 个` : ''}上传已超过 ${withdrawDays} 天，请联系管理员撤回（${uploads.join('、')}）。`,
      { withdrawDays, uploads, count },
    );
  }
}

/** Every upload of the request is withdrawn already: nothing changed. */
export class AlreadyWithdrawnError extends ArchiveError {
  constructor(
    withdrawals: ReadonlyArray<{
      id: string;
      fileName: string;
      withdrawnBy: { username: string };
      withdrawnAt: string;
    }>,
  ) {
    const first = withdrawals[0]!;
    super(
      'already_withdrawn',
      `“${first.fileName}”${withdrawals.length > 1 ? `等 ${withdrawals.length} 个上传` : ''}已由 ${first.withdrawnBy.username} 于 ${first.withdrawnAt} 撤回，不必再撤回；要恢复，请到回收站。`,
      { withdrawals: withdrawals.map((w) => w.id) },
    );
  }
}

export class AlreadyRestoredError extends ArchiveError {
  constructor(withdrawal: {
    id: string;
    fileName: string;
    restoredBy: { username: string } | null;
    restoredAt: string | null;
  }) {
    super(
      'already_restored',
      `“${withdrawal.fileName}”已由 ${withdrawal.restoredBy?.username ?? '他人'} 于 ${withdrawal.restoredAt ?? ''} 恢复，重新计数了，不必再恢复。`,
      { withdrawal: withdrawal.id },
    );
  }
}

/** What a hold (冻结) keeps a file from. */
export type HeldAction = 'withdraw' | 'purge' | 'dispose';
const HELD_ACTION_WORDS: Record<HeldAction, string> = { withdraw: '撤回', purge: '清除', dispose: '销毁' };

/** Some of the files a request names are on hold: the request is refused whole, nothing changed. */
export class FileOnHoldError extends ArchiveError {
  constructor(
    action: HeldAction,
    held: ReadonlyArray<{ fileId: string; fileName: string; holdId: string; reason: string }>,
  ) {
    const first = held[0]!;
    super(
      'file_on_hold',
      `文件“${first.fileName}”${held.length > 1 ? `等 ${held.length} 个文件` : ''}已被冻结（原因：${first.reason}），不能${HELD_ACTION_WORDS[action]}；请联系管理员。`,
      {
        action,
        fileName: first.fileName,
        holdReason: first.reason,
        count: held.length,
        files: held.slice(0, 5).map((h) => h.fileId),
        holds: [...new Set(held.map((h) => h.holdId))].slice(0, 5),
      },
    );
  }
}

/** A withdrawal purged from the trash: its upload can never be restored. */
export class AlreadyPurgedError extends ArchiveError {
  constructor(withdrawal: {
    id: string;
    fileName: string;
    purgedBy: { username: string } | null;
    purgedAt: string | null;
  }) {
    super(
      'already_purged',
      `“${withdrawal.fileName}”已于 ${withdrawal.purgedAt ?? ''} 被${withdrawal.purgedBy?.username === 'system' ? '回收站到期' : ` ${withdrawal.purgedBy?.username ?? '管理员'} `}彻底删除，不能再恢复。`,
      { withdrawal: withdrawal.id },
    );
  }
}

/** Every file of a disposal is in the register already: nothing changed. */
export class AlreadyDisposedError extends ArchiveError {
  constructor(
    disposals: ReadonlyArray<{ id: string; fileName: string; disposedBy: { username: string }; disposedAt: string }>,
  ) {
    const first = disposals[0]!;
    super(
      'already_disposed',
      `“${first.fileName}”${disposals.length > 1 ? `等 ${disposals.length} 个文件` : ''}已由 ${first.disposedBy.username} 于 ${first.disposedAt} 销毁，见销毁清册，不必再销毁。`,
      { disposals: disposals.map((d) => d.id) },
    );
  }
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The store could not be reached at start-up; it may come up, so the start retries. */
export class StoreUnreachableError extends Error {
  override name = 'StoreUnreachableError';
}

export class ConflictError extends ArchiveError {
  constructor(message: string, reason?: ConflictReason) {
    super('conflict', message, reason ? { reason } : undefined);
  }
}

/** A username an account has already (exactly, or another case or width of it: usernameKey). */
export class UsernameTakenError extends ConflictError {
  constructor(readonly username: string) {
    super(`The username "${username}" is taken.`, 'username_taken');
  }
}

/** A proof of possession that failed, or a claim that expired, was used, or is someone else's. */
export class ClaimRejectedError extends ArchiveError {
  /** Also each refused proof's message in a bulk answer. */
  static readonly MESSAGE =
    'The archive could not confirm that you hold this file (the check expired or is not yours, or the proof did not match). Upload the file normally.';

  constructor() {
    super('claim_rejected', ClaimRejectedError.MESSAGE);
  }
}
