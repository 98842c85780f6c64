import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { forgetKeptConnections } from './support/kept-connections.js';
import { tempDir } from './support/stores.js';

/**
 * A test process blocked by a synchronous child process (the archive command, `cli()`) while a
 * server process closes the connections it keeps idle: the requests after it still arrive.
 */

const dir = tempDir('kept-connections-');
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * A server in another process (it runs while this one is blocked) that closes a connection idle
 * for 3 s, as the archive does after 5 s (clients keep it for less: fetch 1 s, node:http 2 s, by
 * the server's hint), and then writes the file `closed`.
 */
async function serverClosingIdleConnections(closed: string) {
  const child = spawn(process.execPath, [
    '-e',
    `const fs = require('node:fs');
     const server = require('node:http').createServer((_req, res) => res.end('ok'));
     server.keepAliveTimeout = 3000;
     server.on('connection', (socket) => socket.on('close', () => fs.writeFileSync(${JSON.stringify(closed)}, '')));
     server.listen(0, '127.0.0.1', () => console.log(server.address().port));`,
  ]);
  const [port] = (await once(child.stdout, 'data')) as [Buffer];
  return { url: `http://127.0.0.1:${port.toString().trim()}/`, stop: () => child.kill() };
}

/** Blocks this process, as spawnSync does, until the server has closed the connection. */
function blockedUntil(file: string): void {
  const wait = new Int32Array(new SharedArrayBuffer(4));
  while (!fs.existsSync(file)) Atomics.wait(wait, 0, 0, 10);
}

const byFetch = async (url: string) => (await fetch(url)).text();
const byNodeHttp = (url: string) =>
  new Promise<string>((resolve, reject) => {
    http
      .get(url, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });

describe('requests after the test process was blocked while the server closed its idle connections', () => {
  for (const [way, get] of [
    ['fetch', byFetch],
    ['node:http (tus-js-client)', byNodeHttp],
  ] as const)
    it(`go on new connections (${way})`, async () => {
      const closed = path.join(dir, `closed-${way.split(' ')[0]}`);
      const server = await serverClosingIdleConnections(closed);
      try {
        // Two requests: the second goes on the connection kept after the first (the one reused below).
        for (let i = 0; i < 2; i++) assert.equal(await get(server.url), 'ok');
        blockedUntil(closed);
        forgetKeptConnections();
        assert.equal(await get(server.url), 'ok');
      } finally {
        server.stop();
      }
    });
});
