import type { Request, RequestHandler, Response as ExpressResponse } from 'express';
import type { ErrorBody, ErrorCode } from '../../../shared/errors.js';
import { BadRequestError, UnsupportedMediaTypeError, UnsupportedProtocolError } from '../../errors.js';
import { STATUS } from '../error-handler.js';

/**
 * The tus protocol rules the archive checks itself, where @tus/server does not (or not as the
 * protocol says): the version header (412 with Tus-Version), X-HTTP-Method-Override, 415 for a
 * wrong Content-Type, a malformed Upload-Offset, a stalled client (408); and a JSON body with an
 * error code for every error the library answers. See endpoint.ts for which request goes where.
 */

export const TUS_VERSION = '1.0.0';
export const OFFSET_STREAM = 'application/offset+octet-stream';
const TUS_METHODS = new Set(['POST', 'HEAD', 'PATCH', 'DELETE', 'OPTIONS']);

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

/** Protocol rules checked before anything else. */
export function protocolGate(stallMs: number): RequestHandler {
  return (req, res, next) => {
    // Clients behind proxies that only pass GET and POST send other methods this way.
    const override = req.get('x-http-method-override');
    if (override !== undefined) {
      const method = override.trim().toUpperCase();
      if (!TUS_METHODS.has(method))
        throw new BadRequestError(
          `X-HTTP-Method-Override "${override}" is not a tus method (POST, HEAD, PATCH, DELETE, OPTIONS).`,
        );
      req.method = method;
    }
    if (req.method === 'OPTIONS') return next();
    const version = req.get('tus-resumable');
    if (version !== TUS_VERSION) {
      res.setHeader('Tus-Version', TUS_VERSION);
      throw new UnsupportedProtocolError(
        version === undefined
          ? `Send the header "Tus-Resumable: ${TUS_VERSION}" with every tus request.`
          : `This server speaks tus ${TUS_VERSION}, not "${version}".`,
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
export const creationChecks: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
  const type = mediaType(req);
  if (hasBody && type !== OFFSET_STREAM) {
    throw new UnsupportedMediaTypeError(
      `The first bytes of an upload are sent as "Content-Type: ${OFFSET_STREAM}", not "${type ?? 'none'}".`,
    );
  }
  next();
};

export function patchChecks(req: Request): void {
  const type = mediaType(req);
  if (type !== OFFSET_STREAM)
    throw new UnsupportedMediaTypeError(
      `Upload bytes are sent as "Content-Type: ${OFFSET_STREAM}", not "${type ?? 'none'}".`,
    );
  const offset = req.get('upload-offset');
  if (offset === undefined)
    throw new BadRequestError(
      'Send the header "Upload-Offset" with the offset the bytes continue at (ask HEAD for it).',
    );
  if (!/^(0|[1-9][0-9]{0,15})$/.test(offset))
    throw new BadRequestError(`Upload-Offset must be a whole number of bytes, not "${offset}".`);
}

/** Every tus error gets the JSON body of the rest of the API, with a code a client can translate. */
export async function jsonError(response: Response): Promise<Response> {
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
