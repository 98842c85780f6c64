import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../server/config.js';

/** The settings of the per-account limits on tokens and receipts: their defaults, and what is refused. */
describe('the limits of API tokens and receipts, as configured', () => {
  it('have defaults no honest clerk reaches, and take other values', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.tokensPerAccount, 20);
    assert.equal(defaults.quotas.receiptsPerDay, 1000);
    assert.equal(defaults.quotas.receiptBytesPerDay, 100 * 1024 * 1024);
    const set = loadConfig({
      TOKENS_PER_ACCOUNT: '5',
      QUOTA_RECEIPTS_PER_DAY: '200',
      QUOTA_RECEIPT_BYTES_PER_DAY: String(8 * 1024 * 1024),
    });
    assert.deepEqual(
      [set.tokensPerAccount, set.quotas.receiptsPerDay, set.quotas.receiptBytesPerDay],
      [5, 200, 8 * 1024 * 1024],
    );
  });

  it('refuse values that would make tokens or big folders’ receipts impossible', () => {
    for (const [name, value, words] of [
      ['TOKENS_PER_ACCOUNT', '0', /from 1 to 1000/],
      ['TOKENS_PER_ACCOUNT', '5000', /from 1 to 1000/],
      ['QUOTA_RECEIPTS_PER_DAY', '0', /QUOTA_RECEIPTS_PER_DAY/],
      ['QUOTA_RECEIPT_BYTES_PER_DAY', '1000000', /at least 4194304/],
    ] as const)
      assert.throws(
        () => loadConfig({ [name]: value }),
        (err: Error) => err.message.startsWith(`invalid setting ${name}:`) && words.test(err.message),
        `${name}=${value}`,
      );
  });
});
