import { PageImages } from './services/page-images.js';
import { DEFAULT_CLIENT_DIR } from './http/routes/client-app.js';
import type { Config } from './config.js';
import type { AppDeps } from './http/app.js';
import os from 'node:os';
import type { Logger } from './log.js';
import { AccountService } from './services/accounts.js';
import { AccountAdministration } from './services/administration.js';
import { ReceiptService } from './services/receipts.js';
import { WithdrawalService } from './services/withdrawals.js';
import { HoldService } from './services/holds.js';
import { DisposalService, type ContentDeletion } from './services/disposals.js';
import { PurgeService } from './services/purge.js';
import { UnitDirectory } from './services/unit-directory.js';
import { AuditService } from './services/audit.js';
import { ReportCalendar } from './services/calendar.js';
import { PairReviews } from './services/near-duplicates/reviews.js';
import { ReportService } from './services/reports.js';
import { NearDuplicateService } from './services/near-duplicates/detection.js';
import { Fingerprinter } from './services/near-duplicates/fingerprint.js';
import { ProcessTextReader, type TextReader } from './services/near-duplicates/text-reader.js';
import { ChunkPool } from './threads/chunk-writer.js';
import { ClaimService } from './services/claims.js';
import { DigestPool } from './threads/digest.js';
import { FileService } from './services/files.js';
import { SearchTerms } from './services/search-terms.js';
import { TextIndexing, TextSearchService } from './services/text-search.js';
import { FixityService } from './services/fixity.js';
import { ArchiveMetrics } from './http/metrics.js';
import { GarbageCollector } from './services/gc.js';
import { ShortLivedRecords } from './services/short-lived-records.js';
import { IngestService } from './services/ingest.js';
import { FailedLoginLog } from './services/failed-logins.js';
import { LoginThrottle } from './services/login-throttle.js';
import { PasswordHashing } from './services/password-hashing.js';
import { Quotas } from './services/quotas.js';
import { ResumableUploadService } from './services/resumable-uploads.js';
import { LockIdentity } from './threads/upload-lock.js';
import { DuplicateScope } from './services/scope.js';
import { SessionService, TokenService } from './services/sessions.js';
import type { ArchiveStore } from './store/archive-store.js';

/** What the services are built with: the configuration's, and scrypt's N for passwords when not the archive's (tests). */
export type ServiceConfig = {
  passwordCost?: number;
  /** Tests: what disposal deletes content and checks holds with (the archive's own once they are wired below). */
  disposal?: { deleteContent: ContentDeletion };
} & Pick<
  Config,
  | 'maxFileSize'
  | 'sessionTtlMs'
  | 'loginThrottle'
  | 'passwordHashing'
  | 'quotas'
  | 'tokensPerAccount'
  | 'trustProxy'
  | 'publicUrl'
  | 'instantUploadScope'
  | 'claimTtlMs'
  | 'stagingTtlMs'
  | 'withdrawDays'
  | 'trashDays'
  | 'uploadIdleMs'
  | 'corsOrigins'
  | 'reportTimeZone'
  | 'metricsToken'
  | 'uploadStallMs'
  | 'verifyIntervalMs'
  | 'nearDuplicateSettings'
> &
  Partial<Pick<Config, 'ocr' | 'ocrThreads' | 'textReaderHeapMb'>>;

export interface Archive {
  services: AppDeps['services'];
  digests: DigestPool;
  /** The process near-duplicate detection reads documents in. */
  textReader: TextReader;
  gc: GarbageCollector;
  metrics: ArchiveMetrics;
  /** The bound on login password checks (tests fill it to see what a flood does). */
  passwordHashing: PasswordHashing;
}

/** Wires the services over a store: the one place that knows every dependency. */
export function composeServices(
  store: ArchiveStore,
  config: ServiceConfig,
  clock: () => Date = () => new Date(),
  logger?: Logger,
): Archive {
  const digests = new DigestPool();
  // Never made on this thread: documents are read and fingerprinted in the reading process.
  const fingerprinter = Fingerprinter.onFirstUse(config.nearDuplicateSettings);
  const calendar = new ReportCalendar(config.reportTimeZone);
  const textReader = new ProcessTextReader({
    settings: config.nearDuplicateSettings,
    ocr: config.ocr ?? true,
    ocrThreads: config.ocrThreads ?? 1,
    heapMb: config.textReaderHeapMb ?? 512,
  });
  const searchTerms = new SearchTerms();
  const textIndexing = new TextIndexing({
    store,
    holder: `${os.hostname()}/${process.pid}/file-texts`,
    clock,
    logger,
  });
  const nearDuplicates = new NearDuplicateService({
    store,
    fingerprinter,
    reader: textReader,
    onTexts: (texts) => textIndexing.index(texts),
    calendar,
    holder: `${os.hostname()}/${process.pid}/near-duplicates`,
    logger,
    clock,
  });
  const scope = new DuplicateScope(config.instantUploadScope, store.ledger);
  const pool = new ChunkPool(store.content.chunkSize);
  const audit = new AuditService(store.audit, store.accounts, clock);
  const fixity = new FixityService({ store, digests, clock });
  const metrics = new ArchiveMetrics(() => fixity.last());
  const throttle = new LoginThrottle(store.loginAttempts, config.loginThrottle, clock);
  const passwordHashing = new PasswordHashing(config.passwordHashing);
  const accounts = new AccountService({
    accounts: store.accounts,
    sessions: store.sessions,
    tokens: store.tokens,
    throttle,
    throttlePolicy: config.loginThrottle,
    hashing: passwordHashing,
    failedLogins: new FailedLoginLog(audit, store.rateCounts, clock),
    audit,
    clock,
    passwordCost: config.passwordCost,
  });
  const quotas = new Quotas(store.rateCounts, store.claims, config.quotas, clock, calendar);
  const tokens = new TokenService(store.tokens, store.accounts, clock, config.tokensPerAccount);
  const directory = new UnitDirectory({ units: store.units, accounts: store.accounts, jobs: store.jobs });
  const ingest = new IngestService({
    store,
    digests,
    pool,
    scope,
    maxFileSize: config.maxFileSize,
    audit,
    calendar,
    meter: metrics,
    clock,
    onStored: (fileIds) => nearDuplicates.enqueue(fileIds),
  });
  const resumable = new ResumableUploadService({
    store,
    ingest,
    digests,
    pool,
    identity: new LockIdentity(),
    maxFileSize: config.maxFileSize,
    idleMs: config.uploadIdleMs,
    clock,
  });
  const holds = new HoldService({
    store,
    directory,
    audit,
    // A hold placed stops, or finishes before it answers, the withdrawals, disposals, purges and
    // content deletions under way of what it holds (disposals before purges: a disposal cleared
    // deletes the bytes; a purge finished while the hold is recorded keeps them).
    settleUnderWay: [
      (covered): Promise<void> => withdrawals.settleHeld(covered),
      (covered): Promise<void> => disposals.settleHeld(covered),
      (covered): Promise<void> => purge.settleHeld(covered),
    ],
    clock,
  });
  const withdrawals = new WithdrawalService({
    store,
    directory,
    audit,
    holds,
    settings: { withdrawDays: config.withdrawDays, trashDays: config.trashDays },
    clock,
  });
  const purge = new PurgeService({
    store,
    directory,
    audit,
    settings: { trashDays: config.trashDays },
    isHeld: (fileIds) => holds.heldAmong(fileIds),
    clock,
  });
  const disposals = new DisposalService({
    store,
    directory,
    audit,
    calendar,
    // The purge's deletion of a content, held or not (a held file's disposal is refused before).
    deleteContent:
      config.disposal?.deleteContent ??
      ((fileId, by, why) => purge.deleteContent(fileId, by, why, { ignoreHolds: true })),
    holds,
    clock,
  });
  return {
    digests,
    textReader,
    metrics,
    passwordHashing,
    gc: new GarbageCollector(
      store.content,
      resumable,
      config.stagingTtlMs,
      store.ledger,
      clock,
      withdrawals,
      disposals,
      purge,
      new ShortLivedRecords(store, clock),
      store.receipts,
    ),
    services: {
      audit,
      accounts,
      sessions: new SessionService(store.sessions, store.accounts, config.sessionTtlMs, clock),
      tokens,
      directory,
      administration: new AccountAdministration({
        accounts,
        store: store.accounts,
        sessions: store.sessions,
        tokens,
        directory,
        throttle,
        audit,
        clock,
      }),
      ingest,
      resumable,
      receipts: new ReceiptService(store, quotas, clock),
      withdrawals,
      holds,
      disposals,
      purge,
      claims: new ClaimService(store, scope, audit, calendar, metrics, config.claimTtlMs, clock),
      quotas,
      fixity,
      reports: new ReportService(store.reports, calendar, store.accounts),
      files: new FileService(store, directory, calendar),
      textSearch: new TextSearchService(store, directory, searchTerms),
      textIndexing,
      nearDuplicates,
      pairReviews: new PairReviews({ store, directory, audit, clock }),
      pageImages: new PageImages(),
    },
  };
}

export function appDeps(
  store: ArchiveStore,
  archive: Archive,
  config: ServiceConfig,
  logger: Logger,
  draining: () => boolean = () => false,
): AppDeps {
  return {
    logger,
    draining,
    services: archive.services,
    ping: () => store.ping(),
    metrics: archive.metrics,
    settings: {
      metricsToken: config.metricsToken,
      verifyIntervalMs: config.verifyIntervalMs,
      uploadStallMs: config.uploadStallMs,
      maxFileSize: config.maxFileSize,
      sessionTtlMs: config.sessionTtlMs,
      trustProxy: config.trustProxy,
      publicUrl: config.publicUrl,
      corsOrigins: config.corsOrigins,
      clientDir: DEFAULT_CLIENT_DIR,
    },
  };
}
