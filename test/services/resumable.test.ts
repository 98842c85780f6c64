import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { ServerStoppingError } from '../../server/errors.js';
import type { Account } from '../../server/store/accounts/port.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { UploadStore } from '../../server/store/uploads/port.js';
import { keyOf, randomContent, readAll, testAccount } from '../support/content.js';
import { composeArchive, type Archive } from '../support/server.js';
import { countChunks, storeTargets, type OpenedStore } from '../support/stores.js';

/** Where these services' settings differ from the test servers' (test/support/server.ts). */
const config = { maxFileSize: 1024 ** 3, claimTtlMs: 60_000, uploadIdleMs: 3600_000 };

async function* bytes(data: Buffer) {
  yield data;
}

for (const target of storeTargets) {
  describe(
    `completing a resumable upload survives a crash at every step (${target.name} store)`,
    { skip: target.skip },
    () => {
      let opened: OpenedStore;
      let archive: Archive;
      /** Makes the next call of `uploads.finish` fail, as a crash right after the commit would. */
      let failNextFinish = false;
      let clerk: Account;
      beforeEach(async () => {
        opened = await target.open();
        const uploads: UploadStore = Object.create(opened.store.uploads) as UploadStore;
        uploads.finish = async (...args) => {
          if (failNextFinish) {
            failNextFinish = false;
            throw new Error('crash after the commit');
          }
          return opened.store.uploads.finish(...args);
        };
        const store: ArchiveStore = { ...opened.store, uploads };
        archive = composeArchive(store, config);
        clerk = testAccount();
      });
      afterEach(async () => {
        await archive.digests.close();
        await opened.dispose();
      });

      const upload = async (data: Buffer, id: string) => {
        const { resumable } = archive.services;
        await resumable.create(clerk, { id, length: data.length, metadata: { filename: 'x.pdf' } });
        failNextFinish = true;
        await assert.rejects(resumable.receive(clerk, id, 0, bytes(data)), /crash after the commit/);
        const cut = (await opened.store.uploads.get(id))!;
        assert.ok(cut.offset < data.length, 'the last byte is not acknowledged before the outcome is recorded');
        assert.deepEqual(cut.completing, keyOf(data));
        // The client's retry: HEAD reports less than all, so it sends the rest again.
        const end = await resumable.receive(clerk, id, cut.offset, bytes(data.subarray(cut.offset)));
        assert.equal(end, data.length);
        return (await opened.store.uploads.get(id))!;
      };

      it('keeps the file the cut-short completion committed, and finishes from the recorded identity', async () => {
        const data = randomContent(3 * opened.chunkSize + 11);
        const done = await upload(data, 'a'.repeat(32));
        assert.equal(done.offset, data.length);
        assert.equal(done.outcome!.status, 'stored');
        const entry = (await opened.store.catalog.findByKey(keyOf(data)))!;
        assert.equal(done.outcome!.fileId, entry.fileId);
        assert.deepEqual(await readAll(opened.store.content.read(entry)), data, 'the archived bytes are intact');
        assert.equal(await countChunks(opened), 4);
      });

      it('does the same when the content turned out to be a duplicate and its staged bytes are gone', async () => {
        const data = randomContent(2 * opened.chunkSize + 5);
        const first = testAccount();
        await archive.services.resumable.create(first, { id: 'b'.repeat(32), length: data.length, metadata: {} });
        await archive.services.resumable.receive(first, 'b'.repeat(32), 0, bytes(data));
        const done = await upload(data, 'c'.repeat(32));
        assert.equal(done.outcome!.status, 'duplicate');
        const entry = (await opened.store.catalog.findByKey(keyOf(data)))!;
        assert.equal(done.outcome!.fileId, entry.fileId);
        assert.deepEqual(await readAll(opened.store.content.read(entry)), data);
        assert.equal(await countChunks(opened), 3, 'one stored copy');
      });
    },
  );
}

for (const target of storeTargets) {
  describe(
    `a stopping server and a completion that re-reads a large upload (${target.name} store)`,
    { skip: target.skip },
    () => {
      it('stops the re-read at once; the client’s retry completes the upload with every byte', async () => {
        const opened = await target.open();
        const archives: Archive[] = [];
        try {
          let slow = true;
          let reReadEnded = false;
          let reading!: () => void;
          const readBegan = new Promise<void>((resolve) => (reading = resolve));
          const content = Object.create(opened.store.content) as ArchiveStore['content'];
          // Re-reading staged bytes at 100 ms a piece: a large upload on a slow disk.
          content.readStaged = (stagingId, length) =>
            Readable.from(
              (async function* () {
                reading();
                for await (const part of opened.store.content.readStaged(stagingId, length)) {
                  if (slow) await delay(100);
                  yield part as Buffer;
                }
                reReadEnded = true;
              })(),
            );
          const store: ArchiveStore = { ...opened.store, content };
          const instance = () => {
            const archive = composeArchive(store, config);
            archives.push(archive);
            return archive.services.resumable;
          };
          const clerk = testAccount();
          const data = randomContent(20 * opened.chunkSize);
          const last = data.length - 1;
          const first = instance();
          await first.create(clerk, { id: 'stopping', length: data.length, metadata: { filename: 'big.pdf' } });
          await first.receive(clerk, 'stopping', 0, bytes(data.subarray(0, last)));

          // The last byte reaches a restarted instance, which lost the running hash and re-reads.
          const restarted = instance();
          const completing = restarted.receive(clerk, 'stopping', last, bytes(data.subarray(last)));
          completing.catch(() => {});
          await readBegan;
          await restarted.drain();
          // Not timed: on a busy machine a drain can take longer than the whole re-read would on an idle one.
          assert.equal(reReadEnded, false, 'drained before the re-read reached its end');
          await assert.rejects(completing, (err: Error) => err instanceof ServerStoppingError);
          const cut = (await opened.store.uploads.get('stopping'))!;
          assert.equal(cut.outcome, null, 'nothing committed');
          assert.equal(cut.offset, last);

          slow = false;
          const retried = instance();
          assert.equal(
            await retried.receive(clerk, 'stopping', cut.offset, bytes(data.subarray(cut.offset))),
            data.length,
          );
          const done = (await opened.store.uploads.get('stopping'))!;
          const entry = (await opened.store.catalog.get(done.outcome!.fileId))!;
          assert.ok((await readAll(opened.store.content.read(entry))).equals(data));
        } finally {
          for (const archive of archives) await archive.digests.close();
          await opened.dispose();
        }
      });
    },
  );
}
