import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { composeServices, type Archive, type ServiceConfig } from '../server/compose.js';
import { loadConfig } from '../server/config.js';
import { hashOneTimePassword } from '../server/services/password.js';
import { ARCHIVE_UNIT } from '../server/services/unit-directory.js';
import { recordScryptCosts } from './support/scrypt-costs.js';
import { embeddedTarget, type OpenedStore } from './support/stores.js';

const PASSWORD = 'correct horse battery';

/**
 * The cost of the passwords people choose: the archive hashes them with scrypt N=2^15 (password.ts);
 * the test servers compose their services with a cheaper one (test/support/server.ts), which
 * every hash, check and unknown-username check of those services then takes instead.
 */
describe('the password cost the services are composed with', () => {
  // Every scrypt run, by its cost N.
  const costs = recordScryptCosts();

  let opened: OpenedStore;
  let archive: Archive | undefined;
  beforeEach(async () => (opened = await embeddedTarget.open()));
  afterEach(async () => {
    await archive?.digests.close();
    await archive?.textReader.close();
    archive = undefined;
    await opened.dispose();
  });

  function compose(config: ServiceConfig) {
    archive = composeServices(opened.store, config);
    return archive.services.accounts;
  }

  async function login(accounts: ReturnType<typeof compose>, username: string, password: string): Promise<number[]> {
    costs.length = 0;
    await accounts.authenticate(username, password, '192.0.2.1').catch(() => {});
    return [...costs];
  }

  it('is scrypt N=2^15 in the archive, as its configuration composes it: hashes, checks and unknown names alike', async () => {
    const accounts = compose(loadConfig({}));
    const account = await accounts.create({ username: 'clerk', password: PASSWORD, role: 'clerk', unit: ARCHIVE_UNIT });
    assert.match(account.passwordHash, /^scrypt\$32768\$8\$1\$/);
    assert.deepEqual(await login(accounts, 'clerk', PASSWORD), [2 ** 15]);
    assert.deepEqual(await login(accounts, 'nobody', PASSWORD), [2 ** 15], 'an unknown name costs a real check');
  });

  it('is the one given instead, for every password of those services; a one-time password is still padded to it', async () => {
    const accounts = compose({ ...loadConfig({}), passwordCost: 2 ** 10 });
    const account = await accounts.create({ username: 'clerk', password: PASSWORD, role: 'clerk', unit: ARCHIVE_UNIT });
    assert.match(account.passwordHash, /^scrypt\$1024\$8\$1\$/);
    assert.deepEqual(await login(accounts, 'clerk', PASSWORD), [2 ** 10]);
    assert.deepEqual(await login(accounts, 'nobody', PASSWORD), [2 ** 10], 'an unknown name costs a real check');

    await opened.store.accounts.setPassword(account.id, await hashOneTimePassword('abcd-efgh-jkmn'), true);
    assert.deepEqual(await login(accounts, 'clerk', 'abcd-efgh-jkmn'), [2 ** 8, 2 ** 10]);

    await accounts.resetPassword(account, 'another long password');
    assert.match((await accounts.get(account.id))!.passwordHash, /^scrypt\$1024\$8\$1\$/, 'a reset too');
  });
});
