import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { md5, randomContent, readUntilFailure } from '../test/support/content.js';
import { cli, clerkToken, processStore, startServer, stopServer } from '../test/support/process.js';
import type { ProcessStore, Started } from '../test/support/process.js';
import { Client } from '../test/support/server.js';
import { embeddedTarget } from '../test/support/stores.js';

const CHUNK = 261_120;

/**
 * Fault test: a byte of a stored file changes on disk under a running server (the embedded
 * store's content files; the MongoDB side is covered by the store conformance suite). The
 * fixity check names the file and its chunk, and a download never serves the changed bytes.
 */
describe('a chunk corrupted on disk', () => {
  let store: ProcessStore;
  let server: Started;
  let client: Client;
  const data = randomContent(3 * CHUNK + 1000);
  let fileId: string;
  before(async () => {
    store = processStore(embeddedTarget);
    client = new Client('', { bearer: clerkToken(store.env) });
    server = await startServer({ ...store.env, VERIFY_INTERVAL_HOURS: '0', GC_INTERVAL_SECONDS: '0' });
    client = new Client(server.url, client.credentials);
    fileId = (await (await client.upload('县志.pdf', data)).json()).fileId;
    const file = path.join(store.env.DATA_DIR!, 'content', fileId.slice(0, 2), fileId.slice(2, 4), fileId);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.from([data[2 * CHUNK + 17]! ^ 0x01]), 0, 1, 2 * CHUNK + 17); // one bit
    fs.closeSync(fd);
  });
  after(async () => {
    await stopServer(server);
    await store.dispose();
  });

  it('is found by the fixity check, which names the file and the chunk', () => {
    const r = cli(['verify', '--json'], store.env);
    assert.equal(r.status, 1);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.deepEqual(
      result.problems.map((p: { fileId: string; kind: string; chunk: number }) => [p.fileId, p.kind, p.chunk]),
      [[fileId, 'corrupted', 2]],
    );
  });

  it('fails the download cleanly: the changed chunk never goes out', async () => {
    const res = await client.fetch(`/api/files/${fileId}`);
    assert.equal(res.status, 200);
    const { received: got, failure } = await readUntilFailure(res.body!);
    assert.ok(failure, 'the download fails');
    assert.ok(got.length <= 2 * CHUNK, `${got.length} bytes arrived`);
    assert.equal(md5(got), md5(data.subarray(0, got.length)), 'only intact bytes before it');
    const inChunk = await client.fetch(`/api/files/${fileId}`, {
      headers: { range: `bytes=${2 * CHUNK}-${2 * CHUNK + 99}` },
    });
    assert.equal(inChunk.status, 500);
    assert.equal((await inChunk.json()).error, 'content_damaged');
    const before = await client.fetch(`/api/files/${fileId}`, { headers: { range: `bytes=0-${2 * CHUNK - 1}` } });
    assert.equal(before.status, 206);
    assert.equal(
      md5(Buffer.from(await before.arrayBuffer())),
      md5(data.subarray(0, 2 * CHUNK)),
      'the intact part still reads',
    );
  });
});
