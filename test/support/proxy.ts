import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';

/** One request as the proxy passed it on. */
export interface Served {
  method: string;
  /** Path and query, as the client asked. */
  path: string;
  /** Index of the upstream that served it. */
  upstream: number;
  /** Request headers a test asks about (Range, Upload-Offset). */
  range: string | undefined;
  uploadOffset: string | undefined;
  /** The upstream's status, once its answer began (undefined if it never answered). */
  status?: number;
}

/** Headers that belong to one connection, never forwarded (RFC 9110, section 7.6.1). */
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = { ...headers };
  for (const name of HOP_BY_HOP) delete out[name];
  return out;
}

/**
 * A reverse proxy on loopback in front of several app instances, as nginx would be in production:
 * each request goes to the next upstream in turn (round-robin per request, not per connection),
 * with its headers (Host included, so upload URLs name the proxy) and its body streamed both ways
 * as it comes, never buffered. It records which upstream served each request.
 */
export class RoundRobinProxy {
  readonly served: Served[] = [];
  private next = 0;

  private constructor(
    readonly url: string,
    private readonly server: http.Server,
    private readonly agents: http.Agent[],
  ) {}

  static async start(upstreams: string[]): Promise<RoundRobinProxy> {
    const targets = upstreams.map((u) => new URL(u));
    const agents = targets.map(() => new http.Agent({ keepAlive: true }));
    // The handler is bound before the proxy exists: the proxy needs the server's port.
    const ready: { proxy?: RoundRobinProxy } = {};
    const server = http.createServer((req, res) => ready.proxy!.forward(req, res, targets));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    return (ready.proxy = new RoundRobinProxy(`http://127.0.0.1:${port}`, server, agents));
  }

  /** The next request goes to upstream `index`; round-robin continues from there. */
  nextTo(index: number): void {
    this.next = index % this.agents.length;
  }

  /** Requests served since `mark` (a length of `served` taken earlier). */
  since(mark: number): Served[] {
    return this.served.slice(mark);
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse, targets: URL[]): void {
    const upstream = this.next;
    this.next = (this.next + 1) % targets.length;
    const record: Served = {
      method: req.method!,
      path: req.url!,
      upstream,
      range: req.headers.range,
      uploadOffset: req.headers['upload-offset'] as string | undefined,
    };
    this.served.push(record);
    const target = targets[upstream]!;
    const out = http.request({
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: endToEnd(req.headers),
      agent: this.agents[upstream],
    });
    out.on('response', (answer) => {
      record.status = answer.statusCode;
      res.writeHead(answer.statusCode!, answer.statusMessage, endToEnd(answer.headers));
      // A client that goes away mid-download takes the upstream response down with it.
      pipeline(answer, res, () => {});
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    // A client that breaks off mid-body breaks off the upstream request too, as it would directly.
    pipeline(req, out, (err) => {
      if (err) out.destroy();
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    for (const agent of this.agents) agent.destroy();
  }
}
