import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ArchiveStore } from '../server/store/archive-store.js';
import type { ContentStore } from '../server/store/content/port.js';
import { md5, randomContent } from '../test/support/content.js';
import { clerkToken, EMBEDDED_STORE, startServer, stopServer, type Started } from '../test/support/process.js';
import { Client, TestServer } from '../test/support/server.js';
import { storeTargets, tempDir } from '../test/support/stores.js';
import { TUS, tusMetadata, tusRequest, tusUpload, uploadPath } from '../test/support/tus.js';

/** What the file system says when the disk is full. */
const diskFull = () =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });

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
      tusRequest(
        clerk,
        path,
        'PATCH',
        { 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
        body,
      );
    const offsetOf = async (path: string) =>
      Number((await tusRequest(clerk, path, 'HEAD')).headers.get('upload-offset'));

    it('answers 507 storage_full mid-upload, keeps the bytes written before, and the upload resumes once space returns', async () => {
      const data = randomContent(3 * 1024 * 1024);
      const created = await tusRequest(clerk, TUS, 'POST', {
        'upload-length': String(data.length),
        'upload-metadata': tusMetadata({ filename: '满盘.pdf', md5: md5(data) }),
      });
      const path = uploadPath(created);
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
      const resumed = await tusUpload(clerk, data, {
        uploadUrl: `${server.url}${path}`,
        metadata: { filename: '满盘.pdf' },
      });
      assert.equal(resumed.status, 'stored');
      const back = await clerk.fetch(`/api/files/${resumed.fileId}`);
      assert.equal(md5(Buffer.from(await back.arrayBuffer())), md5(data));
    });

    it('refuses the completing request when the commit finds the disk full, and a retry stores the file exactly once', async () => {
      const before = await server.store.catalog.count();
      const data = randomContent(700_000);
      const created = await tusRequest(clerk, TUS, 'POST', {
        'upload-length': String(data.length),
        'upload-metadata': tusMetadata({ filename: 'commit.pdf', md5: md5(data) }),
      });
      const path = uploadPath(created);
      full.commits = 1;
      const refused = await patch(path, 0, data);
      assert.equal(refused.status, 507);
      assert.equal((await refused.json()).error, 'storage_full');
      assert.ok((await offsetOf(path)) < data.length, 'the last byte is acknowledged only with the outcome');
      assert.equal(await server.store.catalog.count(), before);

      const retried = await tusUpload(clerk, data, {
        uploadUrl: `${server.url}${path}`,
        metadata: { filename: 'commit.pdf' },
      });
      assert.equal(retried.status, 'stored');
      assert.equal(retried.uploadCount, '1', 'counted once');
      assert.equal(await server.store.catalog.count(), before + 1);
    });
  });
}

/**
 * The same with a real full file system: the embedded store's DATA_DIR on a small tmpfs, filled
 * up by another file, so the content files, SQLite and its WAL all meet the real ENOSPC (and
 * short writes) rather than an injected error. Needs the right to mount (root, or CAP_SYS_ADMIN).
 */
describe('a really full disk (embedded store on a small tmpfs)', () => {
  const mountPoint = tempDir('archive-tmpfs-');
  let mountError: string | undefined;
  let server: Started | undefined;
  before(() => {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=24m,mode=0700', 'tmpfs', mountPoint], {
      encoding: 'utf8',
    });
    if (mounted.error || mounted.status !== 0)
      mountError = (mounted.error?.message ?? mounted.stderr.trim()) || `mount exited with ${mounted.status}`;
  });
  after(async () => {
    if (server) await stopServer(server);
    if (!mountError) {
      const unmounted = spawnSync('umount', [mountPoint], { encoding: 'utf8' });
      assert.equal(unmounted.status, 0, `umount ${mountPoint}: ${unmounted.stderr}`);
    }
    fs.rmSync(mountPoint, { recursive: true, force: true });
  });

  /** Fills the file system with one file until it is full; returns its path. */
  const fillUp = (dir: string): string => {
    const filler = path.join(dir, 'filler');
    const fd = fs.openSync(filler, 'w');
    const block = Buffer.alloc(256 * 1024, 1);
    try {
      for (;;) if (fs.writeSync(fd, block) < block.length) break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    } finally {
      fs.closeSync(fd);
    }
    return filler;
  };

  it('answers 507 storage_full to a tus PATCH and a direct upload, commits nothing, and the upload resumes once space is freed', async (t) => {
    if (mountError) {
      t.skip(`cannot mount a tmpfs to fill up (${mountError}); the injected full disk above still runs`);
      return;
    }
    const env = { DATA_DIR: mountPoint, ...EMBEDDED_STORE, GC_INTERVAL_SECONDS: '0', VERIFY_INTERVAL_HOURS: '0' };
    const token = clerkToken(env);
    server = await startServer(env);
    const clerk = new Client(server.url, { bearer: token });
    const data = randomContent(4 * 1024 * 1024);
    const created = await tusRequest(clerk, TUS, 'POST', {
      'upload-length': String(data.length),
      'upload-metadata': tusMetadata({ filename: '真满盘.pdf', md5: md5(data) }),
    });
    assert.equal(created.status, 201);
    const upload = uploadPath(created);
    const patch = (offset: number, body: Uint8Array) =>
      tusRequest(
        clerk,
        upload,
        'PATCH',
        { 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
        body,
      );
    const offsetOf = async () => Number((await tusRequest(clerk, upload, 'HEAD')).headers.get('upload-offset'));
    assert.equal((await patch(0, data.subarray(0, 1024 * 1024))).status, 204);

    const filler = fillUp(mountPoint);
    const refused = await patch(1024 * 1024, data.subarray(1024 * 1024));
    assert.equal(refused.status, 507, await refused.clone().text());
    assert.equal((await refused.json()).error, 'storage_full');
    const kept = await offsetOf();
    assert.ok(
      kept >= 1024 * 1024 && kept < data.length,
      `the bytes acknowledged before are kept, the file not complete (offset ${kept})`,
    );

    const direct = await clerk.upload('direct.pdf', randomContent(300_000));
    assert.equal(direct.status, 507, await direct.clone().text());
    assert.equal((await direct.json()).error, 'storage_full');
    assert.equal((await (await clerk.fetch('/api/files')).json()).total, 0, 'nothing committed');
    assert.equal((await fetch(`${server.url}/api/health`)).status, 200, 'the server stays up');

    fs.rmSync(filler);
    const resumed = await tusUpload(clerk, data, {
      uploadUrl: `${server.url}${upload}`,
      metadata: { filename: '真满盘.pdf' },
    });
    assert.equal(resumed.status, 'stored');
    const back = await clerk.fetch(`/api/files/${resumed.fileId}`);
    assert.equal(md5(Buffer.from(await back.arrayBuffer())), md5(data));
  });
});
