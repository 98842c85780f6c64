import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Server } from '@tus/server';
import { HEADERS, type Lock, type Locker } from '@tus/utils';
import { Router, type Request, type RequestHandler, type Response as ExpressResponse } from 'express';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import type { ErrorBody, ErrorCode } from '../../../shared/errors.js';
import { ARCHIVE_FILE_ID_HEADER, ARCHIVE_STATUS_HEADER, ARCHIVE_UPLOAD_COUNT_HEADER, TUS_ENDPOINT } from '../../../shared/schemas.js';
import { ArchiveError, BadRequestError, NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError, UnsupportedProtocolError, UploadExpiredError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ResumableUploadService } from '../../services/resumable-uploads.js';
import type { UploadState } from '../../store/port.js';
import { requireAuth } from '../auth.js';
import { STATUS, storeFailure } from '../error-handler.js';
import { ArchiveDataStore, UploadCallers } from '../tus/data-store.js';

export const TUS_PATH = TUS_ENDPOINT;
const TUS_VERSION = '1.0.0';
const OFFSET_STREAM = 'application/offset+octet-stream';
const UPLOAD_ID = /^[0-9a-f]{32}$/;
const TUS_METHODS = new Set(['POST', 'HEAD', 'PATCH', 'DELETE', 'OPTIONS']);
const ARCHIVE_HEADERS = [ARCHIVE_FILE_ID_HEADER, ARCHIVE_STATUS_HEADER, ARCHIVE_UPLOAD_COUNT_HEADER];
const EXTRA_EXPOSED = ['Upload-Expires', 'X-Request-Id', ...ARCHIVE_HEADERS];
/** What browsers on allowed origins may read: the tus headers and ours. */
const EXPOSED_HEADERS = [...HEADERS, ...EXTRA_EXPOSED];

/**
 * Locks are the upload service's, held in the store so they hold across instances and refuse a
 * second writer; @tus/server's own (in-memory) locker would instead cancel the running request.
 */
const NO_LIBRARY_LOCKS: Locker = { newLock: (): Lock => ({ lock: async () => {}, unlock: async () => {} }) };

/** Error codes for errors @tus/server raises itself, by status. */
const CODE_BY_STATUS: Record<number, ErrorCode> = {
  403: 'forbidden',
  404: 'not_found',
  409: 'offset_mismatch',
  410: 'upload_expired',
  412: 'unsupported_protocol',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  423: 'upload_locked',
  500: 'internal',
};

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
 * `/api/tus`: resumable uploads, tus 1.0.0 with creation, creation-with-upload, termination
 * and expiration. @tus/server speaks the protocol; in front of it this route authenticates,
 * keeps each upload to its owner, and closes the library's gaps in conformance (412 with
 * Tus-Version, X-HTTP-Method-Override, 415 for a wrong Content-Type); behind it, it adds the
 * archive's outcome to a finishing response and gives every error a JSON body with a code.
 */
export function tusRoutes(o: TusRouteOptions): Router {
  const callers = new UploadCallers();
  /** Upload ids each running request acts on, to forget them when it ends. */
  const acting = new WeakMap<IncomingMessage, string[]>();
  const act = (req: Request, id: string) => {
    callers.enter(id, req.principal!.account, req.ip ?? null);
    acting.get(req)!.push(id);
  };
  const tus = new Server({
    path: TUS_PATH,
    datastore: new ArchiveDataStore(o.uploads, callers),
    maxSize: o.maxFileSize,
    locker: NO_LIBRARY_LOCKS,
    // Never from the request's Host or forwarded headers: "Host: evil.example" would send the
    // client's bytes elsewhere. A relative URL is resolved by tus clients against the endpoint
    // they called (RFC 9110 allows it); PUBLIC_URL gives an absolute one.
    generateUrl: (_request, { path, id }) => `${o.publicUrl ?? ''}${path}/${id}`,
    allowedOrigins: (origin) => o.corsOrigins.includes(origin),
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
      if (err instanceof ArchiveError) return { status_code: STATUS[err.code], body: JSON.stringify({ error: err.code, message: err.message }) };
      if (!('status_code' in err)) o.logger.error({ err }, 'tus request failed');
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
    const upload = await o.uploads.state(id);
    if (upload && upload.outcome) response.headers.delete('Upload-Expires');
    if (upload && req.method !== 'DELETE') for (const [name, value] of Object.entries(stateHeaders(upload))) response.headers.set(name, value);
    return response;
  };

  /**
   * PATCH is served here, straight from the Node request into the upload service: through
   * @tus/server, every byte crosses a web-stream adapter and back (about a third of the receiving
   * thread's work, measured). The protocol checks are the gate's, the rules the service's.
   */
  const receive: RequestHandler = async (req, res) => {
    const id = String(req.params.id);
    const offset = Number(req.get('upload-offset'));
    const upload = res.locals.upload as UploadState;
    const declared = req.get('content-length');
    if (declared !== undefined && offset + Number(declared) > upload.length) {
      throw new PayloadTooLargeError(upload.length - offset, 'This request carries more bytes than are left of the upload.');
    }
    // The stall limit is for a client that stops sending; once the last byte is in, completing
    // (which may re-read a large file) takes what it takes.
    req.once('end', () => req.setTimeout(0));
    const end = await o.uploads.receive(req.principal!.account, id, offset, req, req.ip ?? null);
    const after = (await o.uploads.state(id)) ?? { ...upload, offset: end };
    res.setHeader('Upload-Offset', String(end));
    for (const [name, value] of Object.entries(stateHeaders(after))) res.setHeader(name, value);
    res.status(204).end();
  };

  const router = Router();
  router.use(protocolGate(o.stallMs));
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
        const upload = await o.uploads.ownedBy(req.principal!.account, id);
        // Judged by the service's clock (the library would use its own).
        if (req.method !== 'DELETE' && o.uploads.isExpired(upload)) throw new UploadExpiredError();
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

/** Protocol rules checked before anything else. */
function protocolGate(stallMs: number): RequestHandler {
  return (req, res, next) => {
    // Clients behind proxies that only pass GET and POST send other methods this way.
    const override = req.get('x-http-method-override');
    if (override !== undefined) {
      const method = override.trim().toUpperCase();
      if (!TUS_METHODS.has(method)) throw new BadRequestError(`X-HTTP-Method-Override "${override}" is not a tus method (POST, HEAD, PATCH, DELETE, OPTIONS).`);
      req.method = method;
    }
    if (req.method === 'OPTIONS') return next();
    const version = req.get('tus-resumable');
    if (version !== TUS_VERSION) {
      res.setHeader('Tus-Version', TUS_VERSION);
      throw new UnsupportedProtocolError(
        version === undefined ? `Send the header "Tus-Resumable: ${TUS_VERSION}" with every tus request.` : `This server speaks tus ${TUS_VERSION}, not "${version}".`,
      );
    }
    if (req.method === 'PATCH' || req.method === 'POST') req.setTimeout(stallMs, () => endStalled(req, res, stallMs));
    next();
  };
}

/**
 * Ends a request whose client stopped sending: answered 408 with the JSON error, then closed. A
 * proxy sees an answer, not an instance that dropped the connection (nginx would count that as a
 * failure and, after two, leave a healthy instance out of the pool). The bytes that arrived are
 * kept when the request's stream then fails, as for any cut-off upload.
 */
function endStalled(req: Request, res: ExpressResponse, stallMs: number): void {
  req.setTimeout(0);
  if (res.headersSent) {
    req.destroy();
    return;
  }
  const body: ErrorBody = {
    error: 'request_timeout',
    message: `No bytes arrived for ${stallMs / 1000} s, so the request was ended. The bytes that arrived are kept: ask for the offset (HEAD) and send the rest.`,
  };
  res.writeHead(STATUS.request_timeout, { 'Content-Type': 'application/json; charset=utf-8', Connection: 'close' });
  res.end(JSON.stringify(body), () => req.destroy());
}

function mediaType(req: Request): string | undefined {
  return req.get('content-type')?.split(';')[0]!.trim().toLowerCase();
}

/** A creation request may carry the first bytes (creation-with-upload), as an offset stream only. */
const creationChecks: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
  const type = mediaType(req);
  if (hasBody && type !== OFFSET_STREAM) {
    throw new UnsupportedMediaTypeError(`The first bytes of an upload are sent as "Content-Type: ${OFFSET_STREAM}", not "${type ?? 'none'}".`);
  }
  next();
};

function patchChecks(req: Request): void {
  const type = mediaType(req);
  if (type !== OFFSET_STREAM) throw new UnsupportedMediaTypeError(`Upload bytes are sent as "Content-Type: ${OFFSET_STREAM}", not "${type ?? 'none'}".`);
  const offset = req.get('upload-offset');
  if (offset === undefined) throw new BadRequestError('Send the header "Upload-Offset" with the offset the bytes continue at (ask HEAD for it).');
  if (!/^(0|[1-9][0-9]{0,15})$/.test(offset)) throw new BadRequestError(`Upload-Offset must be a whole number of bytes, not "${offset}".`);
}

/** Every tus error gets the JSON body of the rest of the API, with a code a client can translate. */
async function jsonError(response: Response): Promise<Response> {
  const text = (await response.text()).trim();
  let body: { error: ErrorCode; message: string };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = { error: CODE_BY_STATUS[response.status] ?? 'bad_request', message: text || response.statusText };
  }
  const json = JSON.stringify(body);
  const headers = new Headers(response.headers);
  headers.set('Content-Type', 'application/json; charset=utf-8');
  headers.set('Content-Length', String(Buffer.byteLength(json)));
  return new Response(json, { status: response.status, headers });
}
