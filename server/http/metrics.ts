import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { NotFoundError, UnauthenticatedError } from '../errors.js';
import type { CountedUpload, UploadMeter } from '../services/upload-meter.js';
import type { VerificationResult } from '../../shared/verification.js';

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Prometheus metrics of one process (each instance is scraped on its own). A registry per
 * instance, not prom-client's global one, so tests can run several apps in one process.
 */
export class ArchiveMetrics implements UploadMeter {
  readonly registry = new Registry();
  private readonly uploads = new Counter({
    name: 'archive_uploads_total',
    help: 'Uploads counted in the ledger, by way (direct, tus, instant) and outcome (stored: new content, duplicate: already archived).',
    labelNames: ['via', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly dedupHits = new Counter({
    name: 'archive_dedup_hits_total',
    help: 'Uploads of content the archive already held (nothing new stored), by way.',
    labelNames: ['via'] as const,
    registers: [this.registry],
  });
  private readonly bytesStored = new Counter({
    name: 'archive_bytes_stored_total',
    help: 'Bytes of new content stored.',
    registers: [this.registry],
  });
  private readonly bytesSaved = new Counter({
    name: 'archive_bytes_saved_total',
    help: 'Bytes not stored again because the archive already held the content.',
    registers: [this.registry],
  });
  private readonly requests = new Histogram({
    name: 'archive_http_request_duration_seconds',
    help: 'Time from a request to the end of its answer, by method, route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
    registers: [this.registry],
  });
  private readonly errors = new Counter({
    name: 'archive_http_errors_total',
    help: 'Requests answered with an error, by error code (see README; internal = a server fault).',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  private readonly fixity = new Gauge({
    name: 'archive_verification_problems',
    help: 'Files the last finished fixity check found missing or corrupted (absent until one finished).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
    collect: () => this.collectVerification(),
  });
  private readonly fixityTime = new Gauge({
    name: 'archive_verification_last_finished_seconds',
    help: 'When the last fixity check finished (Unix time; 0 until one finished).',
    registers: [this.registry],
    collect: () => this.collectVerification(),
  });
  /** One store read per scrape, shared by both gauges (a registry collects them concurrently). */
  private collecting: Promise<void> | undefined;
  /** The finished result the gauges show: a running check does not reset them. */
  private shown: string | undefined;

  /** `lastVerification` reads the store's last fixity check at each scrape: any instance may have run it. */
  constructor(private readonly lastVerification: () => Promise<VerificationResult | undefined>) {
    collectDefaultMetrics({ register: this.registry, prefix: 'archive_' });
  }

  counted(upload: CountedUpload): void {
    this.uploads.inc({ via: upload.via, outcome: upload.outcome });
    if (upload.outcome === 'stored') this.bytesStored.inc(upload.bytes);
    else {
      this.dedupHits.inc({ via: upload.via });
      this.bytesSaved.inc(upload.bytes);
    }
  }

  failed(code: string): void {
    this.errors.inc({ code });
  }

  private collectVerification(): Promise<void> {
    this.collecting ??= this.lastVerification()
      .catch(() => undefined)
      .then((result) => {
        if (!result?.finishedAt || result.finishedAt === this.shown) return;
        this.shown = result.finishedAt;
        this.fixity.set({ kind: 'missing' }, result.missing);
        this.fixity.set({ kind: 'corrupted' }, result.corrupted);
        this.fixityTime.set(Date.parse(result.finishedAt) / 1000);
      })
      .finally(() => (this.collecting = undefined));
    return this.collecting;
  }

  /** Times every request; the route is the matched pattern (`/api/files/:id`), never the raw path. */
  timing(): RequestHandler {
    return (req, res, next) => {
      const stop = this.requests.startTimer();
      // The pattern is taken when the router matches, while req.baseUrl still names the nested
      // router: once an error has left it, Express has put baseUrl back ("/:id" alone).
      let route: unknown;
      let matched: string | undefined;
      Object.defineProperty(req, 'route', {
        configurable: true,
        enumerable: true,
        get: () => route,
        set: (value: { path?: unknown } | undefined) => {
          route = value;
          if (typeof value?.path === 'string') matched = `${req.baseUrl}${value.path}`;
        },
      });
      res.once('close', () => {
        // Lower-cased: routing ignores case, so /API/ready must not make a series of its own.
        const label = matched?.toLowerCase() ?? (req.path.toLowerCase().startsWith('/api/') ? 'unmatched' : 'app');
        // Methods the API answers, else "other": Node accepts some thirty (PROPFIND, MKCOL…), each would be a series.
        stop({
          method: KNOWN_METHODS.has(req.method) ? req.method : 'other',
          route: label,
          status: String(res.statusCode),
        });
      });
      next();
    };
  }

  /**
   * `GET /metrics` for Prometheus, with `Authorization: Bearer <METRICS_TOKEN>`. Without a
   * configured token the endpoint does not exist: counts of uploads are not for everyone.
   */
  endpoint(token: string | undefined): RequestHandler {
    return async (req, res) => {
      if (token === undefined)
        throw new NotFoundError(`There is no endpoint ${req.method} ${req.path}: set METRICS_TOKEN to enable metrics.`);
      const given = Buffer.from(/^Bearer (.+)$/.exec(req.get('authorization') ?? '')?.[1] ?? '');
      const wanted = Buffer.from(token);
      if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
        throw new UnauthenticatedError('Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>".');
      }
      res.setHeader('Content-Type', this.registry.contentType);
      res.setHeader('Cache-Control', 'no-store');
      res.send(await this.registry.metrics());
    };
  }
}
