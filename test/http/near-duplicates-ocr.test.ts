import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cannotPrintPages, scannedPage } from '../support/scans.js';
import { Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { NOTICE, OTHER_NOTICE } from '../support/texts.js';

for (const target of storeTargets) {
  describe(
    `GET /api/reports/near-duplicates: scanned pages (${target.name} store)`,
    { skip: target.skip ?? cannotPrintPages() },
    () => {
      let server: TestServer;
      let admin: Client;
      before(async () => {
        server = await TestServer.start(target);
        const town = await server.tokenClient(await server.addAccount('clerk-a', 'clerk', 'unit-a'));
        const other = await server.tokenClient(await server.addAccount('clerk-b', 'clerk', 'unit-b'));
        admin = await server.login((await server.addAccount('admin', 'admin', 'archive')).username);
        // One town keeps the notice as a text file; another scanned the printed notice.
        assert.equal((await town.upload('通知.txt', Buffer.from(NOTICE), {}, 'text/plain')).status, 201);
        assert.equal((await other.upload('通知扫描件.jpg', await scannedPage(NOTICE), {}, 'image/jpeg')).status, 201);
        assert.equal(
          (await other.upload('培训通知扫描件.png', await scannedPage(OTHER_NOTICE, 'png'), {}, 'image/png')).status,
          201,
        );
        const near = server.archive.services.nearDuplicates;
        let ran = 0;
        for (let n; (n = await near.runDue()) > 0;) ran += n;
        assert.equal(ran, 3);
      });
      after(() => server.close());

      it('pairs a scanned page with the text file it was printed from, and not with a scan of another notice', async () => {
        const res = await admin.fetch('/api/reports/near-duplicates');
        assert.equal(res.status, 200);
        const body = await res.json();
        assert.deepEqual(
          body.items.map((r: { a: { fileName: string }; b: { fileName: string } }) =>
            [r.a.fileName, r.b.fileName].sort(),
          ),
          [['通知.txt', '通知扫描件.jpg']],
        );
        assert.ok(body.items[0].jaccard > 0.5, `similar texts (Jaccard ${body.items[0].jaccard})`);
        // Both scans have text to compare now: none is counted among the files without one.
        assert.deepEqual(
          { ...body.status, failures: body.status.failures.length },
          { fingerprinted: 3, skipped: 0, pairs: 1, queued: 0, running: 0, failed: 0, failures: 0 },
        );
      });
    },
  );
}
