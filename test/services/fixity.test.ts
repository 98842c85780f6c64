import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { DigestPool } from '../../server/threads/digest.js';
import { FixityService } from '../../server/services/fixity.js';
import type { VerificationResult } from '../../shared/verification.js';
import { readAll, randomContent, stageBytes } from '../support/content.js';
import { ContentDamagedError } from '../../server/errors.js';
import { damageContent, forgetChunkSums, storeTargets, type OpenedStore } from '../support/stores.js';

for (const target of storeTargets) {
  describe(`fixity check (${target.name})`, { skip: target.skip }, () => {
    let opened: OpenedStore;
    let digests: DigestPool;
    let now: Date;
    let fixity: FixityService;
    beforeEach(async () => {
      opened = await target.open();
      digests = new DigestPool(2);
      now = new Date('2026-06-01T08:00:00Z');
      fixity = new FixityService({ store: opened.store, digests, clock: () => now });
    });
    afterEach(async () => {
      await digests.close();
      await opened.dispose();
    });

    /** Chunks the slow reads below have handed out since the last `slowReads`. */
    let chunksRead = 0;
    /** The store, with every file read slowly (100 ms a chunk); `onRead` is told when a read begins. */
    const slowReads = (onRead: () => void = () => {}, jobs = opened.store.jobs) => {
      const { content } = opened.store;
      const slow = Object.create(content) as typeof content;
      chunksRead = 0;
      slow.read = (entry, range, options) =>
        Readable.from(
          (async function* () {
            onRead();
            for await (const part of content.read(entry, range, options)) {
              await delay(100);
              chunksRead += 1;
              yield part as Buffer;
            }
          })(),
        );
      return { ...opened.store, content: slow, jobs };
    };

    const store = async (data: Buffer, fileName: string) => {
      const staged = await stageBytes(opened.store, data);
      const { entry } = await opened.store.content.commit(staged.stagingId, {
        key: staged.key,
        fileName,
        contentType: 'application/pdf',
        uploadDate: now,
      });
      return entry;
    };

    it('passes an intact archive, having read every byte of every file', async () => {
      const sizes = [0, 1, opened.chunkSize, 3 * opened.chunkSize + 17];
      for (const [i, size] of sizes.entries()) await store(randomContent(size), `f${i}.pdf`);
      const result = await fixity.run('command');
      assert.deepEqual(
        { ...result, startedAt: undefined, finishedAt: undefined, host: undefined },
        {
          state: 'passed',
          trigger: 'command',
          totalFiles: 4,
          files: 4,
          bytes: sizes.reduce((a, b) => a + b),
          missing: 0,
          corrupted: 0,
          checksummed: 0,
          problems: [],
          startedAt: undefined,
          finishedAt: undefined,
          host: undefined,
        },
      );
      assert.deepEqual(await fixity.last(), result, 'the result is kept in the store');
    });

    it('names files with missing chunks (and the first one missing) and files whose bytes changed', async () => {
      const cs = opened.chunkSize;
      const intact = await store(randomContent(2 * cs), 'intact.pdf');
      const flipped = await store(randomContent(3 * cs), '县志 第二卷.pdf');
      const lostChunk = await store(randomContent(4 * cs + 9), 'lost-chunk.pdf');
      const lostFile = await store(randomContent(cs + 1), 'lost-file.pdf');
      await damageContent(opened, flipped.fileId, { kind: 'flip-byte', offset: cs + 5 });
      await damageContent(opened, lostChunk.fileId, { kind: 'lose-chunk', n: 2 });
      await damageContent(opened, lostFile.fileId, { kind: 'lose-file' });

      const result = (await fixity.run('schedule'))!;
      assert.equal(result.state, 'failed');
      assert.deepEqual([result.files, result.missing, result.corrupted], [4, 2, 1]);
      const byId = new Map(result.problems.map((p) => [p.fileId, p]));
      assert.equal(byId.has(intact.fileId), false);
      assert.deepEqual(
        { ...byId.get(flipped.fileId), detail: undefined },
        {
          fileId: flipped.fileId,
          fileName: '县志 第二卷.pdf',
          fileLength: 3 * cs,
          kind: 'corrupted',
          chunk: 1,
          detail: undefined,
        },
      );
      assert.match(byId.get(flipped.fileId)!.detail, /chunk 1 does not match its checksum/);
      assert.deepEqual([byId.get(lostChunk.fileId)?.kind, byId.get(lostChunk.fileId)?.chunk], ['missing', 2]);
      assert.deepEqual([byId.get(lostFile.fileId)?.kind, byId.get(lostFile.fileId)?.chunk], ['missing', 0]);
    });

    it("finds changed bytes by the whole file's digests where chunk checksums cannot tell (a file stored before them)", async () => {
      const data = randomContent(2 * opened.chunkSize);
      const entry = await store(data, 'old.pdf');
      await forgetChunkSums(opened, entry.fileId);
      await damageContent(opened, entry.fileId, { kind: 'flip-byte', offset: 3 });
      const result = (await fixity.run('command'))!;
      assert.deepEqual(
        result.problems.map((p) => [p.fileId, p.kind, p.chunk]),
        [[entry.fileId, 'corrupted', null]],
      );
      assert.match(result.problems[0]!.detail, new RegExp(`not the catalogued ${entry.md5}`));
    });

    it('gives a file stored before chunk checksums its sums once its digests prove it intact, so reads check it from then on', async () => {
      const data = randomContent(3 * opened.chunkSize + 1);
      const entry = await store(data, 'older.pdf');
      await forgetChunkSums(opened, entry.fileId);
      assert.equal(await opened.store.content.lacksChunkSums(entry), true);
      const result = (await fixity.run('command'))!;
      assert.deepEqual([result.state, result.checksummed], ['passed', 1]);
      assert.equal(await opened.store.content.lacksChunkSums(entry), false);
      await damageContent(opened, entry.fileId, { kind: 'flip-byte', offset: 2 * opened.chunkSize });
      await assert.rejects(
        readAll(opened.store.content.read(entry)),
        (err: unknown) => err instanceof ContentDamagedError && err.offset === 2 * opened.chunkSize,
      );
      assert.equal((await fixity.run('command'))!.checksummed, 0, 'once only');
    });

    it('reports a file the file system cannot read and goes on; a store failure ends the check and frees its lease', async () => {
      const entries = [await store(randomContent(100), 'a.pdf'), await store(randomContent(200), 'b.pdf')];
      const unreadable = entries[0]!;
      const read = opened.store.content.read.bind(opened.store.content);
      opened.store.content.read = (entry, ...rest) => {
        if (entry.fileId !== unreadable.fileId) return read(entry, ...rest);
        return Readable.from(
          // A stream that fails before its first chunk.
          // eslint-disable-next-line require-yield
          (async function* () {
            throw Object.assign(new Error('i/o error'), { code: 'EIO' });
          })(),
        );
      };
      const result = (await fixity.run('command'))!;
      assert.deepEqual([result.state, result.files, result.missing], ['failed', 2, 1]);
      assert.match(result.problems[0]!.detail, /cannot be read \(EIO/);

      opened.store.content.read = () =>
        Readable.from(
          // A stream that fails before its first chunk.
          // eslint-disable-next-line require-yield
          (async function* () {
            throw new Error('the database went away');
          })(),
        );
      await assert.rejects(fixity.run('command'), /went away/);
      assert.equal((await fixity.last())?.state, 'interrupted');
      assert.equal((await opened.store.jobs.get('fixity'))?.holder, null, 'the lease is free at once');
      opened.store.content.read = read;
    });

    it('runs one check at a time: a second start while one runs does nothing', async () => {
      await store(randomContent(10), 'a.pdf');
      assert.equal(await opened.store.jobs.acquire('fixity', 'another instance', now, 60_000), true);
      assert.equal(await fixity.run('schedule'), undefined);
      assert.equal(await fixity.last(), undefined, 'nothing recorded by the refused run');
    });

    it('records a check stopped by its signal as interrupted, and one whose process died as interrupted once its lease ran out', async () => {
      for (let i = 0; i < 3; i++) await store(randomContent(100 + i), `f${i}.pdf`);
      const abort = new AbortController();
      abort.abort();
      const stopped = await fixity.run('schedule', { signal: abort.signal });
      assert.equal(stopped?.state, 'interrupted');
      assert.equal(stopped?.files, 0);
      assert.equal((await fixity.last())?.state, 'interrupted');
      assert.equal(await fixity.due(7 * 24 * 3600_000), true, 'an interrupted check is due again at once');

      // A stopping server stops the checks it runs, also one an administrator started, also in
      // the middle of a long file.
      await store(randomContent(20 * opened.chunkSize), 'long.pdf');
      let reading!: () => void;
      const readBegan = new Promise<void>((resolve) => (reading = resolve));
      const stopping = new FixityService({ store: slowReads(() => reading()), digests, clock: () => now });
      const run = stopping.run('command');
      await readBegan;
      await stopping.stop();
      // Counted, not timed: on a busy machine a stop can take longer than the whole read would idle.
      assert.ok(chunksRead < 20, `stopped within the file, not after its 20 chunks (read ${chunksRead})`);
      assert.equal((await run)?.state, 'interrupted');
      assert.equal((await opened.store.jobs.get('fixity'))?.holder, null, 'its lease is freed');
      const after = await stopping.run('command');
      assert.deepEqual([after?.state, after?.files], ['interrupted', 0], 'a stopped service checks nothing more');

      // A process that died mid-check leaves "running" with a lease that then runs out.
      const running: VerificationResult = { ...stopped, state: 'running' };
      assert.equal(await opened.store.jobs.acquire('fixity', 'dead process', now, 60_000), true);
      await opened.store.jobs.renew('fixity', 'dead process', now, 60_000, running);
      assert.equal((await fixity.last())?.state, 'running');
      assert.equal(await fixity.due(0), false, 'not while it runs');
      now = new Date(now.getTime() + 61_000);
      assert.equal((await fixity.last())?.state, 'interrupted');
      const next = await fixity.run('schedule');
      assert.equal(next?.state, 'passed', 'the expired lease is taken over');
    });

    it('keeps its lease while one long file is read, so a second check cannot start meanwhile', async () => {
      await store(randomContent(20 * opened.chunkSize), 'long.pdf');
      let reading!: () => void;
      const readBegan = new Promise<void>((resolve) => (reading = resolve));
      const first = new FixityService({ store: slowReads(() => reading()), digests, clock: () => now, leaseMs: 300 });
      const second = new FixityService({ store: opened.store, digests, clock: () => now, leaseMs: 300 });
      const run = first.run('schedule');
      await readBegan;
      // 800 ms pass on the clock while the one file is read: more than the 300 ms lease.
      for (let i = 0; i < 8; i++) {
        now = new Date(now.getTime() + 100);
        await delay(120);
      }
      assert.equal(await second.run('command'), undefined, 'the first check still holds the lease');
      assert.equal((await run)?.state, 'passed');
    });

    it('stops at once when a renewal finds its lease in other hands', async () => {
      await store(randomContent(20 * opened.chunkSize), 'long.pdf');
      let renewals = 0;
      const { jobs } = opened.store;
      const taken = Object.create(jobs) as typeof jobs;
      // The first renewal (when the check starts) holds; later ones find the lease taken.
      taken.renew = async (...args) => (++renewals === 1 ? jobs.renew(...args) : false);
      const check = new FixityService({ store: slowReads(undefined, taken), digests, clock: () => now, leaseMs: 300 });
      const result = await check.run('schedule');
      assert.equal(result?.state, 'interrupted');
      assert.equal(result?.files, 0);
      assert.ok(chunksRead < 20, `it did not read the file's 20 chunks to the end (read ${chunksRead})`);
    });

    it('is due when none ran, then again once the interval has passed since the last began', async () => {
      const week = 7 * 24 * 3600_000;
      assert.equal(await fixity.due(week), true);
      await fixity.run('schedule');
      now = new Date(now.getTime() + week - 1000);
      assert.equal(await fixity.due(week), false);
      now = new Date(now.getTime() + 1000);
      assert.equal(await fixity.due(week), true);
    });
  });
}
