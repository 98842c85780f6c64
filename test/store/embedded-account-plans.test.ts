import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EmbeddedAccountStore } from '../../server/store/accounts/embedded.js';
import type { AccountSelection } from '../../server/store/accounts/port.js';
import type { Db } from '../../server/store/embedded/database.js';
import { openEmbeddedDatabase } from '../../server/store/embedded.js';
import { testAccount } from '../support/content.js';
import { tempDir } from '../support/stores.js';
import { watchedStatements, type RanStatement } from '../support/watched-statements.js';

/**
 * How the embedded store answers a page of accounts (issue 43: 100,000 accounts): each statement
 * it runs, asked of SQLite's planner. A rare selection is looked up in an index, never walked
 * through the accounts; a common one walks an index in name order, which its LIMIT stops.
 */
describe('the accounts page on the embedded store: every selection by an index', () => {
  let db: Db;
  let accounts: EmbeddedAccountStore;
  const ran: RanStatement[] = [];

  before(async () => {
    db = openEmbeddedDatabase(tempDir());
    // The store's statements, with the values they ran with, as they are prepared.
    const watched = watchedStatements(db, ran);
    accounts = new EmbeddedAccountStore(watched);
    const many = Array.from({ length: 3_000 }, (_, i) =>
      testAccount({
        username: `clerk${String(i).padStart(4, '0')}`,
        unit: { id: `t${i % 30}`, geoType: 'town', city: '沧州市', county: '青县', town: `t${i % 30}` },
        role: i % 500 === 0 ? 'admin' : 'clerk',
        disabled: i % 700 === 0,
        displayName: i % 100 === 0 ? `张${i}` : null,
      }),
    );
    // After them in name order, a cluster as common as the probe: every piece of "clerkz" is in 2,000 names or more.
    const late = Array.from({ length: 2_000 }, (_, i) =>
      testAccount({
        username: `clerkz${String(i).padStart(4, '0')}`,
        unit: { id: `t${i % 30}`, geoType: 'town', city: '沧州市', county: '青县', town: `t${i % 30}` },
      }),
    );
    many.push(...late);
    for (let from = 0; from < many.length; from += 1000)
      await accounts.createMany(many.slice(from, from + 1000), {
        id: `k${from}`,
        accountId: 'a',
        createdAt: new Date(),
        expiresAt: new Date(Date.now() + 60_000),
        accounts: [],
      });
  });
  after(() => db.close());

  /** What the planner says of each statement a page of the selection ran, by statement. */
  const plans = async (selection: AccountSelection) => {
    ran.length = 0;
    await accounts.page(selection, 0, 50);
    return ran.map(({ sql, args }) => ({
      sql,
      details: db
        .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...args)
        .map((row) => row.detail),
    }));
  };
  const text = (part: string): AccountSelection => ({ text: { part, units: [] } });

  const rare: Array<[string, AccountSelection]> = [
    ['a long part of a name', text('clerk1234')],
    ['a short part', text('234')],
    ['a part of a display name', text('张12')],
    ['a search and the units of a town', { text: { part: '99', units: ['t3'] } }],
    ['a role few have', { role: 'admin' }],
    ['the disabled', { disabled: true }],
    ['some units', { units: ['t1', 't2'] }],
    ['throttled usernames', { disabled: false, usernameKeys: { in: ['clerk0001'] } }],
  ];
  for (const [what, selection] of rare)
    it(`${what}: looked up, no walk through the accounts`, async () => {
      const details = (await plans(selection)).flatMap((p) => p.details);
      assert.ok(details.length > 0);
      const walks = details.filter((d) => /^SCAN accounts\b/.test(d));
      assert.deepEqual(walks, [], details.join('\n'));
    });

  const common: Array<[string, AccountSelection]> = [
    ['every account', {}],
    ['one character', text('c')],
    ['the active clerks', { role: 'clerk', disabled: false, mustChangePassword: false, usernameKeys: { notIn: [] } }],
  ];
  for (const [what, selection] of common)
    it(`${what}: an index walked in name order (the page's LIMIT and the capped count stop it)`, async () => {
      const statements = await plans(selection);
      const details = statements.flatMap((p) => p.details);
      const bare = details.filter((d) => /^SCAN accounts$/.test(d));
      assert.deepEqual(bare, [], `no statement reads the accounts without an index:\n${details.join('\n')}`);
      const pageOf = statements.find((p) => /ORDER BY/.test(p.sql))!.details;
      assert.ok(
        pageOf.some((d) => /^(SCAN|SEARCH) accounts USING (COVERING )?INDEX accounts_by_(name|state|role)\b/.test(d)) &&
          pageOf.every((d) => !/TEMP B-TREE FOR ORDER BY/.test(d)),
        `the page walks an index in name order, no sort of them all:\n${pageOf.join('\n')}`,
      );
    });

  const byPiece: Array<[string, string, string]> = [
    ['a part most names have', 'clerk', 'cle'],
    ['three characters most names have', 'erk', 'erk'],
    ['a part clustered late in name order, every piece of it common', 'clerkz', 'rkz'],
    ['a part clustered late, one piece of it rarer', 'clerkz1', 'kz1'],
  ];
  for (const [what, part, piece] of byPiece)
    it(`${what} ("${part}"): its piece "${piece}" read in name order, which the page's LIMIT and the capped count stop`, async () => {
      const statements = await plans(text(part));
      const details = statements.flatMap((p) => p.details);
      const scans = details.filter((d) => /^SCAN (accounts|account_pieces|s|a)\b/.test(d));
      assert.deepEqual(scans, [], `no table is scanned:\n${details.join('\n')}`);
      const pageOf = statements.find((p) => /ORDER BY s\.name/.test(p.sql))!;
      const [args] = ran.find((r) => r.sql === pageOf.sql)!.args as [{ piece: string }];
      assert.equal(args.piece, piece, 'the piece read');
      assert.ok(
        pageOf.details[0] === 'SEARCH s USING PRIMARY KEY (piece=?)' &&
          pageOf.details.every((d) => !/TEMP B-TREE/.test(d)),
        `the page reads the piece's accounts in name order, no sort:\n${pageOf.details.join('\n')}`,
      );
    });
});
