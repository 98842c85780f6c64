import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_QUOTAS } from '../../server/limits.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * Receipts are kept within a daily quota per account: so many new receipts, and so many bytes
 * added, a day (the report time zone's day, Asia/Shanghai here). Failed rows need no proof, so
 * without the quota a clerk could fill the store with them.
 */
const newId = () => randomBytes(16).toString('hex');
const at = '2026-11-25T08:00:00.000Z';
const PER_DAY = 3;
const BYTES_PER_DAY = 10_000;
/** 08:00 UTC is 16:00 in Beijing: the day ends in eight hours. */
const T0 = Date.parse(at);
const TO_MIDNIGHT_S = 8 * 3600;

/** A receipt of `n` failed files (each row about 190 bytes as kept). */
const failedRows = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    path: `卷/${String(i).padStart(4, '0')}-${'x'.repeat(90)}.tif`,
    size: 1000 + i,
    outcome: 'failed',
    reason: 'network',
    at,
  }));
/** What the receipt of `n` failed rows takes to keep (title and rows as JSON, in UTF-8), measured here independently. */
const keptBytes = (n: number, title = '卷') =>
  Buffer.byteLength(title) + Buffer.byteLength(JSON.stringify(failedRows(n)));

for (const target of storeTargets) {
  describe(`receipts kept per account and day (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let now = T0;
    const clerk = async (name: string, role: 'clerk' | 'admin' = 'clerk') =>
      server.tokenClient(await server.addAccount(name, role, 'unit-a'));
    const put = (c: Client, id: string, rows: number) =>
      c.json(`/api/receipts/${id}`, 'PUT', { title: '卷', startedAt: at, rows: failedRows(rows) });
    const refusedForToday = async (res: Response, pattern: RegExp) => {
      assert.equal(res.headers.get('retry-after'), String(TO_MIDNIGHT_S));
      const answer = await body<{ error: string; message: string }>(res, 429);
      assert.equal(answer.error, 'rate_limited');
      assert.match(answer.message, pattern);
      assert.match(answer.message, /only this receipt was not kept/);
      assert.match(answer.message, /after 2026-11-26 begins/);
    };

    before(async () => {
      server = await TestServer.start(target, {
        clock: () => new Date(now),
        quotas: { ...DEFAULT_QUOTAS, receiptsPerDay: PER_DAY, receiptBytesPerDay: BYTES_PER_DAY },
      });
    });
    after(() => server.close());

    it(`keeps ${PER_DAY} new receipts a day per account; sending one again is no new one; the next day starts afresh`, async () => {
      const c = await clerk('counted');
      const ids = [newId(), newId(), newId()];
      for (const id of ids) await body(await put(c, id, 1), 200);
      await body(await put(c, ids[0]!, 2), 200);
      await refusedForToday(await put(c, newId(), 1), new RegExp(`kept ${PER_DAY} receipts today`));
      // Another account, and an administrator's own, count apart.
      await body(await put(await clerk('neighbour'), newId(), 1), 200);
      await body(await put(await clerk('chief', 'admin'), newId(), 1), 200);
      // A refused one is not counted: it is refused again, then kept the next day (Beijing's midnight).
      const late = newId();
      await refusedForToday(await put(c, late, 1), /receipts today/);
      now = T0 + TO_MIDNIGHT_S * 1000 - 1000;
      await body(await put(c, late, 1), 429);
      now = T0 + TO_MIDNIGHT_S * 1000;
      await body(await put(c, late, 1), 200);
      now = T0;
    });

    it(`keeps ${BYTES_PER_DAY} bytes of receipts a day per account, counting only what a receipt sent again adds`, async () => {
      const c = await clerk('sized');
      assert.ok(keptBytes(20) + keptBytes(25) <= BYTES_PER_DAY && keptBytes(20) + keptBytes(40) > BYTES_PER_DAY);
      const a = newId();
      await body(await put(c, a, 10), 200);
      await body(await put(c, a, 10), 200);
      await body(await put(c, a, 20), 200); // adds keptBytes(20) - keptBytes(10)
      await refusedForToday(await put(c, newId(), 40), /receipts of this account would take more than/);
      // The refused one took nothing: a smaller one fits in what is left.
      await body(await put(c, newId(), 25), 200);
      // Shrinking a receipt gives nothing back for the day.
      await body(await put(c, a, 5), 200);
      assert.ok(keptBytes(20) + keptBytes(25) + keptBytes(10) > BYTES_PER_DAY);
      await body(await put(c, newId(), 10), 429);
      // Nor did that refusal count as a new receipt: one more small one still fits the count.
      await body(await put(c, newId(), 1), 200);
    });

    it('refuses a receipt larger than a whole day allows with 413, saying the files are uploaded', async () => {
      const c = await clerk('huge');
      assert.ok(keptBytes(60) > BYTES_PER_DAY);
      const res = await put(c, newId(), 60);
      const answer = await body<{ error: string; message: string }>(res, 413);
      assert.equal(answer.error, 'payload_too_large');
      assert.match(answer.message, /more than an account may keep in a day/);
      assert.match(answer.message, /files themselves are uploaded/);
      await body(await put(c, newId(), 1), 200);
    });

    it('PUT /api/receipts/:id: anonymous 401; clerks and administrators each within their own quota', async () => {
      await body(await server.anonymous().json(`/api/receipts/${newId()}`, 'PUT', {}), 401);
      for (const [name, role] of [
        ['clerk-q', 'clerk'],
        ['admin-q', 'admin'],
      ] as const) {
        const c = await clerk(name, role);
        for (let i = 0; i < PER_DAY; i++) await body(await put(c, newId(), 1), 200);
        await body(await put(c, newId(), 1), 429);
      }
    });
  });
}
