import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { AuditLog } from '../../server/store/audit/port.js';
import type { AuditAction } from '../../shared/schemas.js';
import type { WithdrawalAnswer } from '../../shared/withdrawals.js';
import { randomContent } from '../support/content.js';
import { Killed } from '../support/dying-mongo.js';
import { uploadFolder } from '../support/receipts.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * Each step of correcting the archive is in the audit log once, even when the process dies as it
 * records the event: the event is recorded under the step's key before the step's last write, so
 * whoever finishes the step (the client's retry, the sweep) records it, and never twice.
 */
for (const target of storeTargets) {
  describe(
    `a step's audit event survives a crash at its recording (${target.name} store)`,
    { skip: target.skip },
    () => {
      let server: TestServer;
      let clerk: Client;
      let top: Client;
      /** The next step's event fails to be written (as the process dying there). */
      let dieAtEvent = false;

      before(async () => {
        server = await TestServer.start(target, {
          wrapStore: (store: ArchiveStore) => {
            const audit: AuditLog = Object.create(store.audit) as AuditLog;
            audit.appendOnce = async (events) => {
              if (dieAtEvent) {
                dieAtEvent = false;
                throw new Killed('killed as the event was written');
              }
              return store.audit.appendOnce(events);
            };
            return { ...store, audit };
          },
        });
        clerk = await server.tokenClient(await server.addAccount('clerk', 'clerk', 'unit-a'));
        top = await server.tokenClient(await server.addAccount('top', 'admin', 'archive'));
      });
      after(() => server.close());

      const events = async (action: AuditAction, fileId: string) =>
        (await server.store.audit.search({ action, limit: 100, offset: 0 })).items.filter((e) => e.fileId === fileId)
          .length;

      it('a withdrawal and its restore: the retry finishes each and records its event once', async () => {
        const { uploadIds, fileIds } = await uploadFolder(clerk, [randomContent(3000)]);
        const request = { uploads: uploadIds, reason: 'wrong_file' };
        dieAtEvent = true;
        assert.equal((await clerk.json('/api/withdrawals', 'POST', request)).status, 500, 'the first request dies');
        const answer = await body<WithdrawalAnswer>(await clerk.json('/api/withdrawals', 'POST', request), 200);
        const id = answer.withdrawn[0]!.id;
        assert.equal(answer.withdrawn[0]!.state, 'withdrawn');
        // Asked again once done: nothing more recorded.
        await clerk.json('/api/withdrawals', 'POST', request);
        assert.equal(await events('upload_withdrawn', fileIds[0]!), 1);

        dieAtEvent = true;
        assert.equal((await clerk.json(`/api/withdrawals/${id}/restore`, 'POST', {})).status, 500);
        await body(await clerk.json(`/api/withdrawals/${id}/restore`, 'POST', {}), 200);
        await clerk.json(`/api/withdrawals/${id}/restore`, 'POST', {});
        assert.equal(await events('upload_restored', fileIds[0]!), 1);
      });

      it('a withdrawal left by the crash is finished by the sweep, which records its event once', async () => {
        const { uploadIds, fileIds } = await uploadFolder(clerk, [randomContent(3000)]);
        dieAtEvent = true;
        const request = { uploads: uploadIds, reason: 'wrong_file' };
        assert.equal((await clerk.json('/api/withdrawals', 'POST', request)).status, 500);
        await server.archive.services.withdrawals.finishInterrupted(new Date(Date.now() + 60_000));
        assert.equal(await events('upload_withdrawn', fileIds[0]!), 1);
        await server.archive.services.withdrawals.finishInterrupted(new Date(Date.now() + 60_000));
        assert.equal(await events('upload_withdrawn', fileIds[0]!), 1, 'a second sweep records nothing more');
      });

      it('a disposal: the retry finishes it and records its event once', async () => {
        const { fileIds } = await uploadFolder(clerk, [randomContent(3000)]);
        const dispose = () =>
          top.json('/api/disposals', 'POST', {
            fileIds,
            reason: '保管期满，经鉴定无保存价值',
            approvalRef: '沧档销〔2026〕9号',
            confirm: '销毁',
          });
        dieAtEvent = true;
        assert.equal((await dispose()).status, 500);
        assert.equal((await dispose()).status, 200);
        await dispose();
        assert.equal(await events('content_disposed', fileIds[0]!), 1);
      });
    },
  );
}
