import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NearDuplicatePair, PageFingerprint } from './port.js';
import {
  commitBytes,
  nearFingerprint,
  randomContent,
  recordUpload,
  testAccount,
  unit,
} from '../../../test/support/content.js';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';

/** What every store adapter's near-duplicate index and fingerprint queue must do (run against each adapter by test/store/). */
export function nearDuplicateConformance(target: StoreTarget): void {
  conformanceSuite('near-duplicate index and fingerprint queue', target, (store) => {
    describe('near-duplicate index', () => {
      const fingerprint = nearFingerprint;
      const pair = (a: string, b: string, overrides: Partial<NearDuplicatePair> = {}): NearDuplicatePair => {
        const [fileA, fileB] = a < b ? [a, b] : [b, a];
        return {
          fileA,
          fileB,
          method: 'simhash',
          hamming: 2,
          jaccard: 0.7,
          containment: 0.8,
          snippetA: 'a 句',
          snippetB: 'b 句',
          foundAt: new Date(Date.UTC(2026, 10, 2)),
          ...overrides,
        };
      };
      // Lookup keys are integers below 2^53: some near the top, which a store must keep exact.
      const [s01, s12, s27, s09, j0x, c3y, s21] = [
        1,
        2 ** 16 + 2,
        2 * 2 ** 16 + 7,
        9,
        2 ** 47 + 5 * 2 ** 40 + 0xff_ffff_ffff,
        2 ** 48 + 99 * 2 ** 40 + 12345,
        2 ** 53 - 1,
      ];
      const files = async (n: number) => {
        const ids: string[] = [];
        for (let i = 0; i < n; i++)
          ids.push((await commitBytes(store, randomContent(50), `文件${i}.txt`)).entry.fileId);
        return ids;
      };

      it('keeps a fingerprint with its keys, and replaces both when the file is fingerprinted again', async () => {
        const [a] = await files(1);
        await store.nearDuplicates.put([fingerprint(a!, [j0x, s01])]);
        assert.deepEqual(await store.nearDuplicates.get(a!), fingerprint(a!, [s01, j0x]));
        await store.nearDuplicates.put([fingerprint(a!, [s21], { simhash: 'ffffffffffffffff' })]);
        assert.deepEqual(await store.nearDuplicates.get(a!), fingerprint(a!, [s21], { simhash: 'ffffffffffffffff' }));
        assert.deepEqual(await store.nearDuplicates.candidates('f'.repeat(24), [s01], 10), [], 'the old keys are gone');
        assert.deepEqual(
          (await store.nearDuplicates.candidates('f'.repeat(24), [s21], 10)).map((f) => f.fileId),
          [a],
          'found by its new key',
        );
        assert.equal(await store.nearDuplicates.get('e'.repeat(24)), undefined);
      });

      it("keeps a scan's pages with their image fingerprints and their ink's place, and gives them with the candidates", async () => {
        const [scan, text] = await files(2);
        const pages: PageFingerprint[] = [
          { hash: '3a5f0c91e7b24d68', units: 3, box: [229, 152, 548, 378] },
          { hash: null, units: 0, box: null },
          { hash: 'ffffffffffffffff', units: 412, box: [118, 95, 882, 905] },
        ];
        await store.nearDuplicates.put([
          fingerprint(scan!, [s01], { format: null, skipped: 'no text recognised', pages }),
          fingerprint(text!, [s01, s12]),
        ]);
        assert.deepEqual((await store.nearDuplicates.get(scan!))?.pages, pages);
        assert.deepEqual((await store.nearDuplicates.get(text!))?.pages, []);
        assert.deepEqual(
          (await store.nearDuplicates.candidates(text!, [s01], 10)).map((f) => [f.fileId, f.pages]),
          [[scan, pages]],
        );
        await store.nearDuplicates.put([fingerprint(scan!, [s01], { pages: pages.slice(0, 1) })]);
        assert.deepEqual((await store.nearDuplicates.get(scan!))?.pages, pages.slice(0, 1), 'replaced with the file');
      });

      it('finds the fingerprints that share any key, never the file itself, at most the limit', async () => {
        const [a, b, c, d] = await files(4);
        await store.nearDuplicates.put([fingerprint(a!, [s01, s12, j0x]), fingerprint(b!, [s09, s12])]);
        await store.nearDuplicates.put([
          fingerprint(c!, [j0x, c3y], { short: true, simhash: null, units: 40 }),
          fingerprint(d!, [s27]),
        ]);
        const found = await store.nearDuplicates.candidates(a!, [s01, s12, j0x], 10);
        assert.deepEqual(found.map((f) => f.fileId).sort(), [b!, c!].sort());
        assert.deepEqual(found.find((f) => f.fileId === c)!.simhash, null);
        assert.equal((await store.nearDuplicates.candidates(a!, [s01, s12, j0x], 1)).length, 1);
        assert.deepEqual(await store.nearDuplicates.candidates(a!, [], 10), []);
      });

      it('counts fingerprinted and skipped files and pairs, replaces a pair found again, and forgets everything on clear', async () => {
        const [a, b, c] = await files(3);
        await store.nearDuplicates.put([fingerprint(a!, [s01]), fingerprint(b!, [s01])]);
        await store.nearDuplicates.put([
          fingerprint(c!, [], { format: null, skipped: 'not a text document (image/png)', units: 0, simhash: null }),
        ]);
        await store.nearDuplicates.put([]);
        await store.nearDuplicates.addPairs([pair(a!, b!)]);
        await store.nearDuplicates.addPairs([pair(a!, b!, { jaccard: 0.9, method: 'jaccard' })]);
        assert.deepEqual(await store.nearDuplicates.counts(), { fingerprinted: 2, skipped: 1, pairs: 1 });
        await store.nearDuplicates.clear();
        assert.deepEqual(await store.nearDuplicates.counts(), { fingerprinted: 0, skipped: 0, pairs: 0 });
        assert.deepEqual(await store.nearDuplicates.candidates(c!, [s01], 10), []);
      });

      it('forgets one file: its fingerprint, keys, pairs and their reviews; the others stay', async () => {
        const [a, b, c] = await files(3);
        await store.nearDuplicates.put([fingerprint(a!, [s01, j0x]), fingerprint(b!, [s01]), fingerprint(c!, [s01])]);
        await store.nearDuplicates.addPairs([pair(a!, b!), pair(b!, c!), pair(a!, c!)]);
        const [lo, hi] = [a!, b!].sort() as [string, string];
        await store.nearDuplicates.review({
          fileA: lo,
          fileB: hi,
          at: new Date(),
          userId: 'u',
          userName: 'zhang',
          note: '',
        });
        await store.nearDuplicates.forget(a!);
        await store.nearDuplicates.forget(a!);
        assert.equal(await store.nearDuplicates.get(a!), undefined);
        assert.deepEqual(
          (await store.nearDuplicates.candidates(c!, [s01, j0x], 10)).map((f) => f.fileId),
          [b],
          'found by no key of its own',
        );
        assert.deepEqual(await store.nearDuplicates.counts(), { fingerprinted: 2, skipped: 0, pairs: 1 });
        assert.equal(await store.nearDuplicates.pair(lo, hi), undefined);
        assert.equal(await store.nearDuplicates.getReview(lo, hi), undefined);
        const [bc0, bc1] = [b!, c!].sort() as [string, string];
        assert.ok(await store.nearDuplicates.pair(bc0, bc1));
      });

      it('keeps two scans’ pages with their pair (page counts, matching pages), replaced as the pair is, and reports them', async () => {
        const [a, b] = (await files(2)).sort();
        const pages = {
          a: 3,
          b: 4,
          matches: [
            { a: 1, b: 3, method: 'containment' as const, similarity: 0.97 },
            { a: 2, b: 2, method: 'image' as const, similarity: 0.906 },
          ],
        };
        await store.nearDuplicates.addPairs([pair(a!, b!, { pages })]);
        assert.deepEqual((await store.nearDuplicates.pair(a!, b!))?.pages, pages);
        const base = { sort: 'foundAt', order: 'desc', limit: 10, offset: 0 } as const;
        assert.deepEqual(
          (await store.reports.nearDuplicates(base)).items.map((r) => r.pages),
          [pages],
        );
        // Found again as a pair of whole documents: no pages.
        await store.nearDuplicates.addPairs([pair(a!, b!)]);
        assert.equal((await store.nearDuplicates.pair(a!, b!))?.pages, undefined);
        assert.deepEqual(
          (await store.reports.nearDuplicates(base)).items.map((r) => r.pages),
          [null],
        );
      });

      it('keeps an administrator’s review of a pair apart from the pairs: it outlives a clear, and can be taken back', async () => {
        const [a, b] = (await files(2)).sort();
        const found = pair(a!, b!);
        await store.nearDuplicates.addPairs([found]);
        assert.deepEqual(await store.nearDuplicates.pair(a!, b!), found);
        assert.equal(await store.nearDuplicates.pair(b!, a!), undefined, 'a pair is named in its order');
        const review = {
          fileA: a!,
          fileB: b!,
          at: new Date(Date.UTC(2026, 10, 3)),
          userId: 'u1',
          userName: 'chief',
          note: '已核对',
        };
        await store.nearDuplicates.review(review);
        await store.nearDuplicates.review({ ...review, note: '已核对，保留两份' });
        assert.deepEqual(await store.nearDuplicates.getReview(a!, b!), { ...review, note: '已核对，保留两份' });
        await store.nearDuplicates.clear();
        assert.equal(await store.nearDuplicates.pair(a!, b!), undefined);
        assert.equal((await store.nearDuplicates.getReview(a!, b!))?.note, '已核对，保留两份');
        assert.equal(await store.nearDuplicates.reopen(a!, b!), true);
        assert.equal(await store.nearDuplicates.reopen(a!, b!), false);
        assert.equal(await store.nearDuplicates.getReview(a!, b!), undefined);
      });

      it('reports pairs with both files named, their uploading units and the differences, filtered, sorted and paged', async () => {
        const [a, b, c, d] = await files(4);
        const east = testAccount({ unit: unit('east', '青县') });
        const west = testAccount({ unit: unit('west', '沧县') });
        await recordUpload(store, east, a!, 'a.txt');
        await recordUpload(store, west, a!, 'a.txt');
        await recordUpload(store, east, b!, 'b.txt');
        await recordUpload(store, west, c!, 'c.txt');
        await recordUpload(store, west, d!, 'd.txt');
        await store.nearDuplicates.addPairs([
          pair(a!, b!, { jaccard: 0.95, method: 'jaccard', foundAt: new Date(Date.UTC(2026, 10, 3)) }),
          pair(c!, d!, {
            jaccard: 0.6,
            hamming: null,
            method: 'containment',
            foundAt: new Date(Date.UTC(2026, 10, 5)),
          }),
        ]);
        const base = { sort: 'foundAt', order: 'desc' as const, limit: 10, offset: 0 };
        const all = await store.reports.nearDuplicates(base);
        assert.equal(all.total, 2);
        const [first, second] = all.items;
        assert.equal(first!.method, 'containment', 'newest first');
        assert.equal(second!.jaccard, 0.95);
        const ab = second!;
        const [fa, fb] = ab.a.fileId === a ? [ab.a, ab.b] : [ab.b, ab.a];
        assert.equal(fa.fileName, '文件0.txt');
        assert.deepEqual(
          fa.units.map((u) => u.id),
          ['east', 'west'],
        );
        assert.deepEqual(
          fb.units.map((u) => u.id),
          ['east'],
        );
        assert.equal(fa.fileLength, 50);
        assert.match(fa.uploadDate, /^\d{4}-\d\d-\d\dT/);
        assert.deepEqual([ab.a.snippet, ab.b.snippet], ['a 句', 'b 句']);
        assert.equal(ab.foundAt, '2026-11-03T00:00:00.000Z');
        const ids = (page: { items: Array<{ a: { fileId: string }; b: { fileId: string } }> }) =>
          page.items.map((r) => [r.a.fileId, r.b.fileId].sort().join());
        assert.deepEqual(ids(await store.reports.nearDuplicates({ ...base, method: 'jaccard' })), [
          [a!, b!].sort().join(),
        ]);
        assert.deepEqual(
          ids(await store.reports.nearDuplicates({ ...base, unit: { city: '沧州市', county: '沧县' } })).length,
          2,
          'west uploaded a file of each pair',
        );
        assert.deepEqual(
          ids(await store.reports.nearDuplicates({ ...base, unit: { city: '沧州市', county: '青县' } })),
          [[a!, b!].sort().join()],
        );
        assert.deepEqual(ids(await store.reports.nearDuplicates({ ...base, fileName: '文件3' })), [
          [c!, d!].sort().join(),
        ]);
        assert.deepEqual(ids(await store.reports.nearDuplicates({ ...base, from: new Date(Date.UTC(2026, 10, 4)) })), [
          [c!, d!].sort().join(),
        ]);
        assert.deepEqual(ids(await store.reports.nearDuplicates({ ...base, to: new Date(Date.UTC(2026, 10, 4)) })), [
          [a!, b!].sort().join(),
        ]);
        const byJaccard = await store.reports.nearDuplicates({ ...base, sort: 'jaccard', order: 'asc' });
        assert.deepEqual(
          byJaccard.items.map((r) => r.jaccard),
          [0.6, 0.95],
        );
        const byHamming = await store.reports.nearDuplicates({ ...base, sort: 'hamming', order: 'asc' });
        assert.deepEqual(
          byHamming.items.map((r) => r.hamming),
          [2, null],
          'a pair without SimHash distance comes last',
        );
        const paged = await store.reports.nearDuplicates({ ...base, limit: 1, offset: 1 });
        assert.deepEqual([paged.total, paged.items.length], [2, 1]);
      });

      it('exports every pair, a batch at a time, as the report orders and filters them', async () => {
        const [a, b, c, d, e] = await files(5);
        const east = testAccount({ unit: unit('east', '青县') });
        for (const [file, name] of [
          [a, 'a.txt'],
          [b, 'b.txt'],
          [c, 'c.txt'],
          [d, 'd.txt'],
          [e, 'e.txt'],
        ] as const)
          await recordUpload(store, east, file!, name);
        // Two pairs found at the same moment: their order is the files' ids.
        await store.nearDuplicates.addPairs([
          pair(a!, b!, { jaccard: 0.9, foundAt: new Date(Date.UTC(2026, 10, 3)) }),
          pair(c!, d!, { jaccard: 0.8, foundAt: new Date(Date.UTC(2026, 10, 4)) }),
          pair(a!, e!, { jaccard: 0.7, foundAt: new Date(Date.UTC(2026, 10, 4)) }),
          pair(d!, e!, { jaccard: 0.6, method: 'jaccard', foundAt: new Date(Date.UTC(2026, 10, 5)) }),
        ]);
        const base = { sort: 'foundAt', order: 'desc' as const };
        for (const q of [
          base,
          { ...base, sort: 'jaccard', order: 'asc' as const },
          { ...base, method: 'jaccard' as const },
        ]) {
          const items = [];
          const sizes = [];
          for await (const batch of store.reports.nearDuplicateBatches(q, 3)) {
            assert.ok(batch.items.length <= 3);
            sizes.push(batch.items.length);
            items.push(...batch.items);
          }
          const page = await store.reports.nearDuplicates({ ...q, limit: 100, offset: 0 });
          assert.deepEqual(items, page.items);
          if (!('method' in q)) assert.deepEqual(sizes, [3, 1]);
        }
      });
    });

    describe('fingerprint queue', () => {
      const t0 = new Date(Date.UTC(2026, 10, 1, 8));
      const later = (ms: number) => new Date(t0.getTime() + ms);

      it('queues a file once, and leases due jobs oldest first to one holder at a time', async () => {
        await store.fingerprintQueue.enqueue(['f1', 'f2'], t0);
        await store.fingerprintQueue.enqueue(['f1', 'f3'], later(10));
        const taken = await store.fingerprintQueue.take('h1', later(20), 60_000, 2);
        assert.deepEqual(
          taken.map((j) => [j.fileId, j.state, j.attempts]),
          [
            ['f1', 'running', 1],
            ['f2', 'running', 1],
          ],
        );
        assert.deepEqual(
          (await store.fingerprintQueue.take('h2', later(30), 60_000, 5)).map((j) => j.fileId),
          ['f3'],
          'leased jobs are not taken twice',
        );
        assert.deepEqual(await store.fingerprintQueue.counts(later(40)), { queued: 0, running: 3, failed: 0 });
        // h1 stopped: its lease runs out and another holder takes its jobs.
        const again = await store.fingerprintQueue.take('h2', later(60_025), 60_000, 5);
        assert.deepEqual(
          again.map((j) => [j.fileId, j.attempts]),
          [
            ['f1', 2],
            ['f2', 2],
          ],
          "f3's lease still runs",
        );
        await store.fingerprintQueue.done('f1', 'h1');
        assert.equal(
          (await store.fingerprintQueue.counts(later(60_026))).running,
          3,
          'a holder that lost its lease finishes nothing',
        );
        await store.fingerprintQueue.done('f1', 'h2');
        assert.equal((await store.fingerprintQueue.counts(later(60_026))).running, 2);
      });

      it('leases queued jobs and jobs whose lease ran out in one order, oldest due first, then by file id', async () => {
        const q = store.fingerprintQueue;
        await q.enqueue(['b'], t0);
        await q.enqueue(['a'], later(1));
        await q.enqueue(['c', 'd'], later(2));
        await q.enqueue(['e'], later(3));
        await q.enqueue(['f'], later(5_000));
        // b and a under a short lease, c under a long one.
        assert.deepEqual(
          (await q.take('h1', later(10), 100, 2)).map((j) => j.fileId),
          ['b', 'a'],
        );
        assert.deepEqual(
          (await q.take('h1', later(10), 60_000, 1)).map((j) => j.fileId),
          ['c'],
        );
        // At 1 s: b's and a's leases ran out; c's runs; f is not due yet.
        assert.deepEqual(
          (await q.take('h2', later(1_000), 60_000, 2)).map((j) => [j.fileId, j.attempts]),
          [
            ['b', 2],
            ['a', 2],
          ],
          'the limit is met by the oldest, here jobs whose lease ran out',
        );
        assert.deepEqual(
          (await q.take('h3', later(1_000), 60_000, 5)).map((j) => j.fileId),
          ['d', 'e'],
          'leased jobs are not taken again, nor jobs not due',
        );
        // At 62 s: every lease ran out; the queued f and the expired ones interleave by due time.
        await q.enqueue(['g'], later(1));
        assert.deepEqual(
          (await q.take('h4', later(62_000), 60_000, 4)).map((j) => j.fileId),
          ['b', 'a', 'g', 'c'],
        );
        assert.deepEqual(
          (await q.take('h4', later(62_000), 60_000, 10)).map((j) => j.fileId),
          ['d', 'e', 'f'],
        );
      });

      it('lists failures most recent first (by the time they were due), then by file id, the greater first', async () => {
        const q = store.fingerprintQueue;
        await q.enqueue(['a', 'b'], t0);
        await q.enqueue(['c'], later(5));
        await q.take('h', later(10), 60_000, 3);
        for (const id of ['a', 'b', 'c']) await q.fail(id, 'h', 'unreadable', null);
        assert.deepEqual(
          (await q.failures(10)).map((j) => j.fileId),
          ['c', 'b', 'a'],
        );
        assert.deepEqual(
          (await q.failures(2)).map((j) => j.fileId),
          ['c', 'b'],
        );
      });

      it("forgets a file's job, whatever its state", async () => {
        await store.fingerprintQueue.enqueue(['f1', 'f2'], t0);
        await store.fingerprintQueue.take('h1', later(1), 60_000, 1);
        await store.fingerprintQueue.forget('f1');
        await store.fingerprintQueue.forget('f9');
        assert.deepEqual(await store.fingerprintQueue.counts(later(2)), { queued: 1, running: 0, failed: 0 });
      });

      it('retries a failure when due, and keeps one that failed for good visible until it is queued again', async () => {
        await store.fingerprintQueue.enqueue(['f1', 'f2'], t0);
        await store.fingerprintQueue.take('h', t0, 60_000, 2);
        await store.fingerprintQueue.fail('f1', 'h', 'damaged content', later(120_000));
        await store.fingerprintQueue.fail('f2', 'h', 'extraction crashed', null);
        assert.deepEqual(
          await store.fingerprintQueue.take('h', later(60_000), 60_000, 5),
          [],
          'not before its retry time',
        );
        assert.deepEqual(await store.fingerprintQueue.counts(later(60_000)), { queued: 1, running: 0, failed: 1 });
        const retried = await store.fingerprintQueue.take('h', later(120_000), 60_000, 5);
        assert.deepEqual(
          retried.map((j) => [j.fileId, j.attempts]),
          [['f1', 2]],
        );
        const [failure] = await store.fingerprintQueue.failures(10);
        assert.deepEqual(
          [failure!.fileId, failure!.state, failure!.error, failure!.attempts],
          ['f2', 'failed', 'extraction crashed', 1],
        );
        await store.fingerprintQueue.enqueue(['f2'], later(130_000));
        assert.equal(
          (await store.fingerprintQueue.counts(later(130_000))).failed,
          1,
          'a failed file is not queued again by a new upload',
        );
        await store.fingerprintQueue.requeue(['f2'], later(130_000));
        assert.deepEqual(
          (await store.fingerprintQueue.take('h', later(130_000), 60_000, 5)).map((j) => [j.fileId, j.attempts]),
          [['f2', 1]],
        );
        assert.deepEqual(await store.fingerprintQueue.failures(10), []);
      });
    });
  });
}
