import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { md5, randomContent } from '../support/content.js';
import { Client, rawGet, TestServer } from '../support/server.js';
import { countChunks, storeTargets, TEST_CHUNK_SIZE } from '../support/stores.js';
import { until } from '../support/until.js';

const CS = TEST_CHUNK_SIZE;

for (const target of storeTargets) {
  describe(`uploading and downloading over HTTP (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let clerk: Client;
    let colleague: Client;
    before(async () => {
      server = await TestServer.start(target, { maxFileSize: 2 * 1024 * 1024 });
      clerk = await server.tokenClient(await server.addAccount('clerk', 'clerk', 'unit-a'));
      colleague = await server.tokenClient(await server.addAccount('colleague', 'clerk', 'unit-a'));
    });
    after(() => server.close());

    const chunks = () => countChunks(server.opened);

    it('stores new content once and counts every upload per uploader', async () => {
      const data = randomContent(3 * CS + 5);
      const before = await chunks();
      const first = await clerk.upload('report.pdf', data);
      assert.equal(first.status, 201);
      const stored = await first.json();
      assert.equal(stored.status, 'stored');
      assert.equal(stored.uploadCount, 1);

      const again = await clerk.upload('report (copy).pdf', data);
      assert.equal(again.status, 200);
      assert.deepEqual(await again.json(), { status: 'duplicate', fileId: stored.fileId, uploadCount: 2 });

      const byColleague = await colleague.upload('other-name.pdf', data);
      assert.deepEqual(await byColleague.json(), { status: 'duplicate', fileId: stored.fileId, uploadCount: 1 });

      assert.equal(await chunks(), before + 4, 'the bytes are stored once');
      const entries = await server.store.ledger.entriesForFile(stored.fileId);
      assert.deepEqual(entries.map((e) => [e.userName, e.uploadCount]).sort(), [
        ['clerk', 2],
        ['colleague', 1],
      ]);
    });

    it('downloads a file byte for byte with its type, length, ETag and a Chinese name intact', async () => {
      const data = randomContent(2 * CS + 77);
      const name = '青县 档案局 2024年 第3号.pdf';
      const { fileId } = await (await clerk.upload(name, data)).json();
      const res = await clerk.fetch(`/api/files/${fileId}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/pdf');
      assert.equal(res.headers.get('content-length'), String(data.length));
      assert.equal(res.headers.get('etag'), `"${md5(data)}"`);
      assert.equal(res.headers.get('accept-ranges'), 'bytes');
      const disposition = res.headers.get('content-disposition')!;
      assert.match(disposition, /^attachment; /);
      assert.ok(
        disposition.includes(
          `filename*=UTF-8''${encodeURIComponent(name).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`,
        ),
        disposition,
      );
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), data);
      const listed = await (await clerk.fetch('/api/files?q=档案局')).json();
      assert.deepEqual(
        listed.items.map((i: { fileName: string }) => i.fileName),
        [name],
      );
    });

    it('stores and serves a 0-byte file', async () => {
      const res = await clerk.upload('empty.txt', new Uint8Array(0), {}, 'text/plain');
      assert.equal(res.status, 201);
      const { fileId } = await res.json();
      const got = await clerk.fetch(`/api/files/${fileId}`);
      assert.equal(got.status, 200);
      assert.equal(got.headers.get('content-length'), '0');
      assert.equal((await got.arrayBuffer()).byteLength, 0);
      assert.equal((await (await colleague.upload('empty2.txt', new Uint8Array(0))).json()).fileId, fileId);
    });

    it('keeps names clean: no directories, control or bidi characters, at most 200 characters', async () => {
      const cases: Array<[string, string]> = [
        ['../../etc/passwd', 'passwd'],
        ['C:\\Users\\clerk\\报告.docx', '报告.docx'],
        ['invoice\u202Efdp.exe', 'invoicefdp.exe'],
        [`${'长'.repeat(1000)}.pdf`, `${'长'.repeat(196)}.pdf`],
      ];
      for (const [raw, expected] of cases) {
        const { fileId } = await (await clerk.upload(raw, randomContent(20))).json();
        const res = await clerk.fetch(`/api/files/${fileId}`);
        await res.arrayBuffer();
        const disposition = res.headers.get('content-disposition')!;
        assert.ok(
          disposition.includes(
            encodeURIComponent(expected).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
          ) || disposition.includes(`"${expected}"`),
          `${JSON.stringify(raw)} -> ${disposition}`,
        );
        // eslint-disable-next-line no-control-regex -- control characters are what must not be there
        assert.ok(!/[\u0000-\u001f\u202e]/.test(disposition));
      }
      // Raw control characters in a multipart header make the header itself malformed: refused.
      const refused = await clerk.upload('tab\there\u0007.txt', randomContent(20));
      assert.equal(refused.status, 400);
      assert.match((await refused.json()).message, /multipart body is malformed/);
    });

    it('checks a declared MD5: a match stores, a mismatch gives 422 and stores nothing', async () => {
      const data = randomContent(CS + 1);
      const ok = await clerk.upload('good.pdf', data, { md5: md5(data).toUpperCase() });
      assert.equal(ok.status, 201);
      const before = await chunks();
      const other = randomContent(CS + 1);
      const bad = await clerk.upload('bad.pdf', other, { md5: md5(data) });
      assert.equal(bad.status, 422);
      const body = await bad.json();
      assert.equal(body.error, 'checksum_mismatch');
      assert.match(body.message, /Nothing was stored/);
      assert.equal(await chunks(), before);
      assert.equal(
        await server.store.catalog.findByKey({ md5: md5(other), sha256: '', length: other.length }),
        undefined,
      );
    });

    describe('byte ranges', () => {
      const data = randomContent(3 * CS);
      let fileId: string;
      before(async () => {
        fileId = (await (await clerk.upload('ranges.bin', data, {}, 'application/octet-stream')).json()).fileId;
      });
      const get = (headers: Record<string, string>, method = 'GET') =>
        clerk.fetch(`/api/files/${fileId}`, { headers, method });

      it('answers a single range with 206 and Content-Range, across chunk edges', async () => {
        for (const [spec, start, end] of [
          [`bytes=${CS - 10}-${CS + 9}`, CS - 10, CS + 10],
          ['bytes=0-0', 0, 1],
          [`bytes=${2 * CS}-`, 2 * CS, 3 * CS],
          ['bytes=-100', 3 * CS - 100, 3 * CS],
          [`bytes=${3 * CS - 5}-${10 * CS}`, 3 * CS - 5, 3 * CS],
        ] as const) {
          const res = await get({ range: spec });
          assert.equal(res.status, 206, spec);
          assert.equal(res.headers.get('content-range'), `bytes ${start}-${end - 1}/${data.length}`);
          assert.equal(res.headers.get('content-length'), String(end - start));
          assert.deepEqual(Buffer.from(await res.arrayBuffer()), data.subarray(start, end), spec);
        }
      });

      it('refuses unsatisfiable (416), multiple (416) and malformed (400) ranges', async () => {
        const unsatisfiable = await get({ range: `bytes=${data.length}-` });
        assert.equal(unsatisfiable.status, 416);
        assert.equal(unsatisfiable.headers.get('content-range'), `bytes */${data.length}`);
        assert.equal((await unsatisfiable.json()).error, 'range_not_satisfiable');
        const multiple = await get({ range: 'bytes=0-1,5-6' });
        assert.equal(multiple.status, 416);
        assert.match((await multiple.json()).message, /single byte range/);
        for (const bad of ['bytes=abc', 'pages=1-2', 'bytes']) {
          const res = await get({ range: bad });
          assert.equal(res.status, 400, bad);
          assert.equal((await res.json()).error, 'bad_request');
        }
      });

      it('serves the whole file when If-Range no longer matches, and 304 for a matching If-None-Match', async () => {
        const stale = await get({ range: 'bytes=0-9', 'if-range': '"0000"' });
        assert.equal(stale.status, 200);
        assert.equal((await stale.arrayBuffer()).byteLength, data.length);
        const fresh = await get({ range: 'bytes=0-9', 'if-range': `"${md5(data)}"` });
        assert.equal(fresh.status, 206);
        await fresh.arrayBuffer();
        // fetch() adds "Cache-Control: no-cache" to conditional requests, so ask with plain http.
        const cached = await rawGet(`${server.url}/api/files/${fileId}`, {
          authorization: `Bearer ${clerk.credentials.bearer}`,
          'if-none-match': `"${md5(data)}"`,
        });
        assert.equal(cached.status, 304);
      });

      it('answers HEAD with the headers and no body', async () => {
        const res = await get({}, 'HEAD');
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('content-length'), String(data.length));
        assert.equal((await res.arrayBuffer()).byteLength, 0);
        const partial = await get({ range: 'bytes=10-19' }, 'HEAD');
        assert.equal(partial.status, 206);
        assert.equal(partial.headers.get('content-length'), '10');
      });
    });

    it('refuses a file over the maximum with 413, whether declared or streamed, and keeps nothing', async () => {
      const before = await chunks();
      const big = randomContent(2 * 1024 * 1024 + 1);
      const declared = await clerk.upload('big.bin', big);
      assert.equal(declared.status, 413);
      assert.equal((await declared.json()).error, 'payload_too_large');

      // Chunked transfer: no Content-Length, so the limit is found while streaming.
      const boundary = 'XbOuNdArY';
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(`${server.url}/api/files`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${clerk.credentials.bearer}`,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'transfer-encoding': 'chunked',
          },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        req.write(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        );
        req.write(big);
        req.end(`\r\n--${boundary}--\r\n`);
      });
      assert.equal(status, 413);
      await until(async () => (await chunks()) === before, 'the partial upload is removed');
    });

    it('removes the staged bytes of an upload the client abandons mid-stream', async () => {
      const before = await chunks();
      const boundary = 'AbAnDoN';
      const req = http.request(`${server.url}/api/files`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${clerk.credentials.bearer}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(30 * CS),
        },
      });
      req.on('error', () => {});
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.bin"\r\n\r\n`);
      req.write(randomContent(20 * CS));
      await until(async () => (await chunks()) > before, 'the first chunks are staged');
      req.destroy();
      await until(async () => (await chunks()) === before, 'the abandoned upload is removed');
      assert.equal((await clerk.fetch('/api/files?limit=200')).status, 200, 'the server is still up');
    });

    it('keeps one copy when 20 uploads of the same new file race, and counts every uploader', async () => {
      const uploaders = await Promise.all(
        ['r1', 'r2', 'r3', 'r4'].map(async (name, i) =>
          server.tokenClient(await server.addAccount(name, 'clerk', i < 2 ? 'unit-a' : 'unit-b')),
        ),
      );
      const data = randomContent(2 * CS + 3);
      const before = await chunks();
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => uploaders[i % 4]!.upload(`race-${i}.pdf`, data)),
      );
      const bodies = await Promise.all(responses.map((r) => r.json()));
      assert.deepEqual(responses.map((r) => r.status).sort(), [...Array(19).fill(200), 201]);
      assert.equal(new Set(bodies.map((b) => b.fileId)).size, 1);
      assert.equal(await chunks(), before + 3, 'exactly one stored copy');
      const entries = await server.store.ledger.entriesForFile(bodies[0].fileId);
      assert.deepEqual(entries.map((e) => [e.userName, e.uploadCount]).sort(), [
        ['r1', 5],
        ['r2', 5],
        ['r3', 5],
        ['r4', 5],
      ]);
      for (const uploader of uploaders) {
        assert.deepEqual(
          Buffer.from(await (await uploader.fetch(`/api/files/${bodies[0].fileId}`)).arrayBuffer()),
          data,
        );
      }
    });

    it('pages the file list', async () => {
      const all = await (await clerk.fetch('/api/files?limit=200')).json();
      assert.ok(all.total >= 5);
      const page = await (await clerk.fetch('/api/files?limit=2&offset=1')).json();
      assert.deepEqual([page.limit, page.offset, page.total], [2, 1, all.total]);
      assert.deepEqual(
        page.items.map((i: { fileId: string }) => i.fileId),
        all.items.slice(1, 3).map((i: { fileId: string }) => i.fileId),
      );
    });
  });
}
