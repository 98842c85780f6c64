import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { createLogger } from '../server/log.js';
import { shutDown } from '../server/shutdown.js';

const quiet = createLogger('silent');

/** A server with one request in progress (answered when `finish` is called). */
async function serving(): Promise<{
  server: http.Server;
  url: string;
  inProgress: Promise<number>;
  finish: () => void;
}> {
  let finish!: () => void;
  const answered = new Promise<void>((resolve) => (finish = resolve));
  let arrived!: () => void;
  const received = new Promise<void>((resolve) => (arrived = resolve));
  const server = http.createServer((_req, res) => {
    arrived();
    void answered.then(() => res.end('done'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const inProgress = fetch(url).then((r) => r.status);
  // In progress means the server has the request (on a busy machine the connection can take a while).
  await received;
  return { server, url, inProgress, finish };
}

const refused = (url: string) =>
  fetch(url).then(
    () => false,
    () => true,
  );

describe('an orderly stop', () => {
  it('stops accepting connections at once, while background work and requests in progress wind down', async () => {
    const { server, url, inProgress, finish } = await serving();
    let backgroundStopped!: () => void;
    const steps: string[] = [];
    const stopping = shutDown({
      server,
      graceMs: 10_000,
      stopBackground: () =>
        new Promise<void>((resolve) => (backgroundStopped = resolve)).then(() => void steps.push('background stopped')),
      close: async () => void steps.push('closed'),
      logger: quiet,
    });
    // The background work has not stopped yet: new connections are refused all the same.
    assert.equal(server.listening, false);
    assert.equal(await refused(url), true);
    finish();
    assert.equal(await inProgress, 200, 'the request in progress is answered');
    backgroundStopped();
    await stopping;
    assert.deepEqual(steps, ['background stopped', 'closed']);
  });

  it('cuts off requests still running after the grace period, then closes', async () => {
    const { server, inProgress } = await serving();
    const started = Date.now();
    let closed = false;
    await shutDown({
      server,
      graceMs: 300,
      stopBackground: async () => {},
      close: async () => void (closed = true),
      logger: quiet,
    });
    assert.ok(Date.now() - started >= 290);
    assert.equal(await inProgress.catch(() => 'cut off'), 'cut off');
    assert.equal(closed, true);
  });
});
