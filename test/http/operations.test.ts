import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { VerificationResult } from '../../shared/verification.js';
import { randomContent, readUntilFailure } from '../support/content.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { JobStore } from '../../server/store/jobs/port.js';
import { TestServer, type Client } from '../support/server.js';
import { damageContent, storeTargets } from '../support/stores.js';
import { tusUpload } from '../support/tus.js';
import { until } from '../support/until.js';

const METRICS_TOKEN = 'metrics-token-0123456789';

/** A Prometheus text exposition's value of one series, e.g. `archive_uploads_total{via="tus",outcome="stored"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

for (const target of storeTargets) {
  describe(`operations: probes, metrics, fixity check (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let draining = false;
    let admin: Client;
    let adminToken: Client;
    let clerk: Client;
    let clerkToken: Client;
    const scrape = (token = METRICS_TOKEN) =>
      fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });

    before(async () => {
      server = await TestServer.start(target, {
        metricsToken: METRICS_TOKEN,
        verifyIntervalMs: 7 * 24 * 3600_000,
        draining: () => draining,
      });
      const adminAccount = await server.addAccount('admin', 'admin', 'archive');
      const clerkAccount = await server.addAccount('clerk', 'clerk', 'unit-a');
      admin = await server.login('admin');
      adminToken = await server.tokenClient(adminAccount);
      clerk = await server.login('clerk');
      clerkToken = await server.tokenClient(clerkAccount);
    });
    after(() => server.close());

    describe('health and readiness', () => {
      it('answers liveness without the store, and readiness only while the store answers and the server is not stopping', async () => {
        // Kept to put the method back; it is called on its object again then.
        // eslint-disable-next-line @typescript-eslint/unbound-method
        const ping = server.store.ping;
        const get = (path: string) => server.anonymous().fetch(path);
        assert.deepEqual(
          [(await get('/api/health')).status, await (await get('/api/ready')).json()],
          [200, { status: 'ready' }],
        );
        server.store.ping = async () => {
          throw new Error('connection refused');
        };
        try {
          const health = await get('/api/health');
          assert.deepEqual([health.status, await health.json()], [200, { status: 'ok' }]);
          const ready = await get('/api/ready');
          assert.equal(ready.status, 503);
          assert.equal(ready.headers.get('retry-after'), '5');
          assert.equal((await ready.json()).error, 'store_unavailable');
        } finally {
          server.store.ping = ping;
        }
        draining = true;
        try {
          assert.equal((await get('/api/ready')).status, 503);
          assert.equal((await get('/api/health')).status, 200);
        } finally {
          draining = false;
        }
      });
    });

    describe('Prometheus metrics', () => {
      it("are served only with the metrics token: not with a session or an API token, even an administrator's", async () => {
        assert.equal((await server.anonymous().fetch('/metrics')).status, 401);
        for (const client of [clerk, admin, clerkToken, adminToken])
          assert.equal((await client.fetch('/metrics')).status, 401);
        assert.equal((await scrape('metrics-token-0123456780')).status, 401, 'a wrong token of the same length');
        assert.equal((await scrape('short')).status, 401);
        const res = await scrape();
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
        assert.match(await res.text(), /^archive_process_resident_memory_bytes \d+/m);
      });

      it('do not exist without a configured token', async () => {
        const bare = await TestServer.start(target);
        try {
          const res = await fetch(`${bare.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
          assert.equal(res.status, 404);
          assert.equal((await res.json()).error, 'not_found');
        } finally {
          await bare.close();
        }
      });

      it('count uploads by way and outcome, dedup hits, bytes stored and saved, request times by route, and errors by code', async () => {
        const before = await (await scrape()).text();
        const value = (text: string, series: string) => sample(text, series) ?? 0;
        const a = randomContent(3000);
        const b = randomContent(5000);
        const c = randomContent(7000);
        const first = await (await clerkToken.upload('a.pdf', a)).json();
        assert.equal(first.status, 'stored');
        assert.equal((await (await clerkToken.upload('a-again.pdf', a)).json()).status, 'duplicate');
        assert.equal((await clerk.instantUpload(a)).body.status, 'duplicate');
        assert.equal((await tusUpload(clerkToken, b)).status, 'stored');
        assert.equal((await tusUpload(clerkToken, c)).status, 'stored');
        assert.equal((await clerk.fetch(`/api/files/${first.fileId}`)).status, 200);
        assert.equal((await clerk.fetch('/api/files/ffffffffffffffffffffffff')).status, 404);
        assert.equal((await clerk.json('/api/uploads/check', 'POST', { md5: 'nope' })).status, 400);
        assert.equal((await clerkToken.fetch('/API/FILES/ffffffffffffffffffffffff')).status, 404);
        for (const method of ['PROPFIND', 'MKCOL', 'LOCK'])
          assert.equal((await clerkToken.fetch('/api/files', { method })).status, 404);

        const text = await (await scrape()).text();
        const grew = (series: string) => value(text, series) - value(before, series);
        assert.equal(grew('archive_uploads_total{via="direct",outcome="stored"}'), 1);
        assert.equal(grew('archive_uploads_total{via="direct",outcome="duplicate"}'), 1);
        assert.equal(grew('archive_uploads_total{via="instant",outcome="duplicate"}'), 1);
        assert.equal(grew('archive_uploads_total{via="tus",outcome="stored"}'), 2);
        assert.equal(grew('archive_dedup_hits_total{via="direct"}'), 1);
        assert.equal(grew('archive_dedup_hits_total{via="instant"}'), 1);
        assert.equal(grew('archive_bytes_stored_total'), a.length + b.length + c.length);
        assert.equal(grew('archive_bytes_saved_total'), 2 * a.length);
        assert.ok(
          grew('archive_http_request_duration_seconds_count{method="GET",route="/api/files/:id",status="200"}') >= 1,
        );
        assert.ok(
          grew('archive_http_request_duration_seconds_count{method="POST",route="/api/uploads/check",status="200"}') >=
            1,
        );
        assert.ok(
          grew('archive_http_request_duration_seconds_count{method="PATCH",route="/api/tus/:id",status="204"}') >= 2,
        );
        // Errors carry the pattern of the route that answered them, in any casing of the path.
        assert.equal(
          grew('archive_http_request_duration_seconds_count{method="GET",route="/api/files/:id",status="404"}'),
          2,
        );
        assert.equal(
          grew('archive_http_request_duration_seconds_count{method="POST",route="/api/uploads/check",status="400"}'),
          1,
        );
        assert.doesNotMatch(
          text,
          /route="\/:id"|method="(GET|POST)",route="unmatched",status="4/,
          'no error is labelled by a part of its route',
        );
        assert.equal(
          grew('archive_http_request_duration_seconds_count{method="other",route="unmatched",status="404"}'),
          3,
          'unusual methods share one series',
        );
        assert.doesNotMatch(text, /method="(PROPFIND|MKCOL|LOCK)"/);
        assert.equal(grew('archive_http_errors_total{code="not_found"}'), 5);
        assert.doesNotMatch(text, /ffffffffffffffffffffffff/, 'routes are patterns, never raw paths');
      });
    });

    describe('the fixity check for administrators', () => {
      const last = async (): Promise<VerificationResult | null> => {
        const res = await admin.fetch('/api/verification');
        assert.equal(res.status, 200);
        return (await res.json()).last;
      };
      const finished = async (): Promise<VerificationResult> => {
        let result: VerificationResult | null = null;
        await until(async () => {
          result = await last();
          return result !== null && result.state !== 'running';
        }, 'the fixity check finished');
        return result!;
      };

      it('is shown and started by administrators only', async () => {
        for (const method of ['GET', 'POST']) {
          assert.equal((await server.anonymous().fetch('/api/verification', { method })).status, 401, method);
          assert.equal((await clerk.fetch('/api/verification', { method })).status, 403, method);
          assert.equal((await clerkToken.fetch('/api/verification', { method })).status, 403, method);
        }
        const noCsrf = await fetch(`${server.url}/api/verification`, {
          method: 'POST',
          headers: { cookie: admin.credentials.cookie! },
        });
        assert.equal(noCsrf.status, 403);
        assert.equal((await noCsrf.json()).error, 'csrf_failed');
        const shown = await admin.fetch('/api/verification');
        assert.equal(shown.status, 200);
        assert.equal((await shown.json()).intervalHours, 168);
        assert.equal((await adminToken.fetch('/api/verification')).status, 200);
      });

      it('re-reads every stored file when an administrator starts it, and reports the damaged ones', async () => {
        const intact = await (await clerkToken.upload('intact.pdf', randomContent(150_000))).json();
        const victim = await (await clerkToken.upload('县志-损坏.pdf', randomContent(200_000))).json();
        const started = await admin.fetch('/api/verification', { method: 'POST' });
        assert.equal(started.status, 202);
        const clean = await finished();
        assert.equal(clean.state, 'passed');
        assert.equal(clean.trigger, 'command');
        assert.equal(clean.files, await server.store.catalog.count());

        await damageContent(server.opened, victim.fileId, { kind: 'flip-byte', offset: 100_000 });
        assert.equal((await adminToken.fetch('/api/verification', { method: 'POST' })).status, 202);
        const found = await finished();
        assert.equal(found.state, 'failed');
        assert.deepEqual(
          found.problems.map((p) => [p.fileId, p.fileName, p.kind]),
          [[victim.fileId, '县志-损坏.pdf', 'corrupted']],
        );
        assert.ok(!found.problems.some((p) => p.fileId === intact.fileId));
        const metrics = await (await scrape()).text();
        assert.equal(sample(metrics, 'archive_verification_problems{kind="corrupted"}'), 1);
        assert.equal(sample(metrics, 'archive_verification_problems{kind="missing"}'), 0);
        assert.equal(
          sample(metrics, 'archive_verification_last_finished_seconds'),
          Date.parse(found.finishedAt!) / 1000,
        );
        const audit = await (await admin.fetch('/api/audit?action=verification_started')).json();
        assert.equal(audit.total, 2);
      });
    });

    describe('downloads of damaged files', () => {
      it('answer 500 content_damaged when the damage is met before the first byte, and never serve a short file as whole', async () => {
        const cs = server.opened.chunkSize;
        const data = randomContent(3 * cs + 10);
        const { fileId } = await (await clerkToken.upload('damaged.pdf', data)).json();
        await damageContent(server.opened, fileId, { kind: 'lose-chunk', n: 2 });

        const intactRange = await clerkToken.fetch(`/api/files/${fileId}`, { headers: { range: `bytes=0-${cs - 1}` } });
        assert.equal(intactRange.status, 206);
        assert.deepEqual(Buffer.from(await intactRange.arrayBuffer()), data.subarray(0, cs));

        const lostRange = await clerkToken.fetch(`/api/files/${fileId}`, {
          headers: { range: `bytes=${2 * cs}-${2 * cs + 9}` },
        });
        assert.equal(lostRange.status, 500);
        assert.equal((await lostRange.json()).error, 'content_damaged');

        // The damage lies past the first bytes: the answer has begun, so the connection is cut.
        const whole = await clerkToken.fetch(`/api/files/${fileId}`);
        assert.equal(whole.status, 200);
        await assert.rejects(whole.arrayBuffer());

        // A chunk changed on disk: its bytes never go out, whole file or range.
        const other = randomContent(3 * cs + 10);
        const { fileId: changedId } = await (await clerkToken.upload('changed.pdf', other)).json();
        await damageContent(server.opened, changedId, { kind: 'flip-byte', offset: 2 * cs + 3 });
        const changedRange = await clerkToken.fetch(`/api/files/${changedId}`, {
          headers: { range: `bytes=${2 * cs}-${2 * cs + 9}` },
        });
        assert.equal(changedRange.status, 500);
        assert.equal((await changedRange.json()).error, 'content_damaged');
        const changedWhole = await clerkToken.fetch(`/api/files/${changedId}`);
        assert.equal(changedWhole.status, 200);
        const { received: got, failure } = await readUntilFailure(changedWhole.body!);
        assert.ok(failure, 'the download fails');
        assert.ok(got.length <= 2 * cs, `${got.length} bytes arrived`);
        assert.deepEqual(got, other.subarray(0, got.length), 'nothing but the intact chunks before it');

        const { fileId: goneId } = await (await clerkToken.upload('gone.pdf', randomContent(1000))).json();
        await damageContent(server.opened, goneId, { kind: 'lose-file' });
        const gone = await clerkToken.fetch(`/api/files/${goneId}`);
        assert.equal(gone.status, 500);
        const body = await gone.json();
        assert.equal(body.error, 'content_damaged');
        assert.match(body.message, /restore it from a backup/);
        assert.ok(
          server.logLines.some((l) => l.includes('"level":50') && l.includes(goneId)),
          'logged for the administrators',
        );
      });
    });
  });

  describe(`starting the fixity check (${target.name} store)`, { skip: target.skip }, () => {
    it('answers 202 only once the check is recorded as running, so the next look shows it rather than nothing or the one before', async () => {
      // A store slow to record the check's lease: the window in which the answer could run ahead.
      const server = await TestServer.start(target, {
        verifyIntervalMs: 0,
        wrapStore: (store: ArchiveStore) => {
          const jobs = store.jobs;
          const slowJobs: JobStore = {
            acquire: (...args) => jobs.acquire(...args),
            renew: async (...args) => {
              await delay(300);
              return jobs.renew(...args);
            },
            release: (...args) => jobs.release(...args),
            get: (name) => jobs.get(name),
          };
          return { ...store, jobs: slowJobs };
        },
      });
      try {
        const admin = await server.login((await server.addAccount('admin', 'admin', 'archive')).username);
        const clerk = await server.tokenClient(await server.addAccount('clerk', 'clerk', 'unit-a'));
        assert.equal((await clerk.upload('a.pdf', randomContent(1000))).status, 201);
        assert.equal((await admin.fetch('/api/verification', { method: 'POST' })).status, 202);
        const shown: VerificationResult | null = (await (await admin.fetch('/api/verification')).json()).last;
        assert.equal(shown?.trigger, 'command', 'the check just started is shown');
        await until(
          async () => (await server.archive.services.fixity.last())?.state !== 'running',
          'the check ended (before the store closes)',
        );
      } finally {
        await server.close();
      }
    });
  });
}
