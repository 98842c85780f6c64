import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { INSTANT_UPLOAD_SCOPES, type InstantUploadScope } from '../shared/schemas.js';
import { ConfigError } from './errors.js';
import {
  DEFAULT_LOGIN_THROTTLE,
  DEFAULT_PASSWORD_HASHING,
  DEFAULT_QUOTAS,
  DEFAULT_TOKENS_PER_ACCOUNT,
  type LoginThrottlePolicy,
  type PasswordHashingPolicy,
  type QuotaPolicy,
} from './limits.js';
import { STORE_KINDS, type StoreChoice } from './store/open.js';

const GiB = 1024 ** 3;

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
/** A similarity threshold: lower than 0.3 would make near-duplicates of texts on the same subject, and their LSH bands too many. */
const share = z.coerce.number().min(0.3, 'a similarity from 0.3 to 1').max(1, 'a similarity from 0.3 to 1').optional();

const retired = (instead: string) =>
  z.undefined({ error: `this setting was retired; see ${instead} in README, "Configuration"` }).optional();

/** The settings that choose the store; an empty one counts as unset. */
const storeSettings = z.object({
  STORE: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.enum(STORE_KINDS, { error: `STORE is ${STORE_KINDS.join(' or ')}` }).optional(),
  ),
  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'MONGODB_URI must start with mongodb:// or mongodb+srv://')
    .optional()
    .or(z.literal('').transform(() => undefined)),
});

/** Every setting, read from the environment once at start-up (see README, "Configuration"). */
const configSchema = storeSettings.extend({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATA_DIR: z.string().min(1).default('./data'),
  MONGODB_DB: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,63}$/)
    .optional(),
  CHUNK_SIZE: z.coerce
    .number()
    .int()
    .min(1024)
    .max(15 * 1024 * 1024)
    .default(255 * 1024),
  MAX_FILE_SIZE: z.coerce
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .default(20 * GiB),
  SESSION_TTL_HOURS: positiveInt(12),
  QUOTA_CHECKS_PER_MINUTE: positiveInt(DEFAULT_QUOTAS.checksPerMinute),
  QUOTA_PROOFS_PER_MINUTE: positiveInt(DEFAULT_QUOTAS.proofsPerMinute),
  QUOTA_BATCH_FILES_PER_MINUTE: positiveInt(DEFAULT_QUOTAS.batchFilesPerMinute),
  QUOTA_CLAIMS_OUTSTANDING: positiveInt(DEFAULT_QUOTAS.claimsOutstanding),
  QUOTA_RECEIPTS_PER_DAY: positiveInt(DEFAULT_QUOTAS.receiptsPerDay),
  QUOTA_RECEIPT_BYTES_PER_DAY: z.coerce
    .number()
    .int()
    // Below this a big folder's receipt (10,000 files: about 2 MB) could never be kept.
    .min(4 * 1024 * 1024, 'QUOTA_RECEIPT_BYTES_PER_DAY is at least 4194304 (4 MiB): one big folder’s receipt')
    .max(Number.MAX_SAFE_INTEGER)
    .default(DEFAULT_QUOTAS.receiptBytesPerDay),
  TOKENS_PER_ACCOUNT: z.coerce
    .number()
    .int()
    .min(1, 'TOKENS_PER_ACCOUNT is a whole number from 1 to 1000')
    .max(1000, 'TOKENS_PER_ACCOUNT is a whole number from 1 to 1000')
    .default(DEFAULT_TOKENS_PER_ACCOUNT),
  LOGIN_FREE_FAILURES: positiveInt(DEFAULT_LOGIN_THROTTLE.freeFailures),
  LOGIN_MAX_DELAY_MINUTES: positiveInt(DEFAULT_LOGIN_THROTTLE.maxDelayMs / 60_000),
  LOGIN_ACCOUNT_FAILURES: positiveInt(DEFAULT_LOGIN_THROTTLE.accountFailures),
  LOGIN_ADDRESS_FAILURES: positiveInt(DEFAULT_LOGIN_THROTTLE.addressFailures),
  // One a core, 2 to 4 (32 MiB each): one is kept for clerks at their usual address (password-hashing.ts).
  PASSWORD_HASH_CONCURRENCY: positiveInt(Math.min(4, Math.max(2, os.availableParallelism()))),
  PASSWORD_HASH_QUEUE: positiveInt(DEFAULT_PASSWORD_HASHING.queueLength),
  // Settings of the account lock-out the throttle replaced: refused, so nobody believes they still apply.
  LOGIN_MAX_FAILURES: retired('LOGIN_FREE_FAILURES (accounts are no longer locked: tries slow down)'),
  LOGIN_LOCK_MINUTES: retired('LOGIN_MAX_DELAY_MINUTES (accounts are no longer locked: tries slow down)'),
  LOGIN_RATE_LIMIT: retired('LOGIN_ADDRESS_FAILURES (wrong passwords are counted per address, not every login)'),
  INSTANT_UPLOAD_SCOPE: z.enum(INSTANT_UPLOAD_SCOPES).default('archive'),
  UNIT_REGIONS: z
    .string()
    .default('')
    .transform((v) => [
      ...new Set(
        v
          .split(',')
          .map((r) => r.trim())
          .filter(Boolean),
      ),
    ])
    .pipe(
      z.array(
        z
          .string()
          .regex(/^\d{2}$/, 'UNIT_REGIONS lists two-digit province codes, e.g. 13 for Hebei, separated by commas'),
      ),
    ),
  CLAIM_TTL_SECONDS: positiveInt(300),
  STAGING_TTL_HOURS: positiveInt(24),
  WITHDRAW_DAYS: z.coerce
    .number({ error: 'WITHDRAW_DAYS is a whole number of days, e.g. 30' })
    .int('WITHDRAW_DAYS is a whole number of days, e.g. 30')
    .min(0, 'WITHDRAW_DAYS is 0 (clerks never withdraw themselves) or more days')
    .max(3650, 'WITHDRAW_DAYS is at most 3650 (ten years)')
    .default(30),
  TRASH_DAYS: z.coerce
    .number({ error: 'TRASH_DAYS is a whole number of days, e.g. 30' })
    .int('TRASH_DAYS is a whole number of days, e.g. 30')
    .min(1, 'TRASH_DAYS is at least 1 day')
    .max(3650, 'TRASH_DAYS is at most 3650 (ten years)')
    .default(30),
  UPLOAD_IDLE_HOURS: positiveInt(24),
  UPLOAD_STALL_SECONDS: positiveInt(30),
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter((o) => o !== ''),
    )
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^https?:\/\/[^/\s]+$/,
            'CORS_ORIGINS lists origins such as https://portal.example.gov, separated by commas',
          ),
      ),
    ),
  GC_INTERVAL_SECONDS: z.coerce.number().int().min(0).default(3600),
  TRUST_PROXY: z.string().default('false'),
  PUBLIC_URL: z
    .string()
    .default('')
    .transform((v) => v.trim().replace(/\/+$/, ''))
    .pipe(
      z.union([
        z.literal(''),
        z
          .string()
          .regex(
            /^https?:\/\/[^/\s?#]+(\/[^\s?#]*)?$/,
            'PUBLIC_URL is the address clerks open, such as https://archive.example.gov (no query or fragment)',
          ),
      ]),
    )
    .transform((v) => (v === '' ? undefined : v)),
  REPORT_TIME_ZONE: z
    .string()
    .default('Asia/Shanghai')
    .refine((zone) => {
      try {
        new Intl.DateTimeFormat('en', { timeZone: zone });
        return true;
      } catch {
        return false;
      }
    }, 'REPORT_TIME_ZONE is an IANA time zone such as Asia/Shanghai'),
  METRICS_TOKEN: z
    .string()
    .min(16, 'METRICS_TOKEN must be at least 16 characters (it guards GET /metrics)')
    .regex(/^[\x21-\x7e]+$/, 'METRICS_TOKEN is printable ASCII without spaces')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  VERIFY_INTERVAL_HOURS: z.coerce.number().min(0).default(168),
  NEAR_DUPLICATE_POLL_SECONDS: z.coerce.number().min(0).default(10),
  NEAR_DUPLICATE_MAX_HAMMING: z.coerce
    .number()
    .int()
    .min(0)
    .max(3, 'the SimHash index finds fingerprints within 3 bits at most (four 16-bit blocks: one is whole)')
    .optional(),
  NEAR_DUPLICATE_MIN_JACCARD: share,
  NEAR_DUPLICATE_MIN_CONTAINMENT: share,
  NEAR_DUPLICATE_MIN_SHORT_JACCARD: share,
  OCR: z.enum(['on', 'off'], { error: "OCR is on (images' text is recognised) or off" }).default('on'),
  // Two threads read a page in 0.9 s on an idle 2-core machine against 1.4 s with one; the
  // reading process runs niced, so uploads keep the cores (docs/decisions/ocr-engine.md).
  OCR_THREADS: z.coerce
    .number()
    .int()
    .min(1, 'OCR_THREADS is at least 1')
    .max(64)
    .default(Math.min(2, os.availableParallelism())),
  TEXT_READER_HEAP_MB: z.coerce
    .number()
    .int()
    .min(128, 'TEXT_READER_HEAP_MB is at least 128 (reading a scanned page needs about 200 MB of heap)')
    .max(65_536)
    .default(512),
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).max(3600).default(25),
  STORE_CONNECT_TIMEOUT_SECONDS: z.coerce.number().min(0).max(86_400).default(60),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** The configuration: the settings, and the store they chose (`store`, with MongoDB's URI). */
export type Config = Settings & StoreChoice;

interface Settings {
  host: string;
  port: number;
  dataDir: string;
  mongodbDb: string | undefined;
  chunkSize: number;
  maxFileSize: number;
  sessionTtlMs: number;
  /** When wrong passwords make the next try wait (README, "Logging in"). */
  loginThrottle: LoginThrottlePolicy;
  /** How many password checks run at once and wait (README, "Logging in"). */
  passwordHashing: PasswordHashingPolicy;
  /** What one account may ask of the archive per minute (README, "Limits"). */
  quotas: QuotaPolicy;
  /** Working API tokens one account may hold. */
  tokensPerAccount: number;
  /** The provinces (two-digit codes) whose divisions the unit directory holds. */
  unitRegions: string[];
  /** Where an instant (proof-based) upload may find its duplicate; see README. */
  instantUploadScope: InstantUploadScope;
  claimTtlMs: number;
  /** Staging areas (unfinished uploads) older than this are garbage. */
  stagingTtlMs: number;
  /** A clerk withdraws their own uploads within this many days of each (administrators at any time). */
  withdrawDays: number;
  /** A withdrawn upload stays in its unit's trash this many days (then 待清除: docs/decisions/withdrawal.md). */
  trashDays: number;
  /** A resumable upload that receives no bytes for this long expires. */
  uploadIdleMs: number;
  /** A tus request that sends no bytes for this long is cut off (its upload's lock freed). */
  uploadStallMs: number;
  /** Browser origins other than the archive's own that may use the tus endpoint. */
  corsOrigins: string[];
  /** How often the server collects garbage; 0: never (use `archive gc`). */
  gcIntervalMs: number;
  /** Express "trust proxy" setting: false, true, a hop count, or a list of addresses. */
  trustProxy: boolean | number | string;
  /** Where clerks reach the archive (scheme, host, path prefix); upload URLs are built on it, else relative. */
  publicUrl: string | undefined;
  /** The zone whose calendar days the reports count in. */
  reportTimeZone: string;
  /** Bearer token of GET /metrics; without it the endpoint does not exist. */
  metricsToken: string | undefined;
  /** How often the server runs the fixity check; 0: never (use `archive verify`). */
  verifyIntervalMs: number;
  /** How often an instance looks for files to fingerprint (also right after an upload); 0: never (another instance does). */
  nearDuplicatePollMs: number;
  /** What makes two texts near-duplicates: the thresholds set; the fingerprinter has its own defaults for the rest. */
  nearDuplicateSettings: {
    maxHamming?: number;
    minJaccard?: number;
    minContainment?: number;
    minShortJaccard?: number;
  };
  /** Whether images' text is recognised (OCR); off, images are recorded as having no text. */
  ocr: boolean;
  /** Threads the reading process recognises a page with. */
  ocrThreads: number;
  /** The heap limit (megabytes) of the process documents are read in, apart from the server. */
  textReaderHeapMb: number;
  /** How long a stopping server lets requests in progress finish before cutting them off. */
  shutdownGraceMs: number;
  /** How long the start waits for an unreachable MongoDB, retrying with backoff. */
  storeConnectTimeoutMs: number;
  logLevel: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const c = parsedOrRefused(configSchema, env);
  return {
    ...storeChosen(c.STORE, c.MONGODB_URI),
    host: c.HOST,
    port: c.PORT,
    dataDir: path.resolve(c.DATA_DIR),
    mongodbDb: c.MONGODB_DB,
    chunkSize: c.CHUNK_SIZE,
    maxFileSize: c.MAX_FILE_SIZE,
    sessionTtlMs: c.SESSION_TTL_HOURS * 3600_000,
    quotas: {
      checksPerMinute: c.QUOTA_CHECKS_PER_MINUTE,
      proofsPerMinute: c.QUOTA_PROOFS_PER_MINUTE,
      batchFilesPerMinute: c.QUOTA_BATCH_FILES_PER_MINUTE,
      claimsOutstanding: c.QUOTA_CLAIMS_OUTSTANDING,
      receiptsPerDay: c.QUOTA_RECEIPTS_PER_DAY,
      receiptBytesPerDay: c.QUOTA_RECEIPT_BYTES_PER_DAY,
    },
    tokensPerAccount: c.TOKENS_PER_ACCOUNT,
    loginThrottle: {
      ...DEFAULT_LOGIN_THROTTLE,
      freeFailures: c.LOGIN_FREE_FAILURES,
      maxDelayMs: c.LOGIN_MAX_DELAY_MINUTES * 60_000,
      accountFailures: c.LOGIN_ACCOUNT_FAILURES,
      addressFailures: c.LOGIN_ADDRESS_FAILURES,
    },
    passwordHashing: {
      ...DEFAULT_PASSWORD_HASHING,
      concurrency: c.PASSWORD_HASH_CONCURRENCY,
      queueLength: c.PASSWORD_HASH_QUEUE,
    },
    instantUploadScope: c.INSTANT_UPLOAD_SCOPE,
    unitRegions: c.UNIT_REGIONS,
    claimTtlMs: c.CLAIM_TTL_SECONDS * 1000,
    stagingTtlMs: c.STAGING_TTL_HOURS * 3600_000,
    withdrawDays: c.WITHDRAW_DAYS,
    trashDays: c.TRASH_DAYS,
    uploadIdleMs: c.UPLOAD_IDLE_HOURS * 3600_000,
    uploadStallMs: c.UPLOAD_STALL_SECONDS * 1000,
    corsOrigins: c.CORS_ORIGINS,
    gcIntervalMs: c.GC_INTERVAL_SECONDS * 1000,
    trustProxy: parseTrustProxy(c.TRUST_PROXY),
    publicUrl: c.PUBLIC_URL,
    reportTimeZone: c.REPORT_TIME_ZONE,
    metricsToken: c.METRICS_TOKEN,
    verifyIntervalMs: c.VERIFY_INTERVAL_HOURS * 3600_000,
    nearDuplicatePollMs: c.NEAR_DUPLICATE_POLL_SECONDS * 1000,
    nearDuplicateSettings: setOnly({
      maxHamming: c.NEAR_DUPLICATE_MAX_HAMMING,
      minJaccard: c.NEAR_DUPLICATE_MIN_JACCARD,
      minContainment: c.NEAR_DUPLICATE_MIN_CONTAINMENT,
      minShortJaccard: c.NEAR_DUPLICATE_MIN_SHORT_JACCARD,
    }),
    ocr: c.OCR === 'on',
    ocrThreads: c.OCR_THREADS,
    textReaderHeapMb: c.TEXT_READER_HEAP_MB,
    shutdownGraceMs: c.SHUTDOWN_GRACE_SECONDS * 1000,
    storeConnectTimeoutMs: c.STORE_CONNECT_TIMEOUT_SECONDS * 1000,
    logLevel: c.LOG_LEVEL,
  };
}

/**
 * The store the environment chooses, refused as loadConfig refuses it: for what must agree with
 * the server without reading every other setting (the tests' choice of MongoDB suites).
 */
export function storeChoice(env: NodeJS.ProcessEnv = process.env): StoreChoice {
  const c = parsedOrRefused(storeSettings, env);
  return storeChosen(c.STORE, c.MONGODB_URI);
}

/**
 * STORE names the store; without it MONGODB_URI alone chooses MongoDB (as before STORE existed),
 * and nothing chooses the embedded store. A pair that disagrees is refused rather than guessed.
 */
function storeChosen(store: (typeof STORE_KINDS)[number] | undefined, uri: string | undefined): StoreChoice {
  if (store === 'embedded' && uri !== undefined)
    throw new ConfigError(
      'STORE=embedded and MONGODB_URI choose different stores: remove MONGODB_URI to run on the embedded store in DATA_DIR, or remove STORE (or set STORE=mongodb) to run on MongoDB',
    );
  if (store === 'mongodb' && uri === undefined)
    throw new ConfigError(
      'STORE=mongodb needs MONGODB_URI, the MongoDB to run on (such as mongodb://host:27017/archive)',
    );
  return uri === undefined ? { store: 'embedded' } : { store: 'mongodb', mongodbUri: uri };
}

function parsedOrRefused<T extends z.ZodType>(schema: T, env: NodeJS.ProcessEnv): z.output<T> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`invalid setting ${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data;
}

/** The settings given a value (an absent one must not hide its default where the object is spread). */
function setOnly<T extends object>(settings: T): Partial<T> {
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false' || value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
