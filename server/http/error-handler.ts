import './request.js';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import multer from 'multer';
import type { ErrorBody, ErrorCode } from '../../shared/errors.js';
import {
  ArchiveError,
  LoginBusyError,
  LoginThrottledError,
  BadRequestError,
  ContentDamagedError,
  NotFoundError,
  PayloadTooLargeError,
  RangeNotSatisfiableError,
  RateLimitedError,
  StagedBytesLostError,
  StorageFullError,
  StoreUnavailableError,
  ValidationError,
} from '../errors.js';
import type { Logger } from '../log.js';
import type { ArchiveMetrics } from './metrics.js';

/** The one place where error codes become HTTP statuses. */
export const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  validation_failed: 400,
  password_too_short: 400,
  password_is_username: 400,
  password_repetitive: 400,
  password_too_common: 400,
  unauthenticated: 401,
  login_failed: 401,
  csrf_failed: 403,
  cross_site_request: 403,
  forbidden: 403,
  token_scope_missing: 403,
  claim_rejected: 403,
  not_found: 404,
  conflict: 409,
  offset_mismatch: 409,
  upload_expired: 410,
  upload_locked: 423,
  unsupported_media_type: 415,
  unsupported_protocol: 412,
  payload_too_large: 413,
  headers_too_large: 431,
  request_timeout: 408,
  range_not_satisfiable: 416,
  checksum_mismatch: 422,
  idempotency_key_reused: 422,
  withdrawal_too_late: 403,
  already_withdrawn: 409,
  already_restored: 409,
  // 冻结: the file is locked against withdrawal, purge and disposal until the hold is lifted.
  file_on_hold: 423,
  already_disposed: 409,
  // Gone for good: the purge deleted it from the trash (and its content, if nobody else held it).
  already_purged: 410,
  login_throttled: 429,
  login_busy: 503,
  account_disabled: 403,
  rate_limited: 429,
  content_damaged: 500,
  storage_full: 507,
  store_unavailable: 503,
  internal: 500,
};

/** Errors raised by libraries (multer, body parsers) in terms of our own classes. */
function translate(err: unknown, maxFileSize: number): unknown {
  if (err instanceof multer.MulterError) {
    if (err.code === 'LIMIT_FILE_SIZE') return new PayloadTooLargeError(maxFileSize);
    if (err.code === 'LIMIT_UNEXPECTED_FILE' || err.code === 'LIMIT_FILE_COUNT') {
      return new ValidationError('Send exactly one file, in the form field "file".');
    }
    return new ValidationError(
      `The upload form is not acceptable (${err.message}). Send one file in the form field "file", and at most an "md5" field.`,
    );
  }
  const e = err as { type?: string; status?: number; message?: string };
  if (e?.type === 'entity.parse.failed') return new BadRequestError('The request body is not valid JSON.');
  if (e?.type === 'entity.too.large') {
    const limit = Number((err as { limit?: unknown }).limit);
    const size = limit >= 1024 * 1024 ? `${Math.round(limit / 1024 / 1024)} MB` : `${Math.round(limit / 1024)} KB`;
    return new PayloadTooLargeError(
      limit,
      `The request body is larger than this endpoint accepts (${size} at most). Send large lists in several requests.`,
    );
  }
  if (err instanceof Error && /^Request (aborted|closed)$/.test(err.message))
    return new BadRequestError('The upload was interrupted before it finished.');
  if (
    err instanceof Error &&
    /Unexpected end of form|Malformed part header|Multipart: Boundary not found|Unexpected end of multipart/.test(
      err.message,
    )
  ) {
    return new BadRequestError(`The multipart body is malformed (${err.message}).`);
  }
  const store = storeFailure(err);
  if (store) return store;
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500)
    return new BadRequestError(e.message ?? 'Bad request.');
  return err;
}

/**
 * Store failures a client can act on: a full disk or quota (the embedded store's files, MongoDB's
 * OutOfDiskSpace), or MongoDB unreachable (matched by the driver's error names: the driver is
 * loaded only when MongoDB is used).
 */
export function storeFailure(err: unknown): ArchiveError | undefined {
  // Staged bytes dropped after a failed sync: what the client can do depends on why it failed.
  if (err instanceof StagedBytesLostError) return storeFailure(err.cause);
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | undefined;
  if (e?.code === 'ENOSPC' || e?.code === 'EDQUOT' || e?.code === 'SQLITE_FULL') return new StorageFullError();
  if (typeof e?.name !== 'string' || !e.name.startsWith('Mongo')) return undefined;
  if (e.code === 14031 || /No space left on device/i.test(String(e.message))) return new StorageFullError();
  if (/^Mongo(Network|NetworkTimeout|ServerSelection|NotConnected|TopologyClosed)Error$/.test(e.name))
    return new StoreUnavailableError();
  return undefined;
}

export function errorHandler(
  logger: Logger,
  maxFileSize: number,
  metrics: Pick<ArchiveMetrics, 'failed'>,
): ErrorRequestHandler {
  return (raw, req, res, _next) => {
    const err = translate(raw, maxFileSize);
    metrics.failed(err instanceof ArchiveError ? err.code : 'internal');
    // Damaged bytes and an unreachable store are the administrators' business, whoever asked.
    if (err instanceof ContentDamagedError || err instanceof StoreUnavailableError || err instanceof StorageFullError)
      (req.log ?? logger).error({ err: raw }, err.message);
    if (res.writableEnded) {
      // Answered already (a stalled upload's 408): the request's own failure follows its answer.
      (req.log ?? logger).info({ err }, 'request ended after its answer was sent');
      return;
    }
    if (res.headersSent) {
      // Mid-stream failure: the status is gone, so cut the connection rather than send a short body.
      (req.log ?? logger).error({ err }, 'response failed after headers were sent');
      res.destroy();
      return;
    }
    let body: ErrorBody;
    if (err instanceof ArchiveError) {
      body = { error: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
      if (err instanceof LoginThrottledError || err instanceof LoginBusyError || err instanceof RateLimitedError)
        res.setHeader('Retry-After', String(err.retryAfterSeconds));
      if (err instanceof RangeNotSatisfiableError) res.setHeader('Content-Range', `bytes */${err.size}`);
      if (err instanceof PayloadTooLargeError) res.setHeader('Connection', 'close');
    } else {
      (req.log ?? logger).error({ err }, 'unexpected error');
      body = {
        error: 'internal',
        message: 'Something went wrong on the server. Try again; if it keeps happening, tell your administrator.',
      };
    }
    // Refused before its body was read (a full disk mid-PATCH): the connection cannot carry
    // another request, and saying so keeps clients from reusing it.
    if (!req.complete) res.setHeader('Connection', 'close');
    res.status(STATUS[body.error]).json(body);
  };
}

export const unknownApiRoute: RequestHandler = (req, _res, next) => {
  next(new NotFoundError(`There is no API endpoint ${req.method} ${req.path}.`));
};
