import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { oneTimePassword } from '../../server/services/administration.js';
import { hashOneTimePassword, hashPassword, verifyPassword } from '../../server/services/password.js';
import { recordScryptCosts } from '../support/scrypt-costs.js';

/**
 * One-time passwords' own cheaper hash (docs/decisions/one-time-password-hash.md): it verifies like
 * any other, and costs a login as much time, so the time does not tell a fresh account.
 */
describe('one-time password hashes', () => {
  // Every scrypt run, by its cost N.
  const costs = recordScryptCosts();

  it('stores a one-time password with scrypt N=2^8, and verifies it (and nothing else) against it', async () => {
    const password = oneTimePassword();
    const stored = await hashOneTimePassword(password);
    assert.match(stored, /^scrypt\$256\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.notEqual(await hashOneTimePassword(password), stored, 'salted');
    assert.equal(await verifyPassword(password, stored), true);
    assert.equal(await verifyPassword(password.toUpperCase(), stored), false);
  });

  it('checks a cheaper hash at the login cost as well, and a login hash once', async () => {
    const cheap = await hashOneTimePassword('abcd-efgh-jkmn');
    const full = await hashPassword('a password somebody chose');
    costs.length = 0;
    await verifyPassword('abcd-efgh-jkmn', cheap);
    assert.deepEqual(costs, [2 ** 8, 2 ** 15]);
    costs.length = 0;
    await verifyPassword('a password somebody chose', full);
    assert.deepEqual(costs, [2 ** 15]);
  });
});
