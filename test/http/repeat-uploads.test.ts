import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { UploadCheckResult } from '../../shared/schemas.js';
import { checkBody, digestsFor, randomContent } from '../support/content.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * A folder dropped again: the check tells an account that it uploaded this content into its own
 * unit before, and when, so the page (or a script) can ask before counting it again. It says so
 * to that account only: another account's upload, or the account's own in another unit, is never
 * answered as "yours". Callers of every role: anonymous, a clerk, a county's administrator, the
 * archive's top-level administrator.
 */
type Who = 'anonymous' | 'clerkQ' | 'colleagueQ' | 'clerkD' | 'adminQ' | 'top';

for (const target of storeTargets) {
  describe(
    `a check tells an account of its own earlier upload into its unit (${target.name} store)`,
    { skip: target.skip },
    () => {
      let server: TestServer;
      let as: Record<Who, Client>;
      let now = Date.parse('2026-11-28T01:56:00.000Z');

      before(async () => {
        // Every upload revealed to every caller (the default): only `ownUpload` tells them apart.
        server = await TestServer.start(target, { clock: () => new Date(now) });
        await server.archive.services.directory.load(['13']);
        await server.addAccountIn('clerkQ', 'clerk', '130922100');
        await server.addAccountIn('colleagueQ', 'clerk', '130922100');
        await server.addAccountIn('clerkD', 'clerk', '130923100');
        await server.addAccountIn('adminQ', 'admin', '130922');
        await server.addAccountIn('top', 'admin', 'archive');
        as = await server.loginAll(['clerkQ', 'colleagueQ', 'clerkD', 'adminQ', 'top']);
      });
      after(() => server.close());

      const check = async (who: Who, data: Uint8Array, name = '卷/第1页.jpg') =>
        body<UploadCheckResult>(await as[who].json('/api/uploads/check', 'POST', checkBody(data, name)), 200);
      const checks = async (who: Who, files: Uint8Array[]) =>
        (
          await body<{ results: UploadCheckResult[] }>(
            await as[who].json('/api/uploads/checks', 'POST', {
              files: files.map((data, i) => checkBody(data, `卷/第${i + 1}页.jpg`)),
            }),
            200,
          )
        ).results;
      const uploadAs = async (who: Who, data: Uint8Array, name = '卷/第1页.jpg') =>
        (await body<{ fileId: string }>(await as[who].upload(name, data), 201)).fileId;
      const ledgerOf = async (fileId: string) => JSON.stringify(await server.store.ledger.entriesForFile(fileId));

      it('answers a clerk who uploaded the content into its unit with when and how often; checking counts nothing', async () => {
        const data = randomContent(20_000);
        const fileId = await uploadAs('clerkQ', data);
        now += 60_000;
        await as.clerkQ.instantUpload(data, '卷/副本/第1页.jpg');
        const before = await ledgerOf(fileId);

        now += 60_000;
        const answer = await check('clerkQ', data);
        assert.equal(answer.status, 'prove');
        assert.deepEqual(answer.status === 'prove' && answer.ownUpload, {
          fileId,
          lastUploadTime: '2026-11-28T01:57:00.000Z',
          uploadCount: 2,
        });
        const [many] = await checks('clerkQ', [data]);
        assert.deepEqual(many?.status === 'prove' && many.ownUpload, answer.status === 'prove' && answer.ownUpload);
        assert.equal(await ledgerOf(fileId), before, 'a check (its claim left unproved) counts nothing');

        // 仍要再次登记: proving the claim counts it again, as before.
        const proved = await body<{ uploadCount: number }>(
          await as.clerkQ.json('/api/uploads/prove', 'POST', {
            claimId: answer.status === 'prove' ? answer.claimId : '',
            digests: [],
          }),
          200,
        );
        assert.equal(proved.uploadCount, 3);
      });

      it("never answers another account's upload, or another unit's, as the caller's own", async () => {
        const data = randomContent(21_000);
        await uploadAs('clerkQ', data);
        for (const who of ['colleagueQ', 'clerkD', 'adminQ', 'top'] as const) {
          const answer = await check(who, data);
          assert.equal(answer.status, 'prove', `${who}: the archive holds it (the scope reveals every upload)`);
          assert.equal('ownUpload' in answer, false, `${who}: ${JSON.stringify(answer)}`);
        }
        const fresh = await check('clerkQ', randomContent(21_001));
        assert.deepEqual(fresh, { status: 'upload' }, 'content the archive does not hold');
      });

      it('tells a county administrator and the top-level administrator of their own uploads, not of each other’s', async () => {
        const [dataQ, dataTop] = [randomContent(22_000), randomContent(22_001)];
        const fileQ = await uploadAs('adminQ', dataQ, '县局/通知.pdf');
        const fileTop = await uploadAs('top', dataTop, '馆藏/目录.pdf');
        const [ownQ, othersQ] = await checks('adminQ', [dataQ, dataTop]);
        const [othersTop, ownTop] = await checks('top', [dataQ, dataTop]);
        assert.equal(ownQ?.status === 'prove' && ownQ.ownUpload?.fileId, fileQ);
        assert.equal(ownTop?.status === 'prove' && ownTop.ownUpload?.fileId, fileTop);
        assert.equal(othersQ?.status === 'prove' && 'ownUpload' in othersQ, false);
        assert.equal(othersTop?.status === 'prove' && 'ownUpload' in othersTop, false);
      });

      it('does not count an account’s upload into its former unit as its own in the unit it moved to', async () => {
        const data = randomContent(23_000);
        const mover = await server.addAccountIn('mover', 'clerk', '130922100');
        const client = await server.tokenClient(mover);
        assert.equal((await client.upload('卷/第1页.jpg', data)).status, 201);
        await body(await as.top.json(`/api/accounts/${mover.id}`, 'PATCH', { unitId: '130923100' }), 200);
        const answer = await body<UploadCheckResult>(
          await client.json('/api/uploads/check', 'POST', checkBody(data, '卷/第1页.jpg')),
          200,
        );
        assert.equal(answer.status, 'prove');
        assert.equal('ownUpload' in answer, false, JSON.stringify(answer));
      });

      it('answers "skip", holding no claim, to a check that asks to skip its own earlier upload; other callers prove as before', async () => {
        const data = randomContent(26_000);
        const fileId = await uploadAs('clerkQ', data);
        const skipping = { ...checkBody(data, '卷/第1页.jpg'), skipOwnUpload: true };
        const claimsOf = async (who: string) => {
          const account = (await server.store.accounts.findByUsername(who))!;
          return server.store.claims.countOutstanding(account.id, new Date(now));
        };
        const held = await claimsOf('clerkQ');
        const own = await body<UploadCheckResult>(await as.clerkQ.json('/api/uploads/check', 'POST', skipping), 200);
        assert.deepEqual(own, {
          status: 'skip',
          ownUpload: { fileId, lastUploadTime: new Date(now).toISOString(), uploadCount: 1 },
        });
        const many = await body<{ results: UploadCheckResult[] }>(
          await as.clerkQ.json('/api/uploads/checks', 'POST', { files: [skipping] }),
          200,
        );
        assert.deepEqual(many.results, [own]);
        assert.equal(await claimsOf('clerkQ'), held, 'no claim is held for a skipped file');
        for (const who of ['colleagueQ', 'adminQ', 'top'] as const) {
          const answer = await body<UploadCheckResult>(await as[who].json('/api/uploads/check', 'POST', skipping), 200);
          assert.equal(answer.status, 'prove', `${who}: not its own upload, nothing to skip`);
        }
        const bad = await as.clerkQ.json('/api/uploads/check', 'POST', { ...skipping, skipOwnUpload: 'yes' });
        assert.equal(bad.status, 400);
        assert.match(((await bad.json()) as { message: string }).message, /skipOwnUpload/);
      });

      it('refuses an anonymous check with 401 and says nothing of any upload', async () => {
        const data = randomContent(24_000);
        await uploadAs('clerkQ', data);
        const one = await as.anonymous.json('/api/uploads/check', 'POST', checkBody(data));
        const many = await as.anonymous.json('/api/uploads/checks', 'POST', { files: [checkBody(data)] });
        for (const res of [one, many]) {
          assert.equal(res.status, 401);
          assert.doesNotMatch(await res.text(), /ownUpload|lastUploadTime/);
        }
      });

      it('asks an account for no ranges exactly when it is told of its own upload', async () => {
        const data = randomContent(25_000);
        await uploadAs('clerkQ', data);
        const own = await check('clerkQ', data);
        const other = await check('colleagueQ', data);
        assert.deepEqual(own.status === 'prove' && own.ranges, []);
        assert.ok(other.status === 'prove' && other.ranges.length > 0);
        assert.deepEqual(
          digestsFor(data, other.status === 'prove' ? other.ranges : []).length,
          other.status === 'prove' ? other.ranges.length : -1,
        );
      });
    },
  );
}
