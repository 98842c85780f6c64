import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ContentDamagedError } from '../../errors.js';
import type { ArchiveStore } from '../archive-store.js';
import { commitBytes, keyOf, randomContent, readAll, stageBytes } from '../../../test/support/content.js';
import {
  bytesKept,
  countChunks,
  damageContent,
  fileNumber,
  forgetChunkSums,
  TEST_CHUNK_SIZE,
  useFreshStore,
} from '../../../test/support/stores.js';
import type { OpenedStore, StoreTarget } from '../../../test/support/stores.js';

/** What every store adapter's content must do (run against each adapter by test/store/). */
export function contentConformance(target: StoreTarget): void {
  describe(`content conformance: ${target.name}`, { skip: target.skip }, () => {
    let opened: OpenedStore;
    let store: ArchiveStore;
    useFreshStore(target, (fresh) => ((opened = fresh), (store = fresh.store)));
    const CS = TEST_CHUNK_SIZE;

    describe('content and catalog', () => {
      it('reads a committed file back byte for byte, whole and in ranges across chunk edges', async () => {
        const data = randomContent(3 * CS + 123);
        const { status, entry } = await commitBytes(store, data);
        assert.equal(status, 'stored');
        assert.deepEqual(await readAll(store.content.read(entry)), data);
        for (const [start, end] of [
          [0, 1],
          [CS - 1, CS + 1],
          [CS, 2 * CS],
          [5, 3 * CS + 100],
          [data.length - 1, data.length],
          [0, data.length],
        ] as const) {
          assert.deepEqual(
            await readAll(store.content.read(entry, { start, end })),
            data.subarray(start, end),
            `range ${start}-${end}`,
          );
        }
      });

      it('catalogues id, hashes, length, chunk size and count, first name, type and date', async () => {
        const data = randomContent(2 * CS + 1);
        const before = Date.now();
        const { entry } = await commitBytes(store, data, '县志 第一卷.pdf');
        assert.match(entry.fileId, /^[0-9a-f]{24}$/);
        assert.deepEqual({ md5: entry.md5, sha256: entry.sha256, length: entry.length }, keyOf(data));
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
        const first = await commitBytes(store, Buffer.alloc(0), 'empty.txt');
        const second = await commitBytes(store, Buffer.alloc(0), 'also-empty.txt');
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
        const { entry } = await store.content.commit(stagingId, {
          key,
          fileName: 'big.tif',
          contentType: 'image/tiff',
          uploadDate: new Date(),
        });
        assert.equal(entry.length, length);
        assert.equal(entry.chunkCount, Math.ceil(length / CS));
        assert.equal((await store.catalog.findByKey(key))?.length, length);
        assert.equal(await store.catalog.findByKey({ ...key, length: length + 1 }), undefined);
      });

      it('removes the staged chunks when the catalog already holds the content', async () => {
        const data = randomContent(2 * CS);
        const first = await commitBytes(store, data, 'a.pdf');
        const second = await commitBytes(store, data, 'b.pdf');
        assert.equal(second.status, 'duplicate');
        assert.equal(second.entry.fileId, first.entry.fileId);
        assert.equal(second.entry.fileName, 'a.pdf');
        assert.equal(await countChunks(opened), 2);
      });

      it('never merges on MD5 alone: a different SHA-256 is a separate file, flagged as an MD5 collision', async () => {
        const a = await stageBytes(store, randomContent(100));
        const b = await stageBytes(store, randomContent(100));
        const sharedMd5 = a.key.md5;
        const first = await store.content.commit(a.stagingId, {
          key: a.key,
          fileName: 'a',
          contentType: 'text/plain',
          uploadDate: new Date(),
        });
        const second = await store.content.commit(b.stagingId, {
          key: { ...b.key, md5: sharedMd5 },
          fileName: 'b',
          contentType: 'text/plain',
          uploadDate: new Date(),
        });
        assert.equal(second.status, 'stored');
        assert.notEqual(second.entry.fileId, first.entry.fileId);
        assert.equal(second.entry.md5Collision, true);
        assert.equal((await store.catalog.get(first.entry.fileId))?.md5Collision, true);
      });

      it('keeps exactly one copy when the same new content is committed concurrently', async () => {
        const data = randomContent(CS + 10);
        const staged = await Promise.all(Array.from({ length: 20 }, () => stageBytes(store, data)));
        const outcomes = await Promise.all(
          staged.map((s) =>
            store.content.commit(s.stagingId, {
              key: s.key,
              fileName: 'same.pdf',
              contentType: 'application/pdf',
              uploadDate: new Date(),
            }),
          ),
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
        const { entry } = await store.content.commit(committedId, {
          key: keyOf(committedData),
          fileName: 'kept.pdf',
          contentType: 'application/pdf',
          uploadDate: new Date(),
        });
        await stageAt(long, randomContent(CS + 6)); // abandoned
        await stageAt(new Date(), randomContent(CS + 7)); // still being uploaded
        assert.equal(await countChunks(opened), 6);
        assert.deepEqual(await store.content.collectGarbage(new Date(Date.now() - dayMs)), {
          stagingAreas: 1,
          orphans: 0,
        });
        assert.equal(await countChunks(opened), 4);
        assert.deepEqual(await readAll(store.content.read(entry)), committedData);
        assert.deepEqual(
          await store.content.collectGarbage(new Date(Date.now() - dayMs)),
          { stagingAreas: 0, orphans: 0 },
          'nothing left to do',
        );
      });

      it('continues a partial chunk at a byte offset, also over stale bytes of an interrupted write', async () => {
        const data = randomContent(3 * CS + 50);
        const stagingId = await store.content.stage(new Date());
        await store.content.write(stagingId, 0, [data.subarray(0, CS), data.subarray(CS, CS + 20)]);
        // An interrupted request got further than what was acknowledged, with other bytes.
        await store.content.write(stagingId, CS + 20, [randomContent(CS)]);
        // The resumed upload continues from the acknowledged offset, in parts of any size.
        await store.content.write(stagingId, CS + 20, [
          data.subarray(CS + 20, CS + 21),
          data.subarray(CS + 21, 2 * CS + 7),
        ]);
        await store.content.write(stagingId, 2 * CS + 7, [data.subarray(2 * CS + 7)]);
        assert.deepEqual(await readAll(store.content.readStaged(stagingId, data.length)), data);
        const { entry } = await store.content.commit(stagingId, {
          key: keyOf(data),
          fileName: 'x',
          contentType: 'text/plain',
          uploadDate: new Date(),
        });
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
        const { status, entry } = await store.content.commit(stagingId, {
          key: keyOf(data),
          fileName: 'resumed.pdf',
          contentType: 'application/pdf',
          uploadDate: new Date(),
        });
        assert.equal(status, 'stored');
        assert.deepEqual([entry.chunkSize, entry.chunkCount], [CS, 4], 'chunked as the upload began');
        assert.deepEqual(await readAll(store.content.read(entry)), data, 'read back whole, no damage reported');
        assert.deepEqual(
          await readAll(store.content.read(entry, { start: CS - 3, end: 2 * CS + 9 })),
          data.subarray(CS - 3, 2 * CS + 9),
        );
        assert.equal(await store.content.lacksChunkSums(entry), false, 'every chunk has its checksum');
        // Content staged after the restart is chunked at the new size.
        const fresh = await commitBytes(store, randomContent(CS + 1));
        assert.deepEqual([fresh.entry.chunkSize, fresh.entry.chunkCount], [CS / 4, 5]);
      });

      it('commits many staging areas at once, in order: new content stored, held content and a repeat within the batch counted as duplicates', async () => {
        const held = randomContent(CS + 5);
        const heldEntry = (await commitBytes(store, held)).entry;
        const fresh = randomContent(2 * CS + 7);
        const empty = Buffer.alloc(0);
        const items = [];
        for (const data of [fresh, held, fresh, empty]) {
          const staged = await stageBytes(store, data);
          items.push({
            stagingId: staged.stagingId,
            entry: { key: staged.key, fileName: 'batch.pdf', contentType: 'application/pdf', uploadDate: new Date() },
          });
        }
        const outcomes = await store.content.commitMany(items);
        assert.deepEqual(
          outcomes.map((o) => o.status),
          ['stored', 'duplicate', 'duplicate', 'stored'],
        );
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
            {
              stagingId: short,
              entry: {
                key: keyOf(whole),
                fileName: 'short.pdf',
                contentType: 'application/pdf',
                uploadDate: new Date(),
              },
            },
            {
              stagingId: good.stagingId,
              entry: { key: good.key, fileName: 'good.pdf', contentType: 'application/pdf', uploadDate: new Date() },
            },
          ]),
        );
        assert.equal(await store.catalog.findByKey(keyOf(whole)), undefined, 'no short file catalogued');
        await store.content.write(short, CS, [whole.subarray(CS)]);
        const { status, entry } = await store.content.commit(short, {
          key: keyOf(whole),
          fileName: 'short.pdf',
          contentType: 'application/pdf',
          uploadDate: new Date(),
        });
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

    describe('small contents stored together (storeMany)', () => {
      const entryOf = (data: Uint8Array, fileName = '第0001页.jpg') => ({
        key: keyOf(data),
        fileName,
        contentType: 'image/jpeg',
        uploadDate: new Date(),
      });

      it('stores contents given in memory, in order: new ones stored, held ones and repeats within the batch duplicates', async () => {
        const held = randomContent(CS + 5);
        const heldEntry = (await commitBytes(store, held)).entry;
        const fresh = randomContent(3 * CS + 123);
        const small = randomContent(17);
        const empty = Buffer.alloc(0);
        // Each as the parts it arrived in: the first cut across chunk edges and with an empty part.
        const inParts = (bytes: Buffer, i: number) =>
          i === 0
            ? [bytes.subarray(0, 5), bytes.subarray(5, 5), bytes.subarray(5, CS + 1), bytes.subarray(CS + 1)]
            : [bytes];
        const outcomes = await store.content.storeMany(
          [fresh, held, fresh, empty, small].map((bytes, i) => ({
            parts: inParts(bytes, i),
            entry: entryOf(bytes, `第${i}页.jpg`),
          })),
        );
        assert.deepEqual(
          outcomes.map((o) => o.status),
          ['stored', 'duplicate', 'duplicate', 'stored', 'stored'],
        );
        assert.equal(outcomes[1]!.entry.fileId, heldEntry.fileId);
        assert.equal(outcomes[2]!.entry.fileId, outcomes[0]!.entry.fileId, 'a repeat is the first copy');
        const stored = outcomes[0]!.entry;
        assert.match(stored.fileId, /^[0-9a-f]{24}$/);
        assert.deepEqual(
          [stored.fileName, stored.chunkSize, stored.chunkCount, stored.length],
          ['第0页.jpg', CS, 4, fresh.length],
        );
        assert.deepEqual(await store.catalog.findByKey(keyOf(fresh)), stored);
        assert.deepEqual(await readAll(store.content.read(stored)), fresh);
        for (const [start, end] of [
          [0, 1],
          [CS - 1, CS + 1],
          [2 * CS, 3 * CS + 123],
        ] as const)
          assert.deepEqual(await readAll(store.content.read(stored, { start, end })), fresh.subarray(start, end));
        assert.deepEqual(await readAll(store.content.read(outcomes[3]!.entry)), empty);
        assert.deepEqual(await readAll(store.content.read(outcomes[4]!.entry)), small);
        assert.deepEqual(
          await readAll(store.content.read(outcomes[4]!.entry, { start: 3, end: 9 }, { unchecked: true })),
          small.subarray(3, 9),
        );
        assert.equal(await store.content.lacksChunkSums(stored), false, 'every chunk has its checksum');
        assert.equal(await store.catalog.count(), 4);
        assert.deepEqual(await store.content.storeMany([]), []);
      });

      it("reads a proof's ranges of a content in one call, packed or not, and says which bytes are missing", async () => {
        const [before, packed, after] = [randomContent(CS + 3), randomContent(2 * CS + 11), randomContent(50)];
        const outcomes = await store.content.storeMany(
          [before, packed, after].map((bytes) => ({ parts: [bytes], entry: entryOf(bytes) })),
        );
        const alone = randomContent(CS + 40);
        const { entry: aloneEntry } = await commitBytes(store, alone);
        for (const [entry, data] of [
          [outcomes[1]!.entry, packed],
          [aloneEntry, alone],
        ] as const) {
          const ranges = [
            { start: 0, end: 7 },
            { start: CS - 2, end: CS + 2 },
            { start: data.length - 5, end: data.length },
            { start: 3, end: 3 },
          ];
          const parts = await store.content.readRanges(entry, ranges);
          assert.deepEqual(
            parts.map((part) => Buffer.from(part)),
            ranges.map(({ start, end }) => data.subarray(start, end)),
          );
          // Past the content's end (in a pack: into the next content's bytes) is missing, not read.
          await assert.rejects(
            store.content.readRanges(entry, [{ start: data.length - 2, end: data.length + 3 }]),
            (err: unknown) =>
              err instanceof ContentDamagedError && err.kind === 'missing' && err.offset === data.length,
          );
        }
        await damageContent(opened, aloneEntry.fileId, { kind: 'lose-chunk', n: 1 });
        await assert.rejects(
          store.content.readRanges(aloneEntry, [{ start: CS + 1, end: CS + 5 }]),
          (err: unknown) => err instanceof ContentDamagedError && err.kind === 'missing',
        );
      });

      it('keeps contents of later batches apart from earlier ones, and garbage collection keeps them all', async () => {
        const batches = [0, 1, 2].map(() => [randomContent(100), randomContent(CS), randomContent(CS + 1)]);
        const entries = [];
        for (const batch of batches)
          entries.push(
            ...(await store.content.storeMany(batch.map((bytes) => ({ parts: [bytes], entry: entryOf(bytes) })))),
          );
        await store.content.collectGarbage(new Date(Date.now() + 3_600_000));
        for (const [k, data] of batches.flat().entries())
          assert.deepEqual(await readAll(store.content.read(entries[k]!.entry)), data, `content ${k}`);
      });

      it('compacts with every content reading the same, byte for byte and checked, and then has nothing left to do', async () => {
        const batch = [randomContent(100), randomContent(3 * CS + 7), randomContent(CS)];
        const entries = (
          await store.content.storeMany(batch.map((bytes) => ({ parts: [bytes], entry: entryOf(bytes) })))
        ).map((o) => o.entry);
        // Duplicates, twice over: bytes (on the embedded store, in the same pack) that nothing locates.
        for (let i = 0; i < 2; i++)
          await store.content.storeMany(batch.map((bytes) => ({ parts: [bytes], entry: entryOf(bytes) })));
        // After a restart: no process appends to the bytes any more.
        store = await opened.reopen({ chunkSize: CS });
        const first = await store.content.compact(new Date(Date.now() + 3_600_000));
        assert.ok(first.reclaimedBytes >= 0 && first.packs >= 0);
        for (const [k, data] of batch.entries())
          assert.deepEqual(await readAll(store.content.read(entries[k]!)), data, `content ${k}`);
        assert.deepEqual(await store.content.compact(new Date(Date.now() + 3_600_000)), {
          packs: 0,
          reclaimedBytes: 0,
        });
      });

      it('refuses a changed chunk of a content stored with others, and bytes missing from it', async () => {
        const before = randomContent(CS + 9);
        const data = randomContent(3 * CS + 5);
        const [, outcome] = await store.content.storeMany(
          [before, data].map((bytes) => ({ parts: [bytes], entry: entryOf(bytes) })),
        );
        const { entry } = outcome!;
        await damageContent(opened, entry.fileId, { kind: 'flip-byte', offset: CS + 7 });
        await assert.rejects(
          readAll(store.content.read(entry)),
          (err: unknown) => err instanceof ContentDamagedError && err.kind === 'corrupted' && err.offset === CS,
        );
        assert.deepEqual(await readAll(store.content.read(entry, { start: 10, end: 20 })), data.subarray(10, 20));
        await damageContent(opened, entry.fileId, { kind: 'lose-chunk', n: 2 });
        await assert.rejects(
          readAll(store.content.read(entry, { start: 2 * CS, end: 2 * CS + 1 })),
          (err: unknown) => err instanceof ContentDamagedError && err.kind === 'missing' && err.offset === 2 * CS,
        );
        // The content stored before it in the same batch is untouched.
        const first = await store.catalog.findByKey(keyOf(before));
        assert.deepEqual(await readAll(store.content.read(first!)), before);
      });
    });

    describe('damaged content', () => {
      it('fails a read that meets missing bytes with a ContentDamagedError naming the first, never a short stream', async () => {
        const data = randomContent(3 * CS + 5);
        const { entry } = await commitBytes(store, data);
        await damageContent(opened, entry.fileId, { kind: 'lose-chunk', n: 1 });
        // Bytes before the damage still read.
        assert.deepEqual(await readAll(store.content.read(entry, { start: 0, end: 100 })), data.subarray(0, 100));
        await assert.rejects(
          readAll(store.content.read(entry)),
          (err: unknown) =>
            err instanceof ContentDamagedError &&
            err.kind === 'missing' &&
            err.fileId === entry.fileId &&
            err.offset === CS,
        );
        await assert.rejects(readAll(store.content.read(entry, { start: CS - 10, end: CS + 10 })), ContentDamagedError);
      });

      it('refuses a chunk changed on disk before any of its bytes go out, and names it', async () => {
        const data = randomContent(3 * CS + 5);
        const { entry } = await commitBytes(store, data);
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
        assert.deepEqual(
          await readAll(store.content.read(entry, { start: 2 * CS + 1, end: 3 * CS + 5 })),
          data.subarray(2 * CS + 1),
        );
        assert.deepEqual(await readAll(store.content.read(entry, { start: 10, end: 20 })), data.subarray(10, 20));
        await assert.rejects(
          readAll(store.content.read(entry, { start: 2 * CS - 1, end: 2 * CS + 1 })),
          ContentDamagedError,
        );
        // The proof of possession reads unchecked: exactly the stored bytes, changed or not.
        const proof = await readAll(store.content.read(entry, { start: CS + 5, end: CS + 9 }, { unchecked: true }));
        assert.equal(proof.length, 4);
        assert.notDeepEqual(proof, data.subarray(CS + 5, CS + 9));
        const [changed, intact] = await store.content.readRanges(entry, [
          { start: CS + 5, end: CS + 9 },
          { start: 1, end: 4 },
        ]);
        assert.deepEqual(Buffer.from(changed!), proof);
        assert.deepEqual(Buffer.from(intact!), data.subarray(1, 4));
      });

      it('sums a chunk written in several pieces, also where an upload resumes and rewrites bytes', async () => {
        const data = randomContent(2 * CS + 77);
        const stagingId = await store.content.stage(new Date());
        await store.content.write(stagingId, 0, [data.subarray(0, 1000)]);
        await store.content.write(stagingId, 1000, [data.subarray(1000, CS + 10)]);
        // A broken-off request's bytes were kept up to CS + 10; the resume starts earlier and rewrites.
        await store.content.write(stagingId, CS - 3, [
          data.subarray(CS - 3, CS + 2),
          data.subarray(CS + 2, 2 * CS + 77),
        ]);
        const { entry } = await store.content.commit(stagingId, {
          key: keyOf(data),
          fileName: 'pieces.pdf',
          contentType: 'application/pdf',
          uploadDate: new Date(),
        });
        assert.deepEqual(await readAll(store.content.read(entry)), data, 'every chunk matches its sum');
        await damageContent(opened, entry.fileId, { kind: 'flip-byte', offset: 2 * CS + 76 });
        await assert.rejects(
          readAll(store.content.read(entry, { start: 2 * CS, end: 2 * CS + 1 })),
          (err: unknown) => err instanceof ContentDamagedError && err.offset === 2 * CS,
        );
      });

      it('refuses a stored chunk of the wrong size, even one written before checksums, instead of shifting the bytes after it', async () => {
        const data = randomContent(3 * CS + 5);
        const { entry } = await commitBytes(store, data);
        await forgetChunkSums(opened, entry.fileId);
        await damageContent(opened, entry.fileId, { kind: 'grow-chunk', n: 1 });
        const read = await readAll(store.content.read(entry)).catch((err: unknown) => err);
        if (read instanceof Buffer) assert.deepEqual(read, data, 'the file as stored, never shifted');
        else assert.ok(read instanceof ContentDamagedError && read.offset === CS, String(read));
        if (opened.mongo)
          assert.ok(read instanceof ContentDamagedError, 'a GridFS chunk document of the wrong size is damage');
      });

      it('fails a read of a file whose bytes are all gone', async () => {
        const { entry } = await commitBytes(store, randomContent(2 * CS));
        await damageContent(opened, entry.fileId, { kind: 'lose-file' });
        await assert.rejects(
          readAll(store.content.read(entry)),
          (err: unknown) => err instanceof ContentDamagedError && err.offset === 0,
        );
      });
    });

    describe('deleting a content (purge)', () => {
      const noBytes = { files: 0, chunks: 0, rows: 0 };

      it('takes an entry out of the catalog at once, stores the same content anew meanwhile, then deletes the old bytes only', async () => {
        const data = randomContent(2 * CS + 7);
        const { entry } = await commitBytes(store, data);
        const fileNo = await fileNumber(opened, entry.fileId);
        const at = new Date('2026-12-01T00:00:00Z');
        const deleting = await store.catalog.beginDeletion(entry.fileId, at);
        assert.deepEqual(
          deleting,
          { ...entry, deletingSince: at, deletionCleared: false },
          'the entry as it was, with its identity, not cleared of holds',
        );
        assert.deepEqual(await store.catalog.beginDeletion(entry.fileId, new Date()), deleting, 'once');
        assert.equal(await store.catalog.get(entry.fileId), undefined);
        assert.equal(await store.catalog.findByKey(keyOf(data)), undefined);
        assert.deepEqual(await store.catalog.scan(undefined, 10), []);
        assert.deepEqual(
          (await store.catalog.deletions(new Date(at.getTime() + 1), 10)).map((e) => e.fileId),
          [entry.fileId],
        );
        assert.deepEqual(await store.catalog.deletions(at, 10), [], 'only those begun before');

        // An upload of the same content while it is being deleted stores it anew.
        const again = await commitBytes(store, data);
        assert.equal(again.status, 'stored');
        assert.notEqual(again.entry.fileId, entry.fileId);
        await store.content.remove(deleting);
        await store.catalog.remove(entry.fileId);
        assert.deepEqual(await bytesKept(opened, entry.fileId, fileNo), noBytes);
        assert.deepEqual(await store.catalog.deletions(new Date(), 10), []);
        assert.deepEqual(await store.catalog.findByKey(keyOf(data)), again.entry);
        assert.deepEqual(await readAll(store.content.read(again.entry)), data);
        // Both steps again (a sweep finishing a deletion a crash interrupted): nothing more happens.
        await store.content.remove(deleting);
        await store.catalog.remove(entry.fileId);
        assert.deepEqual(await readAll(store.content.read(again.entry)), data);
        assert.equal(await store.catalog.count(), 1);
      });

      it('never removes a live entry or its bytes', async () => {
        const data = randomContent(CS + 1);
        const { entry } = await commitBytes(store, data);
        await assert.rejects(store.content.remove(entry), /live/);
        await store.catalog.remove(entry.fileId);
        assert.deepEqual(await store.catalog.get(entry.fileId), entry);
        assert.deepEqual(await readAll(store.content.read(entry)), data);
      });

      it('makes an entry live again when its deletion is cancelled: with its identity, or without it once the content was stored anew', async () => {
        const data = randomContent(100);
        const { entry } = await commitBytes(store, data);
        await store.catalog.beginDeletion(entry.fileId, new Date());
        assert.equal(await store.catalog.cancelDeletion(entry.fileId), true);
        assert.equal(await store.catalog.cancelDeletion(entry.fileId), false, 'once');
        assert.deepEqual(await store.catalog.findByKey(keyOf(data)), entry);
        assert.deepEqual(await store.catalog.deletions(new Date(Date.now() + 1000), 10), []);

        await store.catalog.beginDeletion(entry.fileId, new Date());
        const anew = (await commitBytes(store, data)).entry;
        assert.equal(await store.catalog.cancelDeletion(entry.fileId), true);
        assert.deepEqual(await store.catalog.get(entry.fileId), entry, 'live under its id');
        assert.deepEqual(await store.catalog.findByKey(keyOf(data)), anew, "the identity stays the newer entry's");
        assert.deepEqual(await readAll(store.content.read(entry)), data);
      });

      it('clears a deletion of holds, or cancels it: never both, and a cleared one is never cancelled', async () => {
        const [a, b] = [randomContent(100), randomContent(120)];
        const { entry } = await commitBytes(store, a);
        const other = (await commitBytes(store, b)).entry;
        assert.equal(await store.catalog.clearDeletion(entry.fileId), false, 'a live entry is not cleared');
        const at = new Date('2026-12-01T00:00:00Z');
        await store.catalog.beginDeletion(entry.fileId, at);
        assert.equal(await store.catalog.clearDeletion(entry.fileId), true);
        assert.equal(await store.catalog.clearDeletion(entry.fileId), true, 'cleared before: still cleared');
        assert.equal(await store.catalog.cancelDeletion(entry.fileId), false, 'a cleared deletion is never cancelled');
        assert.deepEqual(await store.catalog.beginDeletion(entry.fileId, new Date()), {
          ...entry,
          deletingSince: at,
          deletionCleared: true,
        });
        assert.deepEqual(
          (await store.catalog.deletions(new Date(at.getTime() + 1), 10)).map((e) => [e.fileId, e.deletionCleared]),
          [[entry.fileId, true]],
        );
        assert.equal(await store.catalog.get(entry.fileId), undefined, 'still being deleted');
        // A clear and a cancel racing: exactly one of them takes it.
        await store.catalog.beginDeletion(other.fileId, at);
        const [cleared, cancelled] = await Promise.all([
          store.catalog.clearDeletion(other.fileId),
          store.catalog.cancelDeletion(other.fileId),
        ]);
        assert.equal(Number(cleared) + Number(cancelled), 1);
        assert.deepEqual(await store.catalog.get(other.fileId), cancelled ? other : undefined);
        if (cancelled) {
          // Marked again later, it is not cleared again until asked.
          assert.equal((await store.catalog.beginDeletion(other.fileId, at))!.deletionCleared, false);
        }
      });

      it('deletes a packed content by forgetting its place in the pack; the others of the pack stay readable', async () => {
        const [a, b] = [randomContent(CS + 3), randomContent(500)];
        const [sa, sb] = await store.content.storeMany(
          [a, b].map((bytes) => ({
            parts: [bytes],
            entry: { key: keyOf(bytes), fileName: 'p.jpg', contentType: 'image/jpeg', uploadDate: new Date() },
          })),
        );
        const fileNo = await fileNumber(opened, sa!.entry.fileId);
        const deleting = await store.catalog.beginDeletion(sa!.entry.fileId, new Date());
        await store.content.remove(deleting!);
        await store.catalog.remove(sa!.entry.fileId);
        assert.deepEqual(await bytesKept(opened, sa!.entry.fileId, fileNo), noBytes);
        assert.deepEqual(await readAll(store.content.read(sb!.entry)), b);
        assert.equal(await store.catalog.findByKey(keyOf(a)), undefined);
      });
    });

    describe('commit safety', () => {
      it('refuses to commit staged bytes that fall short of the content, and keeps them for a retry', async () => {
        const data = randomContent(2 * CS + 50);
        const stagingId = await store.content.stage(new Date());
        await store.content.write(stagingId, 0, [data.subarray(0, CS)]);
        const entry = {
          key: keyOf(data),
          fileName: 'short.pdf',
          contentType: 'application/pdf',
          uploadDate: new Date(),
        };
        await assert.rejects(store.content.commit(stagingId, entry), /holds not all/);
        assert.equal(await store.catalog.findByKey(keyOf(data)), undefined, 'no short file catalogued');
        // The bytes that were there are still there: the rest arrives and the commit succeeds.
        await store.content.write(stagingId, CS, [data.subarray(CS)]);
        const { status, entry: committed } = await store.content.commit(stagingId, entry);
        assert.equal(status, 'stored');
        assert.deepEqual(await readAll(store.content.read(committed)), data);
      });
    });
  });
}
