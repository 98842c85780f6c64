import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REPORTS } from '../../shared/reports.js';
import type { FileList } from '../../shared/schemas.js';
import type { VerificationResult } from '../../shared/verification.js';

type VerificationView = { last: VerificationResult | null };
import { randomContent, typedPdf } from '../support/content.js';
import { type Client, TestServer } from '../support/server.js';
import { damageContent, storeTargets } from '../support/stores.js';
import { until } from '../support/until.js';

/**
 * Reach: every endpoint whose answer depends on who asks, for the five kinds of caller. Two
 * counties of 沧州市 (Hebei loaded): 青县 (Q) and 东光县 (D), each with a clerk in a town and a
 * county administrator; and the archive's top-level administrator.
 */
type Who = 'anonymous' | 'clerkQ' | 'adminQ' | 'adminD' | 'top';
const WHO: Who[] = ['anonymous', 'clerkQ', 'adminQ', 'adminD', 'top'];

for (const target of storeTargets) {
  describe(`an administrator sees its own reach (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    let fileQ: string;
    let fileD: string;

    before(async () => {
      server = await TestServer.start(target);
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('clerkQ', 'clerk', '130922100');
      await server.addAccountIn('clerkD', 'clerk', '130923100');
      await server.addAccountIn('adminQ', 'admin', '130922');
      await server.addAccountIn('adminD', 'admin', '130923');
      await server.addAccountIn('top', 'admin', 'archive');
      as = await server.loginAll(['clerkQ', 'adminQ', 'adminD', 'top']);
      const clerkD = await server.login('clerkD');
      // Qing county's is a real PDF, whose pages the viewer shows.
      const [dataQ, dataD] = [await typedPdf(4, 'Qing county'), randomContent(150_000)];
      fileQ = (await (await as.clerkQ.upload('青县档案.pdf', dataQ)).json()).fileId;
      fileD = (await (await clerkD.upload('东光档案.pdf', dataD)).json()).fileId;
      // Uploaded twice, so the repeat-uploaders report has a row for each county.
      await as.clerkQ.upload('青县档案.pdf', dataQ);
      await clerkD.upload('东光档案-又一份.pdf', dataD);
    });
    after(() => server.close());

    const status = async (who: Who, res: Response, expected: number) => {
      assert.equal(res.status, expected, `${who}: ${res.status} ${await res.clone().text()}`);
      return res;
    };

    it('GET /api/session says what the account reaches (the reports open there)', async () => {
      const reach = async (who: Who) =>
        ((await (await as[who].fetch('/api/session')).json()) as { reach: unknown }).reach;
      assert.deepEqual(await reach('top'), null);
      assert.deepEqual(await reach('adminQ'), { city: '沧州市', county: '青县' });
      assert.deepEqual(await reach('adminD'), { city: '沧州市', county: '东光县' });
      assert.deepEqual(await reach('clerkQ'), { city: '沧州市', county: '青县', town: '清州镇' });
    });

    it('GET /api/files: a clerk its unit’s files, an administrator its reach’s, the top level all', async () => {
      await status('anonymous', await as.anonymous.fetch('/api/files'), 401);
      const seen = async (who: Who) =>
        ((await (await status(who, await as[who].fetch('/api/files'), 200)).json()) as FileList).items.map(
          (f) => f.fileId,
        );
      assert.deepEqual(await seen('clerkQ'), [fileQ]);
      assert.ok((await seen('adminQ')).includes(fileQ) && !(await seen('adminQ')).includes(fileD));
      assert.ok((await seen('adminD')).includes(fileD) && !(await seen('adminD')).includes(fileQ));
      assert.ok((await seen('top')).includes(fileQ) && (await seen('top')).includes(fileD));
    });

    it('GET /api/files/:id: downloads within reach only; elsewhere the file does not exist', async () => {
      const expected: Record<Who, number> = { anonymous: 401, clerkQ: 200, adminQ: 200, adminD: 404, top: 200 };
      for (const who of WHO) await status(who, await as[who].fetch(`/api/files/${fileQ}`), expected[who]);
      await status('adminQ', await as.adminQ.fetch(`/api/files/${fileD}`), 404);
    });

    it('GET /api/files/:id?disposition=inline (a preview): within reach only, as a download', async () => {
      const expected: Record<Who, number> = { anonymous: 401, clerkQ: 200, adminQ: 200, adminD: 404, top: 200 };
      for (const who of WHO)
        await status(who, await as[who].fetch(`/api/files/${fileQ}?disposition=inline`), expected[who]);
    });

    it('GET /api/files/:id/pages/:page (a page drawn for the viewer): within reach only, as a download', async () => {
      const expected: Record<Who, number> = { anonymous: 401, clerkQ: 200, adminQ: 200, adminD: 404, top: 200 };
      for (const who of WHO)
        await status(who, await as[who].fetch(`/api/files/${fileQ}/pages/1?width=150`), expected[who]);
    });

    it('GET /api/files/uploaders and ?uploader=: the uploaders of a reach only; one elsewhere is refused', async () => {
      await status('anonymous', await as.anonymous.fetch('/api/files/uploaders'), 401);
      const uploaders = async (who: Who) =>
        (
          (await (await status(who, await as[who].fetch('/api/files/uploaders'), 200)).json()).items as Array<{
            username: string;
          }>
        ).map((u) => u.username);
      assert.deepEqual(await uploaders('clerkQ'), ['clerkQ']);
      assert.deepEqual(await uploaders('adminQ'), ['clerkQ']);
      assert.deepEqual(await uploaders('adminD'), ['clerkD']);
      assert.deepEqual(await uploaders('top'), ['clerkD', 'clerkQ']);
      const byUploader = async (who: Who, uploader: string, expected: number) =>
        status(who, await as[who].fetch(`/api/files?uploader=${uploader}`), expected);
      const found = (await (await byUploader('adminQ', 'clerkQ', 200)).json()) as FileList;
      assert.deepEqual(
        found.items.map((f) => f.fileId),
        [fileQ],
      );
      await byUploader('adminQ', 'clerkD', 400);
      await byUploader('clerkQ', 'clerkD', 400);
      await byUploader('top', 'clerkD', 200);
    });

    for (const report of REPORTS) {
      it(`GET /api/reports/${report}: administrators, each on its reach; another county by name is not found`, async () => {
        const expected: Record<Who, number> = { anonymous: 401, clerkQ: 403, adminQ: 200, adminD: 200, top: 200 };
        for (const who of WHO) await status(who, await as[who].fetch(`/api/reports/${report}`), expected[who]);
        const elsewhere = `/api/reports/${report}?city=${encodeURIComponent('沧州市')}&county=${encodeURIComponent('东光县')}`;
        await status('adminQ', await as.adminQ.fetch(elsewhere), 404);
        await status('adminD', await as.adminD.fetch(elsewhere), 200);
        await status(
          'adminQ',
          await as.adminQ.fetch(`/api/reports/${report}?city=${encodeURIComponent('廊坊市')}`),
          404,
        );
      });
    }

    it('GET /api/reports/collisions/count (the reports’ banner): administrators, each on its reach', async () => {
      const expected: Record<Who, number> = { anonymous: 401, clerkQ: 403, adminQ: 200, adminD: 200, top: 200 };
      for (const who of WHO) {
        const res = await status(who, await as[who].fetch('/api/reports/collisions/count'), expected[who]);
        if (res.status === 200) assert.deepEqual(await res.json(), { total: 0 });
      }
    });

    it('the reports count the reach only', async () => {
      const counties = async (who: Who) => {
        const res = await as[who].fetch('/api/reports/repeat-uploaders?group=unit');
        const page = (await (await status(who, res, 200)).json()) as { items: Array<{ unit: { county?: string } }> };
        return [...new Set(page.items.map((r) => r.unit.county))].sort();
      };
      assert.deepEqual(await counties('adminQ'), ['青县']);
      assert.deepEqual(await counties('adminD'), ['东光县']);
      assert.deepEqual(await counties('top'), ['东光县', '青县']);
      const savings = async (who: Who) => {
        const res = await as[who].fetch('/api/reports/savings');
        return ((await (await status(who, res, 200)).json()) as { summary: { uploads: number } }).summary.uploads;
      };
      assert.equal(await savings('adminQ'), 2);
      assert.equal(await savings('adminD'), 2);
      assert.equal(await savings('top'), 4);
    });

    it('GET /api/audit: administrators, each the events of its reach’s accounts', async () => {
      const expected: Record<Who, number> = { anonymous: 401, clerkQ: 403, adminQ: 200, adminD: 200, top: 200 };
      for (const who of WHO) await status(who, await as[who].fetch('/api/audit'), expected[who]);
      const uploaders = async (who: Who) => {
        const res = await as[who].fetch('/api/audit?action=upload');
        const body = (await (await status(who, res, 200)).json()) as { items: Array<{ userName: string }> };
        return [...new Set(body.items.map((e) => e.userName))].sort();
      };
      assert.deepEqual(await uploaders('adminQ'), ['clerkQ']);
      assert.deepEqual(await uploaders('adminD'), ['clerkD']);
      assert.deepEqual(await uploaders('top'), ['clerkD', 'clerkQ']);
      const elsewhere = `/api/audit?city=${encodeURIComponent('沧州市')}&county=${encodeURIComponent('东光县')}`;
      await status('adminQ', await as.adminQ.fetch(elsewhere), 404);
    });

    it('the administration endpoints: each caller its own reach, others not found', async () => {
      const { accounts, tokens } = server.archive.services;
      const victim = await server.addAccountIn('victim', 'clerk', '130922101');
      const custom = await (
        await as.adminQ.json('/api/units', 'POST', { parentId: '130922', name: '矩阵测试科' })
      ).json();
      let n = 0;
      const fresh = () => `m${++n}`;
      const csv = (body: string) => ({ method: 'POST', headers: { 'content-type': 'text/csv' }, body });
      const matrix: Array<[string, (c: Client) => Promise<Response>, Record<Who, number>]> = [
        [
          'GET /api/health',
          (c) => c.fetch('/api/health'),
          { anonymous: 200, clerkQ: 200, adminQ: 200, adminD: 200, top: 200 },
        ],
        [
          'GET /api/session',
          (c) => c.fetch('/api/session'),
          { anonymous: 401, clerkQ: 200, adminQ: 200, adminD: 200, top: 200 },
        ],
        [
          'GET /api/units',
          (c) => c.fetch('/api/units'),
          { anonymous: 401, clerkQ: 200, adminQ: 200, adminD: 200, top: 200 },
        ],
        [
          'GET /api/units/:id',
          (c) => c.fetch('/api/units/130922101'),
          { anonymous: 401, clerkQ: 404, adminQ: 200, adminD: 404, top: 200 },
        ],
        [
          'GET /api/units/unmapped',
          (c) => c.fetch('/api/units/unmapped'),
          { anonymous: 401, clerkQ: 403, adminQ: 200, adminD: 200, top: 200 },
        ],
        [
          'POST /api/units',
          (c) => c.json('/api/units', 'POST', { parentId: '130922', name: fresh() }),
          { anonymous: 401, clerkQ: 403, adminQ: 201, adminD: 404, top: 201 },
        ],
        [
          'PATCH /api/units/:id',
          (c) => c.json(`/api/units/${custom.id}`, 'PATCH', { name: fresh() }),
          { anonymous: 401, clerkQ: 403, adminQ: 200, adminD: 404, top: 200 },
        ],
        [
          'GET /api/accounts',
          (c) => c.fetch('/api/accounts'),
          { anonymous: 401, clerkQ: 403, adminQ: 200, adminD: 200, top: 200 },
        ],
        [
          'POST /api/accounts',
          (c) => c.json('/api/accounts', 'POST', { username: fresh(), role: 'clerk', unitId: '130922101' }),
          { anonymous: 401, clerkQ: 403, adminQ: 201, adminD: 404, top: 201 },
        ],
        [
          'POST /api/accounts/import',
          (c) => c.fetch('/api/accounts/import', csv(`${fresh()},clerk,130922101\n`)),
          { anonymous: 401, clerkQ: 403, adminQ: 201, adminD: 400, top: 201 },
        ],
        [
          'PATCH /api/accounts/:id',
          (c) => c.json(`/api/accounts/${victim.id}`, 'PATCH', { role: 'clerk' }),
          { anonymous: 401, clerkQ: 403, adminQ: 200, adminD: 404, top: 200 },
        ],
        [
          'POST /api/accounts/:id/password-reset',
          (c) => c.json(`/api/accounts/${victim.id}/password-reset`, 'POST', {}),
          { anonymous: 401, clerkQ: 403, adminQ: 200, adminD: 404, top: 200 },
        ],
        [
          'POST /api/accounts/:id/unblock',
          (c) => c.json(`/api/accounts/${victim.id}/unblock`, 'POST', {}),
          { anonymous: 401, clerkQ: 403, adminQ: 200, adminD: 404, top: 200 },
        ],
        [
          'GET /api/tokens',
          (c) => c.fetch('/api/tokens?scope=reach'),
          { anonymous: 401, clerkQ: 200, adminQ: 200, adminD: 200, top: 200 },
        ],
        [
          'POST /api/tokens',
          (c) => c.json('/api/tokens', 'POST', { label: fresh() }),
          { anonymous: 401, clerkQ: 201, adminQ: 201, adminD: 201, top: 201 },
        ],
        [
          'DELETE /api/tokens/:id (another account’s)',
          async (c) => {
            const owner = (await accounts.get(victim.id))!;
            const { id } = await tokens.create(owner, { label: fresh() });
            return c.fetch(`/api/tokens/${id}`, { method: 'DELETE' });
          },
          { anonymous: 401, clerkQ: 404, adminQ: 204, adminD: 404, top: 204 },
        ],
      ];
      for (const [name, call, expected] of matrix)
        for (const who of WHO) {
          const res = await call(as[who]);
          assert.equal(res.status, expected[who], `${name} as ${who}: ${res.status} ${await res.text()}`);
        }
    });

    it('/api/verification: the top level starts the fixity check; each administrator hears of its reach’s damaged files', async () => {
      const expected: Record<Who, number> = { anonymous: 401, clerkQ: 403, adminQ: 200, adminD: 200, top: 200 };
      for (const who of WHO) await status(who, await as[who].fetch('/api/verification'), expected[who]);
      await damageContent(server.opened, fileQ, { kind: 'flip-byte', offset: 1_000 });
      await damageContent(server.opened, fileD, { kind: 'flip-byte', offset: 1_000 });
      const start: Record<Who, number> = { anonymous: 401, clerkQ: 403, adminQ: 403, adminD: 403, top: 202 };
      for (const who of WHO)
        await status(who, await as[who].fetch('/api/verification', { method: 'POST' }), start[who]);
      const last = async () => ((await (await as.top.fetch('/api/verification')).json()) as VerificationView).last;
      await until(async () => ((await last())?.state ?? 'running') !== 'running', 'the fixity check has finished');
      assert.equal((await last())?.state, 'failed');
      const damaged = async (who: Who) => {
        const view = (await (await as[who].fetch('/api/verification')).json()) as VerificationView;
        return [view.last!.problems.map((p) => p.fileId).sort(), view.last!.corrupted];
      };
      assert.deepEqual(await damaged('top'), [[fileQ, fileD].sort(), 2]);
      assert.deepEqual(await damaged('adminQ'), [[fileQ], 1]);
      assert.deepEqual(await damaged('adminD'), [[fileD], 1]);
    });

    // Last: it uploads more, which the counts of the tests above do not expect.
    it('a preview or download within a reach names the file as the reach’s list does: its latest upload there', async () => {
      // First stored by 东光县 under a name and type that cannot be shown; 青县 uploaded it as a PNG since.
      const bytes = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomContent(100)]);
      const clerkD = await server.login('clerkD');
      const stored = await clerkD.upload('扫描件.bin', bytes, {}, 'application/octet-stream');
      const fileId = ((await stored.json()) as { fileId: string }).fileId;
      await as.clerkQ.upload('合影.png', bytes, {}, 'image/png');
      const row = ((await (await as.adminQ.fetch('/api/files')).json()) as FileList).items.find(
        (f) => f.fileId === fileId,
      )!;
      assert.deepEqual([row.fileName, row.contentType], ['合影.png', 'image/png']);
      const shown = await status('adminQ', await as.adminQ.fetch(`/api/files/${fileId}?disposition=inline`), 200);
      assert.equal(shown.headers.get('content-type'), 'image/png');
      assert.match(shown.headers.get('content-disposition')!, /^inline; .*%E5%90%88%E5%BD%B1\.png/);
      await shown.arrayBuffer();
      // The whole archive's list names it by its catalog entry, so a preview there is refused as a listed one would be.
      await status('top', await as.top.fetch(`/api/files/${fileId}?disposition=inline`), 400);
      const adminD = await status('adminD', await as.adminD.fetch(`/api/files/${fileId}`), 200);
      assert.match(adminD.headers.get('content-disposition')!, /^attachment; .*\.bin/);
      await adminD.arrayBuffer();
    });
  });
}
