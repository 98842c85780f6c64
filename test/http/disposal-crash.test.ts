import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { Ledger } from '../../server/store/ledger/port.js';
import type { DisposalAnswer } from '../../shared/disposals.js';
import type { SavingsReport } from '../../shared/reports.js';
import { randomContent } from '../support/content.js';
import { dyingLedger, Killed } from '../support/dying-mongo.js';
import { uploadFolder } from '../support/receipts.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * 销毁 killed while it takes a file's uploads out of the counts, then sent again, as a client
 * does after a lost answer: the second request finishes it. On MongoDB the process dies between
 * the writes of an upload's reversal (its state says `reversed`, its totals still count it); the
 * embedded store reverses in one transaction, so there it dies before the reversal.
 * (FAULT_SEED=193304 on MongoDB: such a disposal answered 500 to every retry.)
 */
type Kill = { afterWrites: number } | undefined;

for (const target of storeTargets) {
  describe(
    `a disposal killed in an upload's reversal and sent again (${target.name} store)`,
    { skip: target.skip },
    () => {
      let server: TestServer;
      let clerk: Client;
      let top: Client;
      let kill: Kill;

      before(async () => {
        server = await TestServer.start(target, {
          wrapStore: (store: ArchiveStore) => {
            const ledger: Ledger = Object.create(store.ledger) as Ledger;
            ledger.reverse = async (actionKey, reversalKey) => {
              const now = kill;
              kill = undefined;
              if (!now) return store.ledger.reverse(actionKey, reversalKey);
              if (!server.opened.mongo) throw new Killed('killed before reversing');
              const dying = await dyingLedger(server.opened.mongo, now.afterWrites);
              try {
                await dying.ledger.reverse(actionKey, reversalKey);
              } finally {
                await dying.close();
              }
              throw new Killed('unreachable: the dying ledger was not killed');
            };
            return { ...store, ledger };
          },
        });
        clerk = await server.tokenClient(await server.addAccount('clerk', 'clerk', 'unit-a'));
        top = await server.tokenClient(await server.addAccount('top', 'admin', 'archive'));
      });
      after(() => server.close());

      const dispose = (fileId: string) =>
        top.json('/api/disposals', 'POST', {
          fileIds: [fileId],
          reason: '保管期满，经鉴定无保存价值',
          approvalRef: '沧档销〔2026〕9号',
          confirm: '销毁',
        });
      const savings = async () => (await body<SavingsReport>(await top.fetch('/api/reports/savings'), 200)).summary;

      for (const uploads of [1, 2])
        for (const afterWrites of [1, 2])
          it(`a file of ${uploads} upload(s), killed after ${afterWrites} write(s) of a reversal: the retry disposes of it, out of every count once`, async () => {
            const data = randomContent(4000);
            // The first upload stored the file; a second one saved its bytes.
            const { fileIds } = await uploadFolder(clerk, [data]);
            if (uploads === 2) await uploadFolder(clerk, [data]);
            const fileId = fileIds[0]!;
            const before = await savings();

            kill = { afterWrites };
            assert.equal((await dispose(fileId)).status, 500, 'the first request dies');
            const answer = await body<DisposalAnswer>(await dispose(fileId), 200);
            assert.deepEqual(
              answer.disposed.map((d) => [d.fileId, d.state]),
              [[fileId, 'disposed']],
            );
            const now = await savings();
            assert.deepEqual(
              [now.uploads, now.savedUploads],
              [before.uploads - uploads, before.savedUploads - (uploads - 1)],
              'its uploads out of the counts, the saved one with them',
            );
            assert.ok((await server.store.ledger.uploadsOfFile(fileId)).every((u) => !u.counted));
            assert.ok([404, 410].includes((await top.fetch(`/api/files/${fileId}`)).status), 'its bytes are gone');
          });
    },
  );
}
