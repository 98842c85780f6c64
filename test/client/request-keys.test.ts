import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, NetworkError } from '../../client/src/errors.js';
import { answered, newRequestKey, RetryKey } from '../../client/src/request-keys.js';

describe('the Idempotency-Key of an action a page may send again', () => {
  const hold = { files: ['a'.repeat(64)], reason: '审计抽查' };

  it('is a new random key of 32 hex digits each time', () => {
    const keys = new Set(Array.from({ length: 100 }, newRequestKey));
    assert.equal(keys.size, 100);
    for (const key of keys) assert.match(key, /^[0-9a-f]{32}$/);
  });

  it('stays the same while the same request is sent again after its answer was lost', async () => {
    const retry = new RetryKey();
    const first = retry.for(hold);
    await assert.rejects(answered(retry, Promise.reject(new NetworkError(new TypeError('Failed to fetch')))));
    assert.equal(retry.for({ ...hold }), first);
    await assert.rejects(answered(retry, Promise.reject(new ApiError(502, 'internal', 'Bad gateway'))));
    assert.equal(retry.for(hold), first);
  });

  it('is new for a changed request, since the server refuses a key sent with another', () => {
    const retry = new RetryKey();
    const first = retry.for(hold);
    assert.notEqual(retry.for({ ...hold, reason: '另一个原因' }), first);
  });

  it('is new after the server answered, done or refused', async () => {
    const retry = new RetryKey();
    const first = retry.for(hold);
    assert.equal(await answered(retry, Promise.resolve('placed')), 'placed');
    const second = retry.for(hold);
    assert.notEqual(second, first);
    await assert.rejects(answered(retry, Promise.reject(new ApiError(404, 'not_found', 'No such file'))));
    assert.notEqual(retry.for(hold), second);
  });
});
