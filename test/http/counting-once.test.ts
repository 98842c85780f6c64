import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ReportCalendar } from '../../server/services/calendar.js';
import { ReportService } from '../../server/services/reports.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { Ledger } from '../../server/store/ledger/port.js';
import { savingsQuery } from '../../shared/reports.js';
import { checkBody, digestsFor, randomContent } from '../support/content.js';
import { Client, TestServer } from '../support/server.js';
import { dyingLedger, Killed } from '../support/dying-mongo.js';
import { storeTargets } from '../support/stores.js';
import { tusUpload } from '../support/tus.js';

/**
 * Every way an upload is counted, killed before it is counted or after it was counted but
 * before the answer went out, then retried as a client does: counted once, answered the same.
 * (The steps of counting on MongoDB, killed between each pair: test/store/mongo.test.ts.)
 */
type Kill = 'before counting' | 'after counting, before the answer' | { afterWrites: number };

for (const target of storeTargets) {
  describe(`an upload is counted once, whatever is retried (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let clerk: Client;
    let colleague: Client;
    let kill: Kill | undefined;
    before(async () => {
      server = await TestServer.start(target, {
        // The next count of an upload fails as a killed process would: before or after its writes.
        wrapStore: (store: ArchiveStore) => {
          const ledger: Ledger = Object.create(store.ledger) as Ledger;
          const dying =
            <A, R>(method: 'count' | 'countMany', count: (a: A) => Promise<R>) =>
            async (a: A): Promise<R> => {
              const now = kill;
              kill = undefined;
              if (now === 'before counting') throw new Error('killed before counting');
              if (typeof now === 'object') {
                // MongoDB: the process dies between two of the writes that count the upload.
                const dying = await dyingLedger(server.opened.mongo!, now.afterWrites);
                try {
                  await (method === 'count' ? dying.ledger.count(a as never) : dying.ledger.countMany(a as never));
                } finally {
                  await dying.close();
                }
                throw new Killed('unreachable: the dying ledger was not killed');
              }
              const counted = await count(a);
              if (now === 'after counting, before the answer') throw new Error('killed after counting');
              return counted;
            };
          ledger.count = dying('count', store.ledger.count.bind(store.ledger));
          ledger.countMany = dying('countMany', store.ledger.countMany.bind(store.ledger));
          return { ...store, ledger };
        },
      });
      clerk = await server.tokenClient(await server.addAccount('clerk', 'clerk', 'unit-a'));
      colleague = await server.tokenClient(await server.addAccount('colleague', 'clerk', 'unit-a'));
    });
    after(() => server.close());
    beforeEach(() => (kill = undefined));

    const store = () => server.opened.store;
    /** Uploads in the days' tally, the whole archive's. */
    const tally = async () =>
      (
        await new ReportService(store().reports, new ReportCalendar('Asia/Shanghai'), store().accounts).savings(
          savingsQuery.parse({}),
        )
      ).summary.uploads;
    let tallyBefore = 0;
    beforeEach(async () => (tallyBefore = await tally()));
    /** A file's UploadCounts (summed), its upload events in the audit log, and the uploads the tally gained in this test. */
    const counted = async (fileId: string) => {
      const entries = await store().ledger.entriesForFile(fileId);
      const events = (await store().audit.search({ limit: 1000, offset: 0 })).items.filter(
        (e) => e.fileId === fileId && (e.action === 'upload' || e.action === 'instant_upload'),
      );
      return {
        ledger: entries.reduce((n, e) => n + e.uploadCount, 0),
        audit: events.length,
        tally: (await tally()) - tallyBefore,
      };
    };
    const once = (n: number) => ({ ledger: n, audit: n, tally: n });

    const kills: Kill[] = ['before counting', 'after counting, before the answer'];
    // On MongoDB counting is eight writes (the file's lease taken, the file's first-upload record,
    // the event, the ledger, the name, the tally, the event done, the lease given back): also
    // killed between each two (the dying process's lease has run out: the retry takes it over).
    if (target.name === 'mongodb') for (let writes = 1; writes <= 7; writes++) kills.push({ afterWrites: writes });
    for (const when of kills) {
      const name = typeof when === 'object' ? `after ${when.afterWrites} of the 8 writes counting it` : when;
      it(`multipart upload killed ${name}: the retry with its Idempotency-Key is counted once`, async () => {
        const data = randomContent(5000);
        const headers = { 'idempotency-key': randomUUID() };
        kill = when;
        assert.equal((await clerk.upload('a.pdf', data, {}, 'application/pdf', headers)).status, 500);
        const res = await clerk.upload('a.pdf', data, {}, 'application/pdf', headers);
        const body = await res.json();
        assert.equal(res.status, 201);
        assert.deepEqual([body.status, body.uploadCount], ['stored', 1]);
        assert.deepEqual(await counted(body.fileId), once(1));
      });

      it(`batch killed ${name}: the retry with its Idempotency-Key is counted once per file`, async () => {
        const files = [
          { name: 'a.pdf', data: randomContent(100) },
          { name: 'b.pdf', data: randomContent(200) },
        ];
        const headers = { 'idempotency-key': randomUUID() };
        kill = when;
        assert.equal((await clerk.batch(files, undefined, headers)).status, 500);
        const { results } = await (await clerk.batch(files, undefined, headers)).json();
        assert.deepEqual(
          results.map((r: { status: string; uploadCount: number }) => [r.status, r.uploadCount]),
          [
            ['stored', 1],
            ['stored', 1],
          ],
        );
        for (const r of results) assert.deepEqual(await counted(r.fileId), { ...once(1), tally: 2 });
      });

      it(`instant upload killed ${name}: the proof retried with its claim is counted once`, async () => {
        const data = randomContent(3000);
        const fileId = (await (await colleague.upload('held.pdf', data)).json()).fileId;
        const check = await (await clerk.json('/api/uploads/check', 'POST', checkBody(data, 'mine.pdf'))).json();
        const proof = { claimId: check.claimId, digests: digestsFor(data, check.ranges) };
        kill = when;
        assert.equal((await clerk.json('/api/uploads/prove', 'POST', proof)).status, 500);
        const retry = await clerk.json('/api/uploads/prove', 'POST', proof);
        // Killed before the upload's event was written (the first two writes take the file's lease and
        // mark the file's first upload).
        const nothingCounted = when === 'before counting' || (typeof when === 'object' && when.afterWrites <= 2);
        if (nothingCounted) {
          // The claim was taken and nothing counted: refused, so the client checks again.
          assert.equal((await retry.json()).error, 'claim_rejected');
          const again = await clerk.instantUpload(data, 'mine.pdf');
          assert.deepEqual([again.res!.status, again.body.uploadCount], [200, 1]);
        } else {
          assert.equal(retry.status, 200);
          assert.deepEqual(await retry.json(), { status: 'duplicate', fileId, uploadCount: 1 });
        }
        assert.deepEqual(await counted(fileId), once(2));
      });

      it(`tus upload killed ${name}: the client's retry of the last PATCH is counted once`, async () => {
        const data = randomContent(4000);
        let failed = 0;
        kill = when;
        const result = await tusUpload(clerk, data, {
          chunkSize: 1500,
          retryDelays: [10, 10, 10],
          onShouldRetry: () => ++failed > 0,
        });
        assert.equal(failed, 1, 'the completing PATCH failed once and was retried');
        assert.deepEqual([result.status, result.uploadCount], ['stored', '1']);
        assert.deepEqual(await counted(result.fileId!), once(1));
      });
    }

    it('counts an empty file created twice by tus under one idempotencyKey once (the answer to the creation was lost)', async () => {
      const key = randomUUID();
      const first = await tusUpload(clerk, Buffer.alloc(0), { metadata: { idempotencyKey: key } });
      const second = await tusUpload(clerk, Buffer.alloc(0), { metadata: { idempotencyKey: key } });
      assert.notEqual(first.url, second.url);
      assert.deepEqual(
        [second.fileId, second.status, second.uploadCount],
        [first.fileId, first.status, first.uploadCount],
      );
      const mine = (await store().ledger.entriesForFile(first.fileId!)).find((e) => e.userName === 'clerk')!;
      const before = mine.uploadCount;
      await tusUpload(clerk, Buffer.alloc(0), { metadata: { idempotencyKey: randomUUID() } });
      assert.equal(
        (await store().ledger.entriesForFile(first.fileId!)).find((e) => e.userName === 'clerk')!.uploadCount,
        before + 1,
        'a new key is a new upload',
      );
    });

    it('counts one multipart upload sent ten times at once with one key once, and answers each the same', async () => {
      const data = randomContent(2000);
      const headers = { 'idempotency-key': randomUUID() };
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          clerk.upload('a.pdf', data, {}, 'application/pdf', headers).then((r) => r.json()),
        ),
      );
      assert.deepEqual(new Set(answers.map((a) => `${a.fileId} ${a.uploadCount}`)).size, 1);
      assert.deepEqual(await counted(answers[0].fileId), once(1));
    });

    it("refuses a key sent again with another file, and another clerk's key is their own", async () => {
      const key = randomUUID();
      const first = await (
        await clerk.upload('a.pdf', randomContent(100), {}, 'application/pdf', { 'idempotency-key': key })
      ).json();
      const reused = await clerk.upload('b.pdf', randomContent(100), {}, 'application/pdf', { 'idempotency-key': key });
      assert.equal(reused.status, 422);
      assert.equal((await reused.json()).error, 'idempotency_key_reused');
      assert.deepEqual(await counted(first.fileId), once(1));
      const theirs = await colleague.upload('c.pdf', randomContent(100), {}, 'application/pdf', {
        'idempotency-key': key,
      });
      assert.equal(theirs.status, 201);
    });

    it('refuses a malformed Idempotency-Key before reading the file', async () => {
      const files = await store().catalog.count();
      for (const key of ['', 'x'.repeat(129), 'has space', 'caf\u00e9']) {
        const res = await clerk.fetch('/api/files', {
          method: 'POST',
          headers: { 'idempotency-key': key, 'content-type': 'multipart/form-data; boundary=x' },
          body: '--x--',
        });
        assert.equal(res.status, 400, JSON.stringify(key));
        assert.match((await res.json()).message, /Idempotency-Key must be 1 to 128 visible ASCII characters/);
      }
      assert.equal(await store().catalog.count(), files);
    });

    it("does not answer a proof retried with another clerk's claim", async () => {
      const data = randomContent(3000);
      await colleague.upload('held.pdf', data);
      const check = await (await clerk.json('/api/uploads/check', 'POST', checkBody(data))).json();
      const proof = { claimId: check.claimId, digests: digestsFor(data, check.ranges) };
      assert.equal((await clerk.json('/api/uploads/prove', 'POST', proof)).status, 200);
      const theirs = await colleague.json('/api/uploads/prove', 'POST', proof);
      assert.deepEqual([theirs.status, (await theirs.json()).error], [403, 'claim_rejected']);
    });
  });
}
