import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { closedAsReused, exchange } from '../../client/importer/http-exchange.js';

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

  it('sends a request again on a new connection when the kept one was closed as it was reused', async () => {
    // Answers the first request of a connection and keeps it open; resets it at the second.
    let connections = 0;
    const answered: string[] = [];
    const sockets = new Set<net.Socket>();
    const flaky = net.createServer((socket) => {
      connections++;
      sockets.add(socket);
      let requests = 0;
      socket.on('data', (data) => {
        if (!data.toString('latin1').startsWith('GET ')) return;
        if (++requests > 1) return void socket.resetAndDestroy();
        answered.push(data.toString('latin1').split(' ')[1]!);
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
      });
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    const at = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}`;
    try {
      assert.equal((await exchange(`${at}/first`, 'GET', {})).text, 'ok');
      assert.equal((await exchange(`${at}/second`, 'GET', {})).text, 'ok');
      assert.deepEqual(answered, ['/first', '/second']);
      assert.equal(connections, 2, 'the second went again on a new connection');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => flaky.close(() => resolve()));
    }
  });

  it('counts a reset or a broken pipe on a reused connection as the server closing it, nothing else', () => {
    const failure = (code: string, reusedSocket: boolean) => Object.assign(new Error(code), { code, reusedSocket });
    // A batch written into a connection the server had just closed fails with EPIPE, not a reset.
    assert.equal(closedAsReused(failure('EPIPE', true)), true);
    assert.equal(closedAsReused(failure('ECONNRESET', true)), true);
    assert.equal(closedAsReused(failure('ECONNRESET', false)), false, 'a new connection reset is a real failure');
    assert.equal(closedAsReused(failure('ECONNREFUSED', true)), false);
    assert.equal(closedAsReused(new Error('no code')), false);
  });
});
