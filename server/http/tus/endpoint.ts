/**
 * `/api/tus`: resumable uploads, tus 1.0.0 with creation, creation-with-upload, termination and
 * expiration. This module owns the whole tus surface.
 *
 * @tus/server is part of the product's contract: it speaks the protocol for every request but
 * PATCH, against our DataStore (data-store.ts), which hands the work to the resumable-upload
 * service. PATCH carries the bytes, and through the library every byte would cross a web-stream
 * adapter and back (about a third of the receiving thread's work, measured), so it goes straight
 * from the Node request into the service here.
 *
 * | request            | checked here first                                       | served by                   |
 * |--------------------|----------------------------------------------------------|-----------------------------|
 * | OPTIONS /, /:id    | method override                                          | @tus/server (CORS)          |
 * | POST /             | version, sign-in, the first bytes' Content-Type          | @tus/server → DataStore     |
 * | HEAD /:id          | version, sign-in, owner, expiry                          | @tus/server → DataStore     |
 * | PATCH /:id         | version, sign-in, owner, expiry, Content-Type, offset,   | `receive` below → service   |
 * |                    | and no more bytes than the upload has left               |                             |
 * | DELETE /:id        | version, sign-in, owner                                  | @tus/server → DataStore     |
 * | other methods, /:id| version, sign-in                                         | @tus/server (refused)       |
 * | anything else on / | sign-in                                                  | 400 with a hint             |
 *
 * What the library needs from us, and why: no locks of its own (NO_LIBRARY_LOCKS: the service's
 * locks live in the store and hold across instances); the full path in `req.url` (Express shortens
 * it under the mount); the caller of each upload, which the library does not pass to a DataStore
 * (UploadCallers, filled for the length of each request); and its errors turned into ours
 * (onResponseError, and `jsonError` for the ones it answers itself).
 */
import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Server } from '@tus/server';
import { HEADERS, type Lock, type Locker } from '@tus/utils';
import { Router, type Request, type RequestHandler } from 'express';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import {
  ARCHIVE_FILE_ID_HEADER,
  ARCHIVE_STATUS_HEADER,
  ARCHIVE_UPLOAD_COUNT_HEADER,
  TUS_ENDPOINT,
} from '../../../shared/schemas.js';
import {
  ArchiveError,
  BadRequestError,
  NotFoundError,
  PayloadTooLargeError,
  UploadExpiredError,
} from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ResumableUploadService } from '../../services/resumable-uploads.js';
import type { UploadState } from '../../store/uploads/port.js';
import { requireAuth } from '../auth.js';
import { STATUS, storeFailure } from '../error-handler.js';
import { ArchiveDataStore, UploadCallers } from './data-store.js';
import { creationChecks, jsonError, patchChecks, protocolGate, TUS_VERSION } from './protocol.js';

export const TUS_PATH = TUS_ENDPOINT;
const UPLOAD_ID = /^[0-9a-f]{32}$/;
const ARCHIVE_HEADERS = [ARCHIVE_FILE_ID_HEADER, ARCHIVE_STATUS_HEADER, ARCHIVE_UPLOAD_COUNT_HEADER];
const EXTRA_EXPOSED = ['Upload-Expires', 'X-Request-Id', ...ARCHIVE_HEADERS];
/** What browsers on allowed origins may read: the tus headers and ours. */
const EXPOSED_HEADERS = [...HEADERS, ...EXTRA_EXPOSED];

/**
 * Locks are the upload service's, held in the store so they hold across instances and refuse a
 * second writer; @tus/server's own (in-memory) locker would instead cancel the running request.
 */
const NO_LIBRARY_LOCKS: Locker = { newLock: (): Lock => ({ lock: async () => {}, unlock: async () => {} }) };

export interface TusRouteOptions {
  uploads: ResumableUploadService;
  maxFileSize: number;
  /** Origins allowed to call the tus endpoint from a browser (CORS); none by default. */
  corsOrigins: string[];
  logger: Logger;
  /** A POST or PATCH that sends no bytes for this long is cut off, so its upload's lock is freed. */
  stallMs: number;
  /** Where clerks reach the archive (PUBLIC_URL); upload URLs are relative without it. */
  publicUrl?: string | undefined;
}

/**
 * The tus endpoint's router (see the top of this file for which request goes where). In front
 * of the library it authenticates, keeps each upload to its owner and checks the protocol rules
 * the library does not; behind it, it adds the archive's outcome to a finishing response and
 * gives every error a JSON body with a code.
 */
export function tusRoutes(options: TusRouteOptions): Router {
  const callers = new UploadCallers();
  /** Upload ids each running request acts on, to forget them when it ends. */
  const acting = new WeakMap<IncomingMessage, string[]>();
  const act = (req: Request, id: string) => {
    callers.enter(id, req.principal!.account, req.ip ?? null);
    acting.get(req)!.push(id);
  };
  const tus = new Server({
    path: TUS_PATH,
    datastore: new ArchiveDataStore(options.uploads, callers),
    maxSize: options.maxFileSize,
    locker: NO_LIBRARY_LOCKS,
    // Never from the request's Host or forwarded headers: "Host: evil.example" would send the
    // client's bytes elsewhere. A relative URL is resolved by tus clients against the endpoint
    // they called (RFC 9110 allows it); PUBLIC_URL gives an absolute one.
    generateUrl: (_request, { path, id }) => `${options.publicUrl ?? ''}${path}/${id}`,
    allowedOrigins: (origin) => options.corsOrigins.includes(origin),
    allowedHeaders: ['X-CSRF-Token', 'X-Request-Id'],
    exposedHeaders: EXTRA_EXPOSED,
    namingFunction: (request) => {
      const id = randomBytes(16).toString('hex');
      // A creation: its caller is the authenticated principal of the Express request below.
      act(expressRequest(request), id);
      return id;
    },
    getFileIdFromRequest: (_req, last) => (last !== undefined && UPLOAD_ID.test(last) ? last : undefined),
    onResponseError: (_req, raw) => {
      const err = storeFailure(raw) ?? raw;
      if (err instanceof ArchiveError)
        return { status_code: STATUS[err.code], body: JSON.stringify({ error: err.code, message: err.message }) };
      if (!('status_code' in err)) options.logger.error({ err }, 'tus request failed');
      return undefined;
    },
  });

  const forward: RequestHandler = async (req, res) => {
    // @tus/server reads the full path (Express shortened req.url to the part after the mount).
    req.url = req.originalUrl;
    const request = new NodeRequest({ req, res });
    const ids: string[] = [];
    acting.set(req, ids);
    try {
      // Only a caller the owner check let through acts on an existing upload.
      if (res.locals.upload) act(req, String(req.params.id));
      const response = await tus.handleWeb(request);
      await sendNodeResponse(res, await finish(req, response));
    } finally {
      for (const id of ids) callers.leave(id);
    }
  };

  /** Adds what the library cannot know to its response. */
  const finish = async (req: Request, response: Response): Promise<Response> => {
    if (response.status >= 400) return jsonError(response);
    const id = (req.params.id as string | undefined) ?? response.headers.get('location')?.split('/').pop();
    if (req.method === 'OPTIONS' || id === undefined || !UPLOAD_ID.test(id)) return response;
    const upload = await options.uploads.state(id);
    if (upload && upload.outcome) response.headers.delete('Upload-Expires');
    if (upload && req.method !== 'DELETE')
      for (const [name, value] of Object.entries(stateHeaders(upload))) response.headers.set(name, value);
    return response;
  };

  /** PATCH, straight from the Node request into the upload service (see the top of this file). */
  const receive: RequestHandler = async (req, res) => {
    const id = String(req.params.id);
    const offset = Number(req.get('upload-offset'));
    const upload = res.locals.upload as UploadState;
    const declared = req.get('content-length');
    if (declared !== undefined && offset + Number(declared) > upload.length) {
      throw new PayloadTooLargeError(
        upload.length - offset,
        'This request carries more bytes than are left of the upload.',
      );
    }
    // The stall limit is for a client that stops sending; once the last byte is in, completing
    // (which may re-read a large file) takes what it takes.
    req.once('end', () => req.setTimeout(0));
    const end = await options.uploads.receive(req.principal!.account, id, offset, req, req.ip ?? null);
    const after = (await options.uploads.state(id)) ?? { ...upload, offset: end };
    res.setHeader('Upload-Offset', String(end));
    for (const [name, value] of Object.entries(stateHeaders(after))) res.setHeader(name, value);
    res.status(204).end();
  };

  const router = Router();
  router.use(protocolGate(options.stallMs));
  router.options(['/', '/:id'], forward);
  router.post('/', requireAuth(), creationChecks, forward);
  router.all(
    '/:id',
    requireAuth(),
    async (req, res, next) => {
      const id = String(req.params.id);
      if (!UPLOAD_ID.test(id)) throw new NotFoundError('There is no upload at this address.');
      if (req.method === 'PATCH') patchChecks(req);
      if (req.method === 'HEAD' || req.method === 'PATCH' || req.method === 'DELETE') {
        // Owner only: anyone else is told there is no such upload.
        const upload = await options.uploads.ownedBy(req.principal!.account, id);
        // Judged by the service's clock (the library would use its own).
        if (req.method !== 'DELETE' && options.uploads.isExpired(upload)) throw new UploadExpiredError();
        res.locals.upload = upload;
      }
      next();
    },
    (req, res, next) => (req.method === 'PATCH' ? receive(req, res, next) : forward(req, res, next)),
  );
  router.all('/', requireAuth(), (req) => {
    throw new BadRequestError(`${req.method} is not a tus request on ${TUS_PATH}: create an upload with POST.`);
  });
  return router;
}

/** What a response tells of an upload's state: its expiry while unfinished, its outcome once finished. */
function stateHeaders(upload: UploadState): Record<string, string> {
  if (!upload.outcome) return { 'Upload-Expires': upload.expiresAt.toUTCString() };
  return {
    [ARCHIVE_FILE_ID_HEADER]: upload.outcome.fileId,
    [ARCHIVE_STATUS_HEADER]: upload.outcome.status,
    [ARCHIVE_UPLOAD_COUNT_HEADER]: String(upload.outcome.uploadCount),
  };
}

/** The Express request under the one @tus/server hands its callbacks. */
function expressRequest(request: unknown): Request {
  return (request as { runtime: { node: { req: Request } } }).runtime.node.req;
}

/**
 * Headers every answer of the tus endpoint carries, refusals by the authentication or the body
 * parser included (mounted ahead of those), so a browser can read them.
 */
export function tusResponseHeaders(corsOrigins: string[]): RequestHandler {
  return (req, res, next) => {
    res.setHeader('Tus-Resumable', TUS_VERSION);
    const origin = req.get('origin');
    if (origin !== undefined && corsOrigins.includes(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS.join(', '));
      res.setHeader('Vary', 'Origin');
    }
    next();
  };
}
