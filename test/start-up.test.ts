import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ArchiveStore } from '../server/store/archive-store.js';
import { openStore, type StoreConfig } from '../server/store/open.js';
import { testAccount } from './support/content.js';
import { processStore, startServer, stopServer, type ProcessStore } from './support/process.js';
import { storeTargets } from './support/stores.js';

/** The store a server process of these settings opens, opened here while no server runs. */
async function withStore<T>(env: Record<string, string>, use: (store: ArchiveStore) => Promise<T>): Promise<T> {
  const config: StoreConfig = {
    ...(env.STORE === 'mongodb'
      ? { store: 'mongodb', mongodbUri: env.MONGODB_URI!, mongodbDb: env.MONGODB_DB }
      : { store: 'embedded' }),
    dataDir: env.DATA_DIR!,
    chunkSize: 255 * 1024,
  };
  const store = await openStore(config);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

const unitOf = (env: Record<string, string>, username: string) =>
  withStore(env, async (store) => (await store.accounts.findByUsername(username))!.unit.id);

for (const target of storeTargets)
  describe(
    `the server's start places accounts of an earlier version (${target.name} store)`,
    {
      skip: target.skip,
    },
    () => {
      let store: ProcessStore;
      before(async () => {
        store = processStore(target);
        // As an earlier version left them: free-text units, no directory.
        await withStore(store.env, async (s) => {
          await s.accounts.create(
            testAccount({
              username: 'old-placed',
              unit: { id: 'old', geoType: 'county', city: '北京市', county: '西城区' },
            }),
          );
          await s.accounts.create(
            testAccount({
              username: 'old-hebei',
              unit: { id: 'old', geoType: 'county', city: '沧州市', county: '青县' },
            }),
          );
        });
      });
      after(() => store.dispose());

      it('reads every account at its first start, saying so, and places those the directory has', async () => {
        const server = await startServer({ ...store.env, UNIT_REGIONS: '11', VERIFY_INTERVAL_HOURS: '0' });
        await stopServer(server);
        assert.match(server.stdout, /every account is read, once/);
        assert.match(server.stdout, /"startUp":\{"storeMs":\d+,"directoryMs":\d+,"placingMs":\d+,"ms":\d+\}/);
        assert.equal(await unitOf(store.env, 'old-placed'), '110102');
        assert.equal(await unitOf(store.env, 'old-hebei'), 'old');
      });

      it('places an account left unplaced once its province is loaded at a later start, without reading every account', async () => {
        const server = await startServer({ ...store.env, UNIT_REGIONS: '11,13', VERIFY_INTERVAL_HOURS: '0' });
        await stopServer(server);
        assert.doesNotMatch(server.stdout, /every account is read/);
        assert.match(server.stdout, /"accounts":1,"msg":"accounts placed in the unit directory"/);
        assert.equal(await unitOf(store.env, 'old-hebei'), '130922');
      });
    },
  );
