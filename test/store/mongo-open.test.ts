import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StoreUnreachableError } from '../../server/errors.js';
import { openMongoStore } from '../../server/store/mongo.js';
import { freePort } from '../support/process.js';

describe('opening the MongoDB store', () => {
  it('gives up an attempt after the attempt’s own time (the start-up retries), without a server', async () => {
    const uri = `mongodb://127.0.0.1:${await freePort()}/?directConnection=true`;
    const started = Date.now();
    await assert.rejects(openMongoStore({ uri, chunkSize: 261_120, connectTimeoutMs: 500 }), (err: Error) => {
      assert.ok(err instanceof StoreUnreachableError, err.message);
      assert.match(err.message, /no server answered within 500 ms/);
      return true;
    });
    // The served client waits 10 s for a server (a failover); the attempt does not (well under
    // that even on a busy machine, where the 500 ms can take a few seconds).
    assert.ok(Date.now() - started < 8000, `gave up after ${Date.now() - started} ms`);
  });
});
