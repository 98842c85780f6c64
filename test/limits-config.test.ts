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

/** How long a clerk may withdraw their uploads, and how long the trash keeps them. */
describe('the days of withdrawal and of the trash, as configured', () => {
  it('are 30 days each unless set', () => {
    const defaults = loadConfig({});
    assert.deepEqual([defaults.withdrawDays, defaults.trashDays], [30, 30]);
    const set = loadConfig({ WITHDRAW_DAYS: '0', TRASH_DAYS: '90' });
    assert.deepEqual([set.withdrawDays, set.trashDays], [0, 90]);
  });

  it('refuse what is not a whole number of days in range, naming the setting', () => {
    for (const [name, value, words] of [
      ['WITHDRAW_DAYS', '-1', /0 \(clerks never withdraw themselves\) or more/],
      ['WITHDRAW_DAYS', '7.5', /whole number of days/],
      ['WITHDRAW_DAYS', 'thirty', /whole number of days/],
      ['TRASH_DAYS', '0', /at least 1 day/],
      ['TRASH_DAYS', '4000', /at most 3650/],
    ] as const)
      assert.throws(
        () => loadConfig({ [name]: value }),
        (err: Error) => err.message.startsWith(`invalid setting ${name}:`) && words.test(err.message),
        `${name}=${value}`,
      );
  });
});
