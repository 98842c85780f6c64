import assert from 'node:assert/strict';
import { DEFAULT_QUOTAS } from '../../server/limits.js';
import { randomBytes } from 'node:crypto';
import express from 'express';
import { after, before, describe, it } from 'node:test';
import { bulkLane } from '../../server/http/bulk-lane.js';
import { AUDITED_REFUSALS_PER_MINUTE } from '../../server/services/claims.js';
import { TimeSlice } from '../../server/threads/time-slice.js';
import { checkBody, randomContent } from '../support/content.js';
import { Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * A server whose one route goes through a bulk lane of `width` and holds each request until the
 * test lets it finish: which requests the lane let in, in order, and how to finish the oldest.
 */
async function heldLane(width: number) {
  const app = express();
  const started: number[] = [];
  const waiting: Array<() => void> = [];
  const lane = bulkLane(width);
  app.post(
    '/bulk/:n',
    lane.enter,
    lane.work(async (req, res) => {
      started.push(Number(req.params.n));
      await new Promise<void>((resolve) => waiting.push(resolve));
      res.json({ n: req.params.n });
    }),
  );
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    started,
    waiting,
    close: () => server.close(),
  };
}

describe('long work shares the event loop', () => {
  it('a loop that pauses on its time slice lets a timer run before the loop ends', async () => {
    let timerRan = false;
    setTimeout(() => (timerRan = true), 0);
    const slice = new TimeSlice(2);
    // Busy until the timer runs; the end is a safety net. (A loop of a fixed 30 ms could be over
    // before its first pause when a busy machine took the CPU away for those 30 ms.)
    const end = performance.now() + 10_000;
    while (!timerRan && performance.now() < end) await slice.pause();
    assert.equal(timerRan, true, 'the timer ran while the loop was still busy');
  });

  it('the bulk lane works on a set number of requests at once, the others in arrival order', async () => {
    const { url, started, waiting: release, close } = await heldLane(2);
    try {
      const answers = [1, 2, 3, 4].map((n) => fetch(`${url}/bulk/${n}`, { method: 'POST' }));
      const until = async (count: number) => {
        while (started.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
      };
      await until(2);
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Which two went first is the network's: the four requests race to the server.
      assert.equal(started.length, 2, 'two at once; the others wait');
      release.shift()!();
      await until(3);
      assert.equal(started.length, 3, 'one finished: the next one starts');
      while (release.length > 0 || started.length < 4) {
        if (release.length > 0) release.shift()!();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.deepEqual(
        (await Promise.all(answers)).map((r) => r.status),
        [200, 200, 200, 200],
      );
      assert.deepEqual([...started].sort(), [1, 2, 3, 4]);
    } finally {
      close();
    }
  });

  it("keeps a request's place while the archive still works on it after its client went away", async () => {
    const { url, started, waiting: finish, close } = await heldLane(1);
    const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
    try {
      const gone = new AbortController();
      const first = fetch(`${url}/bulk/1`, { method: 'POST', signal: gone.signal }).catch(() => undefined);
      while (started.length < 1) await settle();
      gone.abort();
      await first;
      const second = fetch(`${url}/bulk/2`, { method: 'POST' });
      await settle();
      assert.deepEqual(started, [1], 'the first is still worked on: the second waits');
      finish.shift()!();
      while (started.length < 2) await settle();
      finish.shift()!();
      assert.equal((await second).status, 200);
    } finally {
      close();
    }
  });
});

for (const target of storeTargets) {
  describe(`one account cannot flood the archive (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let owner: Client;
    let now = Date.parse('2026-06-01T08:00:10Z');
    const held: Buffer[] = [];
    before(async () => {
      server = await TestServer.start(target, {
        clock: () => new Date(now),
        quotas: {
          ...DEFAULT_QUOTAS,
          checksPerMinute: 8,
          proofsPerMinute: 6,
          batchFilesPerMinute: 3,
          claimsOutstanding: 5,
        },
      });
      owner = await server.tokenClient(await server.addAccount('owner', 'clerk', 'unit-o'));
      for (let i = 0; i < 4; i++) {
        const data = randomContent(2000 + i);
        assert.equal((await owner.upload(`held-${i}.pdf`, data)).status, 201);
        held.push(data);
      }
    });
    after(() => server.close());

    const expectLimited = async (res: Response, why: RegExp) => {
      assert.equal(res.status, 429, await res.clone().text());
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
      const body = await res.json();
      assert.equal(body.error, 'rate_limited');
      assert.match(body.message, why);
    };

    it("refuses checks past the account's quota per minute with 429 and Retry-After, writing no claim; the next minute goes on", async () => {
      const clerk = await server.tokenClient(await server.addAccount('checker', 'clerk', 'unit-c'));
      const files = (n: number) => ({ files: Array.from({ length: n }, () => checkBody(randomBytes(100))) });
      assert.equal((await clerk.json('/api/uploads/checks', 'POST', files(6))).status, 200);
      await expectLimited(
        await clerk.json('/api/uploads/checks', 'POST', files(3)),
        /more than 8 files to checks in a minute/,
      );
      await expectLimited(await clerk.json('/api/uploads/check', 'POST', checkBody(randomBytes(10))), /to checks/);
      const other = await server.tokenClient(await server.addAccount('other', 'clerk', 'unit-x'));
      assert.equal(
        (await other.json('/api/uploads/checks', 'POST', files(3))).status,
        200,
        'another account is not affected',
      );
      now += 60_000;
      assert.equal((await clerk.json('/api/uploads/checks', 'POST', files(3))).status, 200);
    });

    it('refuses checks while the account holds its quota of unanswered claims, until some are answered', async () => {
      const clerk = await server.tokenClient(await server.addAccount('claimer', 'clerk', 'unit-c'));
      const check = async (data: Buffer[]) => {
        const res = await clerk.json('/api/uploads/checks', 'POST', {
          files: data.map((d, i) => checkBody(d, `again-${i}.pdf`)),
        });
        assert.equal(res.status, 200);
        return (await res.json()).results as Array<{ status: string; claimId: string }>;
      };
      const claims = [...(await check(held)), ...(await check(held.slice(0, 2)))];
      assert.equal(claims.filter((r) => r.status === 'prove').length, 6);
      await expectLimited(
        await clerk.json('/api/uploads/checks', 'POST', { files: [checkBody(held[0]!)] }),
        /holds 6 instant-upload claims not yet proved \(at most 5\)/,
      );
      now += 60_000;
      // Answering claims (even wrongly) frees room.
      await clerk.json('/api/uploads/proofs', 'POST', {
        proofs: claims.map((c) => ({ claimId: c.claimId, digests: ['0'.repeat(32)] })),
      });
      assert.equal((await check(held.slice(0, 1))).length, 1);
      now += 60_000;
    });

    it('refuses proofs and batch files past their quotas', async () => {
      const clerk = await server.tokenClient(await server.addAccount('prover', 'clerk', 'unit-p'));
      const proofs = (n: number) => ({
        proofs: Array.from({ length: n }, () => ({
          claimId: randomBytes(16).toString('hex'),
          digests: ['0'.repeat(32)],
        })),
      });
      assert.equal((await clerk.json('/api/uploads/proofs', 'POST', proofs(6))).status, 200);
      await expectLimited(
        await clerk.json('/api/uploads/proofs', 'POST', proofs(1)),
        /more than 6 files to proofs in a minute/,
      );
      const batch = [0, 1, 2, 3].map((i) => ({ name: `b${i}.pdf`, data: randomContent(100 + i) }));
      const before = await server.store.catalog.count();
      await expectLimited(await clerk.batch(batch), /more than 3 files to batch uploads in a minute/);
      assert.equal(await server.store.catalog.count(), before, 'nothing of a refused batch is stored');
      now += 60_000;
    });

    it('refuses receipts listing more files a minute than may be checked', async () => {
      const clerk = await server.tokenClient(await server.addAccount('lister', 'clerk', 'unit-l'));
      const at = '2026-06-01T08:00:00.000Z';
      const receipt = (n: number) => ({
        title: '卷',
        startedAt: at,
        rows: Array.from({ length: n }, (_, i) => ({ path: `p${i}.pdf`, size: 1, outcome: 'failed', at })),
      });
      const id = () => randomBytes(16).toString('hex');
      assert.equal((await clerk.json(`/api/receipts/${id()}`, 'PUT', receipt(8))).status, 200);
      await expectLimited(
        await clerk.json(`/api/receipts/${id()}`, 'PUT', receipt(1)),
        /more than 8 files to receipts in a minute/,
      );
      now += 60_000;
    });

    it("audits a request's refused proofs as one event with their count, and sums up a flood of single refused proofs", async () => {
      const clerk = await server.tokenClient(await server.addAccount('flooder', 'clerk', 'unit-f'));
      const made = Array.from({ length: 5 }, () => ({
        claimId: randomBytes(16).toString('hex'),
        digests: ['0'.repeat(32)],
      }));
      assert.equal((await clerk.json('/api/uploads/proofs', 'POST', { proofs: made })).status, 200);
      const events = async () =>
        (await server.archive.services.audit.search({ action: 'proof_failed', user: 'flooder', limit: 500, offset: 0 }))
          .items;
      const [one] = await events();
      assert.equal((await events()).length, 1);
      assert.equal(one!.detail, '5 of 5 proofs of one request: 5 unknown or already answered claim');

      now += 60_000;
      // Single proofs: the quota is per minute, so move the clock to stay under it and over the audit's.
      for (let i = 0; i < AUDITED_REFUSALS_PER_MINUTE + 20; i++) {
        if (i % 5 === 0) now += 1;
        const res = await clerk.json('/api/uploads/prove', 'POST', {
          claimId: randomBytes(16).toString('hex'),
          digests: ['0'.repeat(32)],
        });
        if (res.status === 429) {
          // Keep the audit's minute, reset the quota: the test's quota is small.
          await server.store.rateCounts.reset(
            `quota\nproofs\n${(await server.store.accounts.findByUsername('flooder'))!.id}`,
          );
          i--;
          continue;
        }
        assert.equal(res.status, 403);
      }
      const all = await events();
      assert.equal(
        all.length,
        1 + AUDITED_REFUSALS_PER_MINUTE + 1,
        'one per refusal up to the limit, then one that sums up',
      );
      assert.match(all[0]!.detail, /more than 100 refused proofs this minute/);
      now += 60_000;
    });
  });
}
