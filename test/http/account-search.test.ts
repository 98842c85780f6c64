import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AccountList } from '../../shared/accounts.js';
import { geographyOf } from '../../server/services/unit-directory.js';
import { testAccount } from '../support/content.js';
import { body, Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * `GET /api/accounts` over more accounts than it counts (issue 43): 1,020 clerks in 青县's towns,
 * a few in 东光县, each administrator within its reach. Who is who:
 * - top: the archive's top-level administrator; qing: of 青县; dongguang: of 东光县;
 * - clerk00000…clerk01019: clerks of 青县's towns (every hundredth named 张…);
 * - dong1…dong3: clerks of 东光镇, dong2 named 李明 (its name typed in full width in one search).
 */
type Who = 'anonymous' | 'dong1' | 'qing' | 'dongguang' | 'top';
const QINGXIAN = '130922';
const DONGGUANG = '130923';
const DONGGUANG_TOWN = '130923100';
const CLERKS = 1_020;

for (const target of storeTargets) {
  describe(`GET /api/accounts past its count (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;

    before(async () => {
      server = await TestServer.start(target);
      const { directory } = server.archive.services;
      await directory.load(['13']);
      await server.addAccountIn('top', 'admin', 'archive');
      await server.addAccountIn('qing', 'admin', QINGXIAN);
      await server.addAccountIn('dongguang', 'admin', DONGGUANG);
      for (const [name, displayName] of [
        ['dong1', null],
        ['dong2', '李明'],
        ['dong3', 'Li Ming'],
      ] as const) {
        const account = await server.addAccountIn(name, 'clerk', DONGGUANG_TOWN);
        if (displayName) await server.store.accounts.update(account.id, { displayName });
      }
      // The clerks straight into the store, an import's way (a thousand at a time).
      const qingxian = await directory.unitIdsIn({ kind: 'subtree', root: (await directory.get(QINGXIAN))! });
      const towns = (await directory.getMany(qingxian))
        .filter((u) => u.level === 'town')
        .sort((a, b) => (a.id < b.id ? -1 : 1));
      for (let from = 0; from < CLERKS; from += 1000) {
        const made = Array.from({ length: Math.min(1000, CLERKS - from) }, (_, k) => {
          const i = from + k;
          return testAccount({
            username: `clerk${String(i).padStart(5, '0')}`,
            unit: geographyOf(towns[i % towns.length]!),
            displayName: i % 100 === 0 ? `张${i}` : null,
          });
        });
        await server.store.accounts.createMany(made, {
          id: `seed-${from}`,
          accountId: 'seed',
          createdAt: new Date(),
          expiresAt: new Date(Date.now() + 60_000),
          accounts: [],
        });
      }
      as = await server.loginAll(['dong1', 'qing', 'dongguang', 'top']);
    });
    after(() => server.close());

    const list = async (who: Who, query: string) =>
      body<AccountList>(await as[who].fetch(`/api/accounts?${query}`), 200);
    const names = (page: AccountList) => page.items.map((a) => a.username);

    it('counts a filter to 1,000 and says there are more; the pages go on past it, in name order', async () => {
      const all = await list('top', 'limit=50');
      assert.deepEqual([all.total, all.totalCapped, all.items.length], [CLERKS + 6, false, 50], 'all: exactly');
      const deep = await list('top', 'limit=3&offset=1010&role=clerk');
      assert.deepEqual(names(deep), ['clerk01010', 'clerk01011', 'clerk01012'], 'a page beyond the count');
      assert.deepEqual([deep.total, deep.totalCapped, deep.offset, deep.limit], [1_000, true, 1_010, 3]);
      const last = await list('top', `limit=50&offset=${CLERKS + 2}`);
      assert.deepEqual(names(last), ['dong3', 'dongguang', 'qing', 'top'], 'every account, once');
      const qing = await list('qing', 'limit=2');
      assert.deepEqual([names(qing), qing.total, qing.totalCapped], [['clerk00000', 'clerk00001'], 1_000, true]);
    });

    it('counts a narrower selection exactly', async () => {
      const dong = await list('dongguang', 'limit=50');
      assert.deepEqual(
        [names(dong), dong.total, dong.totalCapped],
        [['dong1', 'dong2', 'dong3', 'dongguang'], 4, false],
      );
      const admins = await list('top', 'limit=50&role=admin');
      assert.deepEqual([names(admins), admins.total, admins.totalCapped], [['dongguang', 'qing', 'top'], 3, false]);
      const rare = await list('top', 'q=clerk0099');
      assert.deepEqual(
        [names(rare), rare.total],
        [
          [
            'clerk00990',
            'clerk00991',
            'clerk00992',
            'clerk00993',
            'clerk00994',
            'clerk00995',
            'clerk00996',
            'clerk00997',
            'clerk00998',
            'clerk00999',
          ],
          10,
        ],
      );
    });

    it('finds a part of a username or a name, short or long, typed in any width, within the reach only', async () => {
      const q = (who: Who, text: string, more = '') => list(who, `limit=50&q=${encodeURIComponent(text)}${more}`);
      assert.deepEqual(names(await q('top', '张100')), ['clerk00100', 'clerk01000'], '张100 and 张1000');
      assert.deepEqual(names(await q('top', 'ＭＩＮＧ')), ['dong3'], 'a name typed in full-width capitals');
      assert.deepEqual(names(await q('top', 'ＬＩ明')), [], 'no account is named li明');
      assert.deepEqual(names(await q('top', '李明')), ['dong2']);
      assert.deepEqual(names(await q('top', 'ＤＯＮＧ2')), ['dong2'], 'a username typed in full width');
      assert.deepEqual(names(await q('qing', '李明')), [], 'an account outside the reach is not found');
      assert.deepEqual(names(await q('dongguang', 'clerk')), [], 'nor are the other county’s thousands');
      assert.deepEqual(names(await q('dongguang', 'g')), ['dong1', 'dong2', 'dong3', 'dongguang'], 'one letter');
      const common = await q('qing', 'clerk', '&offset=100');
      assert.deepEqual([names(common)[0], common.total, common.totalCapped], ['clerk00100', 1_000, true]);
      const county = await q('top', '东光');
      assert.deepEqual([names(county), county.total], [['dong1', 'dong2', 'dong3', 'dongguang'], 4], 'by its unit');
    });

    it('filters by role and state on top of the reach and a search', async () => {
      const dong2 = (await server.archive.services.accounts.getByUsername('dong2')).id;
      await body(await as.dongguang.json(`/api/accounts/${dong2}`, 'PATCH', { disabled: true }), 200);
      try {
        assert.deepEqual(names(await list('top', 'state=disabled')), ['dong2']);
        assert.deepEqual(names(await list('qing', 'state=disabled')), [], 'not in 青县');
        assert.deepEqual(names(await list('dongguang', 'state=active&role=clerk')), ['dong1', 'dong3']);
        const active = await list('top', 'state=active&role=clerk&limit=1');
        assert.deepEqual([names(active), active.total, active.totalCapped], [['clerk00000'], 1_000, true]);
        assert.deepEqual(names(await list('top', 'state=active&q=dong')), ['dong1', 'dong3', 'dongguang']);
      } finally {
        await body(await as.dongguang.json(`/api/accounts/${dong2}`, 'PATCH', { disabled: false }), 200);
      }
    });

    it('counts each row’s working tokens, and lists a reach’s tokens only', async () => {
      const dong1 = await server.archive.services.accounts.getByUsername('dong1');
      await server.tokenClient(dong1);
      await server.tokenClient(dong1);
      const [row] = (await list('dongguang', 'q=dong1')).items;
      assert.equal(row!.tokens, 2);
      const reachTokens = async (who: Who) =>
        (await body<{ items: { username: string }[] }>(await as[who].fetch('/api/tokens?scope=reach'), 200)).items.map(
          (t) => t.username,
        );
      assert.deepEqual(await reachTokens('dongguang'), ['dong1', 'dong1']);
      assert.deepEqual(await reachTokens('qing'), []);
      assert.deepEqual(await reachTokens('top'), ['dong1', 'dong1']);
      assert.deepEqual(await reachTokens('dong1'), ['dong1', 'dong1'], 'a clerk: its own');
      await body(await as.anonymous.fetch('/api/tokens?scope=reach'), 401);
    });

    it('answers a clerk 403 and the anonymous 401', async () => {
      await body(await as.dong1.fetch('/api/accounts?q=clerk'), 403);
      await body(await as.anonymous.fetch('/api/accounts?q=clerk'), 401);
    });

    it('lets a top-level administrator go while one of an earlier version, its unit outside the directory, stays', async () => {
      const top = (await server.archive.services.accounts.getByUsername('top')).id;
      // An administrator whose unit the directory does not have sees everything: a top-level one.
      const earlier = await server.addAccount('earlier', 'admin', 'unit-of-2019');
      const earlierClient = await server.login('earlier');
      await body(await earlierClient.json(`/api/accounts/${top}`, 'PATCH', { disabled: true }), 200);
      await body(await earlierClient.json(`/api/accounts/${top}`, 'PATCH', { disabled: false }), 200);
      as.top = await server.login('top');
      await body(await as.top.json(`/api/accounts/${earlier.id}`, 'PATCH', { disabled: true }), 200);
    });
  });
}
