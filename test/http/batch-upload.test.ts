import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { BATCH_FILE_MAX_BYTES, BATCH_MAX_FILES } from '../../shared/schemas.js';
import { checkBody, digestsFor, md5, randomContent, readAll, sha256 } from '../support/content.js';
import { Client, TestServer } from '../support/server.js';
import { countChunks, storeTargets } from '../support/stores.js';

for (const target of storeTargets) {
  describe(
    `many files to a request: checks, proofs and small files in batches (${target.name} store)`,
    { skip: target.skip },
    () => {
      let server: TestServer;
      let clerkA: Client;
      let clerkB: Client;
      before(async () => {
        server = await TestServer.start(target);
        clerkA = await server.tokenClient(await server.addAccount('clerkA', 'clerk', 'unit-a'));
        clerkB = await server.login((await server.addAccount('clerkB', 'clerk', 'unit-b')).username);
      });
      after(() => server.close());

      const store = () => server.opened.store;
      /** What the archive holds: catalog entries, stored chunks, ledger entries of a file. */
      const holdings = async () => ({ files: await store().catalog.count(), chunks: await countChunks(server.opened) });

      it('stores new files of a batch, counts held content and a repeat within the batch as duplicates, and answers each in order', async () => {
        const held = randomContent(3000);
        const heldId = (await (await clerkB.upload('held.pdf', held)).json()).fileId;
        const fresh = randomContent(70_000);
        const empty = Buffer.alloc(0);
        const res = await clerkA.batch([
          { name: '档案 第一卷.pdf', data: fresh },
          { name: 'held-copy.pdf', data: held },
          { name: 'again.pdf', data: fresh },
          { name: 'empty.txt', data: empty, type: 'text/plain' },
        ]);
        assert.equal(res.status, 200);
        const { results } = await res.json();
        assert.equal(results.length, 4);
        assert.equal(results[0].status, 'stored');
        assert.deepEqual(results[1], { status: 'duplicate', fileId: heldId, uploadCount: 1 });
        assert.deepEqual(results[2], { status: 'duplicate', fileId: results[0].fileId, uploadCount: 2 });
        assert.equal(results[3].status, 'stored');
        const entry = (await store().catalog.get(results[0].fileId))!;
        assert.deepEqual([entry.fileName, entry.md5, entry.length], ['档案 第一卷.pdf', md5(fresh), fresh.length]);
        assert.deepEqual(await readAll(store().content.read(entry)), fresh);
        const download = await clerkA.fetch(`/api/files/${results[0].fileId}`);
        assert.deepEqual(Buffer.from(await download.arrayBuffer()), fresh);
        assert.equal((await store().catalog.get(results[3].fileId))!.contentType, 'text/plain');
        const ledger = await store().ledger.entriesForFile(results[0].fileId);
        assert.deepEqual(
          ledger.map((e) => [e.userName, e.uploadCount, e.uploadFileName, e.lastUploadFileName]),
          [['clerkA', 2, '档案 第一卷.pdf', 'again.pdf']],
        );
        const audit = await store().audit.search({ userName: 'clerkA', action: 'upload', limit: 10, offset: 0 });
        assert.deepEqual(audit.items.map((e) => e.detail).sort(), [
          'batch: duplicate',
          'batch: duplicate',
          'batch: stored',
          'batch: stored',
        ]);
      });

      it('keeps every file of batches that follow and overlap each other whole (the memory they arrive in is reused)', async () => {
        const sent: Buffer[] = [];
        const batchOf = (sizes: number[]) =>
          sizes.map((size, i) => {
            const data = randomContent(size);
            sent.push(data);
            return { name: `第${sent.length}页-${i}.jpg`, data };
          });
        const answers = [await clerkA.batch(batchOf([200_000, 5, 70_000]))];
        // Two at once, then one laid out differently in the memory the first ones used.
        answers.push(
          ...(await Promise.all([clerkA.batch(batchOf([1, 300_000])), clerkA.batch(batchOf([64_000, 64_000]))])),
        );
        // A refused batch (its last file over the limit) between them takes nothing of theirs.
        const refusedBatch = await clerkA.batch([
          { name: 'small.jpg', data: randomContent(1000) },
          { name: 'big.tif', data: randomContent(BATCH_FILE_MAX_BYTES + 1) },
        ]);
        assert.equal(refusedBatch.status, 413);
        answers.push(await clerkA.batch(batchOf([3, 250_000, 17])));
        const fileIds: string[] = [];
        for (const res of answers) {
          assert.equal(res.status, 200);
          for (const result of (await res.json()).results) fileIds.push(result.fileId);
        }
        assert.equal(fileIds.length, sent.length);
        for (const [i, fileId] of fileIds.entries()) {
          const entry = (await store().catalog.get(fileId))!;
          assert.deepEqual(await readAll(store().content.read(entry)), sent[i], `file ${i} as sent`);
        }
      });

      it('refuses a file whose bytes do not match its digests on its own: the others are stored, it leaves nothing behind', async () => {
        const good = randomContent(5000);
        const bad = randomContent(6000);
        const before = await holdings();
        const res = await clerkA.batch(
          [
            { name: 'good.pdf', data: good },
            { name: 'bad.pdf', data: bad },
          ],
          [
            { md5: md5(good), sha256: sha256(good) },
            { md5: md5(bad), sha256: sha256(good) },
          ],
        );
        assert.equal(res.status, 200);
        const { results } = await res.json();
        assert.equal(results[0].status, 'stored');
        assert.equal(results[1].status, 'failed');
        assert.equal(results[1].error, 'checksum_mismatch');
        assert.match(results[1].message, /SHA-256 .* not the declared/);
        const after = await holdings();
        assert.equal(after.files, before.files + 1);
        assert.equal(
          await store().catalog.findByKey({ md5: md5(bad), sha256: sha256(bad), length: bad.length }),
          undefined,
        );
        const failed = await store().audit.search({
          userName: 'clerkA',
          action: 'upload_failed',
          limit: 10,
          offset: 0,
        });
        assert.equal(failed.items[0]!.fileName, 'bad.pdf');
      });

      it('answers many checks in order, and counts the right proofs of a batch while refusing a wrong one in its place', async () => {
        const [x, y, z] = [randomContent(1000), randomContent(200_000), randomContent(3000)];
        await clerkB.batch([
          { name: 'x.pdf', data: x },
          { name: 'y.pdf', data: y },
        ]);
        const checks = await clerkA.json('/api/uploads/checks', 'POST', {
          files: [checkBody(x, 'x-a.pdf'), checkBody(z), checkBody(y, 'y-a.pdf')],
        });
        assert.equal(checks.status, 200);
        const { results } = await checks.json();
        assert.deepEqual(
          results.map((r: { status: string }) => r.status),
          ['prove', 'upload', 'prove'],
        );
        const proofs = await clerkA.json('/api/uploads/proofs', 'POST', {
          proofs: [
            { claimId: results[0].claimId, digests: digestsFor(x, results[0].ranges) },
            { claimId: results[2].claimId, digests: digestsFor(randomContent(200_000), results[2].ranges) },
          ],
        });
        assert.equal(proofs.status, 200);
        const proved = (await proofs.json()).results;
        assert.equal(proved[0].status, 'duplicate');
        assert.equal(proved[0].uploadCount, 1);
        assert.deepEqual([proved[1].status, proved[1].error], ['rejected', 'claim_rejected']);
        assert.equal(
          (await store().ledger.entriesForFile(proved[0].fileId)).find((e) => e.userName === 'clerkA')?.uploadFileName,
          'x-a.pdf',
        );
        const yId = (await store().catalog.findByKey({ md5: md5(y), sha256: sha256(y), length: y.length }))!.fileId;
        assert.equal(
          (await store().ledger.entriesForFile(yId)).find((e) => e.userName === 'clerkA'),
          undefined,
          'a refused proof counts nothing',
        );
        // A claim is counted once, also in a batch: sent again, it is answered as it was counted.
        const again = await (
          await clerkA.json('/api/uploads/proofs', 'POST', {
            proofs: [{ claimId: results[0].claimId, digests: digestsFor(x, results[0].ranges) }],
          })
        ).json();
        assert.deepEqual(again.results[0], proved[0]);
        assert.equal(
          (await store().ledger.entriesForFile(proved[0].fileId)).find((e) => e.userName === 'clerkA')?.uploadCount,
          1,
        );
      });

      it('counts the right proofs of a request together, each once, also a claim sent twice in it', async () => {
        const files = Array.from({ length: 5 }, (_, i) => ({ name: `p${i}.pdf`, data: randomContent(2000 + i) }));
        await clerkB.batch(files);
        const { results } = await (
          await clerkA.json('/api/uploads/checks', 'POST', { files: files.map((f) => checkBody(f.data, f.name)) })
        ).json();
        const proof = (k: number) => ({
          claimId: results[k].claimId,
          digests: digestsFor(files[k]!.data, results[k].ranges),
        });
        const wrong = { claimId: results[4].claimId, digests: results[4].ranges.map(() => '0'.repeat(32)) };
        const answer = await (
          await clerkA.json('/api/uploads/proofs', 'POST', {
            proofs: [proof(0), proof(1), proof(0), wrong, proof(2), proof(3)],
          })
        ).json();
        assert.deepEqual(
          answer.results.map((r: { status: string }) => r.status),
          ['duplicate', 'duplicate', 'duplicate', 'rejected', 'duplicate', 'duplicate'],
        );
        assert.deepEqual(answer.results[2], answer.results[0], 'the repeated claim is answered as its first proof');
        for (const [k, at] of [
          [0, 0],
          [1, 1],
          [2, 4],
          [3, 5],
        ] as const) {
          const mine = (await store().ledger.entriesForFile(answer.results[at].fileId)).filter(
            (e) => e.userName === 'clerkA',
          );
          assert.deepEqual(
            mine.map((e) => [e.uploadFileName, e.uploadCount]),
            [[files[k]!.name, 1]],
            files[k]!.name,
          );
        }
      });

      it("records each upload under its path in the clerk's folder; the file keeps its own name", async () => {
        const page = randomContent(4000);
        const path = '2026年移交/副本/第0012页.jpg';
        const { results } = await (
          await clerkA.batch(
            [{ name: 'ignored.jpg', data: page }],
            [{ md5: md5(page), sha256: sha256(page), name: path, type: 'image/jpeg' }],
          )
        ).json();
        const fileId = results[0].fileId;
        assert.equal((await store().catalog.get(fileId))!.fileName, '第0012页.jpg');
        // The same page, dropped by another unit's clerk from another folder: counted without its bytes.
        const { check } = await clerkB.instantUpload(page, '../../卷二/第0012页.jpg');
        await clerkB.json('/api/uploads/proofs', 'POST', {
          proofs: [{ claimId: check.claimId, digests: digestsFor(page, check.ranges) }],
        });
        const ledger = await store().ledger.entriesForFile(fileId);
        assert.deepEqual(ledger.map((e) => [e.userName, e.uploadFileName]).sort(), [
          ['clerkA', path],
          ['clerkB', '卷二/第0012页.jpg'],
        ]);
        const listed = await (await clerkA.fetch('/api/files?q=副本')).json();
        assert.deepEqual(
          listed.items.map((f: { fileName: string }) => f.fileName),
          [path],
          'found by its folder',
        );
        const download = await clerkA.fetch(`/api/files/${fileId}`);
        assert.match(
          download.headers.get('content-disposition') ?? '',
          /filename\*=UTF-8''%E7%AC%AC0012%E9%A1%B5\.jpg/,
        );
        const audit = await store().audit.search({ userName: 'clerkA', action: 'upload', limit: 1, offset: 0 });
        assert.equal(audit.items[0]!.fileName, path);
      });

      it('counts a file sent again under its own key once, in whatever batch and place it comes back', async () => {
        const [a, b, c] = [randomContent(1500), randomContent(1600), randomContent(1700)];
        const entry = (data: Buffer, key: string) => ({
          md5: md5(data),
          sha256: sha256(data),
          name: `${key}.pdf`,
          key,
        });
        const first = await (
          await clerkA.batch(
            [
              { name: 'a', data: a },
              { name: 'b', data: b },
            ],
            [entry(a, 'key-a'), entry(b, 'key-b')],
          )
        ).json();
        // The page was reloaded before the answer arrived: b comes back in another batch, second.
        const again = await (
          await clerkA.batch(
            [
              { name: 'c', data: c },
              { name: 'b', data: b },
            ],
            [entry(c, 'key-c'), entry(b, 'key-b')],
          )
        ).json();
        assert.equal(again.results[0].status, 'stored');
        assert.deepEqual(again.results[1], first.results[1]);
        const mine = (await store().ledger.entriesForFile(first.results[1].fileId)).filter(
          (e) => e.userName === 'clerkA',
        );
        assert.equal(mine[0]!.uploadCount, 1);
        // Another account's key is its own: the same key counts clerkB's upload.
        const other = await (await clerkB.batch([{ name: 'b', data: b }], [entry(b, 'key-b')])).json();
        assert.equal(other.results[0].status, 'duplicate');
      });

      describe('bad batches are refused whole, with a message, and change nothing', () => {
        const refused = async (res: Response, status: number, message: RegExp) => {
          const body = await res.json();
          assert.equal(res.status, status, JSON.stringify(body));
          assert.match(body.message, message);
        };
        const unchanged = async (before: { files: number; chunks: number }) =>
          assert.deepEqual(await holdings(), before);

        it('a manifest that does not list every file, is missing, or is not JSON', async () => {
          const before = await holdings();
          const a = randomContent(100);
          const b = randomContent(100);
          await refused(
            await clerkA.batch(
              [
                { name: 'a', data: a },
                { name: 'b', data: b },
              ],
              [{ md5: md5(a), sha256: sha256(a) }],
            ),
            400,
            /lists 1 files but 2 were attached/,
          );
          const noManifest = new FormData();
          noManifest.append('file', new Blob([a]), 'a.pdf');
          await refused(
            await clerkA.fetch('/api/uploads/batch', { method: 'POST', body: noManifest }),
            400,
            /"manifest" field is missing/,
          );
          const notJson = new FormData();
          notJson.append('manifest', '[{');
          notJson.append('file', new Blob([a]), 'a.pdf');
          await refused(
            await clerkA.fetch('/api/uploads/batch', { method: 'POST', body: notJson }),
            400,
            /not valid JSON/,
          );
          await refused(
            await clerkA.batch([{ name: 'a', data: a }], [{ md5: 'nothex', sha256: sha256(a) }]),
            400,
            /MD5 is 32 hexadecimal/,
          );
          await unchanged(before);
        });

        it('no files, an unknown field, files in another field, or not multipart', async () => {
          const before = await holdings();
          const onlyManifest = new FormData();
          onlyManifest.append('manifest', '[]');
          await refused(
            await clerkA.fetch('/api/uploads/batch', { method: 'POST', body: onlyManifest }),
            400,
            /No files were attached/,
          );
          const other = new FormData();
          other.append('manifest', '[]');
          other.append('upload', new Blob([randomContent(10)]), 'a.pdf');
          await refused(await clerkA.fetch('/api/uploads/batch', { method: 'POST', body: other }), 400, /field "file"/);
          await refused(await clerkA.json('/api/uploads/batch', 'POST', { files: [] }), 400, /multipart\/form-data/);
          await unchanged(before);
        });

        it(`a file over ${BATCH_FILE_MAX_BYTES / 1024 / 1024} MiB, a body over the limit, or one without a declared length`, async () => {
          const before = await holdings();
          const small = randomContent(100);
          await refused(
            await clerkA.batch([
              { name: 'small.pdf', data: small },
              { name: 'big.tif', data: randomContent(BATCH_FILE_MAX_BYTES + 1) },
            ]),
            413,
            /4 MiB at most: send larger files one by one/,
          );
          const declared = await rawPost(
            server.url,
            clerkA,
            { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(200 * 1024 * 1024) },
            '',
          );
          assert.equal(declared.status, 413);
          assert.match(declared.body.message, /at most 64 MiB/);
          const chunked = await rawPost(
            server.url,
            clerkA,
            { 'content-type': 'multipart/form-data; boundary=x', 'transfer-encoding': 'chunked' },
            '--x--\r\n',
          );
          assert.equal(chunked.status, 400);
          assert.match(chunked.body.message, /Content-Length/);
          await unchanged(before);
        });

        it(`more than ${BATCH_MAX_FILES} checks or proofs, or a malformed one`, async () => {
          const one = checkBody(randomContent(10));
          await refused(
            await clerkA.json('/api/uploads/checks', 'POST', {
              files: Array.from({ length: BATCH_MAX_FILES + 1 }, () => one),
            }),
            400,
            /files/,
          );
          await refused(await clerkA.json('/api/uploads/checks', 'POST', { files: [] }), 400, /files/);
          await refused(
            await clerkA.json('/api/uploads/checks', 'POST', { files: [{ ...one, size: -1 }] }),
            400,
            /size/,
          );
          await refused(
            await clerkA.json('/api/uploads/proofs', 'POST', { proofs: [{ claimId: 'short', digests: [] }] }),
            400,
            /claim id/,
          );
          // A full-size list of checks parses (names of a few hundred characters).
          const long = checkBody(randomContent(10), `${'长'.repeat(300)}.pdf`);
          const full = await clerkA.json('/api/uploads/checks', 'POST', {
            files: Array.from({ length: BATCH_MAX_FILES }, () => long),
          });
          assert.equal(full.status, 200);
          assert.equal((await full.json()).results.length, BATCH_MAX_FILES);
        });
      });
    },
  );
}

/** A POST with node:http, for headers fetch() will not send as given (a false Content-Length, chunked). */
function rawPost(
  url: string,
  client: Client,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: { message: string } }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/api/uploads/batch`,
      { method: 'POST', headers: { ...headers, authorization: `Bearer ${client.credentials.bearer}` } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (p: Buffer) => parts.push(p));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(parts).toString()) }));
      },
    );
    req.on('error', reject);
    // A declared length far beyond what is sent: the answer comes before the body.
    req.end(body);
  });
}
