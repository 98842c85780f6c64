import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConflictError, UsernameTakenError } from '../../errors.js';
import {
  searchForm,
  type Account,
  type AccountPage,
  type ApiTokenRecord,
  type KeptImport,
  type NewAccount,
} from './port.js';
import { testAccount } from '../../../test/support/content.js';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';

/** What every store adapter's accounts must do (run against each adapter by test/store/). */
export function accountConformance(target: StoreTarget): void {
  conformanceSuite('accounts', target, (store) => {
    describe('login attempts', () => {
      const t0 = new Date('2026-05-01T00:00:00Z');
      const at = (ms: number) => new Date(t0.getTime() + ms);

      it('counts failures per key, keeps the last failure time, and forgets them on success', async () => {
        const first = await store.loginAttempts.fail('pair\nli\n10.0.0.1', at(0), at(60_000));
        assert.deepEqual([first.failures, first.lastFailureAt?.getTime(), first.knownUntil], [1, t0.getTime(), null]);
        const second = await store.loginAttempts.fail('pair\nli\n10.0.0.1', at(5_000), at(30_000));
        assert.deepEqual(
          [second.failures, second.lastFailureAt?.getTime(), second.expiresAt.getTime()],
          [2, at(5_000).getTime(), at(60_000).getTime()],
          'expiry never moves earlier',
        );
        assert.equal(
          (await store.loginAttempts.fail('account\nli', at(5_000), at(60_000))).failures,
          1,
          'keys are independent',
        );
        await store.loginAttempts.succeed('pair\nli\n10.0.0.1', at(1_000_000));
        const read = await store.loginAttempts.get(['pair\nli\n10.0.0.1', 'account\nli', 'nobody'], at(6_000));
        assert.deepEqual([...read.keys()].sort(), ['account\nli', 'pair\nli\n10.0.0.1']);
        assert.deepEqual(read.get('pair\nli\n10.0.0.1'), {
          failures: 0,
          lastFailureAt: null,
          knownUntil: at(1_000_000),
          expiresAt: at(1_000_000),
        });
        assert.equal(
          (await store.loginAttempts.fail('pair\nli\n10.0.0.1', at(7_000), at(60_000))).knownUntil?.getTime(),
          at(1_000_000).getTime(),
          'a failure keeps the pair known',
        );
      });

      it('starts an expired record again, and reads expired records as absent', async () => {
        await store.loginAttempts.fail('address\n10.9.9.9', at(0), at(10_000));
        await store.loginAttempts.fail('address\n10.9.9.9', at(1_000), at(10_000));
        assert.equal((await store.loginAttempts.get(['address\n10.9.9.9'], at(10_000))).size, 0);
        assert.equal((await store.loginAttempts.fail('address\n10.9.9.9', at(20_000), at(30_000))).failures, 1);
      });

      it('lists the live records, and forgets those of a prefix', async () => {
        await store.loginAttempts.fail('pair\nli\n\n10.0.0.1', at(0), at(60_000));
        await store.loginAttempts.fail('pair\nli\n\n10.0.0.2', at(0), at(60_000));
        await store.loginAttempts.fail('account\nli\n', at(0), at(60_000));
        await store.loginAttempts.fail('account\nli.si\n', at(0), at(60_000));
        await store.loginAttempts.fail('address\n10.0.0.1', at(0), at(1_000));
        assert.deepEqual([...(await store.loginAttempts.all(at(2_000))).keys()].sort(), [
          'account\nli\n',
          'account\nli.si\n',
          'pair\nli\n\n10.0.0.1',
          'pair\nli\n\n10.0.0.2',
        ]);
        await store.loginAttempts.forget(['pair\nli\n\n', 'account\nli\n', 'account\n.*']);
        assert.deepEqual([...(await store.loginAttempts.all(at(2_000))).keys()], ['account\nli.si\n']);
      });

      it('forgets the records expired at a time, and keeps the others (the garbage collector)', async () => {
        await store.loginAttempts.fail('address\n10.7.7.7', at(0), at(10_000));
        await store.loginAttempts.fail('address\n10.7.7.8', at(0), at(10_001));
        await store.loginAttempts.succeed('pair\nli\n\n10.7.7.9', at(5_000));
        assert.equal(await store.loginAttempts.purgeExpired(at(10_000)), 2);
        // Read at a time before either expired: only a record still there can answer.
        assert.deepEqual(
          [
            ...(
              await store.loginAttempts.get(['address\n10.7.7.7', 'address\n10.7.7.8', 'pair\nli\n\n10.7.7.9'], at(1))
            ).keys(),
          ],
          ['address\n10.7.7.8'],
        );
      });

      it('counts every one of concurrent failures', async () => {
        const together = await Promise.all(
          Array.from({ length: 10 }, () => store.loginAttempts.fail('account\nmany', at(0), at(60_000))),
        );
        assert.equal((await store.loginAttempts.get(['account\nmany'], at(1))).get('account\nmany')?.failures, 10);
        // (The MongoDB emulator's post-images may repeat a count under concurrency; a real server's do not.)
        for (const r of together) assert.ok(r.failures >= 1 && r.failures <= 10, String(r.failures));
      });
    });

    describe('rate counts', () => {
      it('counts hits per key and window, takes one back, and forgets a key', async () => {
        const w1 = new Date(Date.now() + 60_000);
        const w2 = new Date(Date.now() + 120_000);
        assert.deepEqual(
          [
            await store.rateCounts.hit('10.0.0.1', w1),
            await store.rateCounts.hit('10.0.0.1', w1),
            await store.rateCounts.hit('10.0.0.1', w1),
          ],
          [1, 2, 3],
        );
        assert.equal(await store.rateCounts.hit('10.0.0.2', w1), 1, 'keys are independent');
        assert.equal(await store.rateCounts.hit('10.0.0.1', w2), 1, 'a new window starts at one');
        await store.rateCounts.undo('10.0.0.1', w1);
        assert.equal(await store.rateCounts.hit('10.0.0.1', w1), 3);
        await store.rateCounts.reset('10.0.0.1');
        assert.equal(await store.rateCounts.hit('10.0.0.1', w1), 1);
        assert.equal(await store.rateCounts.hit('10.0.0.2', w1), 2, 'another key is untouched by a reset');
        const together = await Promise.all(Array.from({ length: 10 }, () => store.rateCounts.hit('::1', w1)));
        assert.deepEqual(
          [...together].sort((a, b) => a - b),
          [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
          'concurrent hits are each counted',
        );
        assert.deepEqual(
          [await store.rateCounts.hit('bulk', w1, 1000), await store.rateCounts.hit('bulk', w1, 5)],
          [1000, 1005],
          'a hit may count many',
        );
        assert.equal(await store.rateCounts.hit('bulk', w1, -1000), 5, 'a negative hit takes back');
      });

      it('forgets the windows that ended before a time, and keeps the later ones (the garbage collector)', async () => {
        const w1 = new Date('2026-11-29T08:01:00Z');
        const w2 = new Date('2026-11-29T08:02:00Z');
        await store.rateCounts.hit('quota\nchecks\nacc', w1, 7);
        await store.rateCounts.hit('quota\nchecks\nacc', w2, 3);
        assert.equal(await store.rateCounts.purgeEnded(w2), 1);
        assert.equal(await store.rateCounts.hit('quota\nchecks\nacc', w1), 1, 'the ended window starts again');
        assert.equal(await store.rateCounts.hit('quota\nchecks\nacc', w2), 4, 'the later window is kept');
      });
    });

    describe('accounts, sessions and tokens', () => {
      const newAccount = (username: string) => testAccount({ username });
      const token = (id: string, accountId: string): ApiTokenRecord => ({
        id,
        accountId,
        secretHash: 'f'.repeat(64),
        label: '',
        createdAt: new Date(),
        expiresAt: null,
        lastUsedAt: null,
        scopes: [],
      });

      it('creates, finds and lists accounts, and refuses a taken username', async () => {
        const a = newAccount('王五');
        await store.accounts.create(a);
        assert.equal((await store.accounts.findByUsername('王五'))?.id, a.id);
        assert.deepEqual((await store.accounts.get(a.id))?.unit, a.unit);
        assert.equal(await store.accounts.count(), 1);
        await assert.rejects(store.accounts.create({ ...newAccount('王五') }), ConflictError);
        assert.equal((await store.accounts.list()).length, 1);
      });

      describe('a page of the accounts a selection takes', () => {
        const town = (id: string) => ({ id, geoType: 'town' as const, city: '沧州市', county: '青县', town: id });
        const names = ['Wang', 'li', 'zhao', '孙', 'Zhou', 'wu', 'zheng', 'feng'];
        const setUp = async () => {
          const made = names.map((username, i) =>
            testAccount({
              username,
              unit: town(`u${i % 3}`),
              role: i === 7 ? 'admin' : 'clerk',
              displayName: i === 3 ? '孙小明' : i === 4 ? 'Zhou Ming' : null,
              disabled: i === 5,
              mustChangePassword: i === 6,
            }),
          );
          for (const a of made) await store.accounts.create(a);
          return made;
        };
        const usernames = (page: { items: Account[] }) => page.items.map((a) => a.username);

        it('pages every account by username key, and counts them all', async () => {
          await setUp();
          const byKey = ['feng', 'li', 'Wang', 'wu', 'zhao', 'zheng', 'Zhou', '孙'];
          assert.deepEqual(usernames(await store.accounts.page({}, 0, 100)), byKey);
          const second = await store.accounts.page({}, 3, 3);
          assert.deepEqual([usernames(second), second.total], [byKey.slice(3, 6), 8]);
          assert.deepEqual(await store.accounts.page({}, 8, 3), { items: [], total: 8, capped: false });
        });

        it('takes the accounts of some units, of a role, of a state', async () => {
          await setUp();
          const some = await store.accounts.page({ units: ['u0', 'u2'] }, 0, 100);
          assert.deepEqual([usernames(some), some.total], [['Wang', 'wu', 'zhao', 'zheng', '孙'], 5]);
          assert.deepEqual(usernames(await store.accounts.page({ units: [] }, 0, 100)), []);
          assert.deepEqual(usernames(await store.accounts.page({ role: 'admin' }, 0, 100)), ['feng']);
          assert.deepEqual(usernames(await store.accounts.page({ disabled: true }, 0, 100)), ['wu']);
          assert.deepEqual(
            usernames(await store.accounts.page({ disabled: false, mustChangePassword: true }, 0, 100)),
            ['zheng'],
          );
          const keys = await store.accounts.page({ usernameKeys: { in: ['li', 'zhou'] } }, 0, 100);
          assert.deepEqual(usernames(keys), ['li', 'Zhou']);
          const others = await store.accounts.page(
            { disabled: false, mustChangePassword: false, usernameKeys: { notIn: ['li', 'zhou'] } },
            0,
            100,
          );
          assert.deepEqual(usernames(others), ['feng', 'Wang', 'zhao', '孙']);
        });

        it('finds a part of a username or a display name, in any case, or an account of the units named', async () => {
          await setUp();
          const text = (q: string, units: string[] = []) =>
            store.accounts.page({ text: { part: searchForm(q), units } }, 0, 100);
          assert.deepEqual(usernames(await text('zh')), ['zhao', 'zheng', 'Zhou']);
          assert.deepEqual(usernames(await text('ming')), ['Zhou'], 'a display name, in another case');
          assert.deepEqual(usernames(await text('小明')), ['孙']);
          assert.deepEqual(usernames(await text('nobody', ['u1'])), ['feng', 'li', 'Zhou']);
          assert.deepEqual(usernames(await text('.*')), [], 'a pattern is text');
          const both = await store.accounts.page({ units: ['u1'], text: { part: 'zh', units: [] } }, 0, 100);
          assert.deepEqual(usernames(both), ['Zhou'], 'every part of a selection applies');
        });

        it('finds a part of one to three characters or longer anywhere in a name, never across the two names', async () => {
          await setUp();
          const text = async (q: string) => {
            const page = await store.accounts.page({ text: { part: searchForm(q), units: [] } }, 0, 100);
            return [usernames(page), page.total];
          };
          assert.deepEqual(await text('g'), [['feng', 'Wang', 'zheng', 'Zhou'], 4], 'one letter, at the end too');
          assert.deepEqual(await text('ng'), [['feng', 'Wang', 'zheng', 'Zhou'], 4], 'two letters ending a name');
          assert.deepEqual(await text('ENG'), [['feng', 'zheng'], 2], 'three, in another case');
          assert.deepEqual(await text('heng'), [['zheng'], 1], 'four: all its pieces, then the whole');
          assert.deepEqual(await text('ｚｈｏｕ ｍ'), [['Zhou'], 1], 'full-width letters and a space, in a name');
          assert.deepEqual(await text('小明'), [['孙'], 1]);
          assert.deepEqual(await text('孙小'), [['孙'], 1]);
          assert.deepEqual(await text('孙孙'), [[], 0], 'a username and a display name are not one text');
          assert.deepEqual(await text('ngzh'), [[], 0], 'all the pieces of "ngzh" are nowhere together');
        });

        it('searches a display name as it is now: a new one found, the old one no more', async () => {
          const [, , , , zhou] = await setUp();
          const text = async (q: string) =>
            usernames(await store.accounts.page({ text: { part: searchForm(q), units: [] } }, 0, 100));
          await store.accounts.update(zhou!.id, { displayName: '钱 Qian' });
          assert.deepEqual([await text('ming'), await text('qian'), await text('钱')], [[], ['Zhou'], ['Zhou']]);
          await store.accounts.update(zhou!.id, { role: 'admin' });
          assert.deepEqual(await text('qian'), ['Zhou'], 'a change of something else keeps it');
          await store.accounts.update(zhou!.id, { displayName: null });
          assert.deepEqual([await text('qian'), await text('zhou')], [[], ['Zhou']], 'no name: the username only');
        });

        it('counts a selection up to the limit it is given, and says when there are more; all accounts exactly', async () => {
          await setUp();
          const counted = (page: AccountPage) => [usernames(page), page.total, page.capped];
          assert.deepEqual(counted(await store.accounts.page({ role: 'clerk' }, 0, 2, 5)), [['li', 'Wang'], 5, true]);
          assert.deepEqual(counted(await store.accounts.page({ role: 'clerk' }, 5, 5, 7)), [['Zhou', '孙'], 7, false]);
          assert.deepEqual(counted(await store.accounts.page({}, 0, 1, 5)), [['feng'], 8, false], 'all: exact');
          const clerks = await store.accounts.page({ role: 'clerk' }, 0, 1, 0);
          assert.deepEqual([usernames(clerks), clerks.total, clerks.capped], [['li'], 0, true], 'no count at all');
        });

        it('reads the accounts of some ids at once', async () => {
          const [wang, li] = await setUp();
          const found = await store.accounts.getMany([li!.id, wang!.id, li!.id, 'nobody']);
          assert.deepEqual(found.map((a) => a.username).sort(), ['Wang', 'li']);
          assert.deepEqual(await store.accounts.getMany([]), []);
        });
      });

      describe('a search among thousands of accounts', () => {
        // More than the embedded store's probe (2,000): a common part is walked in name order, a rare one looked up.
        const many = Array.from({ length: 2_400 }, (_, i) =>
          testAccount({
            username: `clerk${String(i).padStart(4, '0')}`,
            unit: { id: `t${i % 40}`, geoType: 'town' as const, city: '沧州市', county: '青县', town: `t${i % 40}` },
            displayName: i % 100 === 7 ? `张${i}` : null,
          }),
        );
        const setUp = async () => {
          for (let from = 0; from < many.length; from += 1000) {
            const batch = many.slice(from, from + 1000);
            await store.accounts.createMany(batch, {
              id: `search-${from}`,
              accountId: 'admin',
              createdAt: new Date(),
              expiresAt: new Date(Date.now() + 60_000),
              accounts: [],
            });
          }
        };
        const search = (part: string, units: string[] = [], offset = 0, limit = 5) =>
          store.accounts.page({ text: { part, units } }, offset, limit, 1_000);
        const usernames = (page: { items: Account[] }) => page.items.map((a) => a.username);

        it('pages a common part in name order, and counts it up to the limit', async () => {
          await setUp();
          const first = await search('clerk');
          assert.deepEqual(
            [usernames(first), first.total, first.capped],
            [['clerk0000', 'clerk0001', 'clerk0002', 'clerk0003', 'clerk0004'], 1_000, true],
          );
          const later = await search('clerk', [], 2_398);
          assert.deepEqual(usernames(later), ['clerk2398', 'clerk2399']);
          const ones = await search('1', [], 0, 3);
          assert.deepEqual(usernames(ones), ['clerk0001', 'clerk0010', 'clerk0011'], 'a common single character');
        });

        it('pages a part clustered in name order from its first account, and counts it exactly under the limit', async () => {
          await setUp();
          // clerk0100…clerk0199: every piece of "clerk01" but "k01" is in most names, from the first on.
          const clustered = await search('clerk01');
          assert.deepEqual(
            [usernames(clustered), clustered.total, clustered.capped],
            [['clerk0100', 'clerk0101', 'clerk0102', 'clerk0103', 'clerk0104'], 100, false],
          );
          assert.deepEqual(usernames(await search('clerk01', [], 97)), ['clerk0197', 'clerk0198', 'clerk0199']);
          const three = await search('k01', [], 0, 2);
          assert.deepEqual([usernames(three), three.total], [['clerk0100', 'clerk0101'], 100], 'three characters');
          const thousand = await search('clerk0', [], 998, 5);
          assert.deepEqual(
            [usernames(thousand), thousand.total, thousand.capped],
            [['clerk0998', 'clerk0999'], 1_000, false],
            'as many as the limit: counted, not capped',
          );
          const late = await search('lerk23', [], 0, 3);
          assert.deepEqual([usernames(late), late.total], [['clerk2300', 'clerk2301', 'clerk2302'], 100]);
          const capped = await store.accounts.page({ text: { part: 'clerk2', units: [] } }, 0, 2, 300);
          assert.deepEqual([usernames(capped), capped.total, capped.capped], [['clerk2000', 'clerk2001'], 300, true]);
          const display = await search('张230', [], 0, 100);
          assert.deepEqual(usernames(display), ['clerk2307'], 'a display name: 张2307');
        });

        it('finds a rare part, short or long, and the accounts of the units named, each once', async () => {
          await setUp();
          const rare = await search('clerk1234');
          assert.deepEqual([usernames(rare), rare.total, rare.capped], [['clerk1234'], 1, false]);
          const short = await search('999', [], 0, 100);
          assert.deepEqual(usernames(short), ['clerk0999', 'clerk1999']);
          const names = await search('张2', [], 0, 100);
          assert.deepEqual(
            usernames(names),
            ['clerk0207', 'clerk2007', 'clerk2107', 'clerk2207', 'clerk2307'],
            '张207…',
          );
          const units = await search('clerk239', ['t3'], 0, 100);
          assert.equal(units.total, 60 + 10, 't3 has 60 accounts; clerk2390 to clerk2399 are not among them');
          assert.deepEqual(usernames(units).slice(0, 3), ['clerk0003', 'clerk0043', 'clerk0083']);
          const none = await search('nobody');
          assert.deepEqual([usernames(none), none.total], [[], 0]);
        });
      });

      it('takes usernames as people read them: another case or width of a taken one is taken, and finds it', async () => {
        const a = newAccount('Zhang.San');
        await store.accounts.create(a);
        for (const same of ['zhang.san', 'ZHANG.SAN', 'Ｚｈａｎｇ．Ｓａｎ']) {
          await assert.rejects(store.accounts.create(newAccount(same)), ConflictError, same);
          assert.equal((await store.accounts.findByUsername(same))?.id, a.id, same);
        }
        assert.equal(await store.accounts.count(), 1);
        assert.equal(await store.accounts.findByUsername('zhang.si'), undefined);
      });

      describe('an import: its accounts created together, its answer kept once', () => {
        const t0 = new Date('2026-11-25T08:00:00Z');
        const inHours = (h: number) => new Date(t0.getTime() + h * 3600_000);
        const keptFor = (id: string, accountId: string, accounts: NewAccount[]): KeptImport => ({
          id,
          accountId,
          createdAt: t0,
          expiresAt: inHours(24),
          accounts: accounts.map((a) => ({
            username: a.username,
            displayName: a.displayName,
            role: a.role,
            unitText: '青县 / 清州镇',
            oneTimePassword: `otp-of-${a.username}`,
          })),
        });

        it('creates every account and keeps the answer for its administrator, handed over once', async () => {
          const accounts = ['imp1', 'imp2', 'imp3'].map(newAccount);
          const kept = keptFor('import-1', 'admin-1', accounts);
          await store.accounts.createMany(accounts, kept);
          assert.deepEqual(
            (await store.accounts.list()).map((a) => a.username),
            ['imp1', 'imp2', 'imp3'],
          );
          assert.deepEqual(await store.accounts.get(accounts[1]!.id), accounts[1]);
          assert.deepEqual(await store.accounts.keptImports('admin-1', inHours(1)), [
            { id: 'import-1', accountId: 'admin-1', createdAt: t0, expiresAt: inHours(24), count: 3 },
          ]);
          assert.deepEqual(
            await store.accounts.keptImports('admin-2', inHours(1)),
            [],
            'another’s imports are not listed',
          );
          assert.equal(await store.accounts.takeKeptImport('import-1', 'admin-2', inHours(1)), undefined, 'nor given');
          assert.deepEqual(await store.accounts.takeKeptImport('import-1', 'admin-1', inHours(1)), kept);
          assert.equal(await store.accounts.takeKeptImport('import-1', 'admin-1', inHours(1)), undefined, 'once');
          assert.deepEqual(await store.accounts.keptImports('admin-1', inHours(1)), []);
        });

        it('gives a kept answer to one of two takes at once, and none once it expired', async () => {
          await store.accounts.createMany([newAccount('imp4')], keptFor('import-2', 'admin-1', []));
          const takes = await Promise.all([1, 2].map(() => store.accounts.takeKeptImport('import-2', 'admin-1', t0)));
          assert.equal(takes.filter((t) => t !== undefined).length, 1);
          await store.accounts.createMany([newAccount('imp5')], keptFor('import-3', 'admin-1', []));
          assert.deepEqual(await store.accounts.keptImports('admin-1', inHours(24)), [], 'expired at expiresAt');
          assert.equal(await store.accounts.takeKeptImport('import-3', 'admin-1', inHours(24)), undefined);
        });

        it('forgets the answers expired at a time, one-time passwords and all, and keeps the others', async () => {
          await store.accounts.createMany([newAccount('imp6')], keptFor('import-4', 'admin-1', []));
          await store.accounts.createMany([newAccount('imp7')], {
            ...keptFor('import-5', 'admin-1', []),
            expiresAt: inHours(25),
          });
          assert.equal(await store.accounts.purgeExpiredImports(inHours(24)), 1);
          assert.deepEqual(
            (await store.accounts.keptImports('admin-1', inHours(1))).map((k) => k.id),
            ['import-5'],
          );
          assert.equal(await store.accounts.takeKeptImport('import-4', 'admin-1', inHours(1)), undefined, 'gone');
        });

        it('creates none of them, and keeps nothing, when one username is taken (any case or width)', async () => {
          await store.accounts.create(newAccount('Taken.Name'));
          const accounts = ['fresh1', 'fresh2', 'ＴＡＫＥＮ．ｎａｍｅ', 'fresh3'].map(newAccount);
          const refused = await store.accounts.createMany(accounts, keptFor('import-4', 'admin-1', accounts)).then(
            () => undefined,
            (err: unknown) => err,
          );
          assert.ok(refused instanceof UsernameTakenError, String(refused));
          assert.equal(refused.username, 'ＴＡＫＥＮ．ｎａｍｅ');
          assert.deepEqual(
            (await store.accounts.list()).map((a) => a.username),
            ['Taken.Name'],
          );
          for (const a of accounts) assert.equal(await store.accounts.get(a.id), undefined, a.username);
          assert.deepEqual(await store.accounts.keptImports('admin-1', t0), []);
          assert.equal(await store.accounts.takeKeptImport('import-4', 'admin-1', t0), undefined);
        });

        it('creates none of them when two of the set share a username’s key', async () => {
          const accounts = ['same', 'other', 'SAME'].map(newAccount);
          await assert.rejects(store.accounts.createMany(accounts, keptFor('import-5', 'admin-1', accounts)), {
            username: 'SAME',
          });
          assert.equal(await store.accounts.count(), 0);
        });

        it('tells which of many usernames are taken, exactly or by key, in one call', async () => {
          await store.accounts.create(newAccount('Wang.Wu'));
          await store.accounts.create(newAccount('li'));
          assert.deepEqual(await store.accounts.takenUsernames([]), new Set());
          assert.deepEqual(
            [...(await store.accounts.takenUsernames(['wang.wu', 'li', 'zhao', 'ＬＩ', 'Wang.Wu']))].sort(),
            ['li', 'wang.wu', 'Wang.Wu', 'ＬＩ'].sort(),
          );
        });
      });

      it('changes a password and whether it must be changed', async () => {
        const a = newAccount('li');
        await store.accounts.create(a);
        await store.accounts.setPassword(a.id, 'scrypt$new', true);
        const changed = await store.accounts.get(a.id);
        assert.deepEqual([changed?.passwordHash, changed?.mustChangePassword], ['scrypt$new', true]);
      });

      it('changes an account’s role, unit and whether it is disabled, and notes its last login', async () => {
        const a = newAccount('zhao');
        await store.accounts.create(a);
        assert.deepEqual([a.disabled, a.lastLoginAt], [false, null]);
        const town = { id: '130922100', geoType: 'town' as const, city: '沧州市', county: '青县', town: '清州镇' };
        await store.accounts.update(a.id, { role: 'admin', unit: town });
        await store.accounts.update(a.id, { disabled: true });
        const at = new Date('2026-05-01T08:00:00Z');
        await store.accounts.recordLogin(a.id, at);
        const changed = await store.accounts.get(a.id);
        assert.deepEqual(
          [changed?.role, changed?.unit, changed?.disabled, changed?.lastLoginAt],
          ['admin', town, true, at],
        );
        await store.accounts.update(a.id, { disabled: false });
        assert.equal((await store.accounts.get(a.id))?.disabled, false);
        assert.equal((await store.accounts.get(a.id))?.role, 'admin', 'what a patch leaves out stays');
      });

      it('keeps an account’s display name, changes and removes it, and leaves it alone when a patch says nothing of it', async () => {
        const named = testAccount({ username: 'zhang', displayName: '张三' });
        const unnamed = newAccount('li.si');
        await store.accounts.create(named);
        await store.accounts.create(unnamed);
        assert.equal((await store.accounts.get(named.id))?.displayName, '张三');
        assert.equal((await store.accounts.findByUsername('ZHANG'))?.displayName, '张三');
        assert.equal((await store.accounts.get(unnamed.id))?.displayName, null, 'none given: null');
        await store.accounts.update(unnamed.id, { displayName: '李四' });
        await store.accounts.update(unnamed.id, { role: 'admin' });
        assert.deepEqual(
          (await store.accounts.list()).map((a) => [a.username, a.displayName, a.role]),
          [
            ['li.si', '李四', 'admin'],
            ['zhang', '张三', 'clerk'],
          ],
        );
        await store.accounts.update(named.id, { displayName: null });
        assert.equal((await store.accounts.get(named.id))?.displayName, null, 'removed');
        await store.accounts.update(named.id, { disabled: true, displayName: '张三丰' });
        const both = await store.accounts.get(named.id);
        assert.deepEqual([both?.displayName, both?.disabled], ['张三丰', true], 'a name changes with other fields');
      });

      it('looks up the display names of many logins at once: exact logins with a name only', async () => {
        await store.accounts.create(testAccount({ username: 'wang', displayName: '王五' }));
        await store.accounts.create(testAccount({ username: 'zhao', displayName: '赵六' }));
        await store.accounts.create(newAccount('qian'));
        assert.deepEqual(await store.accounts.displayNames([]), new Map());
        const names = await store.accounts.displayNames(['wang', 'qian', 'nobody', 'ZHAO', 'zhao', 'wang']);
        assert.deepEqual(
          [...names].sort(),
          [
            ['wang', '王五'],
            ['zhao', '赵六'],
          ],
          'no name, no account and another case of a login are left out',
        );
      });

      it('keeps sessions until they expire or are deleted', async () => {
        const now = new Date();
        const later = new Date(now.getTime() + 60_000);
        const s = { idHash: 'h1', accountId: 'acc', csrfToken: 'c', createdAt: now, expiresAt: later };
        await store.sessions.create(s);
        await store.sessions.create({ ...s, idHash: 'h2' });
        await store.sessions.create({ ...s, idHash: 'other', accountId: 'acc2' });
        assert.equal((await store.sessions.get('h1', now))?.csrfToken, 'c');
        assert.equal(await store.sessions.get('h1', later), undefined);
        await store.sessions.delete('h1');
        assert.equal(await store.sessions.get('h1', now), undefined);
        await store.sessions.deleteForAccount('acc');
        assert.equal(await store.sessions.get('h2', now), undefined);
        await store.sessions.purgeExpired(later);
        assert.equal(await store.sessions.get('other', now), undefined);
      });

      it('creates, lists, notes the use of and revokes API tokens', async () => {
        const createdAt = new Date('2026-05-01T00:00:00Z');
        const expiresAt = new Date('2026-06-01T00:00:00Z');
        const t = { ...token('abc', 'acc'), label: 'scanner', createdAt, expiresAt, scopes: ['tokens' as const] };
        await store.tokens.create(t);
        assert.deepEqual(await store.tokens.get('abc'), t);
        const used = new Date('2026-05-02T00:00:00Z');
        await store.tokens.touch('abc', used);
        assert.deepEqual(await store.tokens.get('abc'), { ...t, lastUsedAt: used });
        assert.deepEqual(
          (await store.tokens.list()).map((x) => x.id),
          ['abc'],
        );
        assert.equal(await store.tokens.revoke('abc'), true);
        assert.equal(await store.tokens.revoke('abc'), false);
        assert.equal(await store.tokens.get('abc'), undefined);
      });

      it('keeps the scopes a token was made with', async () => {
        const [first, second] = [new Date('2026-05-01T00:00:00Z'), new Date('2026-05-02T00:00:00Z')];
        await store.tokens.create({ ...token('both', 'acc'), scopes: ['tokens', 'accounts'], createdAt: first });
        await store.tokens.create({ ...token('none', 'acc'), createdAt: second });
        assert.deepEqual((await store.tokens.get('both'))?.scopes, ['tokens', 'accounts']);
        assert.deepEqual((await store.tokens.get('none'))?.scopes, []);
        assert.deepEqual(
          (await store.tokens.list()).map((t) => t.scopes),
          [['tokens', 'accounts'], []],
        );
      });

      it("counts an account's working tokens: the expired and other accounts' left out", async () => {
        const now = new Date('2026-05-10T00:00:00Z');
        await store.tokens.create(token('forever', 'acc1'));
        await store.tokens.create({ ...token('later', 'acc1'), expiresAt: new Date('2026-05-11T00:00:00Z') });
        await store.tokens.create({ ...token('ended', 'acc1'), expiresAt: new Date('2026-05-09T00:00:00Z') });
        await store.tokens.create({ ...token('at-now', 'acc1'), expiresAt: now });
        await store.tokens.create(token('other', 'acc2'));
        assert.equal(await store.tokens.countLive('acc1', now), 2);
        assert.equal(await store.tokens.countLive('acc2', now), 1);
        assert.equal(await store.tokens.countLive('nobody', now), 0);
        await store.tokens.revoke('forever');
        assert.equal(await store.tokens.countLive('acc1', now), 1);
      });

      it("lists the tokens of some accounts, or of some units' accounts, and counts a page's working tokens at once", async () => {
        const now = new Date('2026-05-10T00:00:00Z');
        const town = (id: string) => ({ id, geoType: 'town' as const, city: '沧州市', county: '青县', town: id });
        const [a, b, c] = [
          testAccount({ unit: town('u-a') }),
          testAccount({ unit: town('u-b') }),
          testAccount({ unit: town('u-b') }),
        ];
        for (const x of [a, b, c]) await store.accounts.create(x);
        const at = (day: number) => new Date(Date.UTC(2026, 4, day));
        await store.tokens.create({ ...token('a1', a.id), createdAt: at(1) });
        await store.tokens.create({ ...token('b1', b.id), createdAt: at(2) });
        await store.tokens.create({ ...token('b2', b.id), createdAt: at(3), expiresAt: at(4) });
        await store.tokens.create({ ...token('c1', c.id), createdAt: at(4) });
        const ids = (tokens: ApiTokenRecord[]) => tokens.map((t) => t.id);
        assert.deepEqual(ids(await store.tokens.list({ accounts: [b.id] })), ['b1', 'b2']);
        assert.deepEqual(ids(await store.tokens.list({ accounts: [] })), []);
        assert.deepEqual(ids(await store.tokens.list({ units: ['u-b'] })), ['b1', 'b2', 'c1']);
        assert.deepEqual(ids(await store.tokens.list({ units: ['u-a', 'elsewhere'] })), ['a1']);
        assert.deepEqual(ids(await store.tokens.list()), ['a1', 'b1', 'b2', 'c1']);
        const counts = await store.tokens.liveCounts([a.id, b.id, 'nobody'], now);
        assert.deepEqual(
          [...counts].sort(),
          [
            [a.id, 1],
            [b.id, 1],
          ].sort(),
          'b2 expired; c is not asked for; nobody has none',
        );
      });

      it('forgets the tokens expired at or before a time, and keeps later and never-expiring ones', async () => {
        const at = (day: number) => new Date(Date.UTC(2026, 4, day));
        await store.tokens.create({ ...token('long-ago', 'acc1'), expiresAt: at(1) });
        await store.tokens.create({ ...token('at-the-time', 'acc1'), expiresAt: at(5) });
        await store.tokens.create({ ...token('later', 'acc2'), expiresAt: at(6) });
        await store.tokens.create(token('forever', 'acc2'));
        assert.equal(await store.tokens.purgeExpired(at(5)), 2);
        assert.deepEqual((await store.tokens.list()).map((x) => x.id).sort(), ['forever', 'later']);
        assert.equal(await store.tokens.purgeExpired(at(5)), 0, 'nothing more to forget');
      });

      it('revokes every token of one account, and only those', async () => {
        for (const t of [token('t1', 'acc1'), token('t2', 'acc1'), token('t3', 'acc2')]) await store.tokens.create(t);
        assert.equal(await store.tokens.revokeForAccount('acc1'), 2);
        assert.equal(await store.tokens.revokeForAccount('acc1'), 0);
        assert.deepEqual(
          (await store.tokens.list()).map((x) => x.id),
          ['t3'],
        );
      });
    });
  });
}
