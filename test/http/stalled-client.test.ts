import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { ContentStore } from '../../server/store/content/port.js';
import { md5, randomContent } from '../support/content.js';
import { TestServer, type Client } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { patchRequest, TUS, tusMetadata, tusRequest, tusUpload, uploadPath } from '../support/tus.js';
import { until } from '../support/until.js';

/** A PATCH whose client stops sending: cut off after UPLOAD_STALL_SECONDS, keeping what arrived. */
for (const target of storeTargets) {
  describe(`a stalled upload client (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let clerk: Client;
    let token: string;
    let slowCommits = false;
    before(async () => {
      server = await TestServer.start(target, {
        uploadStallMs: 1_000,
        wrapStore: (store: ArchiveStore) => {
          const content: ContentStore = Object.create(store.content) as ContentStore;
          content.commit = async (...args) => {
            if (slowCommits) await new Promise((r) => setTimeout(r, 2_500));
            return store.content.commit(...args);
          };
          return { ...store, content };
        },
      });
      clerk = await server.tokenClient(await server.addAccount('clerk', 'clerk'));
      token = clerk.credentials.bearer!;
    });
    after(() => server.close());

    it('is cut off after the stall time, keeps the bytes that arrived and frees the upload, while others are served meanwhile', async () => {
      const data = randomContent(1024 * 1024);
      const created = await tusRequest(clerk, TUS, 'POST', {
        'upload-length': String(data.length),
        'upload-metadata': tusMetadata({ filename: 'stalled.pdf' }),
      });
      const path = uploadPath(created);
      const sent = 300_000;
      const req = patchRequest(server.url, path, token, 0, data.length);
      // When the answer came, not when this test got round to it: the other upload below takes
      // its own time on a busy machine.
      let answeredAt = 0;
      const ended = new Promise<string>((resolve) => {
        req.on('response', (res) => {
          answeredAt = Date.now();
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve(`answered ${res.statusCode} ${res.headers.connection} ${body}`));
        });
        req.on('error', (err) => resolve(`cut off: ${(err as NodeJS.ErrnoException).code}`));
      });
      const started = Date.now();
      req.write(data.subarray(0, sent)); // ... and nothing more

      // Other clients are served while it stalls.
      const other = await tusUpload(clerk, randomContent(200_000), { metadata: { filename: 'other.pdf' } });
      assert.equal(other.status, 'stored');
      assert.equal((await clerk.fetch('/api/files')).status, 200);

      // A client that stopped sending is answered and its connection closed: a proxy in front sees
      // an answer (408), not an instance that dropped the connection.
      const answer = await ended;
      assert.match(
        answer,
        /^answered 408 close \{"error":"request_timeout","message":"No bytes arrived for 1 s, so the request was ended\. The bytes that arrived are kept/,
      );
      const waited = answeredAt - started;
      // Not before the stall time; the upper bound only says it was not left hanging (a busy
      // machine can be many times slower).
      assert.ok(waited >= 900 && waited < 60_000, `cut off after ${waited} ms`);
      // The server persists what arrived just after cutting the connection: a client asks again.
      await until(
        async () => (await tusRequest(clerk, path, 'HEAD')).headers.get('upload-offset') === String(sent),
        'every byte that arrived is kept',
      );
      // Free at once: resuming does not meet a lock.
      const resumed = await tusUpload(clerk, data, { uploadUrl: `${server.url}${path}` });
      assert.equal(resumed.status, 'stored');
      const back = await clerk.fetch(`/api/files/${resumed.fileId}`);
      assert.equal(md5(Buffer.from(await back.arrayBuffer())), md5(data));
    });

    it('is not cut off while the server completes an upload longer than the stall time (a large re-read)', async () => {
      slowCommits = true;
      try {
        const result = await tusUpload(clerk, randomContent(300_000), { metadata: { filename: 'slow-commit.pdf' } });
        assert.equal(result.status, 'stored');
      } finally {
        slowCommits = false;
      }
    });
  });
}
