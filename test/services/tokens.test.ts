import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ConflictError } from '../../server/errors.js';
import { TokenService } from '../../server/services/sessions.js';
import { testAccount } from '../support/content.js';
import { storeTargets, type OpenedStore } from '../support/stores.js';

for (const target of storeTargets) {
  describe(`API tokens per account (${target.name})`, { skip: target.skip }, () => {
    let opened: OpenedStore;
    beforeEach(async () => {
      opened = await target.open();
    });
    afterEach(() => opened.dispose());

    it('creations asked for at the same moment take the last places one by one: the cap holds', async () => {
      const account = testAccount({ username: 'scanner-owner' });
      await opened.store.accounts.create(account);
      const tokens = new TokenService(opened.store.tokens, opened.store.accounts, () => new Date(), 3);
      await tokens.create(account);
      // All asked before any is stored: each must count the ones made before it.
      const results = await Promise.allSettled(Array.from({ length: 4 }, () => tokens.create(account)));
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'fulfilled', 'rejected', 'rejected'],
      );
      for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof ConflictError);
      assert.equal(await opened.store.tokens.countLive(account.id, new Date()), 3);
      // A refusal does not block the ones after it.
      await tokens.revoke((await tokens.list())[0]!.id);
      await tokens.create(account);
    });
  });
}
