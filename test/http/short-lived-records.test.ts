import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ReceiptSummary, ReceiptView } from '../../shared/receipts.js';
import { checkBody, digestsFor, md5, randomContent, sha256 } from '../support/content.js';
import { body, Client, TestServer } from '../support/server.js';
import { storeTargets, type OpenedStore } from '../support/stores.js';
import { TUS, tusRequest, tusUpload } from '../support/tus.js';

/**
 * The records that exist only for retries, sessions and short-lived state are forgotten by the
 * garbage collector once their time is over, on both stores (MongoDB's TTL indexes are not relied
 * on), while newer ones stay; and a receipt of uploads whose claims and tus records are gone still
 * answers, and can still be sent again (README, "What the database keeps").
 */
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const newKey = () => randomBytes(16).toString('hex');

/** Each short-lived table (embedded) or collection (MongoDB), with what names a record. */
const RECORDS = {
  claims: { table: 'claims', id: 'id', collection: 'uploads.claims' },
  tus: { table: 'uploads', id: 'id', collection: 'uploads.resumable' },
  sessions: { table: 'sessions', id: 'id_hash', collection: 'sessions' },
  loginAttempts: { table: 'login_attempts', id: 'key', collection: 'loginAttempts' },
  rateCounts: { table: 'rate_counts', id: "key || '|' || window_end", collection: 'rateCounts' },
  keptImports: { table: 'kept_imports', id: 'id', collection: 'accountImports' },
  apiTokens: { table: 'api_tokens', id: 'id', collection: 'apiTokens' },
} as const;
type Kind = keyof typeof RECORDS;

/** Every record of each kind, read behind the store's back (expired ones included). */
async function recordsIn(opened: OpenedStore): Promise<Record<Kind, Set<string>>> {
  const found = {} as Record<Kind, Set<string>>;
  if (opened.mongo) {
    const { MongoClient } = await import('mongodb');
    const client = await MongoClient.connect(opened.mongo.uri);
    try {
      const db = client.db(opened.mongo.dbName);
      for (const [kind, r] of Object.entries(RECORDS))
        found[kind as Kind] = new Set(
          (
            await db
              .collection(r.collection)
              .find({}, { projection: { _id: 1 } })
              .toArray()
          ).map((d) => String(d._id)),
        );
    } finally {
      await client.close();
    }
    return found;
  }
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path.join(opened.dataDir!, 'archive.sqlite'), { readonly: true });
  try {
    for (const [kind, r] of Object.entries(RECORDS))
      found[kind as Kind] = new Set(
        db
          .prepare<[], { id: string }>(`SELECT ${r.id} AS id FROM ${r.table}`)
          .all()
          .map((row) => String(row.id)),
      );
  } finally {
    db.close();
  }
  return found;
}

const added = (later: Set<string>, earlier: Set<string>) => new Set([...later].filter((id) => !earlier.has(id)));

for (const target of storeTargets) {
  describe(`short-lived records expire, receipts still answer (${target.name} store)`, { skip: target.skip }, () => {
    let now = Date.now();
    let server: TestServer;

    before(async () => {
      server = await TestServer.start(target, { clock: () => new Date(now) });
      await server.addAccount('clerk', 'clerk', 'unit-a');
      await server.addAccount('other', 'clerk', 'unit-b', '献县');
      await server.addAccount('admin', 'admin', 'archive');
    });
    after(() => server.close());

    /** The short-lived records one round of a clerk's work leaves: which ids each kind gained. */
    async function leaveShortLivedRecords(clerk: Client, anonymous: Client, who: string) {
      const before = await recordsIn(server.opened);
      const held = randomContent(700);
      await (await server.login('other')).batch([{ name: 'held.pdf', data: held }]);
      // A claim never answered, a tus upload never finished, a wrong password, a kept import.
      await body(await clerk.json('/api/uploads/checks', 'POST', { files: [checkBody(held, '卷/未答.pdf')] }), 200);
      assert.equal((await tusRequest(clerk, TUS, 'POST', { 'upload-length': '100' })).status, 201);
      const wrong = await anonymous.json('/api/session', 'POST', { username: `${who}-nobody`, password: 'wrong one' });
      assert.equal(wrong.status, 401);
      await server.opened.store.accounts.createMany([], {
        id: `import-${who}`,
        accountId: 'admin',
        createdAt: new Date(now),
        expiresAt: new Date(now + 24 * HOUR),
        accounts: [],
      });
      // An API token that expired: the early one 31 days before this round, gone at the sweep a day
      // later (kept 30 days after its expiry); the later one 29 days before the sweep, still kept.
      await server.opened.store.tokens.create({
        id: `token-${who}`,
        accountId: 'clerk',
        secretHash: newKey(),
        label: who,
        createdAt: new Date(now - 90 * DAY),
        expiresAt: new Date(now - (who === 'early' ? 31 : 29) * DAY),
        lastUsedAt: null,
        scopes: [],
      });
      const after = await recordsIn(server.opened);
      const gained = Object.fromEntries(
        Object.keys(RECORDS).map((kind) => [kind, added(after[kind as Kind], before[kind as Kind])]),
      ) as Record<Kind, Set<string>>;
      for (const [kind, ids] of Object.entries(gained)) assert.ok(ids.size > 0, `${who} left ${kind} records`);
      return gained;
    }

    it('forgets claims, tus records, sessions, login and quota records, kept imports and long-expired API tokens past their time, keeps newer ones, and the receipt still answers', async () => {
      const t0 = now;
      const anonymous = server.anonymous();
      const clerk = await server.login('clerk');

      // A folder upload: a page in a batch, one instantly (a claim), one through tus; its receipt.
      const [a, instant, large] = [randomContent(1000), randomContent(1200), randomContent(3000)];
      await (await server.login('other')).batch([{ name: 'instant.pdf', data: instant }]);
      const batchKey = newKey();
      const batch = await body<{ results: Array<{ fileId: string }> }>(
        await clerk.batch(
          [{ name: 'a', data: a }],
          [{ md5: md5(a), sha256: sha256(a), name: '卷/a.pdf', key: batchKey }],
        ),
        200,
      );
      const check = await body<{ results: Array<{ claimId: string; ranges: Array<{ start: number; end: number }> }> }>(
        await clerk.json('/api/uploads/checks', 'POST', { files: [checkBody(instant, '卷/instant.pdf')] }),
        200,
      );
      const claim = check.results[0]!;
      await body(
        await clerk.json('/api/uploads/proofs', 'POST', {
          proofs: [{ claimId: claim.claimId, digests: digestsFor(instant, claim.ranges) }],
        }),
        200,
      );
      const tusKey = newKey();
      const tus = await tusUpload(clerk, large, { metadata: { filename: '卷/large.pdf', idempotencyKey: tusKey } });
      const at = new Date(t0).toISOString();
      const rows = [
        { path: '卷/a.pdf', size: a.length, outcome: 'stored', via: 'batch', key: batchKey, at },
        { path: '卷/instant.pdf', size: instant.length, outcome: 'instant', claimId: claim.claimId, at },
        { path: '卷/large.pdf', size: large.length, outcome: 'stored', via: 'tus', key: tusKey, at },
      ];
      const receipt = newKey();
      await body(await clerk.json(`/api/receipts/${receipt}`, 'PUT', { title: '卷', startedAt: at, rows }), 200);
      const old = await leaveShortLivedRecords(clerk, anonymous, 'early');
      const oldSession = (await recordsIn(server.opened)).sessions;

      // A day and an hour later: the claims (5 minutes), sessions (an hour), the tus records idle
      // (24 hours), the wrong password (remembered 24 hours), the quota windows and the kept
      // import (24 hours) are all past their time. The same work again leaves newer ones.
      now = t0 + 25 * HOUR;
      const clerkAgain = await server.login('clerk');
      const fresh = await leaveShortLivedRecords(clerkAgain, anonymous, 'late');
      const report = await server.archive.gc.run();
      assert.ok(report.expiredRecords > 0, 'the report counts what went');

      const left = await recordsIn(server.opened);
      // The address's record was refreshed by the later wrong password: only the early username's are expired.
      old.loginAttempts = new Set([...old.loginAttempts].filter((key) => key.includes('early-nobody')));
      assert.equal(old.loginAttempts.size, 2, "the early username's pair and account records");
      for (const kind of Object.keys(RECORDS) as Kind[]) {
        for (const id of old[kind]) assert.ok(!left[kind].has(id), `an expired ${kind} record is gone: ${id}`);
        for (const id of fresh[kind]) assert.ok(left[kind].has(id), `a newer ${kind} record is kept: ${id}`);
      }
      for (const id of oldSession) assert.ok(!left.sessions.has(id), 'the first session is gone');
      assert.equal(left.claims.has(claim.claimId), false);
      const tusPath = new URL(tus.url).pathname;
      assert.equal(left.tus.has(tusPath.split('/').pop()!), false, 'the finished tus upload’s record is gone');
      // The clerk's own login from this address is remembered 30 days: not short-lived, kept.
      assert.ok(
        [...left.loginAttempts].some((key) => key.startsWith('pair\nclerk')),
        'a known address is kept',
      );

      // The receipt answers as before, and sending it again (the page does, when reopened) is
      // still accepted: the uploads are the ledger's, which nothing here expires.
      const view = await body<ReceiptView>(await clerkAgain.fetch(`/api/receipts/${receipt}`), 200);
      assert.deepEqual(
        view.rows.map((r) => [r.path, r.outcome, r.fileId, r.uploadCount]),
        [
          ['卷/a.pdf', 'stored', batch.results[0]!.fileId, 1],
          ['卷/instant.pdf', 'instant', view.rows[1]!.fileId, 1],
          ['卷/large.pdf', 'stored', tus.fileId, 1],
        ],
      );
      const again = await body<ReceiptSummary>(
        await clerkAgain.json(`/api/receipts/${receipt}`, 'PUT', { title: '卷', startedAt: at, rows }),
        200,
      );
      assert.deepEqual(again.counts, { stored: 2, duplicate: 0, instant: 1, failed: 0, skipped: 0 });
      // The finished tus upload's address is gone, as documented (404), the file is not.
      assert.equal((await tusRequest(clerkAgain, tusPath, 'HEAD')).status, 404);
      assert.equal((await clerkAgain.fetch(`/api/files/${tus.fileId}`)).status, 200);
    });
  });
}
