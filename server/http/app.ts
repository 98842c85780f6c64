import { randomUUID } from 'node:crypto';
import cookieParser from 'cookie-parser';
import express, { type Express } from 'express';
import helmet from 'helmet';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../log.js';
import type { AccountService } from '../services/accounts.js';
import type { AuditService } from '../services/audit.js';
import type { ReportService } from '../services/reports.js';
import type { ClaimService } from '../services/claims.js';
import type { FileService } from '../services/files.js';
import type { TextIndexing, TextSearchService } from '../services/text-search.js';
import type { FixityService } from '../services/fixity.js';
import type { IngestService } from '../services/ingest.js';
import type { PairReviews } from '../services/near-duplicates/reviews.js';
import type { NearDuplicateService } from '../services/near-duplicates/detection.js';
import type { ResumableUploadService } from '../services/resumable-uploads.js';
import type { SessionService, TokenService } from '../services/sessions.js';
import { authenticate } from './auth.js';
import { errorHandler, unknownApiRoute } from './error-handler.js';
import { auditRoutes } from './routes/audit.js';
import { accountRoutes } from './routes/accounts.js';
import { tokenRoutes } from './routes/tokens.js';
import { RECEIPTS_PATH, receiptRoutes } from './routes/receipts.js';
import type { ReceiptService } from '../services/receipts.js';
import type { WithdrawalService } from '../services/withdrawals.js';
import type { HoldService } from '../services/holds.js';
import { holdRoutes } from './routes/holds.js';
import type { DisposalService } from '../services/disposals.js';
import { disposalRoutes } from './routes/disposals.js';
import { fileUploadRoutes, trashRoutes, WITHDRAWAL_LIST_PATHS, withdrawalRoutes } from './routes/withdrawals.js';
import type { PurgeService } from '../services/purge.js';
import { unitRoutes } from './routes/units.js';
import type { AccountAdministration } from '../services/administration.js';
import type { UnitDirectory } from '../services/unit-directory.js';
import { reportRoutes } from './routes/reports.js';
import { clientAppRoutes } from './routes/client-app.js';
import type { PageImages } from '../services/page-images.js';
import { fileRoutes } from './routes/files.js';
import { healthRoutes } from './routes/health.js';
import type { ArchiveMetrics } from './metrics.js';
import { verificationRoutes } from './routes/verification.js';
import { sessionRoutes } from './routes/session.js';
import { TUS_PATH, tusResponseHeaders, tusRoutes } from './tus/endpoint.js';
import { BULK_JSON_PATHS, uploadRoutes } from './routes/uploads.js';
import type { Quotas } from '../services/quotas.js';

export interface AppDeps {
  logger: Logger;
  services: {
    accounts: AccountService;
    audit: AuditService;
    sessions: SessionService;
    tokens: TokenService;
    ingest: IngestService;
    resumable: ResumableUploadService;
    files: FileService;
    /** Search by content (GET /api/files/search). */
    textSearch: TextSearchService;
    /** Indexes the texts read in the background; queues the files stored before search existed (at start). */
    textIndexing: TextIndexing;
    claims: ClaimService;
    quotas: Quotas;
    reports: ReportService;
    fixity: FixityService;
    nearDuplicates: NearDuplicateService;
    pairReviews: PairReviews;
    directory: UnitDirectory;
    administration: AccountAdministration;
    receipts: ReceiptService;
    withdrawals: WithdrawalService;
    holds: HoldService;
    disposals: DisposalService;
    purge: PurgeService;
    pageImages: PageImages;
  };
  ping: () => Promise<void>;
  metrics: ArchiveMetrics;
  /** True once the server is shutting down: /api/ready then sends traffic elsewhere. */
  draining: () => boolean;
  settings: {
    /** Bearer token of GET /metrics; the endpoint exists only with one. */
    metricsToken: string | undefined;
    verifyIntervalMs: number;
    uploadStallMs: number;
    maxFileSize: number;
    sessionTtlMs: number;
    trustProxy: boolean | number | string;
    /** Where clerks reach the archive; tus upload URLs are built on it (relative without it). */
    publicUrl?: string | undefined;
    corsOrigins: string[];
    /** The built browser app served at `/`. */
    clientDir: string;
  };
}

/** Builds the HTTP app without listening, so tests can start it on port 0. */
export function createApp(deps: AppDeps): Express {
  const { services, settings, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', settings.trustProxy);

  app.use(deps.metrics.timing());
  app.use(
    pinoHttp({
      logger,
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      // Probes and scrapes would drown the log.
      autoLogging: { ignore: (req) => req.url === '/api/health' || req.url === '/api/ready' || req.url === '/metrics' },
    }),
  );
  app.use(
    helmet({
      contentSecurityPolicy: {
        directives: {
          defaultSrc: ["'self'"],
          // hash-wasm compiles its SHA-256 WebAssembly in the hash worker; no JavaScript eval is allowed.
          scriptSrc: ["'self'", "'wasm-unsafe-eval'"],
          workerSrc: ["'self'"],
          // Upload widgets set inline style attributes for progress bars and thumbnails.
          styleSrc: ["'self'", "'unsafe-inline'"],
          imgSrc: ["'self'", 'data:', 'blob:'],
          connectSrc: ["'self'"],
          objectSrc: ["'none'"],
          frameAncestors: ["'none'"],
          baseUri: ["'self'"],
          formAction: ["'self'"],
          // Clerks' intranets often serve plain HTTP; upgrading would break every request there.
          upgradeInsecureRequests: null,
        },
      },
      crossOriginEmbedderPolicy: false,
    }),
  );
  app.use(TUS_PATH, tusResponseHeaders(settings.corsOrigins));
  app.use(cookieParser());
  // Bulk check and proof lists, withdrawal lists and receipts are parsed by their routes, with a
  // larger limit, once the caller is known.
  const bulkJson = (req: { url?: string | undefined }) => {
    const path = req.url?.split('?')[0] ?? '';
    return (
      BULK_JSON_PATHS.includes(path) || WITHDRAWAL_LIST_PATHS.includes(path) || path.startsWith(`${RECEIPTS_PATH}/`)
    );
  };
  app.use(
    express.json({
      limit: '64kb',
      strict: true,
      type: (req) => !bulkJson(req) && /^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? ''),
    }),
  );

  app.use('/api', healthRoutes({ ping: deps.ping, draining: deps.draining }));
  app.get('/metrics', deps.metrics.endpoint(settings.metricsToken));
  app.use('/api', authenticate(services.sessions, services.tokens));
  app.use(
    '/api/session',
    sessionRoutes({
      accounts: services.accounts,
      directory: services.directory,
      audit: services.audit,
      sessions: services.sessions,
      sessionTtlMs: settings.sessionTtlMs,
      maxFileSize: settings.maxFileSize,
      timeZone: services.reports.calendar.timeZone,
      withdrawal: services.withdrawals.settings,
    }),
  );
  app.use(
    '/api/files',
    fileRoutes({
      ingest: services.ingest,
      audit: services.audit,
      files: services.files,
      textSearch: services.textSearch,
      withdrawals: services.withdrawals,
      pageImages: services.pageImages,
      maxFileSize: settings.maxFileSize,
    }),
  );
  app.use('/api/uploads', uploadRoutes(services.claims, services.ingest, services.quotas));
  app.use('/api/units', unitRoutes(services.directory, services.administration));
  app.use('/api/accounts', accountRoutes(services.administration));
  app.use('/api/tokens', tokenRoutes(services.administration));
  app.use(RECEIPTS_PATH, receiptRoutes(services.receipts, services.quotas));
  app.use('/api/withdrawals', withdrawalRoutes(services.withdrawals));
  app.use('/api/trash', trashRoutes(services.withdrawals, services.purge));
  app.use('/api/holds', holdRoutes(services.holds));
  app.use('/api', disposalRoutes(services.disposals, services.audit, services.reports.calendar.timeZone));
  app.use('/api/files', fileUploadRoutes(services.withdrawals));
  app.use('/api/audit', auditRoutes(services.audit, services.directory, services.reports.calendar.timeZone));
  app.use(
    '/api/reports',
    reportRoutes(
      services.reports,
      services.audit,
      services.nearDuplicates,
      services.directory,
      services.reports.calendar.timeZone,
      services.pairReviews,
    ),
  );
  app.use(
    '/api/verification',
    verificationRoutes({
      fixity: services.fixity,
      audit: services.audit,
      files: services.files,
      directory: services.directory,
      logger,
      intervalMs: settings.verifyIntervalMs,
    }),
  );
  app.use(
    TUS_PATH,
    tusRoutes({
      uploads: services.resumable,
      maxFileSize: settings.maxFileSize,
      corsOrigins: settings.corsOrigins,
      logger,
      stallMs: settings.uploadStallMs,
      publicUrl: settings.publicUrl,
    }),
  );
  app.use('/api', unknownApiRoute);
  app.use(clientAppRoutes(settings.clientDir));

  app.use(errorHandler(logger, settings.maxFileSize, deps.metrics));
  return app;
}
