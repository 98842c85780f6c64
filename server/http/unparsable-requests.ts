import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorBody, ErrorCode } from '../../shared/errors.js';
import { STATUS } from './error-handler.js';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** What a request Node could not parse into one means, by llhttp's error code. */
function bodyFor(code: string | undefined): ErrorBody {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return {
      error: 'headers_too_large',
      message:
        'The request headers are larger than the server accepts (16 KB in all). Too many or too large cookies are the usual cause: clear this site’s cookies and try again.',
    };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return {
      error: 'request_timeout',
      message: 'The request headers did not arrive in time; the connection is closed.',
    };
  return { error: 'bad_request', message: 'The request is not valid HTTP; the connection is closed.' };
}

/**
 * Node answers a request it cannot parse (headers over 16 KB, malformed HTTP, headers that
 * never finish) with a bare status and no body. Clients of this API expect the JSON error body
 * every other refusal has, so this answers those requests the same way, then closes.
 */
export function answerUnparsableRequests(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // As Node's own handler: no answer on a reset socket, or where a response has begun.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const body = bodyFor(err.code);
    const status = STATUS[body.error satisfies ErrorCode];
    const json = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
    );
  });
}
