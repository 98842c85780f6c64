import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { exchange } from '../../client/importer/http-exchange.js';

describe("the importer's HTTP exchange", () => {
  let server: http.Server;
  let base: string;
  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/silent') return; // never answers
      const received: Buffer[] = [];
      req.on('data', (chunk: Buffer) => received.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(received);
        res.writeHead(req.url === '/refuse' ? 429 : 200, { 'content-type': 'application/json', 'retry-after': '7' });
        res.end(
          JSON.stringify({
            length: req.headers['content-length'],
            type: req.headers['content-type'],
            auth: req.headers.authorization,
            text: body.toString('utf8'),
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends a body given in pieces, text and bytes, with its length declared', async () => {
    const answer = await exchange(
      `${base}/batch`,
      'POST',
      { authorization: 'Bearer t' },
      { type: 'multipart/form-data; boundary=x', pieces: ['前言 ', Buffer.from('bytes'), new Uint8Array([33])] },
    );
    assert.equal(answer.status, 200);
    assert.equal(answer.ok, true);
    assert.deepEqual(JSON.parse(answer.text), {
      length: String(Buffer.byteLength('前言 bytes!')),
      type: 'multipart/form-data; boundary=x',
      auth: 'Bearer t',
      text: '前言 bytes!',
    });
  });

  it('answers a refusal with its status and headers, not as an error', async () => {
    const answer = await exchange(`${base}/refuse`, 'GET', {});
    assert.deepEqual([answer.status, answer.ok, answer.header('Retry-After')], [429, false, '7']);
    assert.equal(answer.header('x-absent'), null);
  });

  it('fails with the network code when nothing listens, and when the connection stays silent', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(exchange(`http://127.0.0.1:${port}/`, 'GET', {}), { code: 'ECONNREFUSED' });
    await assert.rejects(exchange(`${base}/silent`, 'GET', {}, undefined, 100), { code: 'ETIMEDOUT' });
  });
});
