import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { savingsQuery } from '../../shared/reports.js';
import { ReportCalendar } from '../../server/services/calendar.js';
import { ReportService } from '../../server/services/reports.js';
import { ConflictError, ContentDamagedError } from '../../server/errors.js';
import type { Account, ArchiveStore, AuditEvent, AuditSearch, NearDuplicatePair } from '../../server/store/port.js';
import { countUpload, keyOf, nearFingerprint, randomContent, readAll, stageBytes, testAccount, unit, uploadAction } from '../support/content.js';
import { countChunks, damageContent, forgetChunkSums, TEST_CHUNK_SIZE, type OpenedStore, type StoreTarget } from '../support/stores.js';

const CS = TEST_CHUNK_SIZE;

/** The behaviour every store adapter must have. Run once per adapter. */
export function storeConformance(target: StoreTarget): void {
  describe(`store conformance: ${target.name}`, { skip: target.skip }, () => {
    let opened: OpenedStore;
    let store: ArchiveStore;
    beforeEach(async () => {
      opened = await target.open();
      store = opened.store;
    });
    afterEach(async () => {
      await opened.dispose();
    });

    const commit = async (data: Buffer, fileName = 'doc.pdf') => {
      const staged = await stageBytes(store, data);
      return store.content.commit(staged.stagingId, { key: staged.key, fileName, contentType: 'application/pdf', uploadDate: new Date() });
    };
    const record = (account: Account, fileId: string, fileName = 'doc.pdf', at = new Date(), contentType = 'application/pdf') =>
      countUpload(store, { account, fileId, fileName, contentType, at, day: at.toISOString().slice(0, 10), fileLength: 1, stored: false });

    describe('content and catalog', () => {
      it('reads a committed file back byte for byte, whole and in ranges across chunk edges', async () => {
        const data = randomContent(3 * CS + 123);
        const { status, entry } = await commit(data);
        assert.equal(status, 'stored');
        assert.deepEqual(await readAll(store.content.read(entry)), data);
        for (const [start, end] of [[0, 1], [CS - 1, CS + 1], [CS, 2 * CS], [5, 3 * CS + 100], [data.length - 1, data.length], [0, data.length]] as const) {
          assert.deepEqual(await readAll(store.content.read(entry, { start, end })), data.subarray(start, end), `range ${start}-${end}`);
        }
      });

      it('catalogues id, hashes, length, chunk size and count, first name, type and date', async () => {
        const data = randomContent(2 * CS + 1);
        const before = Date.now();
        const { entry } = await commit(data, '县志 第一卷.pdf');
        assert.match(entry.fileId, /^[0-9a-f]{24}$/);
        assert.deepEqual({ md5: entry.fileMD5, sha256: entry.fileSHA256, length: entry.fileLength }, keyOf(data));
        assert.equal(entry.chunkSize, CS);
        assert.equal(entry.chunkCount, 3);
        assert.equal(entry.fileName, '县志 第一卷.pdf');
        assert.equal(entry.contentType, 'application/pdf');
        assert.ok(entry.uploadDate.getTime() >= before - 1000 && entry.uploadDate.getTime() <= Date.now() + 1000);
        assert.equal(entry.md5Collision, false);
        assert.deepEqual(await store.catalog.get(entry.fileId), entry);
        assert.deepEqual(await store.catalog.findByKey(keyOf(data)), entry);
      });

      it('stores a zero-byte file once and reads it back empty', async () => {
        const first = await commit(Buffer.alloc(0), 'empty.txt');
        const second = await commit(Buffer.alloc(0), 'also-empty.txt');
        assert.equal(first.status, 'stored');
        assert.equal(second.status, 'duplicate');
        assert.equal(second.entry.fileId, first.entry.fileId);
        assert.equal(first.entry.chunkCount, 0);
        assert.equal((await readAll(store.content.read(first.entry))).length, 0);
      });

      it('keeps lengths above 4 GiB exact (64-bit sizes)', async () => {
        const length = 5 * 1024 ** 3 + 7;
        const key = { md5: 'a'.repeat(32), sha256: 'b'.repeat(64), length };
        const stagingId = await store.content.stage(new Date());
        // Only the last chunk is written (a commit needs it); the bytes before never matter here.
        const lastChunk = Math.floor((length - 1) / CS) * CS;
        await store.content.write(stagingId, lastChunk, [randomContent(length - lastChunk)]);
        const { entry } = await store.content.commit(stagingId, { key, fileName: 'big.tif', contentType: 'image/tiff', uploadDate: new Date() });
        assert.equal(entry.fileLength, length);
        assert.equal(entry.chunkCount, Math.ceil(length / CS));
        assert.equal((await store.catalog.findByKey(key))?.fileLength, length);
        assert.equal(await store.catalog.findByKey({ ...key, length: length + 1 }), undefined);
      });

      it('removes the staged chunks when the catalog already holds the content', async () => {
        const data = randomContent(2 * CS);
        const first = await commit(data, 'a.pdf');
        const second = await commit(data, 'b.pdf');
        assert.equal(second.status, 'duplicate');
        assert.equal(second.entry.fileId, first.entry.fileId);
        assert.equal(second.entry.fileName, 'a.pdf');
        assert.equal(await countChunks(opened), 2);
      });

      it('never merges on MD5 alone: a different SHA-256 is a separate file, flagged as an MD5 collision', async () => {
        const a = await stageBytes(store, randomContent(100));
        const b = await stageBytes(store, randomContent(100));
        const sharedMd5 = a.key.md5;
        const first = await store.content.commit(a.stagingId, { key: a.key, fileName: 'a', contentType: 'text/plain', uploadDate: new Date() });
        const second = await store.content.commit(b.stagingId, { key: { ...b.key, md5: sharedMd5 }, fileName: 'b', contentType: 'text/plain', uploadDate: new Date() });
        assert.equal(second.status, 'stored');
        assert.notEqual(second.entry.fileId, first.entry.fileId);
        assert.equal(second.entry.md5Collision, true);
        assert.equal((await store.catalog.get(first.entry.fileId))?.md5Collision, true);
      });

      it('keeps exactly one copy when the same new content is committed concurrently', async () => {
        const data = randomContent(CS + 10);
        const staged = await Promise.all(Array.from({ length: 20 }, () => stageBytes(store, data)));
        const outcomes = await Promise.all(
          staged.map((s) => store.content.commit(s.stagingId, { key: s.key, fileName: 'same.pdf', contentType: 'application/pdf', uploadDate: new Date() })),
        );
        assert.equal(outcomes.filter((o) => o.status === 'stored').length, 1);
        assert.equal(new Set(outcomes.map((o) => o.entry.fileId)).size, 1);
        assert.equal(await countChunks(opened), 2);
        assert.deepEqual(await readAll(store.content.read(outcomes[0]!.entry)), data);
      });

      it('discards a staging area and its chunks, harmlessly twice', async () => {
        const staged = await stageBytes(store, randomContent(3 * CS));
        assert.equal(await countChunks(opened), 3);
        await store.content.discard(staged.stagingId);
        await store.content.discard(staged.stagingId);
        assert.equal(await countChunks(opened), 0);
        assert.equal(await store.catalog.findByKey(staged.key), undefined);
      });

      it('collects staging areas opened before the cutoff, and nothing committed or younger', async () => {
        const dayMs = 24 * 3600_000;
        const long = new Date(Date.now() - 2 * dayMs);
        const stageAt = async (at: Date, data: Buffer) => {
          const stagingId = await store.content.stage(at);
          await store.content.write(stagingId, 0, [data.subarray(0, CS), data.subarray(CS)]);
          return stagingId;
        };
        const committedData = randomContent(CS + 5);
        const committedId = await stageAt(long, committedData);
        const { entry } = await store.content.commit(committedId, { key: keyOf(committedData), fileName: 'kept.pdf', contentType: 'application/pdf', uploadDate: new Date() });
        await stageAt(long, randomContent(CS + 6)); // abandoned
        await stageAt(new Date(), randomContent(CS + 7)); // still being uploaded
        assert.equal(await countChunks(opened), 6);
        assert.deepEqual(await store.content.collectGarbage(new Date(Date.now() - dayMs)), { stagingAreas: 1, orphans: 0 });
        assert.equal(await countChunks(opened), 4);
        assert.deepEqual(await readAll(store.content.read(entry)), committedData);
        assert.deepEqual(await store.content.collectGarbage(new Date(Date.now() - dayMs)), { stagingAreas: 0, orphans: 0 }, 'nothing left to do');
      });

      it('continues a partial chunk at a byte offset, also over stale bytes of an interrupted write', async () => {
        const data = randomContent(3 * CS + 50);
        const stagingId = await store.content.stage(new Date());
        await store.content.write(stagingId, 0, [data.subarray(0, CS), data.subarray(CS, CS + 20)]);
        // An interrupted request got further than what was acknowledged, with other bytes.
        await store.content.write(stagingId, CS + 20, [randomContent(CS)]);
        // The resumed upload continues from the acknowledged offset, in parts of any size.
        await store.content.write(stagingId, CS + 20, [data.subarray(CS + 20, CS + 21), data.subarray(CS + 21, 2 * CS + 7)]);
        await store.content.write(stagingId, 2 * CS + 7, [data.subarray(2 * CS + 7)]);
        assert.deepEqual(await readAll(store.content.readStaged(stagingId, data.length)), data);
        const { entry } = await store.content.commit(stagingId, { key: keyOf(data), fileName: 'x', contentType: 'text/plain', uploadDate: new Date() });
        assert.deepEqual(await readAll(store.content.read(entry)), data);
        assert.equal(await countChunks(opened), 4);
      });

      it('answers a repeated commit of the same staging area with the stored file, and never discards a committed file', async () => {
        const data = randomContent(2 * CS + 1);
        const staged = await stageBytes(store, data);
        const entry = { key: staged.key, fileName: 'x.pdf', contentType: 'application/pdf', uploadDate: new Date() };
        const first = await store.content.commit(staged.stagingId, entry);
        const again = await store.content.commit(staged.stagingId, entry);
        assert.deepEqual([first.status, again.status], ['stored', 'stored']);
        assert.equal(again.entry.fileId, first.entry.fileId);
        await store.content.discard(staged.stagingId);
        assert.deepEqual(await readAll(store.content.read(first.entry)), data);
        assert.equal(await countChunks(opened), 3);
      });

      it('keeps the chunk size a staging area began with when the store reopens with another (CHUNK_SIZE changed mid-upload)', async () => {
        const data = randomContent(3 * CS + 321);
        const stagingId = await store.content.stage(new Date());
        // Part of an upload, ending inside a chunk; then a restart with a chunk size a quarter as large.
        const part = CS + 1000;
        await store.content.write(stagingId, 0, [data.subarray(0, part)]);
        store = await opened.reopen({ chunkSize: CS / 4 });
        await store.content.write(stagingId, part, [data.subarray(part, 2 * CS + 5), data.subarray(2 * CS + 5)]);
        assert.deepEqual(await readAll(store.content.readStaged(stagingId, data.length)), data);
        const { status, entry } = await store.content.commit(stagingId, { key: keyOf(data), fileName: 'resumed.pdf', contentType: 'application/pdf', uploadDate: new Date() });
        assert.equal(status, 'stored');
        assert.deepEqual([entry.chunkSize, entry.chunkCount], [CS, 4], 'chunked as the upload began');
        assert.deepEqual(await readAll(store.content.read(entry)), data, 'read back whole, no damage reported');
        assert.deepEqual(await readAll(store.content.read(entry, { start: CS - 3, end: 2 * CS + 9 })), data.subarray(CS - 3, 2 * CS + 9));
        assert.equal(await store.content.lacksChunkSums(entry), false, 'every chunk has its checksum');
        // Content staged after the restart is chunked at the new size.
        const fresh = await commit(randomContent(CS + 1));
        assert.deepEqual([fresh.entry.chunkSize, fresh.entry.chunkCount], [CS / 4, 5]);
      });

      it('commits many staging areas at once, in order: new content stored, held content and a repeat within the batch counted as duplicates', async () => {
        const held = randomContent(CS + 5);
        const heldEntry = (await commit(held)).entry;
        const fresh = randomContent(2 * CS + 7);
        const empty = Buffer.alloc(0);
        const items = [];
        for (const data of [fresh, held, fresh, empty]) {
          const staged = await stageBytes(store, data);
          items.push({ stagingId: staged.stagingId, entry: { key: staged.key, fileName: 'batch.pdf', contentType: 'application/pdf', uploadDate: new Date() } });
        }
        const outcomes = await store.content.commitMany(items);
        assert.deepEqual(outcomes.map((o) => o.status), ['stored', 'duplicate', 'duplicate', 'stored']);
        assert.equal(outcomes[0]!.entry.fileId, items[0]!.stagingId, 'the first copy becomes the file');
        assert.equal(outcomes[1]!.entry.fileId, heldEntry.fileId);
        assert.equal(outcomes[2]!.entry.fileId, outcomes[0]!.entry.fileId);
        assert.deepEqual(await readAll(store.content.read(outcomes[0]!.entry)), fresh);
        assert.deepEqual(await readAll(store.content.read(outcomes[3]!.entry)), empty);
        assert.equal(await store.catalog.count(), 3);
        // 2 chunks of `held`, 3 of `fresh`: the duplicates' staged chunks are gone.
        assert.equal(await countChunks(opened), 2 + 3);
        assert.deepEqual(await store.content.commitMany([]), []);
      });

      it('fails a batch commit with staged bytes short of a content, keeping them staged for a retry', async () => {
        const whole = randomContent(CS + 10);
        const short = await store.content.stage(new Date());
        await store.content.write(short, 0, [whole.subarray(0, CS)]);
        const good = await stageBytes(store, randomContent(100));
        await assert.rejects(
          store.content.commitMany([
            { stagingId: short, entry: { key: keyOf(whole), fileName: 'short.pdf', contentType: 'application/pdf', uploadDate: new Date() } },
            { stagingId: good.stagingId, entry: { key: good.key, fileName: 'good.pdf', contentType: 'application/pdf', uploadDate: new Date() } },
          ]),
        );
        assert.equal(await store.catalog.findByKey(keyOf(whole)), undefined, 'no short file catalogued');
        await store.content.write(short, CS, [whole.subarray(CS)]);
        const { status, entry } = await store.content.commit(short, { key: keyOf(whole), fileName: 'short.pdf', contentType: 'application/pdf', uploadDate: new Date() });
        assert.equal(status, 'stored');
        assert.deepEqual(await readAll(store.content.read(entry)), whole);
      });

      it('reads back the first bytes of a staging area', async () => {
        const data = randomContent(2 * CS + 3);
        const stagingId = await store.content.stage(new Date());
        await store.content.write(stagingId, 0, [data]);
        assert.deepEqual(await readAll(store.content.readStaged(stagingId, CS + 1)), data.subarray(0, CS + 1));
        assert.deepEqual(await readAll(store.content.readStaged(stagingId, 0)), Buffer.alloc(0));
      });
    });

    describe('damaged content', () => {
      it('fails a read that meets missing bytes with a ContentDamagedError naming the first, never a short stream', async () => {
        const data = randomContent(3 * CS + 5);
        const { entry } = await commit(data);
        await damageContent(opened, entry.fileId, { kind: 'lose-chunk', n: 1 });
        // Bytes before the damage still read.
        assert.deepEqual(await readAll(store.content.read(entry, { start: 0, end: 100 })), data.subarray(0, 100));
        await assert.rejects(readAll(store.content.read(entry)), (err: unknown) => err instanceof ContentDamagedError && err.kind === 'missing' && err.fileId === entry.fileId && err.offset === CS);
        await assert.rejects(readAll(store.content.read(entry, { start: CS - 10, end: CS + 10 })), ContentDamagedError);
      });

      it('refuses a chunk changed on disk before any of its bytes go out, and names it', async () => {
        const data = randomContent(3 * CS + 5);
        const { entry } = await commit(data);
        await damageContent(opened, entry.fileId, { kind: 'flip-byte', offset: CS + 7 });
        const received: Buffer[] = [];
        const failure = await (async () => {
          try {
            for await (const part of store.content.read(entry)) received.push(part as Buffer);
          } catch (err) {
            return err;
          }
        })();
        assert.ok(failure instanceof ContentDamagedError, String(failure));
        assert.deepEqual([failure.kind, failure.offset], ['corrupted', CS]);
        assert.deepEqual(Buffer.concat(received), data.subarray(0, CS), 'only the intact chunk before it went out');
        // Ranges are checked chunk by chunk: intact chunks read, the changed one never.
        assert.deepEqual(await readAll(store.content.read(entry, { start: 2 * CS + 1, end: 3 * CS + 5 })), data.subarray(2 * CS + 1));
        assert.deepEqual(await readAll(store.content.read(entry, { start: 10, end: 20 })), data.subarray(10, 20));
        await assert.rejects(readAll(store.content.read(entry, { start: 2 * CS - 1, end: 2 * CS + 1 })), ContentDamagedError);
        // The proof of possession reads unchecked: exactly the stored bytes, changed or not.
        const proof = await readAll(store.content.read(entry, { start: CS + 5, end: CS + 9 }, { unchecked: true }));
        assert.equal(proof.length, 4);
        assert.notDeepEqual(proof, data.subarray(CS + 5, CS + 9));
      });

      it('sums a chunk written in several pieces, also where an upload resumes and rewrites bytes', async () => {
        const data = randomContent(2 * CS + 77);
        const stagingId = await store.content.stage(new Date());
        await store.content.write(stagingId, 0, [data.subarray(0, 1000)]);
        await store.content.write(stagingId, 1000, [data.subarray(1000, CS + 10)]);
        // A broken-off request's bytes were kept up to CS + 10; the resume starts earlier and rewrites.
        await store.content.write(stagingId, CS - 3, [data.subarray(CS - 3, CS + 2), data.subarray(CS + 2, 2 * CS + 77)]);
        const { entry } = await store.content.commit(stagingId, { key: keyOf(data), fileName: 'pieces.pdf', contentType: 'application/pdf', uploadDate: new Date() });
        assert.deepEqual(await readAll(store.content.read(entry)), data, 'every chunk matches its sum');
        await damageContent(opened, entry.fileId, { kind: 'flip-byte', offset: 2 * CS + 76 });
        await assert.rejects(readAll(store.content.read(entry, { start: 2 * CS, end: 2 * CS + 1 })), (err: unknown) => err instanceof ContentDamagedError && err.offset === 2 * CS);
      });

      it('refuses a stored chunk of the wrong size, even one written before checksums, instead of shifting the bytes after it', async () => {
        const data = randomContent(3 * CS + 5);
        const { entry } = await commit(data);
        await forgetChunkSums(opened, entry.fileId);
        await damageContent(opened, entry.fileId, { kind: 'grow-chunk', n: 1 });
        const read = await readAll(store.content.read(entry)).catch((err: unknown) => err);
        if (read instanceof Buffer) assert.deepEqual(read, data, 'the file as stored, never shifted');
        else assert.ok(read instanceof ContentDamagedError && read.offset === CS, String(read));
        if (opened.mongo) assert.ok(read instanceof ContentDamagedError, 'a GridFS chunk document of the wrong size is damage');
      });

      it('fails a read of a file whose bytes are all gone', async () => {
        const { entry } = await commit(randomContent(2 * CS));
        await damageContent(opened, entry.fileId, { kind: 'lose-file' });
        await assert.rejects(readAll(store.content.read(entry)), (err: unknown) => err instanceof ContentDamagedError && err.offset === 0);
      });
    });

    describe('commit safety', () => {
      it('refuses to commit staged bytes that fall short of the content, and keeps them for a retry', async () => {
        const data = randomContent(2 * CS + 50);
        const stagingId = await store.content.stage(new Date());
        await store.content.write(stagingId, 0, [data.subarray(0, CS)]);
        const entry = { key: keyOf(data), fileName: 'short.pdf', contentType: 'application/pdf', uploadDate: new Date() };
        await assert.rejects(store.content.commit(stagingId, entry), /holds not all/);
        assert.equal(await store.catalog.findByKey(keyOf(data)), undefined, 'no short file catalogued');
        // The bytes that were there are still there: the rest arrives and the commit succeeds.
        await store.content.write(stagingId, CS, [data.subarray(CS)]);
        const { status, entry: committed } = await store.content.commit(stagingId, entry);
        assert.equal(status, 'stored');
        assert.deepEqual(await readAll(store.content.read(committed)), data);
      });
    });

    describe('catalog scan', () => {
      it('walks every entry in file id order, a page at a time, and counts them', async () => {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push((await commit(randomContent(100 + i))).entry.fileId);
        assert.equal(await store.catalog.count(), 5);
        const seen: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await store.catalog.scan(after, 2);
          if (page.length === 0) break;
          assert.ok(page.length <= 2);
          seen.push(...page.map((e) => e.fileId));
          after = page.at(-1)!.fileId;
        }
        assert.deepEqual(seen, [...ids].sort());
      });
    });

    describe('near-duplicate index', () => {
      const fingerprint = nearFingerprint;
      const pair = (a: string, b: string, overrides: Partial<NearDuplicatePair> = {}): NearDuplicatePair => {
        const [fileA, fileB] = a < b ? [a, b] : [b, a];
        return { fileA, fileB, method: 'simhash', hamming: 2, jaccard: 0.7, containment: 0.8, snippetA: 'a 句', snippetB: 'b 句', foundAt: new Date(Date.UTC(2026, 10, 2)), ...overrides };
      };
      // Lookup keys are integers below 2^53: some near the top, which a store must keep exact.
      const [s01, s12, s27, s09, j0x, c3y, s21] = [1, 2 ** 16 + 2, 2 * 2 ** 16 + 7, 9, 2 ** 47 + 5 * 2 ** 40 + 0xff_ffff_ffff, 2 ** 48 + 99 * 2 ** 40 + 12345, 2 ** 53 - 1];
      const files = async (n: number) => {
        const ids: string[] = [];
        for (let i = 0; i < n; i++) ids.push((await commit(randomContent(50), `文件${i}.txt`)).entry.fileId);
        return ids;
      };

      it('keeps a fingerprint with its keys, and replaces both when the file is fingerprinted again', async () => {
        const [a] = await files(1);
        await store.nearDuplicates.put([fingerprint(a!, [j0x, s01])]);
        assert.deepEqual(await store.nearDuplicates.get(a!), fingerprint(a!, [s01, j0x]));
        await store.nearDuplicates.put([fingerprint(a!, [s21], { simhash: 'ffffffffffffffff' })]);
        assert.deepEqual(await store.nearDuplicates.get(a!), fingerprint(a!, [s21], { simhash: 'ffffffffffffffff' }));
        assert.deepEqual(await store.nearDuplicates.candidates('f'.repeat(24), [s01], 10), [], 'the old keys are gone');
        assert.deepEqual((await store.nearDuplicates.candidates('f'.repeat(24), [s21], 10)).map((f) => f.fileId), [a], 'found by its new key');
        assert.equal(await store.nearDuplicates.get('e'.repeat(24)), undefined);
      });

      it('finds the fingerprints that share any key, never the file itself, at most the limit', async () => {
        const [a, b, c, d] = await files(4);
        await store.nearDuplicates.put([fingerprint(a!, [s01, s12, j0x]), fingerprint(b!, [s09, s12])]);
        await store.nearDuplicates.put([fingerprint(c!, [j0x, c3y], { short: true, simhash: null, units: 40 }), fingerprint(d!, [s27])]);
        const found = await store.nearDuplicates.candidates(a!, [s01, s12, j0x], 10);
        assert.deepEqual(found.map((f) => f.fileId).sort(), [b!, c!].sort());
        assert.deepEqual(found.find((f) => f.fileId === c)!.simhash, null);
        assert.equal((await store.nearDuplicates.candidates(a!, [s01, s12, j0x], 1)).length, 1);
        assert.deepEqual(await store.nearDuplicates.candidates(a!, [], 10), []);
      });

      it('counts fingerprinted and skipped files and pairs, replaces a pair found again, and forgets everything on clear', async () => {
        const [a, b, c] = await files(3);
        await store.nearDuplicates.put([fingerprint(a!, [s01]), fingerprint(b!, [s01])]);
        await store.nearDuplicates.put([fingerprint(c!, [], { format: null, skipped: 'not a text document (image/png)', units: 0, simhash: null })]);
        await store.nearDuplicates.put([]);
        await store.nearDuplicates.addPairs([pair(a!, b!)]);
        await store.nearDuplicates.addPairs([pair(a!, b!, { jaccard: 0.9, method: 'jaccard' })]);
        assert.deepEqual(await store.nearDuplicates.counts(), { fingerprinted: 2, skipped: 1, pairs: 1 });
        await store.nearDuplicates.clear();
        assert.deepEqual(await store.nearDuplicates.counts(), { fingerprinted: 0, skipped: 0, pairs: 0 });
        assert.deepEqual(await store.nearDuplicates.candidates(c!, [s01], 10), []);
      });

      it('reports pairs with both files named, their uploading units and the differences, filtered, sorted and paged', async () => {
        const [a, b, c, d] = await files(4);
        const east = testAccount({ unit: unit('east', '青县') });
        const west = testAccount({ unit: unit('west', '沧县') });
        await record(east, a!, 'a.txt');
        await record(west, a!, 'a.txt');
        await record(east, b!, 'b.txt');
        await record(west, c!, 'c.txt');
        await record(west, d!, 'd.txt');
        await store.nearDuplicates.addPairs([
          pair(a!, b!, { jaccard: 0.95, method: 'jaccard', foundAt: new Date(Date.UTC(2026, 10, 3)) }),
          pair(c!, d!, { jaccard: 0.6, hamming: null, method: 'containment', foundAt: new Date(Date.UTC(2026, 10, 5)) }),
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
        assert.deepEqual(fa.units.map((u) => u.id), ['east', 'west']);
        assert.deepEqual(fb.units.map((u) => u.id), ['east']);
        assert.equal(fa.fileLength, 50);
        assert.match(fa.uploadDate, /^\d{4}-\d\d-\d\dT/);
        assert.deepEqual([ab.a.snippet, ab.b.snippet], ['a 句', 'b 句']);
        assert.equal(ab.foundAt, '2026-11-03T00:00:00.000Z');
        const ids = (page: { items: Array<{ a: { fileId: string }; b: { fileId: string } }> }) => page.items.map((r) => [r.a.fileId, r.b.fileId].sort().join());
        assert.deepEqual(ids(await store.reports.nearDuplicates({ ...base, method: 'jaccard' })), [[a!, b!].sort().join()]);
        assert.deepEqual(ids(await store.reports.nearDuplicates({ ...base, unit: { city: '沧州市', county: '沧县' } })).length, 2, 'west uploaded a file of each pair');
        assert.deepEqual(ids(await store.reports.nearDuplicates({ ...base, unit: { city: '沧州市', county: '青县' } })), [[a!, b!].sort().join()]);
        assert.deepEqual(ids(await store.reports.nearDuplicates({ ...base, fileName: '文件3' })), [[c!, d!].sort().join()]);
        assert.deepEqual(ids(await store.reports.nearDuplicates({ ...base, from: new Date(Date.UTC(2026, 10, 4)) })), [[c!, d!].sort().join()]);
        assert.deepEqual(ids(await store.reports.nearDuplicates({ ...base, to: new Date(Date.UTC(2026, 10, 4)) })), [[a!, b!].sort().join()]);
        const byJaccard = await store.reports.nearDuplicates({ ...base, sort: 'jaccard', order: 'asc' });
        assert.deepEqual(byJaccard.items.map((r) => r.jaccard), [0.6, 0.95]);
        const byHamming = await store.reports.nearDuplicates({ ...base, sort: 'hamming', order: 'asc' });
        assert.deepEqual(byHamming.items.map((r) => r.hamming), [2, null], 'a pair without SimHash distance comes last');
        const paged = await store.reports.nearDuplicates({ ...base, limit: 1, offset: 1 });
        assert.deepEqual([paged.total, paged.items.length], [2, 1]);
      });
    });

    describe('fingerprint queue', () => {
      const t0 = new Date(Date.UTC(2026, 10, 1, 8));
      const later = (ms: number) => new Date(t0.getTime() + ms);

      it('queues a file once, and leases due jobs oldest first to one holder at a time', async () => {
        await store.fingerprintQueue.enqueue(['f1', 'f2'], t0);
        await store.fingerprintQueue.enqueue(['f1', 'f3'], later(10));
        const taken = await store.fingerprintQueue.take('h1', later(20), 60_000, 2);
        assert.deepEqual(taken.map((j) => [j.fileId, j.state, j.attempts]), [['f1', 'running', 1], ['f2', 'running', 1]]);
        assert.deepEqual((await store.fingerprintQueue.take('h2', later(30), 60_000, 5)).map((j) => j.fileId), ['f3'], 'leased jobs are not taken twice');
        assert.deepEqual(await store.fingerprintQueue.counts(later(40)), { queued: 0, running: 3, failed: 0 });
        // h1 stopped: its lease runs out and another holder takes its jobs.
        const again = await store.fingerprintQueue.take('h2', later(60_025), 60_000, 5);
        assert.deepEqual(again.map((j) => [j.fileId, j.attempts]), [['f1', 2], ['f2', 2]], "f3's lease still runs");
        await store.fingerprintQueue.done('f1', 'h1');
        assert.equal((await store.fingerprintQueue.counts(later(60_026))).running, 3, 'a holder that lost its lease finishes nothing');
        await store.fingerprintQueue.done('f1', 'h2');
        assert.equal((await store.fingerprintQueue.counts(later(60_026))).running, 2);
      });

      it('retries a failure when due, and keeps one that failed for good visible until it is queued again', async () => {
        await store.fingerprintQueue.enqueue(['f1', 'f2'], t0);
        await store.fingerprintQueue.take('h', t0, 60_000, 2);
        await store.fingerprintQueue.fail('f1', 'h', 'damaged content', later(120_000));
        await store.fingerprintQueue.fail('f2', 'h', 'extraction crashed', null);
        assert.deepEqual(await store.fingerprintQueue.take('h', later(60_000), 60_000, 5), [], 'not before its retry time');
        assert.deepEqual(await store.fingerprintQueue.counts(later(60_000)), { queued: 1, running: 0, failed: 1 });
        const retried = await store.fingerprintQueue.take('h', later(120_000), 60_000, 5);
        assert.deepEqual(retried.map((j) => [j.fileId, j.attempts]), [['f1', 2]]);
        const [failure] = await store.fingerprintQueue.failures(10);
        assert.deepEqual([failure!.fileId, failure!.state, failure!.error, failure!.attempts], ['f2', 'failed', 'extraction crashed', 1]);
        await store.fingerprintQueue.enqueue(['f2'], later(130_000));
        assert.equal((await store.fingerprintQueue.counts(later(130_000))).failed, 1, 'a failed file is not queued again by a new upload');
        await store.fingerprintQueue.requeue(['f2'], later(130_000));
        assert.deepEqual((await store.fingerprintQueue.take('h', later(130_000), 60_000, 5)).map((j) => [j.fileId, j.attempts]), [['f2', 1]]);
        assert.deepEqual(await store.fingerprintQueue.failures(10), []);
      });
    });

    describe('login attempts', () => {
      const t0 = new Date('2026-05-01T00:00:00Z');
      const at = (ms: number) => new Date(t0.getTime() + ms);

      it('counts failures per key, keeps the last failure time, and forgets them on success', async () => {
        const first = await store.loginAttempts.fail('pair\nli\n10.0.0.1', at(0), at(60_000));
        assert.deepEqual([first.failures, first.lastFailureAt?.getTime(), first.knownUntil], [1, t0.getTime(), null]);
        const second = await store.loginAttempts.fail('pair\nli\n10.0.0.1', at(5_000), at(30_000));
        assert.deepEqual([second.failures, second.lastFailureAt?.getTime(), second.expiresAt.getTime()], [2, at(5_000).getTime(), at(60_000).getTime()], 'expiry never moves earlier');
        assert.equal((await store.loginAttempts.fail('account\nli', at(5_000), at(60_000))).failures, 1, 'keys are independent');
        await store.loginAttempts.succeed('pair\nli\n10.0.0.1', at(1_000_000));
        const read = await store.loginAttempts.get(['pair\nli\n10.0.0.1', 'account\nli', 'nobody'], at(6_000));
        assert.deepEqual([...read.keys()].sort(), ['account\nli', 'pair\nli\n10.0.0.1']);
        assert.deepEqual(read.get('pair\nli\n10.0.0.1'), { failures: 0, lastFailureAt: null, knownUntil: at(1_000_000), expiresAt: at(1_000_000) });
        assert.equal((await store.loginAttempts.fail('pair\nli\n10.0.0.1', at(7_000), at(60_000))).knownUntil?.getTime(), at(1_000_000).getTime(), 'a failure keeps the pair known');
      });

      it('starts an expired record again, and reads expired records as absent', async () => {
        await store.loginAttempts.fail('address\n10.9.9.9', at(0), at(10_000));
        await store.loginAttempts.fail('address\n10.9.9.9', at(1_000), at(10_000));
        assert.equal((await store.loginAttempts.get(['address\n10.9.9.9'], at(10_000))).size, 0);
        assert.equal((await store.loginAttempts.fail('address\n10.9.9.9', at(20_000), at(30_000))).failures, 1);
      });

      it('counts every one of concurrent failures', async () => {
        const together = await Promise.all(Array.from({ length: 10 }, () => store.loginAttempts.fail('account\nmany', at(0), at(60_000))));
        assert.equal((await store.loginAttempts.get(['account\nmany'], at(1))).get('account\nmany')?.failures, 10);
        // (The MongoDB emulator's post-images may repeat a count under concurrency; a real server's do not.)
        for (const r of together) assert.ok(r.failures >= 1 && r.failures <= 10, String(r.failures));
      });
    });

    describe('rate counts', () => {
      it('counts hits per key and window, takes one back, and forgets a key', async () => {
        const w1 = new Date(Date.now() + 60_000);
        const w2 = new Date(Date.now() + 120_000);
        assert.deepEqual([await store.rateCounts.hit('10.0.0.1', w1), await store.rateCounts.hit('10.0.0.1', w1), await store.rateCounts.hit('10.0.0.1', w1)], [1, 2, 3]);
        assert.equal(await store.rateCounts.hit('10.0.0.2', w1), 1, 'keys are independent');
        assert.equal(await store.rateCounts.hit('10.0.0.1', w2), 1, 'a new window starts at one');
        await store.rateCounts.undo('10.0.0.1', w1);
        assert.equal(await store.rateCounts.hit('10.0.0.1', w1), 3);
        await store.rateCounts.reset('10.0.0.1');
        assert.equal(await store.rateCounts.hit('10.0.0.1', w1), 1);
        assert.equal(await store.rateCounts.hit('10.0.0.2', w1), 2, 'another key is untouched by a reset');
        const together = await Promise.all(Array.from({ length: 10 }, () => store.rateCounts.hit('::1', w1)));
        assert.deepEqual([...together].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'concurrent hits are each counted');
        assert.deepEqual([await store.rateCounts.hit('bulk', w1, 1000), await store.rateCounts.hit('bulk', w1, 5)], [1000, 1005], 'a hit may count many');
      });

      it('counts an account\'s outstanding claims: not answered, not expired', async () => {
        const now = new Date();
        const claim = (id: string, accountId: string, expiresAt: Date) => ({ id, accountId, fileId: 'f'.repeat(24), fileName: 'x.pdf', contentType: 'application/pdf', ranges: [{ start: 0, end: 1 }], expected: ['0'.repeat(32)], expiresAt });
        await store.claims.create(claim('c1', 'acc-q', new Date(now.getTime() + 60_000)));
        await store.claims.create(claim('c2', 'acc-q', new Date(now.getTime() + 60_000)));
        await store.claims.create(claim('c3', 'acc-q', new Date(now.getTime() - 1)));
        await store.claims.create(claim('c4', 'acc-other', new Date(now.getTime() + 60_000)));
        assert.equal(await store.claims.countOutstanding('acc-q', now), 2);
        await store.claims.take('c1');
        assert.equal(await store.claims.countOutstanding('acc-q', now), 1);
      });
    });

    describe('job leases', () => {
      it('lets one holder at a time run a job, keeps its state, and hands an expired lease over', async () => {
        const t0 = new Date('2026-05-01T00:00:00Z');
        const at = (ms: number) => new Date(t0.getTime() + ms);
        assert.equal(await store.jobs.get('fixity'), undefined);
        assert.equal(await store.jobs.acquire('fixity', 'a', t0, 60_000), true);
        assert.equal(await store.jobs.acquire('fixity', 'b', at(1_000), 60_000), false, 'held by a');
        assert.equal(await store.jobs.renew('fixity', 'a', at(30_000), 60_000, { files: 3 }), true);
        assert.equal(await store.jobs.acquire('fixity', 'b', at(70_000), 60_000), false, 'the renewal extended the lease');
        assert.equal(await store.jobs.renew('fixity', 'b', at(70_000), 60_000, { files: 99 }), false, 'b does not hold it');
        const held = await store.jobs.get('fixity');
        assert.deepEqual({ ...held, leaseUntil: held?.leaseUntil?.getTime() }, { name: 'fixity', holder: 'a', leaseUntil: at(90_000).getTime(), state: { files: 3 } });
        // a stalls past its lease: b takes over, and a can no longer save or release.
        assert.equal(await store.jobs.acquire('fixity', 'b', at(91_000), 60_000), true);
        assert.equal(await store.jobs.renew('fixity', 'a', at(92_000), 60_000, { files: 4 }), false);
        await store.jobs.release('fixity', 'a', { files: 4 });
        assert.equal((await store.jobs.get('fixity'))?.holder, 'b');
        await store.jobs.release('fixity', 'b', { done: true });
        assert.deepEqual(await store.jobs.get('fixity'), { name: 'fixity', holder: null, leaseUntil: null, state: { done: true } });
        assert.equal(await store.jobs.acquire('fixity', 'c', at(93_000), 60_000), true, 'free again after a release');
        assert.equal(await store.jobs.acquire('other', 'c', at(93_000), 60_000), true, 'jobs are independent');
      });
    });

    describe('ledger', () => {
      it('starts an entry at 1 and counts repeats by the same user in the same unit', async () => {
        const { entry } = await commit(randomContent(10));
        const clerk = testAccount();
        assert.deepEqual(await record(clerk, entry.fileId, 'first.pdf'), { uploadCount: 1 });
        assert.deepEqual(await record(clerk, entry.fileId, 'second.pdf'), { uploadCount: 2 });
        const [e] = await store.ledger.entriesForFile(entry.fileId);
        assert.equal(e!.uploadCount, 2);
        assert.equal(e!.userId, clerk.id);
        assert.equal(e!.userName, clerk.username);
        assert.deepEqual(e!.unit, clerk.unit);
        assert.equal(e!.uploadFileName, 'first.pdf');
        assert.equal(e!.lastUploadFileName, 'second.pdf');
        assert.equal(e!.lastContentType, 'application/pdf');
        assert.ok(e!.lastUploadTime >= e!.uploadTime);
      });

      it('counts many uploads at once, in order, as one at a time would', async () => {
        const a = (await commit(randomContent(10))).entry;
        const b = (await commit(randomContent(11))).entry;
        const clerk = testAccount();
        const at = new Date();
        const upload = (fileId: string, fileName: string) => ({ account: clerk, fileId, fileName, contentType: 'application/pdf', at, day: at.toISOString().slice(0, 10), fileLength: 10, stored: false });
        await record(clerk, a.fileId);
        const counts = await store.ledger.countMany([upload(a.fileId, 'a2.pdf'), upload(b.fileId, 'b1.pdf'), upload(a.fileId, 'a3.pdf')].map((r) => uploadAction(r)));
        assert.deepEqual(counts.map((c) => c.uploadCount), [2, 1, 3]);
        const [entryA] = await store.ledger.entriesForFile(a.fileId);
        assert.deepEqual([entryA!.uploadCount, entryA!.lastUploadFileName], [3, 'a3.pdf']);
        assert.deepEqual(await store.ledger.countMany([]), []);
      });

      it('gives another user, or the same user in another unit, an entry of its own', async () => {
        const { entry } = await commit(randomContent(10));
        const clerk = testAccount();
        const colleague = testAccount();
        const movedClerk = { ...clerk, unit: unit('unit-b') };
        await record(clerk, entry.fileId);
        assert.deepEqual(await record(colleague, entry.fileId), { uploadCount: 1 });
        assert.deepEqual(await record(movedClerk, entry.fileId), { uploadCount: 1 });
        assert.equal((await store.ledger.entriesForFile(entry.fileId)).length, 3);
      });

      describe('an upload action is counted once under its key', () => {
        const at = new Date('2026-03-02T08:00:00Z');
        const upload = (account: Account, fileId: string, fileName = 'a.pdf') => ({ account, fileId, fileName, contentType: 'application/pdf', at, day: '2026-03-02', fileLength: 10, stored: false });
        /** What the ledger, the day's tally and the audit log hold of a file. */
        const holdings = async (fileId: string) => ({
          ledger: (await store.ledger.entriesForFile(fileId)).map((e) => e.uploadCount),
          tally: (await new ReportService(store.reports, new ReportCalendar('UTC')).savings(savingsQuery.parse({}))).summary.uploads,
          audit: (await store.audit.search({ limit: 100, offset: 0 })).items.filter((e) => e.fileId === fileId).length,
        });

        it('answers a key counted before as it was counted, and changes nothing', async () => {
          const { entry } = await commit(randomContent(10));
          const clerk = testAccount();
          const first = await store.ledger.count(uploadAction(upload(clerk, entry.fileId), 'tus:u1', 'stored'));
          assert.deepEqual(first, { accountId: clerk.id, fileId: entry.fileId, status: 'stored', uploadCount: 1, stored: false, repeated: false });
          await countUpload(store, upload(clerk, entry.fileId));
          // The retry's own record (another name, another day) is not what counts: the first is.
          const again = await store.ledger.count(uploadAction({ ...upload(clerk, entry.fileId, 'retry.pdf'), day: '2026-03-03' }, 'tus:u1', 'duplicate'));
          assert.deepEqual(again, { ...first, repeated: true });
          assert.deepEqual(await holdings(entry.fileId), { ledger: [2], tally: 2, audit: 2 });
          assert.equal((await store.ledger.entriesForFile(entry.fileId))[0]!.lastUploadFileName, 'a.pdf');
          assert.deepEqual(await store.ledger.counted('tus:u1'), { ...first, repeated: true });
          assert.equal(await store.ledger.counted('tus:unknown'), undefined);
        });

        it('counts one key sent ten times at once once, with one answer', async () => {
          const { entry } = await commit(randomContent(10));
          const clerk = testAccount();
          const answers = await Promise.all(Array.from({ length: 10 }, () => store.ledger.count(uploadAction(upload(clerk, entry.fileId), 'claim:c1'))));
          assert.deepEqual(new Set(answers.map((a) => a.uploadCount)), new Set([1]));
          assert.equal(answers.filter((a) => !a.repeated).length, 1);
          assert.deepEqual(await holdings(entry.fileId), { ledger: [1], tally: 1, audit: 1 });
        });

        it('counts a batch with keys counted before, leaving those as they were', async () => {
          const { entry } = await commit(randomContent(10));
          const clerk = testAccount();
          await store.ledger.count(uploadAction(upload(clerk, entry.fileId), 'batch:k:0'));
          const counts = await store.ledger.countMany(['batch:k:0', 'batch:k:1', 'batch:k:1'].map((key) => uploadAction(upload(clerk, entry.fileId), key)));
          assert.deepEqual(counts.map((c) => [c.uploadCount, c.repeated]), [[1, true], [2, false], [2, true]]);
          assert.deepEqual(await holdings(entry.fileId), { ledger: [2], tally: 2, audit: 2 });
          assert.equal(await store.ledger.finishInterrupted(new Date(Date.now() + 60_000)), 0);
        });
      });

      it('never loses an increment when one user repeats an upload concurrently', async () => {
        const { entry } = await commit(randomContent(10));
        const clerk = testAccount();
        const counts = await Promise.all(Array.from({ length: 50 }, () => record(clerk, entry.fileId)));
        assert.ok(counts.every((c) => c.uploadCount >= 1 && c.uploadCount <= 50));
        assert.equal((await store.ledger.entriesForFile(entry.fileId))[0]!.uploadCount, 50);
      });

      it("answers a unit's latest upload of a file only for units that uploaded it", async () => {
        const { entry } = await commit(randomContent(10));
        const clerk = testAccount();
        await record(clerk, entry.fileId, 'old.pdf', new Date(Date.now() - 1000));
        await record(testAccount(), entry.fileId, 'new.pdf');
        assert.equal((await store.ledger.latestUnitUpload('unit-a', entry.fileId))?.lastUploadFileName, 'new.pdf');
        assert.equal(await store.ledger.latestUnitUpload('unit-b', entry.fileId), undefined);
        assert.equal(await store.ledger.latestUnitUpload('unit-a', '0123456789abcdef01234567'), undefined);
      });

      it('tells whether a unit, or a county of a city, has uploaded a file', async () => {
        const { entry } = await commit(randomContent(10));
        await record(testAccount({ unit: unit('unit-q', '青县') }), entry.fileId);
        const cityLevel = testAccount({ unit: { id: 'city-hall', geoType: 'city', city: '沧州市' } });
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { unitId: 'unit-q' }), true);
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { unitId: 'unit-x' }), false);
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { city: '沧州市', county: '青县' }), true);
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { city: '沧州市', county: '献县' }), false);
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { city: '沧州市', county: null }), false);
        await record(cityLevel, entry.fileId);
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { city: '沧州市', county: null }), true);
      });

      it("lists a unit's files under the unit's names and all files for an admin view, with counts, search and paging", async () => {
        const clerkA = testAccount();
        const clerkB = testAccount({ unit: unit('unit-b') });
        const shared = (await commit(randomContent(10), 'b-name.pdf')).entry;
        const onlyA = (await commit(randomContent(11), 'a-only.pdf')).entry;
        const onlyB = (await commit(randomContent(12), 'b-only.pdf')).entry;
        const t = Date.now();
        await record(clerkB, shared.fileId, 'b-name.pdf', new Date(t - 5000));
        await record(clerkB, onlyB.fileId, 'b-only.pdf', new Date(t - 4000));
        await record(clerkA, onlyA.fileId, '档案 A.pdf', new Date(t - 3000));
        await record(clerkA, shared.fileId, '共享 文件.pdf', new Date(t - 2000));
        await record(clerkA, shared.fileId, '共享 文件.pdf', new Date(t - 1000), 'application/x-unit-a');

        const unitA = await store.catalog.list({ unitId: 'unit-a', accountId: clerkA.id, limit: 10, offset: 0 });
        assert.equal(unitA.total, 2);
        assert.deepEqual(
          unitA.items.map((i) => [i.entry.fileId, i.displayName, i.displayType, i.uploadCount, i.myUploadCount]),
          [
            [shared.fileId, '共享 文件.pdf', 'application/x-unit-a', 2, 2],
            [onlyA.fileId, '档案 A.pdf', 'application/pdf', 1, 1],
          ],
        );
        const searched = await store.catalog.list({ unitId: 'unit-a', accountId: clerkA.id, nameContains: '档案', limit: 10, offset: 0 });
        assert.deepEqual(searched.items.map((i) => i.entry.fileId), [onlyA.fileId]);
        assert.equal(searched.total, 1);
        const page2 = await store.catalog.list({ unitId: 'unit-a', accountId: clerkA.id, limit: 1, offset: 1 });
        assert.deepEqual([page2.total, page2.items.map((i) => i.entry.fileId)], [2, [onlyA.fileId]]);

        const all = await store.catalog.list({ accountId: clerkA.id, limit: 10, offset: 0 });
        assert.equal(all.total, 3);
        const sharedRow = all.items.find((i) => i.entry.fileId === shared.fileId)!;
        assert.deepEqual([sharedRow.displayName, sharedRow.uploadCount, sharedRow.myUploadCount], ['b-name.pdf', 3, 2]);
        const literal = await store.catalog.list({ accountId: clerkA.id, nameContains: '%', limit: 10, offset: 0 });
        assert.equal(literal.total, 0, 'search text is literal, not a pattern');
      });
    });

    describe('accounts, sessions and tokens', () => {
      const newAccount = (username: string) => testAccount({ username });

      it('creates, finds and lists accounts, and refuses a taken username', async () => {
        const a = newAccount('王五');
        await store.accounts.create(a);
        assert.equal((await store.accounts.findByUsername('王五'))?.id, a.id);
        assert.deepEqual((await store.accounts.get(a.id))?.unit, a.unit);
        assert.equal(await store.accounts.count(), 1);
        await assert.rejects(store.accounts.create({ ...newAccount('王五') }), ConflictError);
        assert.equal((await store.accounts.list()).length, 1);
      });

      it('changes a password and whether it must be changed', async () => {
        const a = newAccount('li');
        await store.accounts.create(a);
        await store.accounts.setPassword(a.id, 'scrypt$new', true);
        const changed = await store.accounts.get(a.id);
        assert.deepEqual([changed?.passwordHash, changed?.mustChangePassword], ['scrypt$new', true]);
      });

      it('keeps sessions until they expire or are deleted', async () => {
        const now = new Date();
        const later = new Date(now.getTime() + 60_000);
        const s = { idHash: 'h1', accountId: 'acc', csrfToken: 'c', createdAt: now, expiresAt: later };
        await store.sessions.create(s);
        await store.sessions.create({ ...s, idHash: 'h2' });
        await store.sessions.create({ ...s, idHash: 'other', accountId: 'acc2' });
        assert.equal((await store.sessions.get('h1', now))?.csrfToken, 'c');
        assert.equal(await store.sessions.get('h1', later), undefined);
        await store.sessions.delete('h1');
        assert.equal(await store.sessions.get('h1', now), undefined);
        await store.sessions.deleteForAccount('acc');
        assert.equal(await store.sessions.get('h2', now), undefined);
        await store.sessions.purgeExpired(later);
        assert.equal(await store.sessions.get('other', now), undefined);
      });

      it('hands out a claim once, and purges expired ones', async () => {
        const claim = { id: 'c'.repeat(32), accountId: 'acc', fileId: 'f'.repeat(24), fileName: 'a.pdf', contentType: 'application/pdf', ranges: [{ start: 0, end: 10 }], expected: ['e'.repeat(32)], expiresAt: new Date(Date.now() + 60_000) };
        await store.claims.create(claim);
        await store.claims.create({ ...claim, id: 'old'.padEnd(32, '0'), expiresAt: new Date(Date.now() - 1000) });
        const [first, second] = await Promise.all([store.claims.take(claim.id), store.claims.take(claim.id)]);
        assert.deepEqual([first, second].filter(Boolean), [claim], 'exactly one taker gets it');
        await store.claims.purgeExpired(new Date());
        assert.equal(await store.claims.take('old'.padEnd(32, '0')), undefined);
      });

      it('creates, lists and revokes API tokens', async () => {
        const t = { id: 'abc', accountId: 'acc', secretHash: 'f'.repeat(64), label: 'scanner', createdAt: new Date() };
        await store.tokens.create(t);
        assert.deepEqual(await store.tokens.get('abc'), t);
        assert.deepEqual((await store.tokens.list()).map((x) => x.id), ['abc']);
        assert.equal(await store.tokens.revoke('abc'), true);
        assert.equal(await store.tokens.revoke('abc'), false);
        assert.equal(await store.tokens.get('abc'), undefined);
      });

      it('revokes every token of one account, and only those', async () => {
        const token = (id: string, accountId: string) => ({ id, accountId, secretHash: 'f'.repeat(64), label: '', createdAt: new Date() });
        for (const t of [token('t1', 'acc1'), token('t2', 'acc1'), token('t3', 'acc2')]) await store.tokens.create(t);
        assert.equal(await store.tokens.revokeForAccount('acc1'), 2);
        assert.equal(await store.tokens.revokeForAccount('acc1'), 0);
        assert.deepEqual((await store.tokens.list()).map((x) => x.id), ['t3']);
      });
    });

    describe('audit log', () => {
      const event = (minutes: number, overrides: Partial<AuditEvent> = {}): AuditEvent => ({
        at: new Date(Date.UTC(2026, 10, 1, 8, minutes)),
        action: 'download',
        userId: 'u1',
        userName: 'clerk-1',
        unit: unit('unit-a', '青县'),
        address: '10.1.2.3',
        fileId: 'f'.repeat(24),
        fileName: '县志.pdf',
        detail: '100 bytes',
        ...overrides,
      });

      it('appends events and finds them newest first, with every field back', async () => {
        await store.audit.append(event(1, { action: 'login', fileId: null, fileName: null, detail: '' }));
        await store.audit.append(event(3));
        await store.audit.append(event(2, { action: 'login_failed', userId: null, userName: 'who?', unit: null, address: null, fileId: null, fileName: null, detail: 'login_failed' }));
        const { items, total } = await store.audit.search({ limit: 10, offset: 0 });
        assert.equal(total, 3);
        assert.deepEqual(items.map((e) => e.at.getUTCMinutes()), [3, 2, 1]);
        const { id, ...first } = items[0]!;
        assert.equal(typeof id, 'string');
        assert.deepEqual(first, event(3));
        assert.deepEqual(items[1]!.unit, null);
      });

      it('appends many events at once, each found with every field', async () => {
        await store.audit.appendMany([event(1), event(2, { action: 'upload', detail: 'batch: stored' }), event(3, { action: 'upload_failed', fileId: null })]);
        await store.audit.appendMany([]);
        const { items, total } = await store.audit.search({ limit: 10, offset: 0 });
        assert.equal(total, 3);
        assert.deepEqual(items.map(({ id: _id, ...e }) => e), [event(3, { action: 'upload_failed', fileId: null }), event(2, { action: 'upload', detail: 'batch: stored' }), event(1)]);
      });

      it('filters by time (from inclusive, to exclusive), action, user, unit subtree and text, and pages', async () => {
        await store.audit.append(event(1, { action: 'upload', fileName: '50%_off.pdf' }));
        await store.audit.append(event(2, { userName: 'clerk-2', unit: unit('unit-b', '献县') }));
        await store.audit.append(event(3, { unit: { id: 'city-office', geoType: 'city', city: '沧州市' } }));
        await store.audit.append(event(4, { detail: 'bytes 0-99 of 1000' }));
        const find = async (query: Omit<AuditSearch, 'limit' | 'offset'>, limit = 10, offset = 0) =>
          (await store.audit.search({ ...query, limit, offset })).items.map((e) => e.at.getUTCMinutes());
        assert.deepEqual(await find({ from: new Date(Date.UTC(2026, 10, 1, 8, 2)), to: new Date(Date.UTC(2026, 10, 1, 8, 4)) }), [3, 2]);
        assert.deepEqual(await find({ action: 'upload' }), [1]);
        assert.deepEqual(await find({ userName: 'clerk-2' }), [2]);
        assert.deepEqual(await find({ unit: { city: '沧州市' } }), [4, 3, 2, 1]);
        assert.deepEqual(await find({ unit: { city: '沧州市', county: '青县' } }), [4, 1]);
        assert.deepEqual(await find({ unit: { city: '沧州市', county: '献县' } }), [2]);
        assert.deepEqual(await find({ unit: { city: '沧州市', county: '青县', town: 'unit-a镇' } }), [4, 1]);
        assert.deepEqual(await find({ text: '50%' }), [1], 'wildcards are literal');
        assert.deepEqual(await find({ text: '0-99' }), [4], 'the detail is searched too');
        assert.deepEqual(await find({ text: '_' }), [1]);
        assert.deepEqual(await find({}, 2, 1), [3, 2]);
        assert.equal((await store.audit.search({ unit: { city: '沧州市', county: '青县' }, limit: 1, offset: 0 })).total, 2);
      });
    });

    describe('resumable uploads', () => {
      const minute = 60_000;
      const newUpload = async (id: string, at = new Date()) => {
        const stagingId = await store.content.stage(at);
        const upload = {
          id,
          ownerId: 'acc-1',
          stagingId,
          length: 5000,
          metadata: { filename: '档案.pdf', note: null },
          createdAt: at,
          activeAt: at,
          expiresAt: new Date(at.getTime() + 60 * minute),
        };
        await store.uploads.create(upload);
        return upload;
      };
      const lock = (holder: string, until = new Date(Date.now() + minute)) => ({ holder, host: 'h', pid: 1, until });

      it('keeps an upload\'s state: owner, staging area, length, metadata, offset 0, times, no lock, no outcome', async () => {
        const u = await newUpload('a'.repeat(32));
        assert.deepEqual(await store.uploads.get(u.id), { ...u, offset: 0, lock: null, completing: null, outcome: null });
        assert.equal(await store.uploads.get('b'.repeat(32)), undefined);
      });

      it('gives the write lock to one of two requests; the other learns who holds it', async () => {
        const u = await newUpload('c'.repeat(32));
        const now = new Date();
        const [first, second] = await Promise.all([store.uploads.acquire(u.id, lock('x/1'), now), store.uploads.acquire(u.id, lock('y/1'), now)]);
        const statuses = [first.status, second.status].sort();
        assert.deepEqual(statuses, ['acquired', 'busy']);
        const busy = [first, second].find((a) => a.status === 'busy')!;
        const acquired = [first, second].find((a) => a.status === 'acquired')!;
        assert.ok(busy.status === 'busy' && acquired.status === 'acquired');
        assert.equal(busy.lock.holder, acquired.upload.lock!.holder);
        assert.deepEqual((await store.uploads.acquire('d'.repeat(32), lock('z/1'), now)).status, 'missing');
      });

      it('frees a lock that is released, whose lease ran out, or whose holder is named as gone', async () => {
        const u = await newUpload('e'.repeat(32));
        const now = new Date();
        assert.equal((await store.uploads.acquire(u.id, lock('x/1'), now)).status, 'acquired');
        assert.equal((await store.uploads.acquire(u.id, lock('y/1'), now)).status, 'busy');
        assert.equal((await store.uploads.acquire(u.id, lock('y/1'), now, 'someone-else/9')).status, 'busy');
        assert.equal((await store.uploads.acquire(u.id, lock('y/1'), now, 'x/1')).status, 'acquired', 'a gone holder is replaced');
        await store.uploads.release(u.id, 'x/1'); // not the holder any more: no effect
        assert.equal((await store.uploads.acquire(u.id, lock('z/1'), now)).status, 'busy');
        await store.uploads.release(u.id, 'y/1');
        assert.equal((await store.uploads.acquire(u.id, lock('z/1', new Date(now.getTime() + 1000)), now)).status, 'acquired');
        assert.equal((await store.uploads.acquire(u.id, lock('w/1'), new Date(now.getTime() + 2000))).status, 'acquired', 'the lease ran out');
      });

      it('records progress, renewals and the outcome only for the lock holder', async () => {
        const u = await newUpload('f'.repeat(32));
        const now = new Date();
        await store.uploads.acquire(u.id, lock('x/1'), now);
        const later = new Date(now.getTime() + minute);
        const progress = { offset: 4096, activeAt: later, expiresAt: new Date(later.getTime() + 60 * minute), lockUntil: new Date(later.getTime() + minute) };
        assert.equal(await store.uploads.advance(u.id, 'y/1', progress), false);
        assert.equal((await store.uploads.get(u.id))!.offset, 0);
        assert.equal(await store.uploads.advance(u.id, 'x/1', progress), true);
        await store.uploads.renew(u.id, 'x/1', new Date(later.getTime() + 5 * minute));
        await store.uploads.renew(u.id, 'y/1', new Date(0));
        const advanced = (await store.uploads.get(u.id))!;
        assert.deepEqual([advanced.offset, advanced.activeAt, advanced.expiresAt], [4096, later, progress.expiresAt]);
        assert.deepEqual(advanced.lock!.until, new Date(later.getTime() + 5 * minute));
        const key = { md5: 'a'.repeat(32), sha256: 'b'.repeat(64), length: 5000 };
        assert.equal(await store.uploads.markCompleting(u.id, 'y/1', key), false);
        assert.equal(await store.uploads.markCompleting(u.id, 'x/1', key), true);
        assert.deepEqual((await store.uploads.get(u.id))!.completing, key);
        const outcome = { status: 'stored' as const, fileId: '0'.repeat(24), uploadCount: 1 };
        assert.equal(await store.uploads.finish(u.id, 'y/1', outcome), false);
        assert.equal(await store.uploads.finish(u.id, 'x/1', outcome), true);
        const finished = (await store.uploads.get(u.id))!;
        assert.deepEqual([finished.outcome, finished.offset], [outcome, 5000], 'the outcome and the full offset together');
        await store.uploads.delete(u.id);
        assert.equal(await store.uploads.get(u.id), undefined);
      });

      it('rewinds an upload to bytes kept, forgetting a completion under way, only for the lock holder and never a finished upload', async () => {
        const u = await newUpload('9'.repeat(32));
        const now = new Date();
        await store.uploads.acquire(u.id, lock('x/1'), now);
        const progress = { offset: 4096, activeAt: now, expiresAt: u.expiresAt, lockUntil: new Date(now.getTime() + minute) };
        await store.uploads.advance(u.id, 'x/1', progress);
        const key = { md5: 'a'.repeat(32), sha256: 'b'.repeat(64), length: 5000 };
        await store.uploads.markCompleting(u.id, 'x/1', key);
        assert.equal(await store.uploads.rewind(u.id, 'y/1', 1000), false);
        assert.deepEqual([(await store.uploads.get(u.id))!.offset, (await store.uploads.get(u.id))!.completing], [4096, key]);
        assert.equal(await store.uploads.rewind(u.id, 'x/1', 1000), true);
        assert.deepEqual([(await store.uploads.get(u.id))!.offset, (await store.uploads.get(u.id))!.completing], [1000, null]);
        assert.equal(await store.uploads.rewind(u.id, 'x/1', 3000), true);
        assert.equal((await store.uploads.get(u.id))!.offset, 1000, 'never forward');
        const outcome = { status: 'stored' as const, fileId: '0'.repeat(24), uploadCount: 1 };
        await store.uploads.finish(u.id, 'x/1', outcome);
        assert.equal(await store.uploads.rewind(u.id, 'x/1', 0), false);
        assert.deepEqual([(await store.uploads.get(u.id))!.offset, (await store.uploads.get(u.id))!.outcome], [5000, outcome]);
      });

      it('lists uploads past their expiry, oldest first, up to a limit', async () => {
        const long = Date.now() - 3 * 3600_000;
        await newUpload('1'.repeat(32), new Date(long));
        await newUpload('2'.repeat(32), new Date(long - minute));
        await newUpload('3'.repeat(32), new Date(long + minute));
        await newUpload('4'.repeat(32));
        assert.deepEqual((await store.uploads.listExpired(new Date(), 10)).map((u) => u.id[0]), ['2', '1', '3']);
        assert.deepEqual((await store.uploads.listExpired(new Date(), 2)).map((u) => u.id[0]), ['2', '1']);
      });

      it('spares a live upload\'s staging area from garbage collection, however old', async () => {
        const long = new Date(Date.now() - 7 * 24 * 3600_000);
        const u = await newUpload('5'.repeat(32), long);
        await store.content.write(u.stagingId, 0, [randomContent(100)]);
        const abandoned = await store.content.stage(long);
        await store.content.write(abandoned, 0, [randomContent(100)]);
        assert.deepEqual(await store.content.collectGarbage(new Date()), { stagingAreas: 1, orphans: 0 });
        assert.deepEqual(await readAll(store.content.readStaged(u.stagingId, 100)).then((b) => b.length), 100);
      });
    });
  });
}
