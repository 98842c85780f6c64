import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type * as tus from 'tus-js-client';
import { randomContent } from '../support/content.js';
import { ACCOUNT_PASSWORD, addAccount, processStore, startServer, stopServer } from '../support/process.js';
import type { ProcessStore, Started } from '../support/process.js';
import { RoundRobinProxy, type Served } from '../support/proxy.js';
import { Client } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { md5, sha256, tusUpload } from '../support/tus.js';

/**
 * Scale-out: two app instances (real server processes) on one store, behind a reverse proxy that
 * sends each request to the next instance in turn, as a load balancer without sticky sessions
 * does. Every step of a clerk's work must hold when its requests alternate between instances.
 */

const KiB = 1024;
const MiB = 1024 * KiB;

/** A request's kind: method and route, with ids generalised, and whether it asked for a range. */
function kindOf(s: Served): string {
  const path = s.path
    .split('?')[0]!
    .replace(/^\/api\/tus\/[0-9a-f]{32}$/, '/api/tus/:id')
    .replace(/^\/api\/files\/[0-9a-f]{24}$/, '/api/files/:id');
  return `${s.method} ${path}${s.range ? ' (Range)' : ''}`;
}

/** Asserts that each kind of request was served by both instances, and none failed on the server. */
function assertBothServed(served: Served[], kinds: string[]): void {
  for (const kind of kinds) {
    const by = new Set(served.filter((s) => kindOf(s) === kind).map((s) => s.upstream));
    assert.deepEqual(
      [...by].sort(),
      [0, 1],
      `${kind} was served by both instances (served by: ${[...by].join(', ') || 'none'})`,
    );
  }
  const failed = served.filter((s) => s.status === undefined || s.status >= 500);
  assert.deepEqual(failed, [], 'every request got an answer below 500');
}

const digest = (data: Uint8Array) => `${md5(data)}/${sha256(data)}`;

for (const target of storeTargets) {
  describe(
    `two app instances on one ${target.name} store behind a round-robin proxy`,
    { skip: target.skip, timeout: 120_000 },
    () => {
      let store: ProcessStore;
      let instances: Started[] = [];
      let proxy: RoundRobinProxy;

      before(async () => {
        store = processStore(target);
        addAccount(store.env, 'clerk');
        instances = [
          await startServer({ ...store.env, GC_INTERVAL_SECONDS: '0' }),
          await startServer({ ...store.env, GC_INTERVAL_SECONDS: '0' }),
        ];
        proxy = await RoundRobinProxy.start(instances.map((s) => s.url));
      });
      after(async () => {
        await proxy?.close();
        for (const s of instances) await stopServer(s);
        await store?.dispose();
      });

      /** A browser-style login through the proxy: POST /api/session, then the CSRF token from GET /api/session. */
      async function login(): Promise<Client> {
        const res = await fetch(`${proxy.url}/api/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'clerk', password: ACCOUNT_PASSWORD }),
        });
        assert.equal(res.status, 201, await res.clone().text());
        await res.arrayBuffer();
        const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
        const session = await fetch(`${proxy.url}/api/session`, { headers: { cookie } });
        assert.equal(session.status, 200);
        const { csrfToken, account } = await session.json();
        assert.equal(account.username, 'clerk');
        assert.match(csrfToken, /.{16,}/);
        return new Client(proxy.url, { cookie, csrf: csrfToken });
      }

      /** Downloads a file through the proxy and returns its bytes. */
      async function download(
        client: Client,
        fileId: string,
        range?: string,
      ): Promise<{ status: number; headers: Headers; body: Buffer }> {
        const res = await client.fetch(`/api/files/${fileId}`, range ? { headers: { range } } : {});
        return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
      }

      it('a browser session opened on one instance is honoured by the other: cookie and CSRF token work wherever the next request lands', async () => {
        const mark = proxy.served.length;
        for (const first of [0, 1]) {
          proxy.nextTo(first);
          const client = await login();
          // A state-changing request with the cookie and the CSRF token, on whichever instance is next.
          const check = await client.json('/api/uploads/check', 'POST', {
            md5: md5(Buffer.from('x')),
            sha256: sha256(Buffer.from('x')),
            size: 1,
            name: 'x.txt',
          });
          assert.equal(check.status, 200);
          assert.deepEqual(await check.json(), { status: 'upload' });
        }
        const served = proxy.since(mark);
        assert.deepEqual(
          served.map((s) => `${kindOf(s)} -> ${s.upstream}`),
          [
            'POST /api/session -> 0',
            'GET /api/session -> 1',
            'POST /api/uploads/check -> 0',
            'POST /api/session -> 1',
            'GET /api/session -> 0',
            'POST /api/uploads/check -> 1',
          ],
        );
        assertBothServed(served, ['POST /api/session', 'GET /api/session', 'POST /api/uploads/check']);
      });

      it('a tus upload whose PATCHes alternate between the instances is stored byte-identical', async () => {
        const client = await login();
        const mark = proxy.served.length;
        for (const first of [0, 1]) {
          const data = randomContent(2 * MiB + 3);
          proxy.nextTo(first);
          const start = proxy.served.length;
          const done = await tusUpload(client, data, {
            chunkSize: 256 * KiB,
            metadata: { filename: `交替-${first}.pdf` },
          });
          assert.equal(done.status, 'stored');
          const exchange = proxy.since(start);
          const patches = exchange.filter((s) => s.method === 'PATCH');
          assert.equal(exchange[0]!.method, 'POST');
          assert.equal(exchange[0]!.upstream, first, 'the creation went to the instance asked for');
          assert.equal(patches.length, 9, '2 MiB + 3 bytes in 256 KiB requests');
          patches.forEach((p, i) => {
            assert.equal(
              p.upstream,
              (first + 1 + i) % 2,
              `PATCH ${i} went to the other instance than the request before it`,
            );
            assert.equal(
              Number(p.uploadOffset),
              i * 256 * KiB,
              `PATCH ${i} continued where the previous one, on the other instance, ended`,
            );
          });
          const back = await download(client, done.fileId!);
          assert.equal(back.status, 200);
          assert.equal(digest(back.body), digest(data));
        }
        assertBothServed(proxy.since(mark), ['POST /api/tus', 'PATCH /api/tus/:id']);
      });

      it('an upload stopped part-way resumes from a fresh client on the other instance, at the acknowledged offset, and finishes byte-identical', async () => {
        const client = await login();
        const mark = proxy.served.length;
        for (const resumeOn of [0, 1]) {
          const data = randomContent(3 * MiB + 11);
          // Stop after a PATCH served by the instance the resume must avoid, once 40% are in.
          let running: tus.Upload | undefined;
          let url = '';
          const stoppedAt = await new Promise<number>((resolve, reject) => {
            tusUpload(client, data, {
              chunkSize: 256 * KiB,
              metadata: { filename: `续传-${resumeOn}.pdf` },
              onStart: (u) => (running = u),
              onUploadUrl: (u) => (url = u),
              onChunkComplete: (accepted) => {
                const lastPatch = proxy.served.filter((s) => s.method === 'PATCH').at(-1)!;
                if (accepted >= 0.4 * data.length && lastPatch.upstream !== resumeOn) {
                  void running!.abort();
                  resolve(accepted);
                }
              },
            }).then(() => reject(new Error('the upload finished before it was stopped')), reject);
          });
          assert.ok(stoppedAt < data.length);
          assert.equal(new URL(url).origin, proxy.url, 'the upload URL names the proxy, not an instance');

          proxy.nextTo(resumeOn);
          const start = proxy.served.length;
          const done = await tusUpload(new Client(proxy.url, client.credentials), data, {
            uploadUrl: url,
            chunkSize: 256 * KiB,
            metadata: { filename: `续传-${resumeOn}.pdf` },
          });
          assert.equal(done.status, 'stored');
          assert.equal(done.url, url, 'the same upload was continued, not a new one created');
          const exchange = proxy.since(start);
          assert.equal(kindOf(exchange[0]!), 'HEAD /api/tus/:id');
          assert.equal(
            exchange[0]!.upstream,
            resumeOn,
            'the offset was asked of the instance that did not take the last PATCH',
          );
          const patches = exchange.filter((s) => s.method === 'PATCH');
          assert.equal(Number(patches[0]!.uploadOffset), stoppedAt, 'no acknowledged byte was sent again');
          assert.deepEqual(new Set(patches.map((p) => p.upstream)), new Set([0, 1]), 'the resumed PATCHes alternated');

          const back = await download(client, done.fileId!);
          assert.equal(digest(back.body), digest(data));
        }
        assertBothServed(proxy.since(mark), ['HEAD /api/tus/:id', 'PATCH /api/tus/:id']);
      });

      it('an instant upload checked on one instance is proven on the other and counted like an upload', async () => {
        const client = await login();
        const data = randomContent(512 * KiB + 5);
        const stored = await tusUpload(client, data, { metadata: { filename: '秒传.pdf' } });
        assert.equal(stored.status, 'stored');
        const mark = proxy.served.length;
        const counts: number[] = [];
        for (const first of [0, 1]) {
          proxy.nextTo(first);
          const { check, body } = await client.instantUpload(data, '秒传.pdf');
          assert.equal(check.status, 'prove');
          assert.deepEqual(
            { status: body.status, fileId: body.fileId },
            { status: 'duplicate', fileId: stored.fileId },
            `the proof's answer on instance ${1 - first}: ${JSON.stringify(body)}`,
          );
          counts.push(body.uploadCount);
        }
        assert.deepEqual(counts, [2, 3], 'each proof counted once, on top of the upload');
        const served = proxy.since(mark);
        assert.deepEqual(
          served.map((s) => `${kindOf(s)} -> ${s.upstream}`),
          [
            'POST /api/uploads/check -> 0',
            'POST /api/uploads/prove -> 1',
            'POST /api/uploads/check -> 1',
            'POST /api/uploads/prove -> 0',
          ],
        );
        assertBothServed(served, ['POST /api/uploads/check', 'POST /api/uploads/prove']);
      });

      it('downloads, whole and by byte range, are byte-identical from either instance', async () => {
        const client = await login();
        const data = randomContent(5 * MiB + 17);
        const stored = await tusUpload(client, data, { chunkSize: 2 * MiB, metadata: { filename: '下载.pdf' } });
        const mark = proxy.served.length;
        for (const first of [0, 1]) {
          proxy.nextTo(first);
          const whole = await download(client, stored.fileId!);
          assert.equal(whole.status, 200);
          assert.equal(whole.headers.get('content-length'), String(data.length));
          assert.equal(digest(whole.body), digest(data));
          const [start, end] = [first === 0 ? 1 : 3 * MiB - 7, first === 0 ? 2 * MiB + 100 : data.length - 1];
          const part = await download(client, stored.fileId!, `bytes=${start}-${end}`);
          assert.equal(part.status, 206);
          assert.equal(part.headers.get('content-range'), `bytes ${start}-${end}/${data.length}`);
          assert.equal(digest(part.body), digest(data.subarray(start, end + 1)));
        }
        const served = proxy.since(mark);
        assert.deepEqual(
          served.map((s) => `${kindOf(s)} -> ${s.upstream}`),
          [
            'GET /api/files/:id -> 0',
            'GET /api/files/:id (Range) -> 1',
            'GET /api/files/:id -> 1',
            'GET /api/files/:id (Range) -> 0',
          ],
        );
        assertBothServed(served, ['GET /api/files/:id', 'GET /api/files/:id (Range)']);
      });
    },
  );
}

// The login throttle counts in the store, so two instances (without the proxy) share one count.
for (const target of storeTargets) {
  describe(`login throttle across server instances (${target.name} store)`, { skip: target.skip }, () => {
    let store: ProcessStore;
    const servers: Started[] = [];
    before(async () => {
      store = processStore(target);
      for (let i = 0; i < 2; i++)
        servers.push(
          await startServer({
            ...store.env,
            LOGIN_FREE_FAILURES: '4',
            VERIFY_INTERVAL_HOURS: '0',
            GC_INTERVAL_SECONDS: '0',
          }),
        );
    });
    after(async () => {
      for (const s of servers) await stopServer(s);
      await store.dispose();
    });

    it('counts wrong passwords on every instance together: alternating does not double the free failures', async () => {
      const attempt = (i: number) =>
        fetch(`${servers[i % 2]!.url}/api/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'nobody', password: 'not a password' }),
        });
      for (let i = 0; i < 4; i++) assert.equal((await attempt(i)).status, 401, `attempt ${i + 1}`);
      for (let i = 4; i < 6; i++)
        assert.equal((await attempt(i)).status, 429, `attempt ${i + 1}, on instance ${i % 2}`);
    });
  });
}
