import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AccountSummary, NewTokenView, OneTimePasswordView } from '../../shared/accounts.js';
import type { UnitView } from '../../shared/units.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * Every name a person types over the API (display names, unit names, token labels, the CSV
 * import's name column) is refused as a 400 naming the field, with nothing stored, when it holds
 * what shows as nothing or moves text about; usernames have their own, narrower rule. Hebei is
 * loaded; top: the top-level administrator; qing: administrator of 青县; clerk: a clerk of 清州镇.
 */
const QINGXIAN = '130922';
const QINGZHOU = '130922100';

/** Names every typed name refuses, and why. */
const HIDDEN: Array<[string, string]> = [
  ['清州\u2028镇', 'a line separator (U+2028)'],
  ['清州\u2029镇', 'a paragraph separator (U+2029)'],
  ['清州镇\u3164', 'a Hangul filler after an official name (U+3164)'],
  ['\u3164\u3164', 'Hangul fillers only: blank-looking'],
  ['\u2800', 'a braille blank only'],
  ['张\u202E三', 'a right-to-left override (U+202E)'],
  ['张\u200B三', 'a zero-width space (U+200B)'],
  ['张\uE000三', 'a private-use character (U+E000)'],
  ['张\u0378三', 'an unassigned code point (U+0378)'],
  ['\u0301', 'a combining mark with nothing to show'],
];
/** Names only a unit's name refuses: it becomes part of a path "… / …". */
const SLASHES: Array<[string, string]> = [
  ['青县\u2215清州镇', 'a division slash (U+2215)'],
  ['青县/清州镇', 'a solidus'],
  ['青县\uFF0F清州镇', 'a fullwidth solidus (U+FF0F)'],
  ['青县\u2044清州镇', 'a fraction slash (U+2044)'],
  ['青县\u29F8清州镇', 'a big solidus (U+29F8)'],
];

type Refusal = { error: string; message: string; details: { field: string } };

for (const target of storeTargets) {
  describe(`typed names over HTTP (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<'top' | 'qing' | 'clerk', Client>;

    before(async () => {
      server = await TestServer.start(target);
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('top', 'admin', 'archive');
      await server.addAccountIn('qing', 'admin', QINGXIAN);
      await server.addAccountIn('clerk', 'clerk', QINGZHOU);
      as = await server.loginAll(['top', 'qing', 'clerk']);
    });
    after(() => server.close());

    const accounts = async () => (await server.archive.services.accounts.list()).length;
    const account = (username: string) => server.archive.services.accounts.getByUsername(username);
    const children = async (parentId: string) =>
      (await server.store.units.find({ parentId, limit: 1000, offset: 0 })).items.map((u) => u.name).sort();
    const refused = async (res: Promise<Response>, field: string, why: string) => {
      const answer = await body<Refusal>(await res, 400);
      assert.equal(answer.error, 'validation_failed', why);
      assert.equal(answer.details.field, field, why);
      assert.match(answer.message, new RegExp(`^Invalid ${field}: a (unit )?name `), why);
      return answer;
    };

    describe('display names', () => {
      it('POST /api/accounts refuses them, naming displayName, creating nothing', async () => {
        const before = await accounts();
        for (const [displayName, why] of HIDDEN)
          await refused(
            as.qing.json('/api/accounts', 'POST', {
              username: 'hidden.name',
              displayName,
              role: 'clerk',
              unitId: QINGZHOU,
            }),
            'displayName',
            why,
          );
        assert.equal(await accounts(), before);
      });

      it('POST /api/accounts says where the hidden character is', async () => {
        const answer = await refused(
          as.qing.json('/api/accounts', 'POST', {
            username: 'filler',
            displayName: '王芳\u3164',
            role: 'clerk',
            unitId: QINGZHOU,
          }),
          'displayName',
          'a Hangul filler',
        );
        assert.match(answer.message, /character 3 is U\+3164\.$/);
      });

      it('POST /api/accounts keeps the name normalised: NFC, trimmed, one space for a run of them', async () => {
        const created = await body<OneTimePasswordView>(
          await as.qing.json('/api/accounts', 'POST', {
            username: 'jose',
            displayName: '\u3000Jose\u0301\u00A0\u00A0Garci\u0301a ',
            role: 'clerk',
            unitId: QINGZHOU,
          }),
          201,
        );
        assert.equal(created.account.displayName, 'Jos\u00E9 Garc\u00EDa');
        assert.equal((await account('jose')).displayName, 'Jos\u00E9 Garc\u00EDa');
      });

      it('PATCH /api/accounts/:id refuses them and leaves the name as it was', async () => {
        const clerk = await account('clerk');
        await body<AccountSummary>(
          await as.qing.json(`/api/accounts/${clerk.id}`, 'PATCH', { displayName: '李清' }),
          200,
        );
        for (const [displayName, why] of HIDDEN)
          await refused(as.qing.json(`/api/accounts/${clerk.id}`, 'PATCH', { displayName }), 'displayName', why);
        assert.equal((await account('clerk')).displayName, '李清');
      });

      it('PUT /api/session/name refuses them and leaves the owner’s name as it was', async () => {
        for (const [displayName, why] of HIDDEN)
          await refused(as.clerk.json('/api/session/name', 'PUT', { displayName }), 'displayName', why);
        assert.equal((await account('clerk')).displayName, '李清');
      });

      it('POST /api/accounts/import refuses a row whose name column holds one, creating nothing', async () => {
        const before = await accounts();
        const rows = HIDDEN.map(([name], i) => `imp${i},clerk,${QINGZHOU},"${name}"`).join('\n');
        const answer = await body<{ details: { rows: Array<{ line: number; codes: Array<{ code: string }> }> } }>(
          await as.qing.fetch('/api/accounts/import', {
            method: 'POST',
            headers: { 'content-type': 'text/csv' },
            body: `username,role,unit,name\n${rows}\n`,
          }),
          400,
        );
        assert.deepEqual(
          answer.details.rows.map((r) => [r.line, r.codes.map((c) => c.code)]),
          HIDDEN.map((_, i) => [i + 2, ['bad_name']]),
        );
        assert.equal(await accounts(), before);
      });
    });

    describe('usernames', () => {
      it('POST /api/accounts refuses a username with a hidden or blank-looking character', async () => {
        const before = await accounts();
        for (const username of ['clerk\u3164', 'cl\u200Berk', 'cl\u2028erk', '\u3164', 'cl\u202Eerk', 'cl\u2800erk']) {
          const answer = await body<Refusal>(
            await as.qing.json('/api/accounts', 'POST', { username, role: 'clerk', unitId: QINGZHOU }),
            400,
          );
          assert.equal(answer.details.field, 'username', JSON.stringify(username));
          assert.match(answer.message, /^Choose another username: /, JSON.stringify(username));
        }
        assert.equal(await accounts(), before);
      });
    });

    describe('unit names', () => {
      it('POST /api/units refuses a hidden character or a slash, naming the field, adding nothing', async () => {
        const before = await children(QINGXIAN);
        for (const [name, why] of [...HIDDEN, ...SLASHES])
          await refused(as.qing.json('/api/units', 'POST', { parentId: QINGXIAN, name }), 'name', why);
        assert.deepEqual(await children(QINGXIAN), before);
        assert.ok(before.includes('清州镇'), 'the official town is there, and no lookalike beside it');
        assert.equal(before.filter((n) => n.startsWith('清州镇')).length, 1);
      });

      it('POST /api/units takes two names that look alike as the same name: a conflict', async () => {
        const made = await body<UnitView>(
          await as.qing.json('/api/units', 'POST', { parentId: QINGXIAN, name: ' 档案  室 ' }),
          201,
        );
        assert.equal(made.name, '档案 室');
        for (const name of ['档案\u3000室', '档案\u00A0室', '档案 室'])
          await body(await as.qing.json('/api/units', 'POST', { parentId: QINGXIAN, name }), 409);
        assert.equal((await children(QINGXIAN)).filter((n) => n.startsWith('档案')).length, 1);
      });

      it('PATCH /api/units/:id refuses them and keeps the name', async () => {
        const unit = await body<UnitView>(
          await as.top.json('/api/units', 'POST', { parentId: QINGXIAN, name: '利用科' }),
          201,
        );
        for (const [name, why] of [...HIDDEN, ...SLASHES])
          await refused(as.qing.json(`/api/units/${unit.id}`, 'PATCH', { name }), 'name', why);
        assert.equal((await server.store.units.get(unit.id))!.name, '利用科');
        const renamed = await body<UnitView>(
          await as.qing.json(`/api/units/${unit.id}`, 'PATCH', { name: 'Lijiang\u0301 科' }),
          200,
        );
        assert.equal(renamed.name, 'Lijiang\u0301 科'.normalize('NFC'));
      });
    });

    describe('token labels', () => {
      it('POST /api/tokens refuses them, naming label, making no token', async () => {
        const before = (await server.store.tokens.list()).length;
        for (const [label, why] of HIDDEN) await refused(as.clerk.json('/api/tokens', 'POST', { label }), 'label', why);
        await refused(as.clerk.json('/api/tokens', 'POST', { label: 'x'.repeat(101) }), 'label', 'too long');
        assert.equal((await server.store.tokens.list()).length, before);
      });

      it('POST /api/tokens keeps a label normalised, and takes none', async () => {
        const labelled = await body<NewTokenView>(
          await as.clerk.json('/api/tokens', 'POST', { label: ' 二楼\u3000扫描仪\n' }),
          201,
        );
        assert.equal(labelled.view.label, '二楼 扫描仪');
        assert.equal((await body<NewTokenView>(await as.clerk.json('/api/tokens', 'POST', {}), 201)).view.label, '');
      });
    });
  });
}
