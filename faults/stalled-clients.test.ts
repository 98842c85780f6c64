import assert from 'node:assert/strict';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { randomContent } from '../test/support/content.js';
import { clerkToken, processStore, startServer, stopServer } from '../test/support/process.js';
import type { ProcessStore, Started } from '../test/support/process.js';
import { Client } from '../test/support/server.js';
import { storeTargets } from '../test/support/stores.js';
import { md5, offsetOf, openPatch, patchRequest, sha256 } from '../test/support/tus.js';
import { until } from '../test/support/until.js';
import { TUS, tusMetadata, tusRequest, tusUpload, uploadPath } from '../test/support/tus.js';

/**
 * Fault test: clients that send slowly or stop sending in the middle of a PATCH. The server cuts
 * a tus PATCH that sends no bytes for UPLOAD_STALL_SECONDS (30 by default; 12 here, so this takes
 * about 20 seconds per store).
 */

const KiB = 1024;
const MiB = 1024 * KiB;
/** The server's limit for a tus request that sends nothing (UPLOAD_STALL_SECONDS). */
const BODY_IDLE_S = 12;
/** The trickling client: a piece every few seconds, for longer than the idle limit in all. */
const PIECE = 16 * KiB;
const PIECES = 8;
const PIECE_EVERY_MS = 2_500;
/** What "promptly" means on a shared 2-core machine: far below the stall, with room for load. */
const PROMPT_S = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const digest = (data: Uint8Array) => `${md5(data)}/${sha256(data)}`;

/** Creates a tus upload for `data` (hashes declared, as the browser does) and returns its path. */
async function create(client: Client, data: Buffer, filename: string): Promise<string> {
  const res = await tusRequest(client, TUS, 'POST', {
    'upload-length': String(data.length),
    'upload-metadata': tusMetadata({ filename, md5: md5(data), sha256: sha256(data) }),
  });
  assert.equal(res.status, 201);
  return uploadPath(res);
}

/** A PATCH of all of `data` sent a piece at a time, slowly; resolves with the server's answer. */
function trickle(
  url: string,
  upload: string,
  token: string,
  data: Buffer,
): { answer: Promise<{ status: number; headers: http.IncomingHttpHeaders; seconds: number }> } {
  const started = performance.now();
  const req = patchRequest(url, upload, token, 0, data.length);
  const answer = new Promise<{ status: number; headers: http.IncomingHttpHeaders; seconds: number }>(
    (resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, seconds: (performance.now() - started) / 1000 }),
        );
      });
      req.on('error', reject);
    },
  );
  void (async () => {
    for (let at = 0; at < data.length; at += PIECE) {
      if (at > 0) await sleep(PIECE_EVERY_MS);
      req.write(data.subarray(at, at + PIECE));
    }
    req.end();
  })();
  return { answer };
}

for (const target of storeTargets) {
  describe(`slow and stalled clients (${target.name} store)`, { skip: target.skip, timeout: 150_000 }, () => {
    let store: ProcessStore;
    let server: Started;
    let token: string;
    let client: Client;
    /** Already archived, for proofs and downloads. */
    const archived = randomContent(4 * MiB + 1);
    let archivedId: string;
    /** The stalled upload: part of its bytes sent, then nothing, the request left open. */
    const stalledData = randomContent(4 * MiB + 9);
    const stalledSent = 1.5 * MiB + 3;
    let stalledPath: string;
    let stalledLastByte: number;
    let stalledCut: Promise<number>;
    let stalledOpen = true;
    /** The trickling upload. */
    const trickleData = randomContent(PIECES * PIECE - 5);
    let tricklePath: string;
    let trickled: ReturnType<typeof trickle>;
    let trickleStart: number;
    let trickleDone = false;

    before(async () => {
      store = processStore(target);
      token = clerkToken(store.env);
      server = await startServer({
        ...store.env,
        GC_INTERVAL_SECONDS: '0',
        VERIFY_INTERVAL_HOURS: '0',
        UPLOAD_STALL_SECONDS: String(BODY_IDLE_S),
      });
      client = new Client(server.url, { bearer: token });
      archivedId = (await tusUpload(client, archived)).fileId!;

      stalledPath = await create(client, stalledData, '停顿.pdf');
      stalledLastByte = performance.now(); // before the last byte is written: the idle time measured from here is an upper bound
      const stalled = await openPatch(server.url, stalledPath, token, stalledData, 0, stalledSent);
      stalledCut = new Promise((resolve) => stalled.on('close', () => resolve(performance.now())));
      void stalledCut.then(() => (stalledOpen = false));

      tricklePath = await create(client, trickleData, '慢速.pdf');
      trickleStart = performance.now();
      trickled = trickle(server.url, tricklePath, token, trickleData);
      void trickled.answer.then(
        () => (trickleDone = true),
        () => (trickleDone = true),
      );
    });
    after(async () => {
      if (server) await stopServer(server);
      await store?.dispose();
    });

    it('other clients upload, check and prove, and download promptly while one PATCH trickles and another has stalled', async () => {
      const seconds: Record<string, number> = {};
      const timed = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
        const t0 = performance.now();
        try {
          return await work();
        } finally {
          seconds[name] = (performance.now() - t0) / 1000;
        }
      };
      const [whole, chunked, instant, download, range] = await Promise.all([
        timed('tus upload in one PATCH', () => tusUpload(client, randomContent(3 * MiB))),
        timed('tus upload in 256 KiB PATCHes', () =>
          tusUpload(client, randomContent(2 * MiB + 1), { chunkSize: 256 * KiB }),
        ),
        timed('check and prove', () => client.instantUpload(archived)),
        timed('download', async () =>
          Buffer.from(await (await client.fetch(`/api/files/${archivedId}`)).arrayBuffer()),
        ),
        timed('range download', async () =>
          Buffer.from(
            await (
              await client.fetch(`/api/files/${archivedId}`, { headers: { range: 'bytes=1000-1999999' } })
            ).arrayBuffer(),
          ),
        ),
      ]);
      console.log(
        `while stalled and trickling (${target.name}): ${Object.entries(seconds)
          .map(([k, v]) => `${k} ${v.toFixed(2)} s`)
          .join(', ')}`,
      );
      assert.equal(whole.status, 'stored');
      assert.equal(chunked.status, 'stored');
      assert.equal(instant.body.status, 'duplicate');
      assert.equal(digest(download), digest(archived));
      assert.equal(digest(range), digest(archived.subarray(1000, 2_000_000)));
      for (const [name, s] of Object.entries(seconds)) assert.ok(s < PROMPT_S, `${name} took ${s.toFixed(1)} s`);
      assert.ok(
        stalledOpen && !trickleDone,
        'all of it happened while the stalled and the trickling PATCH were still open',
      );
    });

    /** A second writer: `bytes` more of `data` at the offset the upload stands at now. */
    const patchWhereItStands = async (path: string, data: Buffer, bytes: number) => {
      const offset = await offsetOf(client, path);
      return tusRequest(
        client,
        path,
        'PATCH',
        { 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
        data.subarray(offset, offset + bytes),
      );
    };

    it('the stalled PATCH keeps its upload to itself meanwhile: another writer is refused with 423', async () => {
      const res = await patchWhereItStands(stalledPath, stalledData, 10);
      assert.equal(res.status, 423);
      assert.equal((await res.json()).error, 'upload_locked');
      assert.ok(stalledOpen);
    });

    it(`the stalled PATCH is cut off about ${BODY_IDLE_S} s after its last byte, and every byte that arrived is kept`, async () => {
      const idle = ((await stalledCut) - stalledLastByte) / 1000;
      console.log(`stalled PATCH cut off ${idle.toFixed(1)} s after its last byte (${target.name})`);
      assert.ok(idle >= BODY_IDLE_S - 1 && idle < BODY_IDLE_S + 45, `cut off after ${idle.toFixed(1)} s`);
      // The server writes out what arrived as the request ends; the offset gets there at once or very soon.
      let offset = 0;
      await until(
        async () => (offset = await offsetOf(client, stalledPath)) >= stalledSent,
        `the server recorded the ${stalledSent} bytes that arrived`,
      );
      assert.equal(offset, stalledSent);
    });

    it('the stalled upload resumes once cut off and completes byte-identical', async () => {
      // Delays shorter than the 30 s lease: only a lock freed by the cut lets this through.
      const done = await tusUpload(client, stalledData, {
        uploadUrl: `${server.url}${stalledPath}`,
        retryDelays: [250, 500, 1000, 2000],
      });
      assert.equal(done.status, 'stored');
      const back = Buffer.from(await (await client.fetch(`/api/files/${done.fileId}`)).arrayBuffer());
      assert.equal(digest(back), digest(stalledData));
    });

    it(`the trickling PATCH, longer than ${BODY_IDLE_S} s in all but never idle that long, holds its upload throughout and completes`, async () => {
      // Past the 30 s lease (and before the last piece): the lock was renewed, so another writer is still refused.
      await sleep(trickleStart + (BODY_IDLE_S + 4) * 1000 - performance.now());
      assert.ok(!trickleDone);
      const competing = await patchWhereItStands(tricklePath, trickleData, 1);
      assert.equal(competing.status, 423, 'the trickling request still holds its upload');
      const answer = await trickled.answer;
      assert.equal(answer.status, 204);
      assert.ok(answer.seconds > BODY_IDLE_S, `it took ${answer.seconds.toFixed(1)} s`);
      assert.equal(answer.headers['archive-status'], 'stored');
      const back = Buffer.from(
        await (await client.fetch(`/api/files/${String(answer.headers['archive-file-id'])}`)).arrayBuffer(),
      );
      assert.equal(digest(back), digest(trickleData));
    });
  });
}
