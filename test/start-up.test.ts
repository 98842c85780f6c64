import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { ArchiveStore } from '../server/store/archive-store.js';
import { openStore, type StoreConfig } from '../server/store/open.js';
import { testAccount } from './support/content.js';
import { packagesLoaded } from './support/loaded-packages.js';
import {
  clerkToken,
  EMBEDDED_STORE,
  processStore,
  startServer,
  stopServer,
  type ProcessStore,
} from './support/process.js';
import { storeTargets, tempDir } from './support/stores.js';

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

describe("the server's start loads what it does not need yet on first use", () => {
  it('leaves opencc-js and hash-wasm to the reading process, which loads them for the first text it fingerprints', async () => {
    const work = tempDir();
    const env = { DATA_DIR: path.join(work, 'data'), ...EMBEDDED_STORE };
    const loaded = path.join(work, 'loaded-packages');
    try {
      const token = clerkToken(env);
      const server = await startServer({
        ...env,
        VERIFY_INTERVAL_HOURS: '0',
        NEAR_DUPLICATE_POLL_SECONDS: '1',
        LOADED_PACKAGES_FILE: loaded,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${import.meta.resolve('./support/loaded-packages.js')}`,
      });
      const serverPid = server.child.pid!;
      /** The packages the processes the server started (the reading process) loaded. */
      const childrenLoaded = () =>
        new Set(
          fs
            .readFileSync(loaded, 'utf8')
            .split('\n')
            .filter((line) => line && !line.startsWith(`${serverPid} `))
            .map((line) => line.split(' ')[1]),
        );
      try {
        const form = new FormData();
        form.append('file', new Blob(['床前明月光，疑是地上霜。舉頭望明月，低頭思故鄉。']), '静夜思.txt');
        const res = await fetch(`${server.url}/api/files`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: form,
        });
        assert.equal(res.status, 201);
        for (let waited = 0; !(childrenLoaded().has('hash-wasm') && childrenLoaded().has('opencc-js')); waited += 100) {
          assert.ok(waited < 30_000, `the reading process loaded only ${[...childrenLoaded()].join(', ')}`);
          await delay(100);
        }
      } finally {
        await stopServer(server);
      }
      const serverLoaded = packagesLoaded(loaded, serverPid);
      assert.ok(serverLoaded.has('express'), `the server's packages are seen: ${[...serverLoaded].join(', ')}`);
      assert.equal(serverLoaded.has('opencc-js'), false);
      assert.equal(serverLoaded.has('hash-wasm'), false);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
