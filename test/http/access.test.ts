import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { md5, randomContent, sha256, typedPdf } from '../support/content.js';
import { Client, PASSWORD, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { REPORTS } from '../../shared/reports.js';

/**
 * Every endpoint, for every role: anonymous, a clerk of unit A, a clerk of unit B, an admin.
 * Browser callers use their session cookie and CSRF token; one more column checks API tokens.
 */
type Who = 'anonymous' | 'clerkA' | 'clerkB' | 'admin';
const WHO: Who[] = ['anonymous', 'clerkA', 'clerkB', 'admin'];

for (const target of storeTargets) {
  describe(`who may call what (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    let fileOfA: string;
    let fileOfB: string;
    let pdf: string; // a PDF of unit A's, of two pages

    before(async () => {
      server = await TestServer.start(target);
      await server.addAccount('clerkA', 'clerk', 'unit-a');
      await server.addAccount('clerkB', 'clerk', 'unit-b');
      await server.addAccount('admin', 'admin', 'archive');
      as = await server.loginAll(['clerkA', 'clerkB', 'admin']);
      fileOfA = (await (await as.clerkA.upload('a.pdf', randomContent(100))).json()).fileId;
      fileOfB = (await (await as.clerkB.upload('b.pdf', randomContent(100))).json()).fileId;
      pdf = (await (await as.clerkA.upload('pages.pdf', await typedPdf(2))).json()).fileId;
    });
    after(() => server.close());

    const expectStatus = async (who: Who, res: Response, expected: number) => {
      assert.equal(res.status, expected, `${who}: ${res.status} ${await res.clone().text()}`);
      if (expected >= 400) {
        const body = await res.json();
        assert.equal(typeof body.error, 'string');
        assert.equal(typeof body.message, 'string');
      }
    };

    it('GET /api/health: everybody', async () => {
      for (const who of WHO) await expectStatus(who, await as[who].fetch('/api/health'), 200);
    });

    it('POST /api/session: anybody with a right password', async () => {
      for (const who of WHO) {
        const username = who === 'anonymous' ? 'nobody' : who;
        await expectStatus(
          who,
          await server.anonymous().json('/api/session', 'POST', { username, password: PASSWORD }),
          who === 'anonymous' ? 401 : 201,
        );
      }
    });

    it('GET /api/session: logged-in accounts only, each sees itself', async () => {
      await expectStatus('anonymous', await as.anonymous.fetch('/api/session'), 401);
      for (const who of ['clerkA', 'clerkB', 'admin'] as const) {
        const res = await as[who].fetch('/api/session');
        await expectStatus(who, res, 200);
        const body = await res.json();
        assert.equal(body.account.username, who);
        assert.equal(body.account.passwordHash, undefined);
      }
    });

    it('POST /api/files: clerks and admins', async () => {
      for (const who of WHO)
        await expectStatus(who, await as[who].upload(`${who}.pdf`, randomContent(50)), who === 'anonymous' ? 401 : 201);
    });

    it("GET /api/files: clerks see their unit's files, admins all", async () => {
      await expectStatus('anonymous', await as.anonymous.fetch('/api/files'), 401);
      const ids = async (who: Who) =>
        new Set(
          ((await (await as[who].fetch('/api/files?limit=200')).json()).items as Array<{ fileId: string }>).map(
            (i) => i.fileId,
          ),
        );
      const a = await ids('clerkA');
      const b = await ids('clerkB');
      const admin = await ids('admin');
      assert.ok(a.has(fileOfA) && !a.has(fileOfB));
      assert.ok(b.has(fileOfB) && !b.has(fileOfA));
      assert.ok(admin.has(fileOfA) && admin.has(fileOfB));
    });

    it('GET and HEAD /api/files/:id: the uploading unit and admins; others get 404, not a hint', async () => {
      const expected: Record<Who, number> = { anonymous: 401, clerkA: 200, clerkB: 404, admin: 200 };
      for (const who of WHO) {
        await expectStatus(who, await as[who].fetch(`/api/files/${fileOfA}`), expected[who]);
        const head = await as[who].fetch(`/api/files/${fileOfA}`, { method: 'HEAD' });
        assert.equal(head.status, expected[who], `HEAD as ${who}`);
      }
      const unknown = await as.clerkB.fetch('/api/files/0123456789abcdef01234567');
      assert.deepEqual(
        await unknown.json(),
        await (await as.clerkB.fetch(`/api/files/${fileOfA}`)).json(),
        'a hidden file and a missing one look the same',
      );
    });

    it('GET /api/files/:id?disposition=inline (a preview): as a download, the uploading unit and admins; others 404', async () => {
      const expected: Record<Who, number> = { anonymous: 401, clerkA: 200, clerkB: 404, admin: 200 };
      for (const who of WHO) {
        const res = await as[who].fetch(`/api/files/${fileOfA}?disposition=inline`);
        await expectStatus(who, res, expected[who]);
        if (res.status === 200) assert.match(res.headers.get('content-disposition')!, /^inline; /);
      }
    });

    it('GET /api/files/:id/pages/:page (a page drawn for the viewer): as a download, the uploading unit and admins; others 404', async () => {
      const expected: Record<Who, number> = { anonymous: 401, clerkA: 200, clerkB: 404, admin: 200 };
      for (const who of WHO) {
        const res = await as[who].fetch(`/api/files/${pdf}/pages/2?width=200`);
        await expectStatus(who, res, expected[who]);
        if (res.status === 200)
          assert.deepEqual([res.headers.get('content-type'), res.headers.get('x-page-count')], ['image/jpeg', '2']);
      }
      // A page that does not exist is told only to those who may see the file.
      await expectStatus('clerkB', await as.clerkB.fetch(`/api/files/${pdf}/pages/9`), 404);
      assert.match((await (await as.clerkA.fetch(`/api/files/${pdf}/pages/9`)).json()).message, /has 2 page/);
    });

    it("GET /api/files/uploaders: clerks their unit's uploaders, admins everybody's", async () => {
      await expectStatus('anonymous', await as.anonymous.fetch('/api/files/uploaders'), 401);
      const uploaders = async (who: Who) => {
        const res = await as[who].fetch('/api/files/uploaders');
        await expectStatus(who, res, 200);
        return ((await res.json()).items as Array<{ username: string }>).map((u) => u.username);
      };
      const [a, b, admin] = [await uploaders('clerkA'), await uploaders('clerkB'), await uploaders('admin')];
      assert.ok(a.includes('clerkA') && !a.includes('clerkB'), a.join());
      assert.ok(b.includes('clerkB') && !b.includes('clerkA'), b.join());
      assert.ok(admin.includes('clerkA') && admin.includes('clerkB'), admin.join());
    });

    it('POST /api/uploads/check and /api/uploads/prove: clerks and admins', async () => {
      const data = randomContent(500);
      await as.clerkA.upload('held.pdf', data);
      const body = { md5: md5(data), sha256: sha256(data), size: data.length, name: 'held.pdf' };
      for (const who of WHO) {
        const check = await as[who].json('/api/uploads/check', 'POST', body);
        await expectStatus(who, check, who === 'anonymous' ? 401 : 200);
        const claim =
          who === 'anonymous'
            ? { claimId: 'x'.repeat(32), ranges: [{ start: 0, end: data.length }] }
            : await check.json();
        const digests = claim.ranges.map((r: { start: number; end: number }) => md5(data.subarray(r.start, r.end)));
        const prove = await as[who].json('/api/uploads/prove', 'POST', { claimId: claim.claimId, digests });
        await expectStatus(who, prove, who === 'anonymous' ? 401 : 200);
      }
    });

    it('POST /api/uploads/checks, /api/uploads/proofs and /api/uploads/batch: clerks and admins; a cookie session only with its CSRF token', async () => {
      const data = randomContent(700);
      await as.clerkA.upload('held-many.pdf', data);
      const body = { md5: md5(data), sha256: sha256(data), size: data.length, name: 'held-many.pdf' };
      for (const who of WHO) {
        const checks = await as[who].json('/api/uploads/checks', 'POST', { files: [body] });
        await expectStatus(who, checks, who === 'anonymous' ? 401 : 200);
        const claim =
          who === 'anonymous'
            ? { claimId: 'x'.repeat(32), ranges: [{ start: 0, end: data.length }] }
            : (await checks.json()).results[0];
        const digests = claim.ranges.map((r: { start: number; end: number }) => md5(data.subarray(r.start, r.end)));
        const proofs = await as[who].json('/api/uploads/proofs', 'POST', {
          proofs: [{ claimId: claim.claimId, digests }],
        });
        await expectStatus(who, proofs, who === 'anonymous' ? 401 : 200);
        if (who !== 'anonymous') assert.equal((await proofs.json()).results[0].status, 'duplicate');
        const batch = await as[who].batch([{ name: `${who}-batch.pdf`, data: randomContent(300) }]);
        await expectStatus(who, batch, who === 'anonymous' ? 401 : 200);
      }
      const withoutCsrf = new Client(server.url, { cookie: as.clerkA.credentials.cookie! });
      await expectStatus('clerkA', await withoutCsrf.batch([{ name: 'no-csrf.pdf', data: randomContent(300) }]), 403);
      await expectStatus('clerkA', await withoutCsrf.json('/api/uploads/checks', 'POST', { files: [body] }), 403);
      await expectStatus(
        'clerkA',
        await withoutCsrf.json('/api/uploads/proofs', 'POST', {
          proofs: [{ claimId: 'x'.repeat(32), digests: [md5(data)] }],
        }),
        403,
      );
    });

    it('PUT /api/session/password: logged-in accounts only', async () => {
      const roles = { clerkA: ['clerk', 'unit-a'], clerkB: ['clerk', 'unit-b'], admin: ['admin', 'archive'] } as const;
      for (const who of WHO) {
        // A fresh account per role, so the shared ones keep their passwords.
        const username = `pw-${who}`;
        if (who !== 'anonymous') await server.addAccount(username, roles[who][0], roles[who][1]);
        const client = who === 'anonymous' ? as.anonymous : await server.login(username);
        const res = await client.json('/api/session/password', 'PUT', {
          currentPassword: PASSWORD,
          newPassword: `${PASSWORD}!`,
        });
        await expectStatus(who, res, who === 'anonymous' ? 401 : 200);
        if (who !== 'anonymous') await server.login(username, `${PASSWORD}!`);
      }
    });

    it('PUT /api/session/name: logged-in accounts only, each naming itself', async () => {
      for (const who of WHO) {
        await expectStatus(
          who,
          await as[who].json('/api/session/name', 'PUT', { displayName: `${who} 的姓名` }),
          who === 'anonymous' ? 401 : 200,
        );
        if (who !== 'anonymous')
          assert.equal((await server.archive.services.accounts.getByUsername(who)).displayName, `${who} 的姓名`);
      }
      for (const who of ['clerkA', 'clerkB', 'admin'] as const)
        await expectStatus(who, await as[who].json('/api/session/name', 'PUT', { displayName: null }), 200);
    });

    it('DELETE /api/session: logged-in accounts only', async () => {
      for (const who of WHO) {
        const client = who === 'anonymous' ? as.anonymous : await server.login(who);
        await expectStatus(
          who,
          await client.fetch('/api/session', { method: 'DELETE' }),
          who === 'anonymous' ? 401 : 204,
        );
      }
    });

    it("GET / and the app's assets: public, the same for every role (the page itself asks for a login)", async () => {
      const page = await as.anonymous.fetch('/');
      const asset = /\/assets\/[\w.-]+\.js/.exec(await page.text())![0];
      for (const who of WHO) {
        const index = await as[who].fetch('/');
        await expectStatus(who, index, 200);
        assert.match(index.headers.get('content-type')!, /text\/html/);
        assert.equal(index.headers.get('cache-control'), 'no-cache', 'a new release is picked up at the next visit');
        assert.match(index.headers.get('content-security-policy')!, /script-src 'self' 'wasm-unsafe-eval'/);
        const script = await as[who].fetch(asset);
        await expectStatus(who, script, 200);
        assert.match(script.headers.get('cache-control')!, /max-age=31536000, immutable/);
        await expectStatus(who, await as[who].fetch('/assets/no-such-file.js'), 404);
      }
    });

    it('GET /api/audit: admins only (clerks 403), as JSON and as CSV', async () => {
      for (const who of WHO) {
        const expected = who === 'anonymous' ? 401 : who === 'admin' ? 200 : 403;
        await expectStatus(who, await as[who].fetch('/api/audit'), expected);
        await expectStatus(who, await as[who].fetch('/api/audit?format=csv'), expected);
      }
    });

    for (const report of REPORTS) {
      it(`GET /api/reports/${report}: admins only (clerks 403), as JSON and as CSV`, async () => {
        for (const who of WHO) {
          const expected = who === 'anonymous' ? 401 : who === 'admin' ? 200 : 403;
          await expectStatus(who, await as[who].fetch(`/api/reports/${report}`), expected);
          await expectStatus(who, await as[who].fetch(`/api/reports/${report}?format=csv&city=x`), expected);
        }
        const tokenClerk = await server.tokenClient(await server.archive.services.accounts.getByUsername('clerkA'));
        const tokenAdmin = await server.tokenClient(await server.archive.services.accounts.getByUsername('admin'));
        await expectStatus('clerkA', await tokenClerk.fetch(`/api/reports/${report}`), 403);
        await expectStatus('admin', await tokenAdmin.fetch(`/api/reports/${report}`), 200);
      });
    }

    it('API tokens act for their account, with the same rights', async () => {
      const tokenA = await server.tokenClient(await server.archive.services.accounts.getByUsername('clerkA'));
      const tokenB = await server.tokenClient(await server.archive.services.accounts.getByUsername('clerkB'));
      const tokenAdmin = await server.tokenClient(await server.archive.services.accounts.getByUsername('admin'));
      assert.equal((await tokenA.fetch(`/api/files/${fileOfA}`)).status, 200);
      assert.equal((await tokenB.fetch(`/api/files/${fileOfA}`)).status, 404);
      assert.equal((await tokenAdmin.fetch(`/api/files/${fileOfB}`)).status, 200);
      assert.equal((await tokenA.upload('t.pdf', randomContent(10))).status, 201);
      assert.equal((await tokenA.fetch('/api/session')).status, 200);
    });
  });
}
