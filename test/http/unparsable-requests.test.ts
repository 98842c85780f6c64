import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TestServer } from '../support/server.js';
import { embeddedTarget } from '../support/stores.js';

/** Sends raw bytes and reads everything until the server closes the connection. */
function raw(url: string, request: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('utf8')));
    socket.on('end', () => resolve(answer)).on('error', reject);
    socket.write(request);
  });
}

function parse(answer: string): { status: number; headers: string; body: unknown } {
  const [head, body] = [answer.slice(0, answer.indexOf('\r\n\r\n')), answer.slice(answer.indexOf('\r\n\r\n') + 4)];
  return { status: Number(head.split(' ')[1]), headers: head, body: JSON.parse(body) };
}

describe('requests Node cannot parse get the JSON error body too', () => {
  let server: TestServer;
  before(async () => (server = await TestServer.start(embeddedTarget)));
  after(() => server.close());

  it('answers headers over 16 KB (a swollen cookie) with 431 headers_too_large and a message', async () => {
    const answer = parse(
      await raw(server.url, `GET /api/health HTTP/1.1\r\nHost: x\r\nCookie: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    assert.equal(answer.status, 431);
    assert.match(answer.headers, /content-type: application\/json/i);
    assert.match(answer.headers, /connection: close/i);
    assert.equal((answer.body as { error: string }).error, 'headers_too_large');
    assert.match((answer.body as { message: string }).message, /cookies/);
  });

  it('answers malformed HTTP with 400 bad_request, and stays up', async () => {
    const answer = parse(await raw(server.url, 'GET /api/health HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n'));
    assert.equal(answer.status, 400);
    assert.equal((answer.body as { error: string }).error, 'bad_request');
    assert.equal((await fetch(`${server.url}/api/health`)).status, 200);
  });
});
