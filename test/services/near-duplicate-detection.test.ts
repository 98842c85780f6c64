import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ReportCalendar } from '../../server/services/calendar.js';
import { NearDuplicateService } from '../../server/services/near-duplicates/detection.js';
import { Fingerprinter } from '../../server/services/near-duplicates/fingerprint.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import { keyOf, stageBytes } from '../support/content.js';
import { damageContent, storeTargets, type OpenedStore } from '../support/stores.js';
import {
  ENGLISH_PAGE,
  NOTICE,
  NOTICE_FROM_THE_WEB,
  OTHER_ENGLISH_PAGE,
  OTHER_NOTICE,
  POEM,
  POEM_TRADITIONAL,
  recognisedWithSpacesLost,
} from '../support/texts.js';

for (const target of storeTargets) {
  describe(`near-duplicate detection in the background (${target.name} store)`, { skip: target.skip }, () => {
    let opened: OpenedStore;
    let store: ArchiveStore;
    let now: number;
    let service: NearDuplicateService;
    beforeEach(async () => {
      opened = await target.open();
      store = opened.store;
      now = Date.UTC(2026, 10, 20, 9);
      service = new NearDuplicateService({
        store,
        fingerprinter: Fingerprinter.onFirstUse(),
        calendar: new ReportCalendar('Asia/Shanghai'),
        holder: 'test',
        clock: () => new Date(now),
      });
    });
    afterEach(() => opened.dispose());

    /** Stores a file as an upload does, and queues it as the ingest service does for new content. */
    const upload = async (name: string, data: string | Uint8Array, contentType = 'text/plain') => {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      const staged = await stageBytes(store, bytes);
      const { entry } = await store.content.commit(staged.stagingId, {
        key: keyOf(bytes),
        fileName: name,
        contentType,
        uploadDate: new Date(now),
      });
      await service.enqueue([entry.fileId]);
      return entry.fileId;
    };
    const runAll = async () => {
      let total = 0;
      for (let ran; (ran = await service.runDue()) > 0;) total += ran;
      return total;
    };
    const pairsFound = async () => {
      const page = await service.report({ sort: 'foundAt', limit: 100, offset: 0 });
      return { page, names: page.items.map((r) => [r.a.fileName, r.b.fileName].sort().join(' ~ ')).sort() };
    };

    it('pairs two readings of one English page whose words were run together differently, found by the keys stored with the first', async () => {
      await upload('minutes-scan1.txt', recognisedWithSpacesLost(ENGLISH_PAGE, 4, 1));
      await upload('notes.txt', OTHER_ENGLISH_PAGE);
      assert.equal(await runAll(), 2);
      await upload('minutes-scan2.txt', recognisedWithSpacesLost(ENGLISH_PAGE, 3, 2));
      assert.equal(await runAll(), 1);
      assert.deepEqual((await pairsFound()).names, ['minutes-scan1.txt ~ minutes-scan2.txt']);
    });

    it('pairs a document with its edited copies, long and short, and nothing with a different document on the same subject', async () => {
      await upload('通知.txt', NOTICE);
      await upload(
        '通知（网页版）.html',
        `<html><head><style>p{}</style></head><body>${NOTICE_FROM_THE_WEB.split('\n')
          .map((l) => `<p>${l}</p>`)
          .join('')}</body></html>`,
        'text/html',
      );
      await upload('培训通知.txt', OTHER_NOTICE);
      await upload('静夜思.txt', POEM);
      await upload('靜夜思.md', POEM_TRADITIONAL, 'text/markdown');
      await upload('扫描件.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]), 'image/png');
      assert.equal(await runAll(), 6);
      const { page, names } = await pairsFound();
      assert.deepEqual(names, ['通知.txt ~ 通知（网页版）.html', '静夜思.txt ~ 靜夜思.md']);
      const notice = page.items.find((r) => r.a.fileName.startsWith('通知'))!;
      assert.ok(notice.method === 'simhash' || notice.method === 'jaccard');
      assert.ok(notice.hamming !== null && notice.jaccard > 0.5);
      const webSide = notice.a.fileName.endsWith('.html') ? notice.a : notice.b;
      assert.match(webSide.snippet, /首页|注：本通知同时抄送/, 'the excerpt shows what the copy has of its own');
      const poem = page.items.find((r) => r.method === 'containment')!;
      assert.equal(poem.hamming, null, 'short texts are compared by their shingles only');
      assert.deepEqual(
        { ...page.status, failures: page.status.failures.length },
        { fingerprinted: 5, skipped: 1, pairs: 2, queued: 0, running: 0, failed: 0, failures: 0 },
      );
    });

    it('lets the server answer between rounds, also when a round is done at once and no file is arriving', async () => {
      // Files gone from the catalog since they were queued: each job ends without reading anything
      // (on the embedded store, a round of them is promises alone), like files whose bytes are missing.
      await store.fingerprintQueue.enqueue(
        Array.from({ length: 24 }, (_, i) => i.toString(16).padStart(24, 'e')),
        new Date(now),
      );
      // Virtual time far past the last file queued: no pause between rounds.
      let t = 0;
      const unpaced = new NearDuplicateService({
        store,
        fingerprinter: Fingerprinter.onFirstUse(),
        calendar: new ReportCalendar('Asia/Shanghai'),
        holder: 'unpaced',
        clock: () => new Date(now),
        pacing: { elapsed: () => (t += 60_000), sleep: () => Promise.reject(new Error('no pause expected')) },
      });
      unpaced.start(60_000);
      // A request arriving as the work starts is answered before the queue is worked through.
      await new Promise((resolve) => setImmediate(resolve));
      const { queued } = await store.fingerprintQueue.counts(new Date(now));
      await unpaced.stop();
      assert.ok(queued > 0, 'the event loop turned only once all 24 jobs were done');
    });

    it(
      'gives way to uploads: while files keep arriving a round is followed by a pause (rounds take a fifth of the time), and once they stop the queue is worked through',
      { timeout: 120_000 },
      async () => {
        // Virtual time: each reading of the clock is 10 ms after the last (a round takes 10 ms), and a pause passes its length.
        let t = 0;
        const pauses: number[] = [];
        const paced = new NearDuplicateService({
          store,
          fingerprinter: Fingerprinter.onFirstUse(),
          calendar: new ReportCalendar('Asia/Shanghai'),
          holder: 'paced',
          clock: () => new Date(now),
          pacing: {
            busyShare: 0.2,
            quietMs: 2000,
            elapsed: () => (t += 10),
            sleep: async (ms) => void pauses.push(ms),
          },
        });
        const workThrough = async (pausesExpected: number) => {
          paced.start(60_000);
          const busy = async () => {
            const { queued, running } = await store.fingerprintQueue.counts(new Date(now));
            return queued + running > 0 || pauses.length < pausesExpected;
          };
          while (await busy()) await new Promise((resolve) => setImmediate(resolve));
          await paced.stop();
        };
        const queueFiles = async (count: number) => {
          const ids: string[] = [];
          for (let i = 0; i < count; i++) ids.push(await upload(`档案-${i}.txt`, `${POEM}\n${i}`));
          await paced.enqueue(ids);
        };

        // Files arriving: 3 rounds of 8, each paused for four times its length.
        await queueFiles(24);
        await workThrough(3);
        assert.deepEqual(pauses, [40, 40, 40]);
        // Queued 3 s before the work starts: no file arriving, no pause.
        pauses.length = 0;
        await queueFiles(24);
        t += 3000;
        await workThrough(0);
        assert.deepEqual(pauses, []);
      },
    );

    it('retries a file it cannot read, later each time, and then shows it as failed with the reason', async () => {
      const fileId = await upload('损坏.txt', NOTICE);
      await damageContent(opened, fileId, { kind: 'lose-file' });
      assert.equal(await service.runDue(), 1);
      assert.equal(await service.runDue(), 0, 'not retried at once');
      for (const minutes of [1, 2, 4, 8]) {
        now += minutes * 60_000;
        assert.equal(await service.runDue(), 1, `retried after ${minutes} min`);
      }
      now += 60 * 60_000;
      assert.equal(await service.runDue(), 0, 'given up after five attempts');
      const status = await service.status();
      assert.equal(status.failed, 1);
      assert.deepEqual([status.failures[0]!.fileName, status.failures[0]!.attempts], ['损坏.txt', 5]);
      assert.match(status.failures[0]!.error, /missing/);
    });

    it('rebuilds from nothing: every stored file fingerprinted again, the same pairs found', async () => {
      await upload('a.txt', NOTICE);
      await upload('b.txt', NOTICE_FROM_THE_WEB);
      await runAll();
      const before = (await pairsFound()).names;
      assert.equal(before.length, 1);
      assert.equal(await service.rebuild(), 2);
      assert.equal((await service.status()).pairs, 0, 'the old pairs are forgotten');
      assert.equal(await runAll(), 2);
      assert.deepEqual((await pairsFound()).names, before);
    });

    it('fingerprints a file uploaded during a rebuild in the next round, the rebuilt files a round at a time around it', async () => {
      const stored: string[] = [];
      for (let i = 0; i < 20; i++) stored.push(await upload(`档案-${i}.txt`, `${POEM}\n${i}`));
      await runAll();
      assert.equal(await service.rebuild(), 20);
      assert.equal((await service.status()).queued, 20, 'the files to fingerprint again are shown as queued');
      assert.equal((await store.fingerprintQueue.counts(new Date(now))).queued, 0, 'but none is in the queue yet');

      assert.equal(await service.runDue(), 8, 'a round of the rebuilt files');
      now += 1000;
      const uploaded = await upload('上传于重建之中.txt', NOTICE);
      assert.equal(await service.runDue(), 8);
      assert.ok(await store.nearDuplicates.get(uploaded), 'the new file was in the round after its upload');
      assert.equal(
        (await store.fingerprintQueue.counts(new Date(now))).queued,
        0,
        'no rebuilt file waits in the queue',
      );
      assert.equal((await service.status()).queued, 5);

      assert.equal(await runAll(), 5);
      assert.equal((await service.status()).queued, 0);
      for (const fileId of stored)
        assert.ok(await store.nearDuplicates.get(fileId), 'every stored file fingerprinted again');
    });

    it('redoes every fingerprint and pair once when the settings change, and nothing while they stay', async () => {
      await upload('a.txt', NOTICE);
      await upload('b.txt', NOTICE_FROM_THE_WEB);
      assert.equal(await service.adoptSettings(), 0, 'an index without a record was made with the defaults');
      await runAll();
      assert.equal((await service.status()).pairs, 1);
      assert.equal(await service.adoptSettings(), 0, 'the same settings: nothing to redo');

      // Another instance (or a restart) with stricter settings than the pair passes.
      const strict = new NearDuplicateService({
        store,
        fingerprinter: Fingerprinter.onFirstUse({ minJaccard: 0.99, maxHamming: 0, minContainment: 0.99 }),
        calendar: new ReportCalendar('Asia/Shanghai'),
        holder: 'strict',
        clock: () => new Date(now),
      });
      assert.equal(await strict.adoptSettings(), 2, 'both files queued again');
      const { queued, running, failed } = await strict.status();
      assert.deepEqual({ queued, running, failed }, { queued: 2, running: 0, failed: 0 });
      assert.equal((await strict.status()).pairs, 0, 'the pairs judged by the old settings are gone');
      assert.equal(await strict.adoptSettings(), 0, 'adopted once');
      while ((await strict.runDue()) > 0);
      assert.equal((await strict.status()).pairs, 0, 'not near-duplicates under the strict settings');

      // Back to the defaults: the first instance redoes it all again, and finds the pair.
      assert.equal(await service.adoptSettings(), 2);
      await runAll();
      assert.equal((await service.status()).pairs, 1);
    });
  });
}
