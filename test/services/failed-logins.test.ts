import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { AuditService } from '../../server/services/audit.js';
import {
  ANY_USERNAME,
  FAILED_LOGINS_RECORDED,
  FAILED_LOGINS_RECORDED_PER_ADDRESS,
  FailedLoginLog,
  isSummaryCount,
} from '../../server/services/failed-logins.js';
import type { AuditEventView } from '../../shared/schemas.js';
import { storeTargets, type OpenedStore } from '../support/stores.js';

for (const target of storeTargets) {
  describe(`wrong passwords in the audit log, summed up past a few (${target.name})`, { skip: target.skip }, () => {
    let opened: OpenedStore;
    let now: number;
    let audit: AuditService;
    let log: FailedLoginLog;
    beforeEach(async () => {
      opened = await target.open();
      now = Date.parse('2026-06-01T08:00:00Z');
      audit = new AuditService(opened.store.audit, opened.store.accounts, () => new Date(now));
      log = new FailedLoginLog(audit, opened.store.rateCounts, () => new Date(now));
    });
    afterEach(() => opened.dispose());

    const fail = (name: string, address: string) =>
      log.failed({ attemptedUserName: name }, address, { code: 'wrong_password' });
    /** The events, oldest first. */
    const events = async (): Promise<AuditEventView[]> =>
      (await audit.search({ action: 'login_failed', limit: 1000, offset: 0 })).items.reverse();

    it('keeps 100 wrong passwords from one address as 5 events one by one and summaries at 10, 20, 50 and 100', async () => {
      for (let i = 0; i < 100; i++) await fail(`name${i}`, '203.0.113.9');
      const kept = await events();
      assert.equal(kept.length, FAILED_LOGINS_RECORDED_PER_ADDRESS + 4);
      assert.deepEqual(
        kept.slice(0, 5).map((e) => [e.userName, e.address, e.detail]),
        [0, 1, 2, 3, 4].map((i) => [`name${i}`, '203.0.113.9', 'wrong username or password']),
        'the first ones name the username tried',
      );
      assert.deepEqual(
        kept.slice(5).map((e) => [e.userName, e.address, e.note]),
        [10, 20, 50, 100].map((count) => [
          ANY_USERNAME,
          '203.0.113.9',
          { code: 'wrong_passwords', count, from: 'address', recorded: 5 },
        ]),
      );
      assert.equal(
        kept.at(-1)!.detail,
        '100 wrong passwords from this address this hour; the first 5 are recorded one by one',
      );
    });

    it('bounds the events of guesses from rotating addresses, and says how many there were', async () => {
      for (let i = 0; i < 1000; i++) await fail(`guess${i}`, `198.51.${i >> 8}.${i & 255}`);
      const kept = await events();
      const summaries = kept.filter((e) => e.note?.code === 'wrong_passwords');
      assert.equal(kept.length - summaries.length, FAILED_LOGINS_RECORDED, 'one by one up to the hourly 100');
      assert.deepEqual(
        summaries.map((e) => [e.userName, e.address, e.note]),
        [200, 500, 1000].map((count) => [
          ANY_USERNAME,
          null,
          { code: 'wrong_passwords', count, from: 'all', recorded: 100 },
        ]),
      );
      assert.match(summaries.at(-1)!.detail, /^1000 wrong passwords from all addresses together this hour/);
    });

    it('starts again each hour', async () => {
      for (let i = 0; i < 6; i++) await fail('typist', '192.0.2.1');
      now += 3600_000;
      await fail('typist', '192.0.2.1');
      const kept = await events();
      assert.equal(kept.length, 6, 'five, none at six (no summary count), one the next hour');
      assert.equal(kept.at(-1)!.userName, 'typist');
    });
  });
}

describe('the counts a summary of wrong passwords is written at', () => {
  it('is the 1-2-5 series from 10', () => {
    const counts = Array.from({ length: 5000 }, (_, i) => i + 1).filter(isSummaryCount);
    assert.deepEqual(counts, [10, 20, 50, 100, 200, 500, 1000, 2000, 5000]);
  });
});
