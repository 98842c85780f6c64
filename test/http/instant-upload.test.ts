import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InstantUploadScope } from '../../shared/schemas.js';
import { checkBody, digestsFor, md5, randomContent } from '../support/content.js';
import { Client, TestServer } from '../support/server.js';
import { countChunks, storeTargets, TEST_CHUNK_SIZE } from '../support/stores.js';

for (const target of storeTargets) {
  describe(`instant uploads: check, then prove possession (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let now = Date.now();
    let clerkA: Client;
    let clerkB: Client;
    before(async () => {
      server = await TestServer.start(target, { claimTtlMs: 60_000, clock: () => new Date(now) });
      clerkA = await server.tokenClient(await server.addAccount('clerkA', 'clerk', 'unit-a'));
      clerkB = await server.login((await server.addAccount('clerkB', 'clerk', 'unit-b')).username);
    });
    after(() => server.close());

    it('answers "upload" for content the archive does not hold', async () => {
      const res = await clerkA.json('/api/uploads/check', 'POST', checkBody(randomContent(1000)));
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: 'upload' });
    });

    it('asks for a small file whole, in pieces cut at random points, and for fresh random ranges of at most 64 KiB in all otherwise', async () => {
      const small = randomContent(10_000);
      const big = randomContent(5 * TEST_CHUNK_SIZE + 7);
      await clerkA.upload('small.pdf', small);
      await clerkA.upload('big.pdf', big);
      const smallCheck = await (await clerkB.json('/api/uploads/check', 'POST', checkBody(small))).json();
      assert.equal(smallCheck.status, 'prove');
      const pieces: Array<{ start: number; end: number }> = smallCheck.ranges;
      assert.ok(pieces.length > 1, 'never the whole file as one range: its MD5 came with the check');
      assert.equal(pieces[0]!.start, 0);
      assert.equal(pieces[pieces.length - 1]!.end, small.length);
      pieces.slice(1).forEach((r, i) => assert.equal(r.start, pieces[i]!.end, 'the pieces tile the file'));
      const seen = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const check = await (await clerkB.json('/api/uploads/check', 'POST', checkBody(big))).json();
        assert.match(check.claimId, /^[\w-]{32}$/);
        const total = check.ranges.reduce((sum: number, r: { start: number; end: number }) => sum + r.end - r.start, 0);
        assert.ok(total <= 64 * 1024 && check.ranges.length > 1);
        for (const r of check.ranges) assert.ok(r.start >= 0 && r.end <= big.length && r.start < r.end);
        seen.add(JSON.stringify(check.ranges));
      }
      assert.equal(seen.size, 3, 'each check asks for other ranges');
    });

    it('records the upload and answers "duplicate" for a right proof, without the bytes being sent', async () => {
      const data = randomContent(3 * TEST_CHUNK_SIZE);
      const { fileId } = await (await clerkA.upload('原件.pdf', data)).json();
      const chunksBefore = await countChunks(server.opened);
      const first = await clerkB.instantUpload(data, '副本.pdf');
      assert.equal(first.res!.status, 200);
      assert.deepEqual(first.body, { status: 'duplicate', fileId, uploadCount: 1 });
      const second = await clerkB.instantUpload(data, '副本.pdf');
      assert.deepEqual(second.body, { status: 'duplicate', fileId, uploadCount: 2 });
      assert.equal(await countChunks(server.opened), chunksBefore);
      const entries = await server.store.ledger.entriesForFile(fileId);
      assert.deepEqual(entries.map((e) => [e.userName, e.unit.id, e.uploadCount, e.lastUploadFileName]).sort(), [
        ['clerkA', 'unit-a', 1, '原件.pdf'],
        ['clerkB', 'unit-b', 2, '副本.pdf'],
      ]);
      const download = await clerkB.fetch(`/api/files/${fileId}`);
      assert.equal(download.status, 200, 'the claiming unit may now read it');
      assert.deepEqual(Buffer.from(await download.arrayBuffer()), data);
    });

    it('asks a clerk who sent or proved the file before for no ranges, and counts its empty proof; anybody else still proves', async () => {
      const data = randomContent(3 * TEST_CHUNK_SIZE);
      const { fileId } = await (await clerkA.upload('卷1/第1页.jpg', data)).json();
      const again = await clerkA.instantUpload(data, '卷1/副本/第1页.jpg');
      assert.deepEqual(again.check.ranges, [], 'the sender of the bytes');
      assert.deepEqual([again.res!.status, again.body], [200, { status: 'duplicate', fileId, uploadCount: 2 }]);

      const colleague = await server.tokenClient(await server.addAccount('clerkA2', 'clerk', 'unit-a'));
      const first = await colleague.instantUpload(data, '第1页.jpg');
      assert.ok(first.check.ranges.length > 1, 'another account of the same unit proves');
      assert.equal(first.body.status, 'duplicate');
      const second = await colleague.instantUpload(data, '第1页.jpg');
      assert.deepEqual(second.check.ranges, [], 'once proved, not again');
      assert.deepEqual(second.body, { status: 'duplicate', fileId, uploadCount: 2 });

      // An empty proof of a claim that asked for ranges is a wrong proof.
      const stranger = await (await clerkB.json('/api/uploads/check', 'POST', checkBody(data))).json();
      assert.ok(stranger.ranges.length > 1);
      const before = JSON.stringify(await server.store.ledger.entriesForFile(fileId));
      const empty = await clerkB.json('/api/uploads/prove', 'POST', { claimId: stranger.claimId, digests: [] });
      assert.equal(empty.status, 403);
      assert.equal(JSON.stringify(await server.store.ledger.entriesForFile(fileId)), before);
    });

    it("refuses wrong digests, expired and other accounts' claims with 403, recording nothing; a proof sent again is answered as counted", async () => {
      const data = randomContent(2 * TEST_CHUNK_SIZE);
      const { fileId } = await (await clerkA.upload('x.pdf', data)).json();
      const ledgerBefore = JSON.stringify(await server.store.ledger.entriesForFile(fileId));
      const check = async (client: Client) => (await client.json('/api/uploads/check', 'POST', checkBody(data))).json();
      const prove = (client: Client, claimId: string, digests: string[]) =>
        client.json('/api/uploads/prove', 'POST', { claimId, digests });
      const expectRejected = async (res: Response) => {
        assert.equal(res.status, 403);
        const body = await res.json();
        assert.equal(body.error, 'claim_rejected');
        assert.match(body.message, /Upload the file normally/);
      };

      const wrong = await check(clerkB);
      await expectRejected(
        await prove(
          clerkB,
          wrong.claimId,
          wrong.ranges.map(() => md5(randomContent(10))),
        ),
      );
      await expectRejected(await prove(clerkB, wrong.claimId, digestsFor(data, wrong.ranges)));

      const tooFew = await check(clerkB);
      await expectRejected(await prove(clerkB, tooFew.claimId, digestsFor(data, tooFew.ranges).slice(1)));

      const someoneElses = await check(clerkB);
      await expectRejected(await prove(clerkA, someoneElses.claimId, digestsFor(data, someoneElses.ranges)));

      const expired = await check(clerkB);
      now += 61_000;
      await expectRejected(await prove(clerkB, expired.claimId, digestsFor(data, expired.ranges)));

      await expectRejected(await prove(clerkB, 'x'.repeat(32), [md5(data)]));
      assert.equal(JSON.stringify(await server.store.ledger.entriesForFile(fileId)), ledgerBefore);

      const used = await check(clerkB);
      const first = await prove(clerkB, used.claimId, digestsFor(data, used.ranges));
      assert.equal(first.status, 200);
      const answer = await first.json();
      const counted = JSON.stringify(await server.store.ledger.entriesForFile(fileId));
      // Its answer was lost, say: the same proof again is the same answer, counted once.
      const again = await prove(clerkB, used.claimId, digestsFor(data, used.ranges));
      assert.deepEqual([again.status, await again.json()], [200, answer]);
      await expectRejected(await prove(clerkA, used.claimId, digestsFor(data, used.ranges)));
      assert.equal(JSON.stringify(await server.store.ledger.entriesForFile(fileId)), counted);
    });

    it('does not accept the MD5 the caller already sent as a proof, however small the file', async () => {
      const data = randomContent(50_000);
      const { fileId } = await (await clerkA.upload('secret.pdf', data)).json();
      const check = await (await clerkB.json('/api/uploads/check', 'POST', checkBody(data))).json();
      const res = await clerkB.json('/api/uploads/prove', 'POST', {
        claimId: check.claimId,
        digests: check.ranges.map(() => md5(data)),
      });
      assert.equal(res.status, 403);
      assert.equal((await clerkB.fetch(`/api/files/${fileId}`)).status, 404, 'knowing the hashes gave no access');
    });

    it('proves a 0-byte file with the MD5 of nothing', async () => {
      await clerkA.upload('empty.txt', Buffer.alloc(0));
      const { check, body } = await clerkB.instantUpload(Buffer.alloc(0), 'leer.txt');
      assert.deepEqual(check.ranges, [{ start: 0, end: 0 }]);
      assert.equal(body.status, 'duplicate');
    });

    it('refuses malformed checks and proofs with 400', async () => {
      const good = checkBody(randomContent(10));
      for (const bad of [
        { ...good, md5: 'xyz' },
        { ...good, sha256: good.md5 },
        { ...good, size: -1 },
        { ...good, size: '10' },
        { ...good, name: '' },
        { ...good, owner: 'clerkA' },
        { md5: good.md5 },
      ]) {
        const res = await clerkA.json('/api/uploads/check', 'POST', bad);
        assert.equal(res.status, 400, JSON.stringify(bad));
        assert.equal((await res.json()).error, 'validation_failed');
      }
      for (const bad of [
        { claimId: 'short', digests: [good.md5] },
        { claimId: 'x'.repeat(32), digests: Array(17).fill(good.md5) },
        { claimId: 'x'.repeat(32), digests: ['nothex'] },
        { claimId: 'x'.repeat(32) },
        { claimId: { $ne: '' }, digests: [good.md5] },
      ]) {
        assert.equal((await clerkA.json('/api/uploads/prove', 'POST', bad)).status, 400, JSON.stringify(bad));
      }
    });
  });

  for (const scope of ['county', 'unit'] as InstantUploadScope[]) {
    describe(`instant-upload scope "${scope}" (${target.name} store)`, { skip: target.skip }, () => {
      let server: TestServer;
      let holder: Client;
      let neighbour: Client;
      let stranger: Client;
      before(async () => {
        server = await TestServer.start(target, { instantUploadScope: scope });
        holder = await server.tokenClient(await server.addAccount('holder', 'clerk', 'unit-a', '青县'));
        // Same county, another unit; and another county.
        neighbour = await server.tokenClient(await server.addAccount('neighbour', 'clerk', 'unit-n', '青县'));
        stranger = await server.tokenClient(await server.addAccount('stranger', 'clerk', 'unit-s', '献县'));
      });
      after(() => server.close());

      it('answers content held only outside the scope as new, stores it once, and still counts the upload', async () => {
        const data = randomContent(TEST_CHUNK_SIZE + 100);
        const held = await (await holder.upload('a.pdf', data, {}, 'application/x-holders-own')).json();
        await new Promise((resolve) => setTimeout(resolve, 5));
        const chunksBefore = await countChunks(server.opened);
        const firstStored = (await server.store.catalog.get(held.fileId))!.uploadDate.toISOString();

        const outsiders = scope === 'county' ? [stranger] : [stranger, neighbour];
        for (const outsider of outsiders) {
          assert.deepEqual(await (await outsider.json('/api/uploads/check', 'POST', checkBody(data))).json(), {
            status: 'upload',
          });
          const sent = await outsider.upload('mine.pdf', data);
          assert.equal(sent.status, 201);
          const body = await sent.json();
          assert.equal(body.status, 'stored');
          assert.equal(body.uploadCount, 1);
          const listed = (await (await outsider.fetch('/api/files')).json()).items.find(
            (i: { fileId: string }) => i.fileId === body.fileId,
          );
          assert.notEqual(listed.uploadDate, firstStored, 'the listing does not reveal the earlier upload');
          assert.equal(listed.fileName, 'mine.pdf');
          assert.equal(listed.contentType, 'application/pdf', "the outsider sees its own media type, not the holder's");
          const download = await outsider.fetch(`/api/files/${body.fileId}`, { method: 'HEAD' });
          assert.equal(download.headers.get('content-type'), 'application/pdf');
          assert.equal(listed.uploadCount, 1);
        }
        assert.equal(await countChunks(server.opened), chunksBefore, 'still one stored copy');
        assert.equal(
          (await server.store.ledger.entriesForFile(held.fileId)).length,
          1 + outsiders.length,
          'every upload is in the ledger',
        );

        if (scope === 'county') {
          const { body } = await neighbour.instantUpload(data);
          assert.equal(body.status, 'duplicate', 'a unit of the same county may claim it');
        }
        const again = await stranger.instantUpload(data);
        assert.equal(
          again.body.status,
          'duplicate',
          "once in the stranger's own scope, it is a duplicate for them too",
        );
      });
    });
  }
}
