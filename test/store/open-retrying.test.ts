import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StoreUnreachableError } from '../../server/errors.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import { openStoreRetrying, type StoreOpener } from '../../server/store/open.js';

const config = { store: 'mongodb', mongodbUri: 'mongodb://127.0.0.1:1', dataDir: '/nowhere', chunkSize: 1024 } as const;
const opened = {} as ArchiveStore;

describe('opening the store at start-up, retrying', () => {
  it('counts STORE_CONNECT_TIMEOUT_SECONDS from when the adapter is loaded, not from before (the driver loads slowly on a busy machine)', async (t) => {
    t.mock.timers.enable({ apis: ['Date', 'setTimeout'] });
    const attempts: number[] = [];
    // Loading the adapter takes longer than the whole budget.
    const load = async (): Promise<StoreOpener> => {
      t.mock.timers.tick(2_000);
      return async (attemptTimeoutMs) => {
        attempts.push(attemptTimeoutMs!);
        if (attempts.length === 1) throw new StoreUnreachableError('no server answered');
        return opened;
      };
    };
    const store = await openStoreRetrying(
      config,
      1_500,
      // The backoff's timer is set once this returns: move the clock past it then.
      (_attempt, delayMs) => setImmediate(() => t.mock.timers.tick(delayMs)),
      load,
    );
    assert.equal(store, opened);
    assert.equal(attempts.length, 2, 'retried once the database answered');
  });

  it('gives up once the budget is spent, naming the setting', async (t) => {
    t.mock.timers.enable({ apis: ['Date', 'setTimeout'] });
    const load = async (): Promise<StoreOpener> => async () => {
      t.mock.timers.tick(600);
      throw new StoreUnreachableError('no server answered');
    };
    await assert.rejects(
      openStoreRetrying(config, 1_500, (_attempt, delayMs) => setImmediate(() => t.mock.timers.tick(delayMs)), load),
      /no server answered \(gave up after 2 attempt\(s\) in 2 s; STORE_CONNECT_TIMEOUT_SECONDS\)/,
    );
  });
});
