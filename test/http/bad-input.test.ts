import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomContent } from '../support/content.js';
import { Client, PASSWORD, TestServer } from '../support/server.js';
import { countChunks, storeTargets } from '../support/stores.js';

for (const target of storeTargets) {
  describe(`bad input gets a clear 4xx and changes nothing (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let clerk: Client;
    let fileId: string;
    let snapshot: () => Promise<string>;

    before(async () => {
      server = await TestServer.start(target);
      clerk = await server.login((await server.addAccount('clerk', 'clerk')).username);
      fileId = (await (await clerk.upload('kept.pdf', randomContent(1000))).json()).fileId;
      snapshot = async () =>
        JSON.stringify([
          await countChunks(server.opened),
          await server.store.unitFiles.list({ accountId: 'x', limit: 200, offset: 0 }),
          await server.store.ledger.entriesForFile(fileId),
        ]);
    });
    after(() => server.close());

    const expect4xx = async (res: Response, status: number, error: string, message?: RegExp) => {
      assert.equal(res.status, status, await res.clone().text());
      assert.match(res.headers.get('content-type') ?? '', /application\/json/);
      const body = await res.json();
      assert.equal(body.error, error);
      assert.ok(body.message.length > 10);
      if (message) assert.match(body.message, message);
    };

    it('refuses malformed, mistyped, incomplete and operator-injected JSON', async () => {
      const before = await snapshot();
      const post = (body: string) =>
        fetch(`${server.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await expect4xx(await post('{"username": "clerk", '), 400, 'bad_request', /not valid JSON/);
      await expect4xx(
        await post('{"username": {"$gt": ""}, "password": {"$gt": ""}}'),
        400,
        'validation_failed',
        /username/,
      );
      await expect4xx(await post('{"username": "clerk"}'), 400, 'validation_failed', /password/);
      await expect4xx(await post('{"username": 42, "password": "x"}'), 400, 'validation_failed', /username/);
      await expect4xx(
        await post('{"username": "clerk", "password": "x", "role": "admin"}'),
        400,
        'validation_failed',
        /unknown field/,
      );
      await expect4xx(await post('[]'), 400, 'validation_failed');
      await expect4xx(
        await clerk.json('/api/session/password', 'PUT', {
          currentPassword: { $ne: null },
          newPassword: 'x'.repeat(20),
        }),
        400,
        'validation_failed',
      );
      assert.equal(await snapshot(), before);
    });

    it('names the field a form should point at when a rule of the archive refuses it', async () => {
      await server.addAccount('form-admin', 'admin', 'archive');
      const admin = await server.login('form-admin');
      const refused = async (res: Response, field: string) => {
        assert.equal(res.status, 400, await res.clone().text());
        const body = await res.json();
        assert.equal(body.error, 'validation_failed');
        assert.equal(body.details?.field, field, body.message);
      };
      await refused(
        await admin.json('/api/accounts', 'POST', { username: 'two words', role: 'admin', unitId: 'archive' }),
        'username',
      );
      await refused(
        await admin.json('/api/accounts', 'POST', { username: 'li.1', role: 'clerk', unitId: 'archive' }),
        'unitId',
      );
      await refused(
        await admin.json('/api/session/password', 'PUT', { currentPassword: PASSWORD, newPassword: PASSWORD }),
        'newPassword',
      );
      // A schema's refusal names its field too (server/http/validate.ts).
      await refused(await admin.json('/api/units', 'POST', { parentId: null, name: '' }), 'name');
    });

    it('refuses malformed and unknown file ids', async () => {
      await expect4xx(await clerk.fetch('/api/files/not-an-id'), 400, 'validation_failed', /file id/);
      await expect4xx(await clerk.fetch('/api/files/%24gt'), 400, 'validation_failed');
      await expect4xx(await clerk.fetch('/api/files/ffffffffffffffffffffffff'), 404, 'not_found');
    });

    it('refuses bad list parameters', async () => {
      for (const q of [
        'limit=abc',
        'limit=0',
        'limit=100000',
        'offset=-1',
        'q[$regex]=x',
        'sort=colour',
        'order=sideways',
        'type=video',
        'from=2026-02-30',
        'uploader=',
      ]) {
        await expect4xx(await clerk.fetch(`/api/files?${q}`), 400, 'validation_failed');
      }
    });

    it('refuses uploads that are not one file in the field "file", keeping nothing', async () => {
      const before = await snapshot();
      await expect4xx(await clerk.json('/api/files', 'POST', { file: 'abc' }), 400, 'validation_failed', /multipart/);
      const noFile = new FormData();
      noFile.append('md5', 'd41d8cd98f00b204e9800998ecf8427e');
      await expect4xx(
        await clerk.fetch('/api/files', { method: 'POST', body: noFile }),
        400,
        'validation_failed',
        /field "file"/,
      );
      const twoFiles = new FormData();
      twoFiles.append('file', new Blob([randomContent(10)]), 'a.pdf');
      twoFiles.append('file', new Blob([randomContent(10)]), 'b.pdf');
      await expect4xx(
        await clerk.fetch('/api/files', { method: 'POST', body: twoFiles }),
        400,
        'validation_failed',
        /exactly one file/,
      );
      const wrongField = new FormData();
      wrongField.append('document', new Blob([randomContent(10)]), 'a.pdf');
      await expect4xx(await clerk.fetch('/api/files', { method: 'POST', body: wrongField }), 400, 'validation_failed');
      await expect4xx(
        await clerk.upload('a.pdf', randomContent(10), { md5: 'not-hex' }),
        400,
        'validation_failed',
        /md5/,
      );
      await expect4xx(
        await clerk.upload('a.pdf', randomContent(10), { owner: 'someone else' }),
        400,
        'validation_failed',
        /unknown field/,
      );
      const truncated = await clerk.fetch('/api/files', {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=zz' },
        body: '--zz\r\nContent-Disposition: form-data; name="file"; filename="t.pdf"\r\n\r\nabc',
      });
      await expect4xx(truncated, 400, 'bad_request', /malformed/);
      assert.equal(await snapshot(), before);
    });

    it('answers a body over the limit with 413 payload_too_large naming the limit, not 400', async () => {
      const before = await snapshot();
      const big = JSON.stringify({ username: 'clerk', password: 'x'.repeat(100_000) });
      await expect4xx(
        await fetch(`${server.url}/api/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: big,
        }),
        413,
        'payload_too_large',
        /64 KB at most/,
      );
      // The bulk lists have a larger limit of their own.
      const checks = JSON.stringify({ files: [], padding: 'x'.repeat(5 * 1024 * 1024) });
      await expect4xx(
        await clerk.fetch('/api/uploads/checks', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: checks,
        }),
        413,
        'payload_too_large',
        /4 MB at most/,
      );
      assert.equal(await snapshot(), before);
    });

    it('answers unknown API paths with a JSON 404, and stays up', async () => {
      await expect4xx(await clerk.fetch('/api/nothing-here'), 404, 'not_found', /no API endpoint/);
      assert.equal((await fetch(`${server.url}/api/health`)).status, 200);
      assert.equal((await clerk.fetch(`/api/files/${fileId}`)).status, 200);
    });
  });
}
