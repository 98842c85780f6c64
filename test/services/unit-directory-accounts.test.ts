import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { geographyOf, UnitDirectory } from '../../server/services/unit-directory.js';
import type { Account, AccountStore } from '../../server/store/accounts/port.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import { testAccount } from '../support/content.js';
import { storeTargets, type OpenedStore } from '../support/stores.js';

/** The store's accounts, remembering the most accounts any one call answered. */
function watched(accounts: AccountStore): { store: AccountStore; most: () => number } {
  let most = 0;
  const store = new Proxy(accounts, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const answer: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const rows = Array.isArray(answer)
          ? answer.length
          : answer && typeof answer === 'object' && 'items' in answer && Array.isArray(answer.items)
            ? answer.items.length
            : 0;
        most = Math.max(most, rows);
        return answer;
      };
    },
  });
  return { store, most: () => most };
}

for (const target of storeTargets)
  describe(
    `the unit directory goes through every account a batch at a time (100,000 in a province; ${target.name} store)`,
    { skip: target.skip },
    () => {
      let opened: OpenedStore;
      let store: ArchiveStore;
      const many = 2_600;

      before(async () => {
        opened = await target.open();
        store = opened.store;
        await new UnitDirectory({ units: store.units, accounts: store.accounts, jobs: store.jobs }).load(['11']);
        const dongcheng = (await store.units.get('110101'))!;
        const given: Account[] = Array.from({ length: many }, (_, i) =>
          testAccount({ username: `clerk${String(i).padStart(5, '0')}`, unit: geographyOf(dongcheng) }),
        );
        // An earlier version's free-text units, named last: beyond the first batches.
        given.push(
          testAccount({
            username: 'zz-old-placed',
            unit: { id: 'old-1', geoType: 'county', city: '北京市', county: '西城区' },
          }),
          testAccount({
            username: 'zz-old-nowhere',
            unit: { id: 'old-2', geoType: 'county', city: '北京市', county: '无此区' },
          }),
        );
        for (let from = 0; from < given.length; from += 1000)
          await store.accounts.createMany(given.slice(from, from + 1000), {
            id: `import-${from}`,
            accountId: given[0]!.id,
            createdAt: new Date(),
            expiresAt: new Date(),
            accounts: [],
          });
      });
      after(() => opened.dispose());

      it('at start: places the earlier accounts past the first thousand, holding no more than a thousand at once', async () => {
        const accounts = watched(store.accounts);
        const directory = new UnitDirectory({ units: store.units, accounts: accounts.store, jobs: store.jobs });
        const { mapped, unmapped } = await directory.mapEarlierAccounts();
        assert.deepEqual(
          mapped.map((a) => a.username),
          ['zz-old-placed'],
        );
        assert.deepEqual(
          unmapped.map((a) => a.username),
          ['zz-old-nowhere'],
        );
        assert.equal((await store.accounts.findByUsername('zz-old-placed'))!.unit.id, '110102');
        assert.ok(accounts.most() <= 1000, `one call answered ${accounts.most()} accounts`);
      });
    },
  );
