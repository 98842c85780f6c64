import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { keyOf, randomContent } from '../support/content.js';
import { Client, TestServer } from '../support/server.js';
import { countChunks, storeTargets, TEST_CHUNK_SIZE } from '../support/stores.js';
import { md5, sha256, TUS, tusMetadata, tusRequest, tusUpload, uploadPath } from '../support/tus.js';
import { until } from '../support/until.js';

const CS = TEST_CHUNK_SIZE;
const OFFSET_STREAM = { 'content-type': 'application/offset+octet-stream' };

/** Creates an upload with raw tus requests; returns its path. */
async function create(
  client: Client,
  length: number,
  metadata: Record<string, string> = { filename: 'doc.pdf' },
): Promise<string> {
  const res = await tusRequest(client, TUS, 'POST', {
    'upload-length': String(length),
    'upload-metadata': tusMetadata(metadata),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return uploadPath(res);
}

function patch(client: Client, path: string, offset: number, body: Uint8Array, headers: Record<string, string> = {}) {
  return tusRequest(client, path, 'PATCH', { ...OFFSET_STREAM, 'upload-offset': String(offset), ...headers }, body);
}

async function download(client: Client, fileId: string): Promise<Buffer> {
  const res = await client.fetch(`/api/files/${fileId}`);
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

for (const target of storeTargets) {
  describe(`resumable uploads over tus (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let now = Date.now();
    let clerkA: Client;
    let clerkB: Client;
    let admin: Client;
    before(async () => {
      server = await TestServer.start(target, {
        clock: () => new Date(now),
        uploadIdleMs: 3600_000,
        maxFileSize: 10 * 1024 * 1024,
        corsOrigins: ['https://portal.example.gov'],
      });
      clerkA = await server.tokenClient(await server.addAccount('clerkA', 'clerk', 'unit-a'));
      clerkB = await server.login((await server.addAccount('clerkB', 'clerk', 'unit-b')).username);
      admin = await server.tokenClient(await server.addAccount('admin1', 'admin', 'hq'));
    });
    after(() => server.close());

    describe('uploading', () => {
      it("takes a file from a standard tus client in several requests and answers the last with the archive's outcome", async () => {
        const data = randomContent(4 * CS + 1234);
        // 100 KB requests do not fall on the 64 KiB chunk edges: each request continues a partial chunk.
        const result = await tusUpload(clerkA, data, { chunkSize: 100_000, metadata: { filename: '县志.pdf' } });
        assert.equal(result.status, 'stored');
        assert.match(result.fileId!, /^[0-9a-f]{24}$/);
        assert.equal(result.uploadCount, '1');
        const entry = (await server.store.catalog.get(result.fileId!))!;
        assert.deepEqual({ md5: entry.md5, sha256: entry.sha256, length: entry.length }, keyOf(data));
        assert.equal(entry.fileName, '县志.pdf');
        assert.deepEqual(await download(clerkA, result.fileId!), data);
      });

      it('needs nothing but a token: no metadata, no declared hashes', async () => {
        const data = randomContent(CS + 5);
        const res = await tusRequest(clerkA, TUS, 'POST', { 'upload-length': String(data.length) });
        assert.equal(res.status, 201);
        const path = uploadPath(res);
        const done = await patch(clerkA, path, 0, data);
        assert.equal(done.status, 204);
        assert.equal(done.headers.get('upload-offset'), String(data.length));
        assert.equal(done.headers.get('archive-status'), 'stored');
        const entry = (await server.store.catalog.get(done.headers.get('archive-file-id')!))!;
        assert.equal(entry.fileName, '未命名');
        assert.equal(entry.contentType, 'application/octet-stream');
      });

      it('stores a second upload of the same content once and counts it in the ledger', async () => {
        const data = randomContent(2 * CS + 9);
        const first = await tusUpload(clerkA, data);
        const chunks = await countChunks(server.opened);
        const second = await tusUpload(clerkA, data, { chunkSize: 50_000 });
        const third = await tusUpload(clerkB, data);
        assert.deepEqual([second.status, second.fileId, second.uploadCount], ['duplicate', first.fileId, '2']);
        assert.deepEqual([third.status, third.fileId, third.uploadCount], ['duplicate', first.fileId, '1']);
        assert.equal(await countChunks(server.opened), chunks);
        const counts = (await server.store.ledger.entriesForFile(first.fileId!))
          .map((e) => [e.userName, e.uploadCount])
          .sort();
        assert.deepEqual(counts, [
          ['clerkA', 2],
          ['clerkB', 1],
        ]);
      });

      it('stores one copy when 20 clients upload the same new file at once, and counts every uploader', async () => {
        const data = randomContent(3 * CS + 500);
        const clients = await Promise.all(
          Array.from({ length: 20 }, async (_, i) =>
            server.tokenClient(await server.addAccount(`racer${i}`, 'clerk', i % 2 ? 'unit-a' : 'unit-b')),
          ),
        );
        const chunks = await countChunks(server.opened);
        const results = await Promise.all(clients.map((client) => tusUpload(client, data, { chunkSize: 60_000 })));
        assert.equal(new Set(results.map((r) => r.fileId)).size, 1, 'one file');
        assert.deepEqual(results.map((r) => r.status).sort(), [...Array<string>(19).fill('duplicate'), 'stored']);
        const entry = (await server.store.catalog.findByKey(keyOf(data)))!;
        assert.equal(entry.fileId, results[0]!.fileId);
        assert.equal(
          await countChunks(server.opened),
          chunks + 4,
          "its chunks stored once; every other upload's staged bytes removed",
        );
        const ledger = await server.store.ledger.entriesForFile(entry.fileId);
        assert.equal(ledger.length, 20);
        assert.ok(ledger.every((e) => e.uploadCount === 1));
        assert.deepEqual(await download(clients[7]!, entry.fileId), data);
      });

      it('takes the first bytes with the creation request (creation-with-upload), and a whole small file that way', async () => {
        const data = randomContent(3000);
        const res = await tusRequest(
          clerkA,
          TUS,
          'POST',
          {
            'upload-length': String(data.length),
            'upload-metadata': tusMetadata({ filename: 'small.txt', md5: md5(data) }),
            ...OFFSET_STREAM,
          },
          data,
        );
        assert.equal(res.status, 201);
        assert.equal(res.headers.get('upload-offset'), String(data.length));
        assert.equal(res.headers.get('archive-status'), 'stored');
        assert.deepEqual(await download(clerkA, res.headers.get('archive-file-id')!), data);
      });

      it('completes an empty file at creation', async () => {
        const res = await tusRequest(clerkA, TUS, 'POST', {
          'upload-length': '0',
          'upload-metadata': tusMetadata({ filename: 'empty.txt' }),
        });
        assert.equal(res.status, 201);
        assert.match(res.headers.get('archive-status')!, /^(stored|duplicate)$/);
        assert.deepEqual(await download(clerkA, res.headers.get('archive-file-id')!), Buffer.alloc(0));
      });

      /** clerkA's PATCH from offset 0 announcing `length` bytes, on a raw connection the test writes (or breaks) itself. */
      const patchAnnouncing = (path: string, length: number) =>
        http.request(new URL(path, server.url), {
          method: 'PATCH',
          headers: {
            ...OFFSET_STREAM,
            'tus-resumable': '1.0.0',
            'upload-offset': '0',
            'content-length': String(length),
            authorization: `Bearer ${clerkA.credentials.bearer}`,
          },
        });

      it('keeps the bytes of a request that broke off, so the upload resumes from the offset HEAD reports', async () => {
        const data = randomContent(3 * CS + 77);
        const path = await create(clerkA, data.length, {
          filename: 'broken.pdf',
          md5: md5(data),
          sha256: sha256(data),
        });
        const sent = CS + 1000;
        // Announce the whole rest, send part of it, then drop the connection.
        await new Promise<void>((resolve) => {
          const req = patchAnnouncing(path, data.length);
          req.on('error', () => resolve());
          req.write(data.subarray(0, sent), () => setTimeout(() => req.destroy(), 200));
          req.on('close', () => resolve());
        });
        // The server keeps them once it has seen the request end, which a busy machine takes a while to do.
        let offset = 0;
        await until(async () => {
          const head = await tusRequest(clerkA, path, 'HEAD');
          assert.equal(head.status, 200);
          offset = Number(head.headers.get('upload-offset'));
          return offset >= sent;
        }, `the server kept the ${sent} bytes that arrived`);
        assert.equal(offset, sent, 'every byte that arrived was kept, and no more');
        const rest = await tusUpload(clerkA, data, { uploadUrl: `${server.url}${path}` });
        assert.equal(rest.status, 'stored');
        assert.deepEqual(await download(clerkA, rest.fileId!), data);
      });

      it('answers HEAD of a finished upload with its full offset and outcome until it expires; DELETE then removes only the record', async () => {
        const data = randomContent(CS + 3);
        const result = await tusUpload(clerkA, data);
        const path = new URL(result.url).pathname;
        const head = await tusRequest(clerkA, path, 'HEAD');
        assert.equal(head.status, 200);
        assert.equal(head.headers.get('upload-offset'), String(data.length));
        assert.equal(head.headers.get('upload-length'), String(data.length));
        assert.equal(head.headers.get('archive-file-id'), result.fileId);
        assert.equal(head.headers.get('archive-status'), 'stored');
        assert.equal(head.headers.get('cache-control'), 'no-store');
        const again = await patch(clerkA, path, data.length, Buffer.alloc(0));
        assert.equal(again.status, 204, 'an empty PATCH at the end is answered again');
        assert.equal(again.headers.get('archive-file-id'), result.fileId);
        assert.equal((await patch(clerkA, path, 0, data)).status, 409, 'a finished upload takes no more bytes');
        const ledger = JSON.stringify(await server.store.ledger.entriesForFile(result.fileId!));
        assert.equal(
          JSON.parse(ledger).find((e: { userName: string }) => e.userName === 'clerkA').uploadCount,
          1,
          'and counts nothing twice',
        );
        const del = await tusRequest(clerkA, path, 'DELETE');
        assert.equal(del.status, 204);
        assert.equal(del.headers.get('tus-resumable'), '1.0.0');
        assert.equal((await tusRequest(clerkA, path, 'HEAD')).status, 404);
        assert.deepEqual(await download(clerkA, result.fileId!), data, 'the archived file stays');
        assert.equal(
          JSON.stringify(await server.store.ledger.entriesForFile(result.fileId!)),
          ledger,
          'and so do its ledger entries',
        );
      });

      it('cancels an unfinished upload with DELETE, removing its bytes', async () => {
        const chunks = await countChunks(server.opened);
        const data = randomContent(2 * CS);
        const path = await create(clerkA, data.length);
        assert.equal((await patch(clerkA, path, 0, data.subarray(0, CS + 10))).status, 204);
        assert.ok((await countChunks(server.opened)) > chunks);
        assert.equal((await tusRequest(clerkA, path, 'DELETE')).status, 204);
        assert.equal(await countChunks(server.opened), chunks);
        assert.equal((await patch(clerkA, path, CS + 10, data.subarray(CS + 10))).status, 404);
      });

      it('refuses the upload with 422 when the received bytes do not have the declared MD5 or SHA-256, storing nothing', async () => {
        for (const declared of [{ md5: md5(randomContent(10)) }, { sha256: sha256(randomContent(10)) }] as Array<
          Record<string, string>
        >) {
          const data = randomContent(CS + 100);
          const chunks = await countChunks(server.opened);
          const path = await create(clerkA, data.length, { filename: 'bad.pdf', ...declared });
          const res = await patch(clerkA, path, 0, data);
          assert.equal(res.status, 422);
          const body = await res.json();
          assert.equal(body.error, 'checksum_mismatch');
          assert.match(body.message, /not the declared/);
          assert.equal(await server.store.catalog.findByKey(keyOf(data)), undefined);
          assert.equal(await countChunks(server.opened), chunks);
          assert.equal((await tusRequest(clerkA, path, 'HEAD')).status, 404);
        }
      });

      it('lets one request write to an upload at a time: a concurrent PATCH gets 423 Locked', async () => {
        const data = randomContent(3 * CS);
        const path = await create(clerkA, data.length);
        const slow = patchAnnouncing(path, data.length);
        const slowDone = new Promise<number>((resolve, reject) => {
          slow.on('response', (res) => {
            res.resume();
            resolve(res.statusCode!);
          });
          slow.on('error', reject);
        });
        slow.write(data.subarray(0, CS));
        // Wait until the first request holds the lock (its first bytes are persisted).
        await until(
          async () => Boolean((await server.store.uploads.get(path.split('/').pop()!))?.lock),
          'the first request holds the lock',
        );
        const second = await patch(clerkA, path, 0, data);
        assert.equal(second.status, 423);
        assert.equal((await second.json()).error, 'upload_locked');
        slow.end(data.subarray(CS));
        assert.equal(await slowDone, 204);
        const head = await tusRequest(clerkA, path, 'HEAD');
        assert.equal(head.headers.get('upload-offset'), String(data.length));
        assert.equal(head.headers.get('archive-status'), 'stored');
      });

      it('takes PATCH sent as POST with X-HTTP-Method-Override', async () => {
        const data = randomContent(1000);
        const path = await create(clerkA, data.length);
        const res = await tusRequest(
          clerkA,
          path,
          'POST',
          { ...OFFSET_STREAM, 'x-http-method-override': 'PATCH', 'upload-offset': '0' },
          data,
        );
        assert.equal(res.status, 204);
        assert.equal(res.headers.get('upload-offset'), '1000');
      });

      it('gives Upload-Expires on creation and moves it with each request', async () => {
        const path = await create(clerkA, 2000);
        const head = await tusRequest(clerkA, path, 'HEAD');
        const before = Date.parse(head.headers.get('upload-expires')!);
        assert.ok(Math.abs(before - (now + 3600_000)) < 2000);
        now += 600_000;
        const res = await patch(clerkA, path, 0, randomContent(500));
        assert.ok(Date.parse(res.headers.get('upload-expires')!) - before >= 599_000);
      });
    });

    describe('who may do what', () => {
      it('keeps an upload to the account that created it: others, admins included, are told it does not exist', async () => {
        const path = await create(clerkA, 1000);
        for (const other of [clerkB, admin]) {
          assert.equal((await tusRequest(other, path, 'HEAD')).status, 404);
          assert.equal((await patch(other, path, 0, randomContent(1000))).status, 404);
          assert.equal((await tusRequest(other, path, 'DELETE')).status, 404);
        }
        const head = await tusRequest(clerkA, path, 'HEAD');
        assert.equal(head.headers.get('upload-offset'), '0', 'untouched');
      });

      it('refuses anonymous callers with 401 and cookie callers without the CSRF token with 403', async () => {
        const anonymous = server.anonymous();
        const path = await create(clerkA, 10);
        assert.equal((await tusRequest(anonymous, TUS, 'POST', { 'upload-length': '10' })).status, 401);
        assert.equal((await tusRequest(anonymous, path, 'HEAD')).status, 401);
        assert.equal((await patch(anonymous, path, 0, randomContent(10))).status, 401);
        assert.equal((await tusRequest(anonymous, path, 'DELETE')).status, 401);
        const badToken = await tusRequest(
          new Client(server.url, { bearer: 'adt_000000000000_' + 'x'.repeat(43) }),
          path,
          'HEAD',
          { origin: 'https://portal.example.gov' },
        );
        assert.equal(badToken.status, 401);
        assert.equal(badToken.headers.get('tus-resumable'), '1.0.0', 'even a refusal before the tus route speaks tus');
        assert.equal(
          badToken.headers.get('access-control-allow-origin'),
          'https://portal.example.gov',
          'and a browser may read it',
        );
        const noCsrf = await tusRequest(clerkB, TUS, 'POST', { 'upload-length': '10', 'x-csrf-token': 'wrong' });
        assert.equal(noCsrf.status, 403);
        assert.equal(
          (await tusRequest(clerkB, TUS, 'POST', { 'upload-length': '10' })).status,
          201,
          'with its token a browser session may upload',
        );
        assert.equal(
          (await tusRequest(admin, TUS, 'POST', { 'upload-length': '10' })).status,
          201,
          'admins may upload',
        );
      });
    });

    describe('the tus 1.0.0 protocol', () => {
      it('describes itself on OPTIONS without authentication', async () => {
        const res = await server.anonymous().fetch(TUS, { method: 'OPTIONS' });
        assert.equal(res.status, 204);
        assert.equal(res.headers.get('tus-version'), '1.0.0');
        assert.deepEqual(res.headers.get('tus-extension')!.split(',').sort(), [
          'creation',
          'creation-with-upload',
          'expiration',
          'termination',
        ]);
        assert.equal(res.headers.get('tus-max-size'), String(10 * 1024 * 1024));
      });

      it('answers 412 with Tus-Version to a missing or unsupported Tus-Resumable, and processes nothing', async () => {
        for (const version of [undefined, '0.2.2']) {
          const res = await tusRequest(clerkA, TUS, 'POST', { 'tus-resumable': version, 'upload-length': '10' });
          assert.equal(res.status, 412);
          assert.equal(res.headers.get('tus-version'), '1.0.0');
          assert.equal((await res.json()).error, 'unsupported_protocol');
        }
      });

      it('answers 409 to a PATCH at the wrong offset, without changing the upload', async () => {
        const path = await create(clerkA, 3000);
        assert.equal((await patch(clerkA, path, 0, randomContent(1000))).status, 204);
        const res = await patch(clerkA, path, 500, randomContent(1000));
        assert.equal(res.status, 409);
        assert.equal((await res.json()).error, 'offset_mismatch');
        assert.equal((await tusRequest(clerkA, path, 'HEAD')).headers.get('upload-offset'), '1000');
      });

      it('answers 400 to a PATCH without a valid Upload-Offset, and 415 to one that is not an offset stream', async () => {
        const path = await create(clerkA, 3000);
        assert.equal((await tusRequest(clerkA, path, 'PATCH', OFFSET_STREAM, randomContent(10))).status, 400);
        assert.equal((await patch(clerkA, path, 0, randomContent(10), { 'upload-offset': '-1' })).status, 400);
        assert.equal((await patch(clerkA, path, 0, randomContent(10), { 'upload-offset': 'ten' })).status, 400);
        const wrongType = await patch(clerkA, path, 0, randomContent(10), {
          'content-type': 'application/octet-stream',
        });
        assert.equal(wrongType.status, 415);
        assert.equal((await wrongType.json()).error, 'unsupported_media_type');
      });

      it('answers 415 to creation-with-upload bytes that are not an offset stream', async () => {
        const res = await tusRequest(
          clerkA,
          TUS,
          'POST',
          { 'upload-length': '10', 'content-type': 'text/plain' },
          randomContent(10),
        );
        assert.equal(res.status, 415);
      });

      it('requires Upload-Length: missing, negative or malformed is 400, over the maximum is 413', async () => {
        assert.equal((await tusRequest(clerkA, TUS, 'POST', {})).status, 400);
        assert.equal((await tusRequest(clerkA, TUS, 'POST', { 'upload-length': '-5' })).status, 400);
        assert.equal((await tusRequest(clerkA, TUS, 'POST', { 'upload-length': '1e3' })).status, 400);
        const big = await tusRequest(clerkA, TUS, 'POST', { 'upload-length': String(10 * 1024 * 1024 + 1) });
        assert.equal(big.status, 413);
        assert.equal((await big.json()).error, 'payload_too_large');
      });

      it('refuses badly encoded metadata and malformed declared hashes with 400', async () => {
        assert.equal(
          (await tusRequest(clerkA, TUS, 'POST', { 'upload-length': '10', 'upload-metadata': 'filename not*base64!' }))
            .status,
          400,
        );
        assert.equal(
          (
            await tusRequest(clerkA, TUS, 'POST', {
              'upload-length': '10',
              'upload-metadata': 'filename' + ' ' + 'eA==,filename eA==',
            })
          ).status,
          400,
        );
        const badHash = await tusRequest(clerkA, TUS, 'POST', {
          'upload-length': '10',
          'upload-metadata': tusMetadata({ md5: 'abc' }),
        });
        assert.equal(badHash.status, 400);
        assert.match((await badHash.json()).message, /MD5/);
      });

      it("answers 413 to more bytes than the upload's length", async () => {
        const path = await create(clerkA, 100);
        assert.equal((await patch(clerkA, path, 0, randomContent(101))).status, 413);
      });

      it('answers 404 to an unknown upload and 410 to an expired one', async () => {
        assert.equal((await tusRequest(clerkA, `${TUS}/${'0'.repeat(32)}`, 'HEAD')).status, 404);
        assert.equal((await tusRequest(clerkA, `${TUS}/not-an-id`, 'HEAD')).status, 404);
        const path = await create(clerkA, 100);
        now += 3600_000 + 1000;
        assert.equal((await tusRequest(clerkA, path, 'HEAD')).status, 410);
        const res = await patch(clerkA, path, 0, randomContent(100));
        assert.equal(res.status, 410);
        assert.equal((await res.json()).error, 'upload_expired');
      });

      it("never builds an upload URL from the client's Host or forwarded headers: relative, or on PUBLIC_URL", async () => {
        const create = (url: string, bearer: string) =>
          new Promise<http.IncomingMessage>((resolve, reject) => {
            const req = http.request(`${url}${TUS}`, {
              method: 'POST',
              headers: {
                host: 'evil.example',
                'x-forwarded-host': 'evil.example',
                'x-forwarded-proto': 'https',
                authorization: `Bearer ${bearer}`,
                'tus-resumable': '1.0.0',
                'upload-length': '10',
              },
            });
            req
              .on('response', (res) => resolve(res.resume()))
              .on('error', reject)
              .end();
          });
        const relative = await create(server.url, clerkA.credentials.bearer!);
        assert.equal(relative.statusCode, 201);
        assert.match(relative.headers.location!, /^\/api\/tus\/[0-9a-f]{32}$/);

        const behindProxy = await TestServer.start(target, {
          publicUrl: 'https://archive.example.gov/records',
          trustProxy: true,
        });
        try {
          const clerk = await behindProxy.tokenClient(await behindProxy.addAccount('clerkP', 'clerk', 'unit-p'));
          const absolute = await create(behindProxy.url, clerk.credentials.bearer!);
          assert.equal(absolute.statusCode, 201);
          assert.match(
            absolute.headers.location!,
            /^https:\/\/archive\.example\.gov\/records\/api\/tus\/[0-9a-f]{32}$/,
          );
        } finally {
          await behindProxy.close();
        }
      });

      it('exposes the tus and archive headers to an allowed browser origin only', async () => {
        const allowed = await tusRequest(clerkA, TUS, 'POST', {
          'upload-length': '10',
          origin: 'https://portal.example.gov',
        });
        assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://portal.example.gov');
        const exposed = allowed.headers.get('access-control-expose-headers')!.split(/,\s*/);
        for (const h of [
          'Location',
          'Upload-Offset',
          'Upload-Length',
          'Upload-Expires',
          'Tus-Resumable',
          'Archive-File-Id',
          'Archive-Status',
        ])
          assert.ok(exposed.includes(h), h);
        const preflight = await server.anonymous().fetch(TUS, {
          method: 'OPTIONS',
          headers: { origin: 'https://portal.example.gov', 'access-control-request-method': 'POST' },
        });
        assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://portal.example.gov');
        assert.match(preflight.headers.get('access-control-allow-headers')!, /Upload-Metadata/);
        const path = uploadPath(allowed);
        const patched = await patch(clerkA, path, 0, randomContent(10), { origin: 'https://portal.example.gov' });
        assert.equal(patched.headers.get('access-control-allow-origin'), 'https://portal.example.gov');
        const exposedOnPatch = patched.headers.get('access-control-expose-headers')!.split(/,\s*/);
        for (const h of ['Upload-Offset', 'Archive-File-Id', 'Archive-Status', 'Archive-Upload-Count'])
          assert.ok(exposedOnPatch.includes(h), h);
        const other = await tusRequest(clerkA, TUS, 'POST', { 'upload-length': '10', origin: 'https://evil.example' });
        assert.equal(other.headers.get('access-control-allow-origin'), null);
      });

      it('stays up after all of this', async () => {
        assert.equal((await fetch(`${server.url}/api/health`)).status, 200);
      });
    });

    describe('expiry and garbage collection', () => {
      it("removes an abandoned upload's bytes and nothing else", async () => {
        await server.archive.gc.run(); // start from a clean slate
        const kept = await tusUpload(clerkA, randomContent(2 * CS + 1));
        const abandoned = await create(clerkA, 3 * CS);
        assert.equal((await patch(clerkA, abandoned, 0, randomContent(2 * CS))).status, 204);
        now += 1800_000;
        const live = await create(clerkA, 3 * CS);
        assert.equal((await patch(clerkA, live, 0, randomContent(CS))).status, 204);
        const chunks = await countChunks(server.opened);
        now += 1800_000 + 1000; // the abandoned upload is idle past its hour; the live one is not
        const report = await server.archive.gc.run();
        assert.ok(report.expiredUploads >= 1); // finished uploads' records expire too
        assert.equal(await countChunks(server.opened), chunks - 2);
        assert.equal((await tusRequest(clerkA, abandoned, 'HEAD')).status, 404);
        assert.equal((await tusRequest(clerkA, live, 'HEAD')).headers.get('upload-offset'), String(CS));
        assert.equal((await clerkA.fetch(`/api/files/${kept.fileId}`)).status, 200);
      });
    });
  });
}
