import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fill, translator } from '../../client/src/i18n/index.js';
import { MESSAGES } from '../../client/src/i18n/messages.js';

describe('English counts agree with their nouns', () => {
  const t = translator('en');

  it('says one row, one file, one pair and many of each', () => {
    assert.equal(t('rowsTotal', { total: 1 }), '1 row');
    assert.equal(t('rowsTotal', { total: '1,234' }), '1,234 rows');
    assert.equal(t('rowsTotal', { total: 0 }), '0 rows');
    assert.equal(t('exportCsvAll', { total: 1 }), 'Export CSV (the 1 row)');
    assert.equal(t('exportCsvAll', { total: '5,001' }), 'Export CSV (all 5,001 rows)');
    assert.equal(t('accountsCount', { total: 1 }), '1 account');
    assert.equal(t('tokenDays', { days: 1 }), '1 day');
    assert.equal(t('tokenDays', { days: 30 }), '30 days');
    assert.match(
      t('nearDuplicatesStatus', { fingerprinted: 1, skipped: 0, pairs: 1, queued: 0, running: 0, failed: 0 }),
      /^1 file compared, .* 1 near-duplicate pair found;/,
    );
  });

  it('leaves no plural pattern unfilled in any English message, and none in Chinese', () => {
    for (const [key, template] of Object.entries(MESSAGES.en)) {
      const names = [...template.matchAll(/\{(\w+)/g)].map((m) => m[1] as string);
      for (const value of [1, 2]) {
        const filled = fill(template, Object.fromEntries(names.map((name) => [name, value])));
        assert.doesNotMatch(filled, /[{}]/, `${key} with ${value}`);
      }
    }
    for (const [key, template] of Object.entries(MESSAGES['zh-CN'])) assert.doesNotMatch(template, /, plural,/, key);
  });
});
