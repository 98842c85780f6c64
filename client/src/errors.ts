import type { ErrorCode } from '../../shared/errors.js';

/** A failed API call, with the server's stable error code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly retryAfterSeconds?: number,
    /** The server's details: the offending `field`, a size limit's `limitBytes`… */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The request never got an answer (offline, server down). */
export class NetworkError extends Error {
  constructor(cause?: unknown) {
    // Set by hand: Chromium 86 ignores Error's `{ cause }` option.
    super('network error');
    this.name = 'NetworkError';
    this.cause = cause;
  }
}
