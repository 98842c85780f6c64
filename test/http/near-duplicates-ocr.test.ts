import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { ProcessTextReader } from '../../server/services/near-duplicates/text-reader.js';
import { cannotPrintPages, scannedPage } from '../support/scans.js';
import { Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { NOTICE, OTHER_NOTICE } from '../support/texts.js';

/** A few lines of each notice: printed on slips, read in a second or two rather than a page's ten. */
const SHORT_NOTICE = NOTICE.split('\n').slice(0, 2).join('\n');
const SHORT_OTHER_NOTICE = OTHER_NOTICE.split('\n').slice(0, 2).join('\n');

/** Whether a process has onnxruntime's native library mapped (loaded by any of its threads). */
const loadsOnnxruntime = (pid: number | 'self') =>
  fs.readFileSync(`/proc/${pid}/maps`, 'utf8').includes('libonnxruntime');

for (const target of storeTargets) {
  describe(
    `GET /api/reports/near-duplicates: scanned pages (${target.name} store)`,
    { skip: target.skip ?? cannotPrintPages() },
    () => {
      let server: TestServer;
      let admin: Client;
      let readerPid: number | undefined;
      before(async () => {
        server = await TestServer.start(target);
        const town = await server.tokenClient(await server.addAccount('clerk-a', 'clerk', 'unit-a'));
        const other = await server.tokenClient(await server.addAccount('clerk-b', 'clerk', 'unit-b'));
        admin = await server.login((await server.addAccount('admin', 'admin', 'archive')).username);
        // One town keeps the notice as a text file; another scanned the printed notice.
        assert.equal((await town.upload('通知.txt', Buffer.from(SHORT_NOTICE), {}, 'text/plain')).status, 201);
        const scan = await scannedPage(SHORT_NOTICE, 'jpeg', 'slip');
        assert.equal((await other.upload('通知扫描件.jpg', scan, {}, 'image/jpeg')).status, 201);
        const otherScan = await scannedPage(SHORT_OTHER_NOTICE, 'png', 'slip');
        assert.equal((await other.upload('培训通知扫描件.png', otherScan, {}, 'image/png')).status, 201);
        const near = server.archive.services.nearDuplicates;
        let ran = 0;
        for (let n; (n = await near.runDue()) > 0;) ran += n;
        assert.equal(ran, 3);
        readerPid = (server.archive.textReader as ProcessTextReader).pid;
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

      it('recognised the scans in a process of its own: the web server never loaded onnxruntime', () => {
        // This process is the web server (and its threads): OCR here would have mapped the library.
        assert.equal(loadsOnnxruntime('self'), false, 'the web server process has no onnxruntime');
        assert.ok(readerPid, 'a reading process ran');
        assert.notEqual(readerPid, process.pid);
        assert.ok(loadsOnnxruntime(readerPid), 'the reading process has onnxruntime loaded');
      });
    },
  );
}
