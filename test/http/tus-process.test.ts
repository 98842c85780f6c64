import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { randomContent } from '../support/content.js';
import { clerkToken, freePort, killServer, processStore, startServer, stopServer } from '../support/process.js';
import type { ProcessStore, Started } from '../support/process.js';
import { Client } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { md5, offsetOf, openPatch, sha256 } from '../support/tus.js';
import { TUS, tusMetadata, tusRequest, tusUpload, uploadPath } from '../support/tus.js';
import { until } from '../support/until.js';

for (const target of storeTargets) {
  describe(`resumable uploads across server processes (${target.name} store)`, { skip: target.skip }, () => {
    let store: ProcessStore;
    let token: string;
    const running: Started[] = [];
    const start = async (port = 0) => {
      const s = await startServer({ ...store.env, PORT: String(port), GC_INTERVAL_SECONDS: '0' });
      running.push(s);
      return s;
    };
    before(async () => {
      store = processStore(target);
      token = clerkToken(store.env);
    });
    after(async () => {
      for (const s of running) await killServer(s);
      await store.dispose();
    });

    it('survives kill -9 while a PATCH is in flight, at several offsets: tus-js-client resumes and the file reads back identical', async () => {
      const data = randomContent(24 * 1024 * 1024);
      const port = await freePort();
      let server = await start(port);
      const client = () => new Client(server.url, { bearer: token });
      const created = await tusRequest(client(), TUS, 'POST', {
        'upload-length': String(data.length),
        'upload-metadata': tusMetadata({ filename: '断点.pdf', md5: md5(data), sha256: sha256(data) }),
      });
      const upload = uploadPath(created);
      const offsets: number[] = [];
      for (const killAt of [0.2, 0.45, 0.7]) {
        const from = await offsetOf(client(), upload);
        // A PATCH announcing all the rest, of which part is sent; the server dies while it waits for more.
        const inFlight = await openPatch(server.url, upload, token, data, from, Math.floor(killAt * data.length));
        await until(async () => (await offsetOf(client(), upload)) > from, `the server persisted bytes past ${from}`);
        await killServer(server);
        inFlight.destroy();
        server = await start(port);
        offsets.push(await offsetOf(client(), upload));
      }
      assert.ok(offsets[0]! > 0, `bytes received before the first kill were kept (offsets ${offsets.join(', ')})`);
      for (let i = 1; i < offsets.length; i++)
        assert.ok(offsets[i]! > offsets[i - 1]!, `each resume got further (offsets ${offsets.join(', ')})`);
      const done = await tusUpload(client(), data, { uploadUrl: `${server.url}${upload}` });
      assert.equal(done.status, 'stored');
      const res = await client().fetch(`/api/files/${done.fileId}`);
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), data);
      await stopServer(server);
    });

    it('starts an upload on one server process and finishes it on another sharing the store', async () => {
      const [a, b] = [await start(), await start()];
      const clientA = new Client(a.url, { bearer: token });
      const clientB = new Client(b.url, { bearer: token });
      const data = randomContent(3 * 1024 * 1024 + 5);
      const created = await tusRequest(clientA, TUS, 'POST', {
        'upload-length': String(data.length),
        'upload-metadata': tusMetadata({ filename: '两地.pdf' }),
      });
      const upload = uploadPath(created);
      const half = 1024 * 1024 + 3;
      const first = await tusRequest(
        clientA,
        upload,
        'PATCH',
        { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
        data.subarray(0, half),
      );
      assert.equal(first.status, 204);
      assert.equal(await offsetOf(clientB, upload), half, 'the other process sees the offset');
      const done = await tusUpload(clientB, data, { uploadUrl: `${b.url}${upload}` });
      assert.equal(done.status, 'stored');
      for (const client of [clientA, clientB]) {
        const res = await client.fetch(`/api/files/${done.fileId}`);
        assert.deepEqual(Buffer.from(await res.arrayBuffer()), data);
      }
    });

    it('refuses a PATCH on one process while another process is writing to the same upload', async () => {
      const [a, b] = [running.at(-2)!, running.at(-1)!];
      const clientB = new Client(b.url, { bearer: token });
      const data = randomContent(8 * 1024 * 1024);
      const created = await tusRequest(clientB, TUS, 'POST', { 'upload-length': String(data.length) });
      const upload = uploadPath(created);
      const slow = http.request(new URL(upload, a.url), {
        method: 'PATCH',
        headers: {
          'content-type': 'application/offset+octet-stream',
          'tus-resumable': '1.0.0',
          'upload-offset': '0',
          'content-length': String(data.length),
          authorization: `Bearer ${token}`,
        },
      });
      const slowStatus = new Promise<number>((resolve, reject) => {
        slow.on('response', (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        slow.on('error', reject);
      });
      slow.write(data.subarray(0, 4 * 1024 * 1024));
      // Once process A has persisted some bytes it holds the lock; B continues at the offset it reports.
      let refused: Response | undefined;
      await until(async () => {
        const offset = await offsetOf(clientB, upload);
        if (offset === 0) return false;
        refused = await tusRequest(
          clientB,
          upload,
          'PATCH',
          { 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
          data.subarray(offset, offset + 10),
        );
        return refused.status === 423;
      }, 'process B refused a PATCH while process A held the upload');
      assert.equal(refused!.status, 423);
      assert.equal((await refused!.json()).error, 'upload_locked');
      slow.end(data.subarray(4 * 1024 * 1024));
      assert.equal(await slowStatus, 204);
      assert.equal(await offsetOf(clientB, upload), data.length);
    });
  });
}
