import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { md5, randomContent } from '../test/support/content.js';
import { TestServer, type Client } from '../test/support/server.js';
import { embeddedTarget, injectSyncFailures, type SyncFaults } from '../test/support/stores.js';
import { TUS, tusMetadata, tusRequest, tusUpload, uploadPath } from '../test/support/tus.js';

/**
 * An fsync of staged bytes that fails when an upload completes (the embedded store; MongoDB has
 * no fsync of its own). Linux may have dropped the pages it could not write and marked them
 * clean, so a retried commit would sync "successfully" over lost bytes: the upload must go back
 * to what is known to be on disk, and its client send the rest again.
 */
describe('a failed fsync when an upload completes (embedded store)', () => {
  let server: TestServer;
  let clerk: Client;
  let faults: SyncFaults;
  before(async () => {
    faults = await injectSyncFailures();
    server = await TestServer.start(embeddedTarget);
    clerk = await server.tokenClient(await server.addAccount('clerk', 'clerk'));
  });
  after(async () => {
    faults.restore();
    await server.close();
  });

  for (const { code, status, error } of [
    { code: 'EIO', status: 500, error: 'internal' },
    { code: 'ENOSPC', status: 507, error: 'storage_full' },
  ]) {
    it(`answers ${status} ${error} for ${code}, takes the upload back to the bytes known to be on disk, and the retry sends them again and stores the file once`, async () => {
      const before = await server.store.catalog.count();
      const data = randomContent(700_000);
      const created = await tusRequest(clerk, TUS, 'POST', {
        'upload-length': String(data.length),
        'upload-metadata': tusMetadata({ filename: `${code}.pdf`, md5: md5(data) }),
      });
      const path = uploadPath(created);
      faults.code = code;
      faults.failing = 1;
      const refused = await tusRequest(
        clerk,
        path,
        'PATCH',
        { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
        data,
      );
      assert.equal(faults.failing, 0, 'the commit synced');
      assert.equal(refused.status, status);
      assert.equal((await refused.json()).error, error);
      const offset = Number((await tusRequest(clerk, path, 'HEAD')).headers.get('upload-offset'));
      assert.equal(offset, 0, 'no sync had succeeded: none of the bytes is known to be on disk');
      assert.equal(await server.store.catalog.count(), before, 'nothing committed');

      let sent = 0;
      const retried = await tusUpload(clerk, data, {
        uploadUrl: `${server.url}${path}`,
        metadata: { filename: `${code}.pdf` },
        onProgress: (bytes) => (sent = bytes),
      });
      assert.equal(sent, data.length, 'every byte sent again');
      assert.equal(retried.status, 'stored');
      assert.equal(retried.uploadCount, '1', 'counted once');
      assert.equal(await server.store.catalog.count(), before + 1);
      const back = await clerk.fetch(`/api/files/${retried.fileId}`);
      assert.equal(md5(Buffer.from(await back.arrayBuffer())), md5(data));
    });
  }
});
