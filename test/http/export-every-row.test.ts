import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EXPORT_BATCH_ROWS } from '../../server/http/export.js';
import { commitBytes, randomContent, uploadAction, uploadRecord } from '../support/content.js';
import { TestServer, type Client } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

const DAY_MS = 24 * 60 * 60 * 1000;

for (const target of storeTargets) {
  describe(`a report export longer than one batch (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let admin: Client;
    // Space saved by day: one row a day with an upload, more days than one batch of an export holds.
    const days = EXPORT_BATCH_ROWS + 7;
    const first = Date.UTC(2020, 0, 1, 4);

    before(async () => {
      server = await TestServer.start(target);
      const clerk = await server.addAccount('clerk-qing', 'clerk');
      await server.addAccount('admin', 'admin', 'archive');
      admin = await server.login('admin');
      const committed = await commitBytes(server.opened.store, randomContent(100), '县志.pdf');
      // Noon in Beijing: each upload on its own day in the report time zone too.
      const uploads = Array.from({ length: days }, (_, d) =>
        uploadAction(uploadRecord(clerk, committed.entry.fileId, '县志.pdf', new Date(first + d * DAY_MS))),
      );
      for (let from = 0; from < days; from += 250)
        await server.opened.store.ledger.countMany(uploads.slice(from, from + 250));
    });
    after(() => server.close());

    it('answers every row of the selection, each day once and in order, not one page or one batch', async () => {
      const res = await admin.fetch('/api/reports/savings?format=csv&group=day&sort=period&order=asc&limit=10');
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('x-total-count'), String(days));
      // (text() takes off the byte-order mark.)
      const lines = (await res.text()).split('\r\n').filter(Boolean);
      assert.equal(lines[0], 'day,uploads,saved uploads,saved bytes');
      const periods = lines.slice(1).map((l) => l.split(',')[0]);
      assert.equal(periods.length, days, 'the header and every row');
      assert.deepEqual(
        periods,
        Array.from({ length: days }, (_, d) => new Date(first + d * DAY_MS).toISOString().slice(0, 10)),
        'each day once, oldest first',
      );
    });
  });
}
