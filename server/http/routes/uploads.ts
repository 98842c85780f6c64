import express, { Router, type RequestHandler } from 'express';
import multer from 'multer';
import { cleanContentType, cleanFileName, cleanUploadPath } from '../../../shared/file-name.js';
import {
  BATCH_FILE_MAX_BYTES,
  BATCH_MAX_BYTES,
  BATCH_MAX_FILES,
  uploadBatchManifest,
  uploadCheckRequest,
  uploadChecksRequest,
  uploadProofsRequest,
  uploadProveRequest,
  type BatchFileResult,
} from '../../../shared/schemas.js';
import { PayloadTooLargeError, ValidationError } from '../../errors.js';
import type { ClaimService } from '../../services/claims.js';
import type { IngestService } from '../../services/ingest.js';
import type { Quotas } from '../../services/quotas.js';
import { requireAuth } from '../auth.js';
import { actionKey, clientKey, fileKey } from '../idempotency-key.js';
import { bulkLane } from '../bulk-lane.js';
import { BatchArenas, batchFileStorage, type FileInParts } from '../batch-files.js';
import { parse } from '../validate.js';

/** Paths whose JSON bodies are larger than the app's default limit (parsed here, after authentication). */
export const BULK_JSON_PATHS = ['/api/uploads/checks', '/api/uploads/proofs'];

/** Room for the multipart envelope: part headers (names up to 1,000 characters) and the manifest. */
const BATCH_ENVELOPE_BYTES = BATCH_MAX_FILES * 4096 + 256 * 1024;

const MIB = 1024 * 1024;

/** Bulk requests an instance works on at once (bulk-lane.ts); two keep both cores of a small server busy. */
const BULK_REQUESTS_AT_ONCE = 2;

/**
 * `/api/uploads`: the instant-upload handshake (check, then prove possession of the bytes), one
 * file at a time or many at once, and small files sent many to a request (a bulk import's
 * thousands of small files would otherwise cost a request cycle and a store round trip each).
 */
export function uploadRoutes(claims: ClaimService, ingest: IngestService, quotas: Quotas): Router {
  const router = Router();
  const bulkJson = express.json({ limit: '4mb', strict: true });
  // One lane for every bulk route: parsing, checking and storing happen in it.
  const lane = bulkLane(BULK_REQUESTS_AT_ONCE);
  const arenas = new BatchArenas(BULK_REQUESTS_AT_ONCE);

  router.post('/check', requireAuth(), async (req, res) => {
    const body = parse(uploadCheckRequest, req.body, 'body');
    await quotas.take(req.principal!.account, 'checks', 1);
    res.json(await claims.check(req.principal!.account, body));
  });

  router.post(
    '/checks',
    requireAuth(),
    lane.enter,
    bulkJson,
    lane.work(async (req, res) => {
      const body = parse(uploadChecksRequest, req.body, 'body');
      await quotas.take(req.principal!.account, 'checks', body.files.length);
      res.json({ results: await claims.checkMany(req.principal!.account, body.files) });
    }),
  );

  router.post('/prove', requireAuth(), async (req, res) => {
    const body = parse(uploadProveRequest, req.body, 'body');
    await quotas.take(req.principal!.account, 'proofs', 1);
    res.json(await claims.prove(req.principal!.account, body, req.ip ?? null));
  });

  router.post(
    '/proofs',
    requireAuth(),
    lane.enter,
    bulkJson,
    lane.work(async (req, res) => {
      const body = parse(uploadProofsRequest, req.body, 'body');
      await quotas.take(req.principal!.account, 'proofs', body.proofs.length);
      res.json({ results: await claims.proveMany(req.principal!.account, body.proofs, req.ip ?? null) });
    }),
  );

  router.post(
    '/batch',
    requireAuth(),
    batchSizeGuard,
    lane.enter,
    receiveBatch(arenas),
    lane.work(async (req, res) => {
      try {
        res.json({ results: await storeBatch(req) });
      } finally {
        // Stored or failed, nothing reads the files any more.
        arenas.giveBack(req);
      }
    }),
  );

  async function storeBatch(req: express.Request): Promise<BatchFileResult[]> {
    const received = (req.files as FileInParts[] | undefined) ?? [];
    const unknown = Object.keys(req.body as object).filter((name) => name !== 'manifest');
    if (unknown.length > 0)
      throw new ValidationError(
        `Unknown form field "${unknown[0]}": a batch has a "manifest" field and its files, each in a field "file".`,
      );
    if (received.length === 0)
      throw new ValidationError('No files were attached: send each file in a form field "file".');
    const manifest = parse(uploadBatchManifest, jsonField((req.body as { manifest?: unknown }).manifest), 'manifest');
    if (manifest.length !== received.length) {
      throw new ValidationError(
        `The manifest lists ${manifest.length} files but ${received.length} were attached: list each file's md5 and sha256, in the order of the files.`,
      );
    }
    await quotas.take(req.principal!.account, 'batch', received.length);
    const files = received.map((file, i) => ({
      fileName: cleanFileName(manifest[i]!.name ?? file.originalname),
      path: cleanUploadPath(manifest[i]!.name ?? file.originalname),
      key: fileKey(req, manifest[i]!.key),
      contentType: cleanContentType(manifest[i]!.type ?? file.mimetype),
      parts: file.parts,
      md5: manifest[i]!.md5,
      sha256: manifest[i]!.sha256,
    }));
    return ingest.storeMany(files, req.principal!.account, {
      via: 'batch',
      address: req.ip ?? null,
      key: actionKey(req, 'batch'),
    });
  }

  return router;
}

/** A batch is read into memory: its size must be declared, and within the limit, before any of it is read. */
const batchSizeGuard: RequestHandler = (req, _res, next) => {
  if (!req.is('multipart/form-data'))
    throw new ValidationError(
      'Send a batch as multipart/form-data: a "manifest" field, then each file in a field "file".',
    );
  clientKey(req);
  const declared = req.get('content-length');
  if (declared === undefined)
    throw new ValidationError(
      `Send a batch with a Content-Length header (it is read into memory, ${BATCH_MAX_BYTES / MIB} MiB at most).`,
    );
  if (Number(declared) > BATCH_MAX_BYTES + BATCH_ENVELOPE_BYTES) {
    throw new PayloadTooLargeError(
      BATCH_MAX_BYTES,
      `A batch holds at most ${BATCH_MAX_BYTES / MIB} MiB of files: send fewer files in each request.`,
    );
  }
  next();
};

function receiveBatch(arenas: BatchArenas): RequestHandler {
  const receive = multer({
    storage: batchFileStorage(arenas),
    // Raw UTF-8 file names, as browsers and scripts send them (latin1, the default, garbles Chinese).
    defParamCharset: 'utf8',
    limits: {
      fileSize: BATCH_FILE_MAX_BYTES,
      files: BATCH_MAX_FILES,
      fields: 1,
      fieldSize: 256 * 1024,
      parts: BATCH_MAX_FILES + 1,
      headerPairs: 50,
    },
  }).array('file', BATCH_MAX_FILES);
  return (req, res, next) => {
    // The declared body (checked by batchSizeGuard) bounds what its files hold.
    arenas.lend(req, Number(req.get('content-length')));
    receive(req, res, (err: unknown) => {
      // A failed request's handler never runs. multer may call back before a file it began has
      // ended (a limit reached): that file is then not placed in the arena (BatchArenas.place).
      if (err) arenas.giveBack(req);
      if (!(err instanceof multer.MulterError)) return next(err);
      if (err.code === 'LIMIT_FILE_SIZE') {
        return next(
          new PayloadTooLargeError(
            BATCH_FILE_MAX_BYTES,
            `A file of a batch may have ${BATCH_FILE_MAX_BYTES / MIB} MiB at most: send larger files one by one (tus).`,
          ),
        );
      }
      if (err.code === 'LIMIT_FILE_COUNT' || err.code === 'LIMIT_PART_COUNT')
        return next(new ValidationError(`A batch holds at most ${BATCH_MAX_FILES} files.`));
      if (err.code === 'LIMIT_UNEXPECTED_FILE')
        return next(new ValidationError('Send each file of a batch in a form field "file".'));
      next(
        new ValidationError(
          `The batch form is not acceptable (${err.message}): send one "manifest" field, then each file in a field "file".`,
        ),
      );
    });
  };
}

function jsonField(value: unknown): unknown {
  if (typeof value !== 'string')
    throw new ValidationError(
      'The "manifest" field is missing: list each file\'s md5 and sha256 as JSON, in the order of the files.',
    );
  try {
    return JSON.parse(value);
  } catch {
    throw new ValidationError('The "manifest" field is not valid JSON.');
  }
}
