import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig, storeChoice } from '../server/config.js';

const URI = 'mongodb://db.example:27017/archive';

/** STORE and MONGODB_URI: which store the server, the archive command and the tests run on. */
describe('the store the settings choose', () => {
  it('is the embedded store when nothing is set, or STORE=embedded', () => {
    for (const env of [{}, { STORE: 'embedded' }, { STORE: '', MONGODB_URI: '' }]) {
      const config = loadConfig(env);
      assert.equal(config.store, 'embedded', JSON.stringify(env));
      assert.equal(config.mongodbUri, undefined, JSON.stringify(env));
    }
  });

  it('is MongoDB when MONGODB_URI alone is set, as before STORE existed, or with STORE=mongodb', () => {
    for (const env of [{ MONGODB_URI: URI }, { STORE: 'mongodb', MONGODB_URI: URI }, { STORE: '', MONGODB_URI: URI }]) {
      const config = loadConfig(env);
      assert.equal(config.store, 'mongodb', JSON.stringify(env));
      assert.equal(config.mongodbUri, URI, JSON.stringify(env));
    }
  });

  it('refuses STORE=mongodb without MONGODB_URI, naming the setting it needs', () => {
    assert.throws(
      () => loadConfig({ STORE: 'mongodb' }),
      /^ConfigError: STORE=mongodb needs MONGODB_URI, the MongoDB to run on \(such as mongodb:\/\/host:27017\/archive\)$/,
    );
  });

  it('refuses STORE=embedded with MONGODB_URI set, telling which one to remove for which store', () => {
    assert.throws(
      () => loadConfig({ STORE: 'embedded', MONGODB_URI: URI }),
      /^ConfigError: STORE=embedded and MONGODB_URI choose different stores: remove MONGODB_URI to run on the embedded store in DATA_DIR, or remove STORE \(or set STORE=mongodb\) to run on MongoDB$/,
    );
  });

  it('refuses a STORE it does not know, naming the stores it knows', () => {
    for (const value of ['sqlite', 'MongoDB', 'mongo'])
      assert.throws(
        () => loadConfig({ STORE: value, MONGODB_URI: URI }),
        /^ConfigError: invalid setting STORE: STORE is embedded or mongodb$/,
        value,
      );
  });

  it('is decided the same way for the tests as for the server (storeChoice reads only these two settings)', () => {
    const cases = [
      {},
      { STORE: 'embedded' },
      { MONGODB_URI: URI },
      { STORE: 'mongodb', MONGODB_URI: URI },
      { STORE: 'mongodb' },
      { STORE: 'embedded', MONGODB_URI: URI },
      { STORE: 'sqlite' },
    ];
    const outcome = (decide: () => { store: string; mongodbUri?: string | undefined }) => {
      try {
        const { store, mongodbUri } = decide();
        return { store, mongodbUri };
      } catch (err) {
        return { refused: (err as Error).message };
      }
    };
    for (const env of cases)
      assert.deepEqual(
        outcome(() => storeChoice(env)),
        outcome(() => loadConfig(env)),
        JSON.stringify(env),
      );
    // A setting that is not about the store does not stop the tests' choice.
    assert.deepEqual(storeChoice({ MONGODB_URI: URI, PORT: 'abc' }), { store: 'mongodb', mongodbUri: URI });
  });
});
