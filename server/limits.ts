// The limits the archive's rules keep, with the values they keep when no setting changes them
// (README, "Configuration" and "Limits and figures"). config.ts reads the settings over these
// defaults; the services that keep each limit receive it in their constructor. Here, not in those
// services, so that reading the settings needs no service (docs/architecture.md, "Import
// boundaries").

/** When wrong passwords make the next login try wait (services/login-throttle.ts). */
export interface LoginThrottlePolicy {
  /** Wrong passwords an account may have from one address before each further try waits. */
  freeFailures: number;
  /** The longest wait between two tries (the delay doubles from one second up to this). */
  maxDelayMs: number;
  /** Wrong passwords for one account, from all addresses, before tries from addresses it never logged in from wait too. */
  accountFailures: number;
  /** Wrong passwords from one address, for all accounts, before tries there for accounts never used there wait too. */
  addressFailures: number;
  /** How long a successful login makes an address "known" for its account. */
  knownForMs: number;
  /** Failures are forgotten this long after the last one. */
  rememberMs: number;
}

export const DEFAULT_LOGIN_THROTTLE: LoginThrottlePolicy = {
  freeFailures: 5,
  maxDelayMs: 15 * 60_000,
  accountFailures: 20,
  addressFailures: 100,
  knownForMs: 30 * 24 * 3600_000,
  rememberMs: 24 * 3600_000,
};

/**
 * How much password hashing logins may cost at once. Every login try that the throttle lets
 * through costs one scrypt (password.ts: ~60–100 ms of a core and 32 MiB), whoever asks, an
 * unknown username included (its answer must not be quicker); without a bound, anonymous
 * guessers from many addresses fill libuv's threads and a clerk's login waits seconds behind them
 * (services/password-hashing.ts).
 */
export interface PasswordHashingPolicy {
  /** Password checks computed at once; all but one of them at most for tries from addresses not known for their account. */
  concurrency: number;
  /** Checks waiting in each lane; past it a try is refused (503 login_busy, with Retry-After). */
  queueLength: number;
  /** Checks one address (in the known lane: one account at one address) may have waiting or running. */
  perKey: number;
}

export const DEFAULT_PASSWORD_HASHING: PasswordHashingPolicy = { concurrency: 2, queueLength: 64, perKey: 4 };

/** What one account may ask of the archive; sized so that no real clerk's folder or import meets them (services/quotas.ts). */
export interface QuotaPolicy {
  /** Files checked per minute (POST /api/uploads/check and /checks); also files listed on receipts (PUT /api/receipts/:id). */
  checksPerMinute: number;
  /** Files proved per minute (POST /api/uploads/prove and /proofs). */
  proofsPerMinute: number;
  /** Files sent per minute in batches (POST /api/uploads/batch). */
  batchFilesPerMinute: number;
  /** Claims asked for and not yet answered (each expires after CLAIM_TTL_SECONDS) past which checks wait. */
  claimsOutstanding: number;
  /** New receipts kept per day (PUT /api/receipts/:id of an id not kept before). */
  receiptsPerDay: number;
  /** Bytes receipts may add to what the account keeps per day (a receipt sent again counts only its growth). */
  receiptBytesPerDay: number;
}

export const DEFAULT_QUOTAS: QuotaPolicy = {
  checksPerMinute: 60_000,
  proofsPerMinute: 60_000,
  batchFilesPerMinute: 60_000,
  claimsOutstanding: 10_000,
  // A folder upload's receipt takes about 200 bytes a file (10,000 files: 2.0 MB). A clerk who
  // sends 100,000 files a day (20 MB) and a receipt a minute for eight hours (480) stays far below.
  receiptsPerDay: 1000,
  receiptBytesPerDay: 100 * 1024 * 1024,
};

/** Working API tokens one account may hold (TOKENS_PER_ACCOUNT): a scanner or script each, with room to spare (services/sessions.ts). */
export const DEFAULT_TOKENS_PER_ACCOUNT = 20;
