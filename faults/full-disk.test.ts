import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ArchiveStore, ContentStore } from '../server/store/port.js';
import { md5, randomContent } from '../test/support/content.js';
import { TestServer, type Client } from '../test/support/server.js';
import { storeTargets } from '../test/support/stores.js';
import { TUS, tusMetadata, tusRequest, tusUpload } from '../test/support/tus.js';

/** What the file system says when the disk is full. */
const diskFull = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });

/**
 * A full disk under the store: writes (or the commit) fail as the file system would, until space
 * returns. Clerks get a clear answer, nothing is half-committed, and uploads resume afterwards.
 */
for (const target of storeTargets) {
  describe(`a full disk (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let clerk: Client;
    const full = { writes: false, commits: 0 };
    before(async () => {
      server = await TestServer.start(target, {
        wrapStore: (store: ArchiveStore) => {
          const content: ContentStore = Object.create(store.content) as ContentStore;
          content.write = async (...args) => {
            if (full.writes) throw diskFull();
            return store.content.write(...args);
          };
          content.commit = async (...args) => {
            if (full.commits > 0) {
              full.commits -= 1;
              throw diskFull();
            }
            return store.content.commit(...args);
          };
          return { ...store, content };
        },
      });
      clerk = await server.tokenClient(await server.addAccount('clerk', 'clerk'));
    });
    after(() => server.close());

    const patch = (path: string, offset: number, body: Uint8Array) =>
      tusRequest(clerk, path, 'PATCH', { 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body);
    const offsetOf = async (path: string) => Number((await tusRequest(clerk, path, 'HEAD')).headers.get('upload-offset'));

    it('answers 507 storage_full mid-upload, keeps the bytes written before, and the upload resumes once space returns', async () => {
      const data = randomContent(3 * 1024 * 1024);
      const created = await tusRequest(clerk, TUS, 'POST', { 'upload-length': String(data.length), 'upload-metadata': tusMetadata({ filename: '满盘.pdf', md5: md5(data) }) });
      const path = new URL(created.headers.get('location')!).pathname;
      assert.equal((await patch(path, 0, data.subarray(0, 1024 * 1024))).status, 204);

      full.writes = true;
      const refused = await patch(path, 1024 * 1024, data.subarray(1024 * 1024));
      assert.equal(refused.status, 507);
      assert.equal(refused.headers.get('tus-resumable'), '1.0.0');
      const body = await refused.json();
      assert.equal(body.error, 'storage_full');
      assert.match(body.message, /storage is full.*resume it later/);
      assert.equal(await offsetOf(path), 1024 * 1024, 'what was written before is kept, nothing after');
      assert.equal(await server.store.catalog.count(), 0, 'nothing committed');

      const direct = await clerk.upload('direct.pdf', randomContent(200_000));
      assert.equal(direct.status, 507);
      assert.equal((await direct.json()).error, 'storage_full');
      assert.equal(await server.store.catalog.count(), 0);
      assert.equal((await fetch(`${server.url}/api/health`)).status, 200, 'the server stays up');

      full.writes = false;
      const resumed = await tusUpload(clerk, data, { uploadUrl: `${server.url}${path}`, metadata: { filename: '满盘.pdf' } });
      assert.equal(resumed.status, 'stored');
      const back = await clerk.fetch(`/api/files/${resumed.fileId}`);
      assert.equal(md5(Buffer.from(await back.arrayBuffer())), md5(data));
    });

    it('refuses the completing request when the commit finds the disk full, and a retry stores the file exactly once', async () => {
      const before = await server.store.catalog.count();
      const data = randomContent(700_000);
      const created = await tusRequest(clerk, TUS, 'POST', { 'upload-length': String(data.length), 'upload-metadata': tusMetadata({ filename: 'commit.pdf', md5: md5(data) }) });
      const path = new URL(created.headers.get('location')!).pathname;
      full.commits = 1;
      const refused = await patch(path, 0, data);
      assert.equal(refused.status, 507);
      assert.equal((await refused.json()).error, 'storage_full');
      assert.ok((await offsetOf(path)) < data.length, 'the last byte is acknowledged only with the outcome');
      assert.equal(await server.store.catalog.count(), before);

      const retried = await tusUpload(clerk, data, { uploadUrl: `${server.url}${path}`, metadata: { filename: 'commit.pdf' } });
      assert.equal(retried.status, 'stored');
      assert.equal(retried.uploadCount, '1', 'counted once');
      assert.equal(await server.store.catalog.count(), before + 1);
    });
  });
}
