import http from 'node:http';
import https from 'node:https';

/** What the archive answered: status, the headers the importer reads, and the body as text. */
export interface HttpAnswer {
  status: number;
  ok: boolean;
  header(name: string): string | null;
  text: string;
}

/** A request's body: its pieces are written as they are (a batch's files are not copied into one buffer). */
export interface HttpBody {
  type: string;
  pieces: readonly (string | Uint8Array)[];
}

/** A connection silent this long is given up (and the request retried), as fetch does after 300 s. */
const SILENCE_MS = 300_000;

// Connections kept open between requests, as fetch does: a batch import makes hundreds.
const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

/**
 * One HTTP exchange with node:http. Not fetch: fetch copies a request body twice more on its way
 * to the socket (into its own buffer, then through a web stream), 3 × 8 MiB for each batch of
 * small files; the importer's profile showed a quarter of its CPU time in the garbage collector
 * clearing those copies. Rejects on network errors with their code (ECONNREFUSED, ETIMEDOUT
 * when the connection stays silent for 300 s, ...).
 */
export async function exchange(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: HttpBody,
  silenceMs = SILENCE_MS,
): Promise<HttpAnswer> {
  try {
    return await once(url, method, headers, body, silenceMs);
  } catch (err) {
    // Sent again on a new connection, as fetch does. Every request of the importer may be
    // repeated (keys and claims count it once).
    if (!closedAsReused(err)) throw err;
    return once(url, method, headers, body, silenceMs);
  }
}

/**
 * Whether a request failed because the kept connection it went on was closed by the server as it
 * was reused (its idle timeout, 5 s by default, ran out meanwhile): reset as the request was read
 * (ECONNRESET), or already gone while a batch's body was being written (EPIPE).
 */
export function closedAsReused(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return (err as { reusedSocket?: boolean }).reusedSocket === true && (code === 'ECONNRESET' || code === 'EPIPE');
}

function once(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: HttpBody | undefined,
  silenceMs: number,
): Promise<HttpAnswer> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  const agent = agents[target.protocol as keyof typeof agents];
  const length = body?.pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0);
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      {
        method,
        agent,
        headers: { ...headers, ...(body ? { 'content-type': body.type, 'content-length': String(length) } : {}) },
      },
      (res) => {
        const received: Buffer[] = [];
        res.on('data', (chunk: Buffer) => received.push(chunk));
        res.once('error', reject);
        res.once('end', () => {
          const status = res.statusCode ?? 0;
          resolve({
            status,
            ok: status >= 200 && status < 300,
            header: (name) => {
              const value = res.headers[name.toLowerCase()];
              return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
            },
            text: Buffer.concat(received).toString('utf8'),
          });
        });
      },
    );
    req.once('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
    req.setTimeout(silenceMs, () =>
      req.destroy(Object.assign(new Error(`no answer for ${silenceMs / 1000} s`), { code: 'ETIMEDOUT' })),
    );
    if (!body) return void req.end();
    // Corked: the pieces leave in one writev, not one system call each.
    req.cork();
    for (const piece of body.pieces) req.write(piece);
    req.end();
  });
}
