import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { StagedBytesLostError } from '../../server/errors.js';
import { openEmbeddedDatabase, openEmbeddedStore } from '../../server/store/embedded.js';
import { EmbeddedNearDuplicateIndex } from '../../server/store/near-duplicates/embedded.js';
import {
  commitBytes,
  countUpload,
  keyOf,
  namesFoundByFirstName,
  nearFingerprint,
  randomContent,
  readAll,
  testAccount,
  unit,
  uploadAction,
  uploadRecord,
  uploadUnderThreeNames,
} from '../support/content.js';
import type { CatalogEntry } from '../../server/store/catalog/port.js';
import type { PageFingerprint } from '../../server/store/near-duplicates/port.js';
import { crossUnitQuery, savingsQuery } from '../../shared/reports.js';
import { downgradeToFileIds } from '../support/earlier-schema.js';
import { TOTALS_BEFORE_LEDGER_OWNED_THEM } from '../support/totals-before-2026-11-28.js';
import { archiveAnswers, PEOPLE, REPORT_TIME_ZONE, seedReportArchive } from '../support/report-dataset.js';
import { receiptBytes, ReportCalendar, ReportService } from '../support/services.js';
import { embeddedTarget, injectSyncFailures, tempDir } from '../support/stores.js';
import { storeConformance } from './conformance.js';

storeConformance(embeddedTarget);

/** The triggers and indexes of the repeat uploaders' kept sums and orders (issue 43). */
const ADDED_FOR_REPEAT_UPLOADERS =
  /^(ledger_repeats_(insert|counted|became|update|delete)|ledger_repeat_counts|catalog_lengths)$/;

describe('embedded store specifics', () => {
  it('keeps each file’s sums (units, users, uploads, first and last upload) exact through new holders, repeat uploads and moved entries', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const { entry } = await commitBytes(store, randomContent(100));
    const east = testAccount({ unit: unit('east') });
    const west = testAccount({ unit: unit('west') });
    const day = (d: number) => new Date(Date.UTC(2026, 2, d, 9));
    await countUpload(store, uploadRecord(east, entry.fileId, 'a.pdf', day(3)));
    await countUpload(store, uploadRecord(west, entry.fileId, 'a.pdf', day(5)));
    // Repeats, one of them recorded with an earlier time than the entry's last (a late retry).
    await countUpload(store, uploadRecord(east, entry.fileId, 'a.pdf', day(9)));
    await countUpload(store, uploadRecord(east, entry.fileId, 'a.pdf', day(7)));
    await countUpload(store, uploadRecord(west, entry.fileId, 'a.pdf', day(8)));
    // New holders, each added in place: the same user in a third unit (a unit more, no user more),
    // a colleague in a unit that holds it (a user more, no unit more), with an earlier first upload.
    await countUpload(store, uploadRecord({ ...east, unit: unit('north') }, entry.fileId, 'a.pdf', day(10)));
    await countUpload(store, uploadRecord(testAccount({ unit: unit('west') }), entry.fileId, 'b.pdf', day(1)));
    await store.close();
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    const kept = () =>
      db.prepare('SELECT units, users, uploads, first, last FROM ledger_files WHERE file_id = ?').get(entry.fileId);
    const fileNo = (
      db.prepare('SELECT file_no FROM catalog WHERE file_id = ?').get(entry.fileId) as { file_no: number }
    ).file_no;
    const summed = () =>
      db
        .prepare(
          `SELECT COUNT(DISTINCT unit_id) AS units, COUNT(DISTINCT user_id) AS users, SUM(upload_count) AS uploads,
                  MIN(upload_time) AS first, MAX(last_upload_time) AS last FROM ledger WHERE file_no = ?`,
        )
        .get(fileNo);
    assert.deepEqual(kept(), { units: 3, users: 3, uploads: 7, first: day(1).getTime(), last: day(10).getTime() });
    assert.deepEqual(kept(), summed());
    assert.ok(
      db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'ledger_files_counted'").get(),
      'repeats add in place',
    );
    const insertTrigger = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'ledger_files_insert'").get() as {
      sql: string;
    };
    assert.doesNotMatch(insertTrigger.sql, /DELETE/, 'a new holder adds in place: no re-sum of every entry');
    // An entry moved to the other unit (as relabelling does): summed again.
    db.prepare('UPDATE ledger SET unit_id = ? WHERE user_id = ? AND unit_id = ?').run(west.unit.id, east.id, 'east');
    assert.deepEqual(kept(), summed());
    assert.equal((kept() as { units: number }).units, 2);
    db.close();
  });

  it('keeps the repeat uploaders’ sums per account and unit exact through repeats, copies, withdrawals, restores, moves and deletions, and makes them at the first open of an earlier data directory', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const files = await seedReportArchive(store);
    const east = testAccount({ unit: unit('east') });
    const west = testAccount({ unit: unit('west') });
    const day = (d: number, h = 9) => new Date(Date.UTC(2026, 2, d, h));
    const count = async (who: typeof east, file: CatalogEntry, at: Date, into = store) => {
      const action = uploadAction(uploadRecord(who, file.fileId, 'a.pdf', at));
      await into.ledger.count(action);
      return action.key;
    };
    const e1 = await count(east, files.F1, day(3));
    await count(east, files.F1, day(5));
    await count(east, files.F4, day(6));
    const e4 = await count(east, files.F4, day(4));
    const w1 = await count(west, files.F1, day(7));
    const w2 = await count(west, files.F1, day(7, 10));
    await store.ledger.placeInReceipt('drift:r1', [w1, w2]);
    const w3 = await count(west, files.F4, day(8));
    await count(west, files.F4, day(9));
    for (const [i, key] of [e1, w3, e4].entries())
      assert.equal(await store.ledger.reverse(key, `drift:w${i}`), 'reversed');
    await count(west, files.F4, day(10));
    assert.equal(await store.ledger.restore(e1, 'drift:u0'), 'restored');
    await store.close();

    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    const kept = () => ({
      users: db.prepare('SELECT * FROM ledger_repeat_users ORDER BY unit_id, user_id').all(),
      unitFiles: db.prepare('SELECT * FROM ledger_repeat_unit_files ORDER BY unit_id').all(),
    });
    // What they are: summed from the repeat entries (uploaded twice or more) as the report sums them.
    const summed = () => ({
      users: db
        .prepare(
          `SELECT l.unit_id, l.user_id, MAX(l.user_name) AS user_name, MAX(l.unit) AS unit, COUNT(*) AS files,
             SUM(l.upload_count) AS uploads, SUM(l.copies) AS copies, SUM((l.upload_count - 1) * c.length) AS repeat_bytes,
             MIN(l.upload_time) AS first, MAX(l.last_upload_time) AS last
           FROM ledger l JOIN catalog c ON c.file_no = l.file_no WHERE l.upload_count >= 2
           GROUP BY l.unit_id, l.user_id ORDER BY l.unit_id, l.user_id`,
        )
        .all(),
      unitFiles: db
        .prepare(
          `SELECT unit_id, COUNT(DISTINCT file_no) AS files FROM ledger WHERE upload_count >= 2 GROUP BY unit_id ORDER BY unit_id`,
        )
        .all(),
    });
    try {
      assert.deepEqual(kept(), summed(), 'after repeats, copies, withdrawals and restores');
      for (const who of [east, west])
        assert.ok(
          kept().users.some((r) => (r as { user_id: string }).user_id === who.id),
          'both repeat a file',
        );
      // Entries moved and relabelled (as an account's move would), the same file's repeat entries
      // in one unit then, and one deleted.
      db.prepare('UPDATE ledger SET unit_id = ?, unit = ? WHERE user_id = ?').run(
        'east',
        JSON.stringify(east.unit),
        west.id,
      );
      assert.deepEqual(kept(), summed(), 'moved');
      db.prepare("UPDATE ledger SET user_name = 'renamed' WHERE user_id = ?").run(PEOPLE.bob.id);
      assert.deepEqual(kept(), summed(), 'renamed');
      db.prepare('DELETE FROM ledger WHERE user_id = ? AND upload_count >= 2').run(east.id);
      assert.deepEqual(kept(), summed(), 'deleted');
      db.prepare('UPDATE ledger SET upload_count = upload_count + 3, copies = 1 WHERE user_id = ?').run(
        PEOPLE.alice.id,
      );
      assert.deepEqual(kept(), summed(), 'counted again in place');

      // A data directory of the version before them: made and summed at its first open.
      const before = kept();
      db.exec(
        `DROP TABLE ledger_repeat_users; DROP TABLE ledger_repeat_unit_files;
         DROP TRIGGER ledger_repeats_insert; DROP TRIGGER ledger_repeats_counted; DROP TRIGGER ledger_repeats_became;
         DROP TRIGGER ledger_repeats_update; DROP TRIGGER ledger_repeats_delete; DROP INDEX ledger_repeat_counts`,
      );
      db.close();
      const upgraded = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      await count(PEOPLE.dave, files.F1, day(20), upgraded);
      await upgraded.close();
      const again = new Database(path.join(dataDir, 'archive.sqlite'));
      try {
        const dave = (k: typeof before) =>
          k.users.filter((r) => (r as { user_id: string }).user_id === PEOPLE.dave.id) as Array<{ uploads: number }>;
        const keptAgain = {
          users: again.prepare('SELECT * FROM ledger_repeat_users ORDER BY unit_id, user_id').all(),
          unitFiles: again.prepare('SELECT * FROM ledger_repeat_unit_files ORDER BY unit_id').all(),
        };
        assert.equal(dave(keptAgain)[0]!.uploads, dave(before)[0]!.uploads + 1, 'kept again after the upgrade');
        assert.deepEqual(
          { ...keptAgain, users: keptAgain.users.filter((r) => (r as { user_id: string }).user_id !== PEOPLE.dave.id) },
          { ...before, users: before.users.filter((r) => (r as { user_id: string }).user_id !== PEOPLE.dave.id) },
        );
      } finally {
        again.close();
      }
    } finally {
      if (db.open) db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('keeps the day tallies’ sums per city, county and town as summing the tallies makes them, through counts, withdrawals, restores and tallies moved; a data directory made before them has them made at open', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const files = await seedReportArchive(store);
    const day = (d: number) => new Date(Date.UTC(2026, 4, d, 9));
    const counted = async (record: Parameters<typeof uploadAction>[0]) => {
      const action = uploadAction(record);
      await store.ledger.count(action);
      return action.key;
    };
    const north = testAccount({ unit: unit('north', '东县') });
    const keys = [
      await counted(uploadRecord(north, files.F1.fileId, 'a.pdf', day(1))),
      await counted(uploadRecord(north, files.F1.fileId, 'a.pdf', day(1))),
      await counted(uploadRecord(PEOPLE.frank, files.F4.fileId, 'b.pdf', day(2))),
      await counted(uploadRecord(PEOPLE.alice, files.F1.fileId, 'c.pdf', new Date('2026-03-02T03:00:00Z'))),
    ];
    await store.ledger.reverse(keys[1]!, 'r1');
    await store.ledger.reverse(keys[2]!, 'r2');
    await store.ledger.reverse(keys[3]!, 'r3');
    await store.ledger.restore(keys[3]!, 's3');
    await store.close();
    const rows = (db: Database.Database) =>
      db.prepare('SELECT * FROM upload_day_sums ORDER BY level, city, county, town, day, week, month').all();
    // The sums the tallies make, per level ('' for a level a tally has none of).
    const summed = (db: Database.Database) =>
      [1, 2, 3].flatMap((level) =>
        db
          .prepare(
            `SELECT ${level} AS level, city, IIF(${level} >= 2, IFNULL(county, ''), '') AS county,
                    IIF(${level} = 3, IFNULL(town, ''), '') AS town, day, week, month, COUNT(*) AS tallies,
                    SUM(uploads) AS uploads, SUM(saved_uploads) AS saved_uploads, SUM(saved_uploads * file_length) AS saved_bytes
             FROM upload_days GROUP BY 2, 3, 4, day, week, month ORDER BY 2, 3, 4, day, week, month`,
          )
          .all(),
      );
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    let kept: unknown[];
    try {
      kept = rows(db);
      assert.deepEqual(kept, summed(db));
      assert.ok(kept.length > 30, `${kept.length} rows`);
      // A tally moved to another day and unit: out of its rows, into others.
      db.prepare(
        "UPDATE upload_days SET day = '2026-05-09', week = '2026-05-04', month = '2026-05', county = NULL, town = NULL WHERE unit_id = ?",
      ).run(north.unit.id);
      assert.deepEqual(rows(db), summed(db), 'a tally moved');
      db.prepare("UPDATE upload_days SET county = '西县' WHERE unit_id = ?").run(PEOPLE.carol.unit.id);
      assert.deepEqual(rows(db), summed(db), 'a town moved to another county, its days kept');
      db.prepare('DELETE FROM upload_days WHERE unit_id = ?').run(north.unit.id);
      assert.deepEqual(rows(db), summed(db), 'a tally gone');
      // As a data directory of the version before them: no sums, no triggers.
      kept = rows(db);
      db.exec(
        `DROP TABLE upload_day_sums; ${['insert', 'update', 'move', 'delete'].map((t) => `DROP TRIGGER upload_day_sums_${t};`).join(' ')}`,
      );
    } finally {
      db.close();
    }
    const upgraded = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    try {
      const reopened = new Database(path.join(dataDir, 'archive.sqlite'), { readonly: true });
      assert.deepEqual(rows(reopened), kept, 'summed from the tallies at open, as they were kept');
      reopened.close();
      // And kept from then on.
      await countUpload(upgraded, uploadRecord(north, files.F2.fileId, 'd.pdf', day(3)));
      await upgraded.ledger.reverse(keys[3]!, 'r3 again');
    } finally {
      await upgraded.close();
    }
    const after = new Database(path.join(dataDir, 'archive.sqlite'), { readonly: true });
    try {
      assert.deepEqual(rows(after), summed(after));
      assert.ok(
        rows(after).some((r) => (r as { day: string }).day === '2026-05-03'),
        'the new upload is in them',
      );
    } finally {
      after.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('gives accounts of an earlier version their username keys at open: the older of two alike keeps the key, the other its exact name', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const older = testAccount({ username: 'Alice', createdAt: new Date(Date.UTC(2025, 0, 1)) });
    const newer = testAccount({ username: 'alice', createdAt: new Date(Date.UTC(2025, 5, 1)) });
    await store.accounts.create(older);
    await store.close();
    // As a data directory of the earlier version holds them: no keys, no key index, names alike.
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    db.exec('DROP INDEX accounts_username_key; UPDATE accounts SET username_key = NULL');
    db.prepare(
      `INSERT INTO accounts (id, username, password_hash, role, unit, created_at, must_change_password) VALUES (?, ?, 'x', 'clerk', ?, ?, 0)`,
    ).run(newer.id, newer.username, JSON.stringify(newer.unit), newer.createdAt.getTime());
    db.close();
    const reopened = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    try {
      assert.equal((await reopened.accounts.findByUsername('Alice'))?.id, older.id);
      assert.equal((await reopened.accounts.findByUsername('alice'))?.id, newer.id, 'its exact name still finds it');
      assert.equal((await reopened.accounts.findByUsername('ALICE'))?.id, older.id, "the key is the older account's");
      await assert.rejects(reopened.accounts.create(testAccount({ username: 'ＡＬＩＣＥ' })), /taken/);
    } finally {
      await reopened.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('moves the search pieces of an earlier version into name order at open: a search pages by username key', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    for (const username of ['Zhang.Wang', 'li.wang', 'Wang.Li']) await store.accounts.create(testAccount({ username }));
    await store.close();
    // As a data directory of the earlier version holds them: each piece's accounts, without their names.
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    db.exec(`CREATE TABLE account_search (piece TEXT NOT NULL, account_id TEXT NOT NULL, PRIMARY KEY (piece, account_id)) WITHOUT ROWID;
             INSERT INTO account_search SELECT piece, account_id FROM account_pieces;
             DROP TABLE account_pieces`);
    db.close();
    const reopened = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    try {
      const page = await reopened.accounts.page({ text: { part: 'wan', units: [] } }, 0, 10);
      // By key (li.wang, wang.li, zhang.wang), not by username, where capitals come first.
      assert.deepEqual(
        page.items.map((a) => a.username),
        ['li.wang', 'Wang.Li', 'Zhang.Wang'],
      );
      assert.deepEqual(
        (await reopened.accounts.page({ text: { part: 'g.wang', units: [] } }, 0, 10)).items.map((a) => a.username),
        ['Zhang.Wang'],
      );
    } finally {
      await reopened.close();
    }
    const after = new Database(path.join(dataDir, 'archive.sqlite'));
    try {
      const left = after.prepare("SELECT name FROM sqlite_master WHERE name = 'account_search'").all();
      assert.deepEqual(left, [], 'the earlier table is gone');
    } finally {
      after.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('moves the search pieces of an account given its username key at open to the key’s place in name order', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    for (const username of ['Bob.Li', 'ab.li']) await store.accounts.create(testAccount({ username }));
    await store.close();
    // As an account left without its key had its pieces written: at its username's place.
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    db.exec(`DROP INDEX accounts_username_key;
             UPDATE accounts SET username_key = NULL WHERE username = 'Bob.Li';
             UPDATE account_pieces SET name = 'Bob.Li' WHERE name = 'bob.li'`);
    db.close();
    const reopened = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    try {
      const page = await reopened.accounts.page({ text: { part: '.li', units: [] } }, 0, 10);
      assert.deepEqual(
        page.items.map((a) => a.username),
        ['ab.li', 'Bob.Li'],
        'by key: bob.li after ab.li',
      );
    } finally {
      await reopened.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('gives a database of an earlier version the display-name column at open: its accounts have no name, and may be given one', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const old = testAccount({ username: 'old.clerk' });
    await store.accounts.create(old);
    await store.close();
    // As a data directory of the earlier version holds its accounts: no display_name column.
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    db.exec('ALTER TABLE accounts DROP COLUMN display_name');
    db.close();
    const reopened = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    try {
      assert.equal((await reopened.accounts.get(old.id))?.displayName, null);
      assert.deepEqual(await reopened.accounts.displayNames(['old.clerk']), new Map());
      await reopened.accounts.update(old.id, { displayName: '老档案员' });
      assert.equal((await reopened.accounts.findByUsername('old.clerk'))?.displayName, '老档案员');
      await reopened.accounts.create(testAccount({ username: 'new.clerk', displayName: '新档案员' }));
      assert.deepEqual([...(await reopened.accounts.displayNames(['old.clerk', 'new.clerk']))].sort(), [
        ['new.clerk', '新档案员'],
        ['old.clerk', '老档案员'],
      ]);
    } finally {
      await reopened.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('gives API tokens of an earlier version the scopes column at open: they keep working, with no scope', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const created = new Date('2026-05-01T00:00:00Z');
    const old = {
      id: 'a1b2c3d4e5f6',
      accountId: 'acc',
      secretHash: 'f'.repeat(64),
      label: 'scanner',
      createdAt: created,
      expiresAt: null,
      lastUsedAt: null,
      scopes: [],
    };
    await store.tokens.create(old);
    await store.close();
    // As a data directory of the earlier version holds its tokens: no scopes column, no account index.
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    db.exec('DROP INDEX api_tokens_account; ALTER TABLE api_tokens DROP COLUMN scopes');
    db.close();
    const reopened = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    try {
      assert.deepEqual(await reopened.tokens.get(old.id), old);
      assert.equal(await reopened.tokens.countLive('acc', created), 1);
      await reopened.tokens.create({ ...old, id: 'b1b2c3d4e5f6', scopes: ['accounts'] });
      assert.deepEqual((await reopened.tokens.get('b1b2c3d4e5f6'))?.scopes, ['accounts']);
    } finally {
      await reopened.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('measures receipts of an earlier version once, at open, as the service measures new ones', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const rows = [
      { path: '卷/第1页.jpg', size: 10, outcome: 'failed' as const, reason: 'network', at: '2026-11-25T08:00:00.000Z' },
    ];
    const old = {
      id: 'a'.repeat(32),
      accountId: 'acc',
      title: '2026年移交',
      startedAt: new Date('2026-11-25T08:00:00Z'),
      updatedAt: new Date('2026-11-25T09:00:00Z'),
      counts: { stored: 0, duplicate: 0, instant: 0, failed: 1, skipped: 0 },
      bytes: 0,
      rows,
    };
    await store.receipts.put(old);
    await store.close();
    // As a data directory of the earlier version holds its receipts: no bytes column.
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    db.exec('ALTER TABLE receipts DROP COLUMN bytes');
    db.close();
    const reopened = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    try {
      assert.equal(await reopened.receipts.sizeOf('acc', old.id), receiptBytes(old.title, rows));
      assert.deepEqual(await reopened.receipts.get('acc', old.id), { ...old, bytes: receiptBytes(old.title, rows) });
    } finally {
      await reopened.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('remembers the first and last names of ledger entries made before ledger_names existed, at open', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const data = randomContent(100);
    const staged = await store.content.stage(new Date());
    await store.content.write(staged, 0, [data]);
    const { entry } = await store.content.commit(staged, {
      key: keyOf(data),
      fileName: 'x.pdf',
      contentType: 'application/pdf',
      uploadDate: new Date(),
    });
    const clerk = testAccount();
    await uploadUnderThreeNames(store, clerk, entry.fileId);
    await store.close();
    // As an earlier version left it: no names beside the ledger entry's first and last.
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    db.exec('DELETE FROM ledger_names');
    db.close();
    const reopened = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    try {
      assert.deepEqual(await namesFoundByFirstName(reopened, clerk), ['旧/第一个名字.pdf', '旧/最后的名字.pdf']);
    } finally {
      await reopened.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('breaks ties in lists and reports by the public file id, never by the order files were stored', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    try {
      const contents = Array.from({ length: 16 }, () => randomContent(200));
      const stored = await store.content.storeMany(
        contents.map((data) => ({
          parts: [data],
          entry: { key: keyOf(data), fileName: 'a.pdf', contentType: 'application/pdf', uploadDate: new Date(0) },
        })),
      );
      const at = new Date(Date.UTC(2026, 2, 2));
      const east = testAccount({ unit: unit('east') });
      const west = testAccount({ unit: unit('west') });
      for (const { entry } of stored) {
        await countUpload(store, uploadRecord(east, entry.fileId, 'a.pdf', at));
        await countUpload(store, uploadRecord(west, entry.fileId, 'a.pdf', at));
      }
      const inStoredOrder = stored.map((o) => o.entry.fileId);
      const byId = [...inStoredOrder].sort();
      assert.notDeepEqual(inStoredOrder, byId, 'random ids: stored order is not id order');
      const page = { accountId: east.id, limit: 50, offset: 0 };
      for (const sort of ['unitCount', 'size', 'lastUpload', 'name'] as const) {
        const unitList = await store.unitFiles.list({ ...page, unitId: east.unit.id, sort });
        assert.deepEqual(
          unitList.items.map((i) => i.entry.fileId),
          byId,
          `the unit's list sorted by ${sort}`,
        );
        const all = await store.unitFiles.list({ ...page, sort });
        assert.deepEqual(
          all.items.map((i) => i.entry.fileId),
          byId,
          `the archive's list sorted by ${sort}`,
        );
      }
      const reports = new ReportService(store.reports, new ReportCalendar(REPORT_TIME_ZONE), store.accounts);
      for (const sort of ['units', 'lastUploadTime'])
        assert.deepEqual(
          (await reports.crossUnit(crossUnitQuery.parse({ sort }))).items.map((r) => r.fileId),
          byId,
          `cross-unit duplicates sorted by ${sort}`,
        );
    } finally {
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe('a data directory made before files were numbered (tables keyed by file id)', () => {
    it('opens with every file, count, name and report as before, and counts new uploads after them', async () => {
      const dataDir = tempDir();
      const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      const files = await seedReportArchive(store);
      // Small contents of a batch, in a pack file.
      const small = [randomContent(700), randomContent(1500)];
      const packed = await store.content.storeMany(
        small.map((data) => ({
          parts: [data],
          entry: { key: keyOf(data), fileName: 'p.pdf', contentType: 'application/pdf', uploadDate: new Date() },
        })),
      );
      // An upload under way: half its bytes staged.
      const pending = randomContent(3000);
      const stagingId = await store.content.stage(new Date());
      await store.content.write(stagingId, 0, [pending.subarray(0, 1500)]);
      const before = await archiveAnswers(store, files);
      assert.ok(
        before.all.total >= 6 && before.repeats.total === 5 && before.crossUnit.total > 0,
        'the archive answers',
      );
      await store.close();
      const db = new Database(path.join(dataDir, 'archive.sqlite'));
      downgradeToFileIds(db);
      assert.equal(
        db.prepare("SELECT COUNT(*) AS n FROM pragma_table_info('ledger') WHERE name = 'file_no'").pluck().get(),
        0,
      );
      db.close();

      const upgraded = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      try {
        assert.deepEqual(await archiveAnswers(upgraded, files), before);
        for (const [i, { entry }] of packed.entries())
          assert.deepEqual(await readAll(upgraded.content.read(entry)), Buffer.from(small[i]!), 'packed bytes found');
        const [again] = await upgraded.content.storeMany([
          {
            parts: [small[0]!],
            entry: { key: keyOf(small[0]!), fileName: 'p.pdf', contentType: 'application/pdf', uploadDate: new Date() },
          },
        ]);
        assert.equal(again?.status, 'duplicate', 'found by its key');
        for (const entry of [...Object.values(files), ...packed.map((p) => p.entry)])
          assert.equal(await upgraded.content.lacksChunkSums(entry), false, `the chunk sums of ${entry.fileName} kept`);
        // The upload goes on where it stopped, its sums with it.
        await upgraded.content.write(stagingId, 1500, [pending.subarray(1500)]);
        const finished = await upgraded.content.commit(stagingId, {
          key: keyOf(pending),
          fileName: '续传.pdf',
          contentType: 'application/pdf',
          uploadDate: new Date(),
        });
        assert.equal(finished.status, 'stored');
        assert.equal(await upgraded.content.lacksChunkSums(finished.entry), false);
        assert.deepEqual(await readAll(upgraded.content.read(finished.entry)), pending);
        // Numbered in the order the files were first stored, and new files after them.
        const { entry } = await commitBytes(upgraded, randomContent(300), '新.pdf');
        await countUpload(upgraded, uploadRecord(PEOPLE.alice, entry.fileId, '新.pdf'));
        await countUpload(upgraded, uploadRecord(PEOPLE.alice, files.F4.fileId, '又一个.pdf'));
        const numbered = new Database(path.join(dataDir, 'archive.sqlite'), { readonly: true });
        const order = numbered.prepare('SELECT upload_date FROM catalog ORDER BY file_no').pluck().all() as number[];
        numbered.close();
        assert.deepEqual(
          order,
          [...order].sort((a, b) => a - b),
        );
        assert.equal((await upgraded.ledger.entriesForFile(entry.fileId))[0]?.uploadCount, 1);
        const f4 = await upgraded.ledger.entriesForFile(files.F4.fileId);
        assert.deepEqual(
          f4.map((e) => [e.userName, e.uploadCount]),
          [
            ['gina', 1],
            ['alice', 1],
          ],
        );
        const crossUnit = new ReportService(upgraded.reports, new ReportCalendar(REPORT_TIME_ZONE), upgraded.accounts);
        const f4Row = (await crossUnit.crossUnit(crossUnitQuery.parse({}))).items.find(
          (r) => r.fileId === files.F4.fileId,
        );
        assert.equal(f4Row?.units, 2, 'the kept sums follow new uploads');
      } finally {
        await upgraded.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('a data directory made before the ledger declared its totals (per-file sums and report indexes declared by the reports)', () => {
    /** The indexes and triggers on the catalog, the ledger and its totals, as sqlite_master holds them. */
    const totalsObjects = (dataDir: string) => {
      const db = new Database(path.join(dataDir, 'archive.sqlite'), { readonly: true });
      try {
        return db
          .prepare<[], { type: 'index' | 'trigger'; name: string; sql: string }>(
            `SELECT type, name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL
               AND tbl_name IN ('catalog', 'ledger', 'ledger_files', 'upload_days', 'ledger_names') ORDER BY type, name`,
          )
          .all();
      } finally {
        db.close();
      }
    };

    it('opens with the same triggers and indexes, answers as before, and counts a new upload once in every total', async () => {
      const dataDir = tempDir();
      const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      try {
        const files = await seedReportArchive(store);
        const before = await archiveAnswers(store, files);
        await store.close();
        // Its triggers and indexes exactly as that version made them.
        const db = new Database(path.join(dataDir, 'archive.sqlite'));
        for (const { type, name } of totalsObjects(dataDir)) db.exec(`DROP ${type.toUpperCase()} ${name}`);
        for (const { sql } of TOTALS_BEFORE_LEDGER_OWNED_THEM) db.exec(sql);
        db.close();

        const upgraded = openEmbeddedStore({ dataDir, chunkSize: 1024 });
        try {
          assert.deepEqual(
            // Less the indexes added since, which any data directory gets: 本单位文件's folders (issue 42),
            // the catalog's contents being deleted (the purge), cross-unit duplicates by area, the
            // repeat uploaders' kept sums' triggers and indexes, and the triggers that keep the day
            // tallies' sums (issue 43).
            totalsObjects(dataDir).filter(
              (o) =>
                o.name !== 'ledger_names_unit_paths' &&
                o.name !== 'catalog_being_deleted' &&
                o.name !== 'ledger_area_files' &&
                !ADDED_FOR_REPEAT_UPLOADERS.test(o.name) &&
                !o.name.startsWith('upload_day_sums_'),
            ),
            // The repeat uploaders' index holds each entry's copies inside one upload now (made again once).
            TOTALS_BEFORE_LEDGER_OWNED_THEM.map((o) =>
              o.name === 'ledger_repeat_files'
                ? { ...o, sql: o.sql.replace('upload_file_name, unit)', 'upload_file_name, unit, copies)') }
                : o,
            ),
            'nothing else added, renamed or changed',
          );
          assert.ok(totalsObjects(dataDir).some((o) => o.name === 'ledger_names_unit_paths'));
          assert.ok(totalsObjects(dataDir).some((o) => o.name === 'ledger_area_files'));
          assert.equal(totalsObjects(dataDir).filter((o) => ADDED_FOR_REPEAT_UPLOADERS.test(o.name)).length, 7);
          assert.deepEqual(await archiveAnswers(upgraded, files), before);
          const reports = new ReportService(upgraded.reports, new ReportCalendar(REPORT_TIME_ZONE), upgraded.accounts);
          const f1 = async () =>
            (await reports.crossUnit(crossUnitQuery.parse({}))).items.find((r) => r.fileId === files.F1.fileId);
          const f1Before = await f1();
          const savedBefore = (await reports.savings(savingsQuery.parse({}))).summary;
          // A new holder's upload, then a repeat of it.
          const north = testAccount({ unit: unit('north') });
          await countUpload(upgraded, uploadRecord(north, files.F1.fileId, '北.pdf'));
          await countUpload(upgraded, uploadRecord(north, files.F1.fileId, '北.pdf'));
          const f1After = await f1();
          assert.deepEqual(
            [f1After?.units, f1After?.users, f1After?.uploads],
            [f1Before!.units + 1, f1Before!.users + 1, f1Before!.uploads + 2],
          );
          const savedAfter = (await reports.savings(savingsQuery.parse({}))).summary;
          assert.equal(savedAfter.uploads, savedBefore.uploads + 2);
          assert.equal(savedAfter.savedUploads, savedBefore.savedUploads + 2);
        } finally {
          await upgraded.close();
        }
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });

  it('keeps its records in one SQLite file in WAL mode and the bytes in content files, all inside DATA_DIR', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const data = randomContent(2500);
    const id = await store.content.stage(new Date());
    await store.content.write(id, 0, [data.subarray(0, 1024), data.subarray(1024, 2048), data.subarray(2048)]);
    const { entry } = await store.content.commit(id, {
      key: keyOf(data),
      fileName: 'x',
      contentType: 'text/plain',
      uploadDate: new Date(),
    });
    await store.close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    db.close();
    const file = path.join(dataDir, 'content', entry.fileId.slice(0, 2), entry.fileId.slice(2, 4), entry.fileId);
    assert.deepEqual(fs.readFileSync(file), data, 'chunk n at offset n x chunk size');
    fs.rmSync(dataDir, { recursive: true });
  });

  for (const [way, storing] of [
    [
      'one at a time',
      `const id = await store.content.stage(new Date());
        const chunks = [];
        for (let i = 0; i < data.length; i += 1024) chunks.push(data.subarray(i, i + 1024));
        await store.content.write(id, 0, chunks);
        await store.content.commit(id, { key: keyOf(data), fileName: 'f', contentType: 'application/octet-stream', uploadDate: new Date() });`,
    ],
    [
      'in batches, in pack files',
      `const more = Array.from({ length: Math.floor(Math.random() * 30) }, () => randomBytes(1 + Math.floor(Math.random() * 5000)));
        await store.content.storeMany([data, ...more].map((bytes) => ({ parts: [bytes], entry: { key: keyOf(bytes), fileName: 'f', contentType: 'application/octet-stream', uploadDate: new Date() } })));`,
    ],
  ] as const)
    it(`shows no half-committed file after the process is killed while committing ${way}`, async () => {
      // A child process stores files in a loop and is killed (SIGKILL) at a random moment, several
      // times; every catalogued file must then read back whole and intact.
      const dataDir = tempDir();
      const storeModule = new URL('../../server/store/embedded.js', import.meta.url).href;
      const script = `
      import { createHash, randomBytes } from 'node:crypto';
      import { openEmbeddedStore } from ${JSON.stringify(storeModule)};
      const store = openEmbeddedStore({ dataDir: ${JSON.stringify(dataDir)}, chunkSize: 1024 });
      const keyOf = (data) => ({ md5: createHash('md5').update(data).digest('hex'), sha256: createHash('sha256').update(data).digest('hex'), length: data.length });
      for (let told = false; ; ) {
        const data = randomBytes(1 + Math.floor(Math.random() * 20000));
        ${storing}
        if (!told) {
          told = true;
          process.stdout.write('committed\\n');
        }
      }
    `;
      for (let round = 0; round < 5; round++) {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        // Killed at a random moment once it has committed a file (on a busy machine, a fixed
        // 50-250 ms after it started could all fall before its first commit).
        let said = '';
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (d: Buffer) => (said += d.toString()).includes('committed') && resolve());
          child.once('exit', (code) => reject(new Error(`the child exited (${code}) before it committed a file`)));
        });
        await delay(Math.random() * 200);
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
      const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      const { items, total } = await store.unitFiles.list({ accountId: 'nobody', limit: 200, offset: 0 });
      assert.ok(total > 0, 'the child committed files before it was killed');
      const sample = items.slice(0, 200);
      for (const { entry } of sample) {
        const bytes = await readAll(store.content.read(entry));
        assert.deepEqual(keyOf(bytes), { md5: entry.md5, sha256: entry.sha256, length: entry.length });
      }
      await store.close();
      fs.rmSync(dataDir, { recursive: true });
    });

  it('keeps statement journals in memory: a batch of thousands of rows writes no temporary files', async () => {
    // A statement inside a transaction journals the pages it changes; past 64 KiB SQLite's default
    // moves that journal to a file: 140,000 writes of it in the 10,000-file import bench.
    const dataDir = tempDir();
    const db = openEmbeddedDatabase(dataDir);
    try {
      assert.equal(db.pragma('temp_store', { simple: true }), 2, 'temp_store = MEMORY');
    } finally {
      db.close();
      fs.rmSync(dataDir, { recursive: true });
    }
  });

  it('collects content files that no record owns', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const orphan = path.join(dataDir, 'content', 'ab', 'cd', 'abcd00000000000000000000');
    fs.mkdirSync(path.dirname(orphan), { recursive: true });
    fs.writeFileSync(orphan, randomContent(3000));
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(orphan, old, old);
    assert.deepEqual(await store.content.collectGarbage(new Date(Date.now() - 60_000)), {
      stagingAreas: 0,
      orphans: 1,
    });
    assert.equal(fs.existsSync(orphan), false);
    await store.close();
    fs.rmSync(dataDir, { recursive: true });
  });

  describe('small contents in pack files', () => {
    const entryOf = (data: Uint8Array) => ({
      key: keyOf(data),
      fileName: '第0001页.jpg',
      contentType: 'image/jpeg',
      uploadDate: new Date(),
    });
    const packFiles = (dataDir: string) =>
      fs.existsSync(path.join(dataDir, 'content', 'packs'))
        ? fs.readdirSync(path.join(dataDir, 'content', 'packs')).sort()
        : [];
    const fanOutFolders = (dataDir: string) =>
      fs.readdirSync(path.join(dataDir, 'content')).filter((name) => name !== 'packs');
    const packRows = (dataDir: string) => {
      const db = new Database(path.join(dataDir, 'archive.sqlite'), { readonly: true });
      try {
        return db.prepare('SELECT pack_id FROM packs ORDER BY pack_id').pluck().all() as string[];
      } finally {
        db.close();
      }
    };

    it('keeps a batch of small contents in one pack file, not one file each, and appends later batches to it', async () => {
      const dataDir = tempDir();
      const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      const first = Array.from({ length: 200 }, () => randomContent(1 + Math.floor(Math.random() * 3000)));
      await store.content.storeMany(first.map((bytes) => ({ parts: [bytes], entry: entryOf(bytes) })));
      const packs = packFiles(dataDir);
      assert.equal(packs.length, 1);
      assert.match(packs[0]!, /^[0-9a-f]{24}\.pack$/);
      assert.deepEqual(fanOutFolders(dataDir), [], 'no content file of its own for any of them');
      const packed = path.join(dataDir, 'content', 'packs', packs[0]!);
      const bytes = first.reduce((sum, data) => sum + data.length, 0);
      assert.equal(fs.statSync(packed).size, bytes, 'the bytes back to back');
      const second = [randomContent(500)];
      const [outcome] = await store.content.storeMany(second.map((data) => ({ parts: [data], entry: entryOf(data) })));
      assert.deepEqual(packFiles(dataDir), packs);
      assert.equal(fs.statSync(packed).size, bytes + 500);
      assert.deepEqual(fs.readFileSync(packed).subarray(bytes), second[0]);
      await store.close();
      // Another process reads them.
      const reader = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      assert.deepEqual(await readAll(reader.content.read(outcome!.entry)), second[0]);
      for (const data of first.slice(0, 20))
        assert.deepEqual(await readAll(reader.content.read((await reader.catalog.findByKey(keyOf(data)))!)), data);
      await reader.close();
      fs.rmSync(dataDir, { recursive: true });
    });

    it('writes a batch of more parts and bytes than one write takes, each content where it is catalogued', async () => {
      const dataDir = tempDir();
      const store = openEmbeddedStore({ dataDir, chunkSize: 64 * 1024 });
      // 1,500 parts (writev takes 1,024 at most) and 13 MiB (written 4 MiB at a time), empty ones among them.
      const batch = Array.from({ length: 1500 }, (_, i) =>
        randomContent(i % 500 === 7 ? 3 * 1024 * 1024 + i : i % 100 === 3 ? 0 : 1 + ((i * 7919) % 3000)),
      );
      const outcomes = await store.content.storeMany(batch.map((bytes) => ({ parts: [bytes], entry: entryOf(bytes) })));
      const [pack] = packFiles(dataDir);
      const size = fs.statSync(path.join(dataDir, 'content', 'packs', pack!)).size;
      assert.equal(
        size,
        batch.reduce((sum, data) => sum + data.length, 0),
      );
      for (const [i, data] of batch.entries())
        assert.deepEqual(await readAll(store.content.read(outcomes[i]!.entry)), data, `content ${i}`);
      await store.close();
      fs.rmSync(dataDir, { recursive: true });
    });

    it('collects packs that hold no catalogued content and pack files no record owns, never one being appended to', async () => {
      const dataDir = tempDir();
      const data = randomContent(2000);
      let store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      const [{ entry }] = (await store.content.storeMany([{ parts: [data], entry: entryOf(data) }])) as [
        { entry: CatalogEntry },
        ...unknown[],
      ];
      await store.close();
      // Another run: a batch of duplicates only begins a pack that locates nothing.
      store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      await store.content.storeMany([{ parts: [data], entry: entryOf(data) }]);
      assert.equal(packFiles(dataDir).length, 2);
      const stray = path.join(dataDir, 'content', 'packs', 'abcd00000000000000000000.pack');
      fs.writeFileSync(stray, randomContent(100));
      const old = new Date(Date.now() - 3600_000);
      fs.utimesSync(stray, old, old);
      const later = new Date(Date.now() + 3600_000);
      // The empty pack is the one this process appends to: kept. The stray file goes.
      assert.deepEqual(await store.content.collectGarbage(later), { stagingAreas: 0, orphans: 1 });
      assert.equal(packFiles(dataDir).length, 2);
      await store.close();
      store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      assert.deepEqual(
        await store.content.collectGarbage(new Date(Date.now() - 60_000)),
        {
          stagingAreas: 0,
          orphans: 0,
        },
        'nothing before the cutoff',
      );
      assert.deepEqual(await store.content.collectGarbage(later), { stagingAreas: 0, orphans: 1 });
      assert.equal(packFiles(dataDir).length, 1);
      assert.equal(packRows(dataDir).length, 1);
      assert.deepEqual(await readAll(store.content.read(entry)), data, 'the pack with content stays');
      await store.close();
      fs.rmSync(dataDir, { recursive: true });
    });

    it('fails a batch whose pack was collected before it was catalogued, cataloguing none of it; the next batch begins a new pack', async () => {
      const dataDir = tempDir();
      const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      const a = randomContent(100);
      await store.content.storeMany([{ parts: [a], entry: entryOf(a) }]);
      // Another process's GC forgets the pack, as it would one that located nothing.
      const db = new Database(path.join(dataDir, 'archive.sqlite'));
      db.prepare('DELETE FROM packed').run();
      db.prepare('DELETE FROM packs').run();
      db.close();
      const b = randomContent(200);
      await assert.rejects(store.content.storeMany([{ parts: [b], entry: entryOf(b) }]), /was removed/);
      assert.equal(await store.catalog.findByKey(keyOf(b)), undefined);
      const [outcome] = await store.content.storeMany([{ parts: [b], entry: entryOf(b) }]);
      assert.equal(outcome!.status, 'stored');
      assert.deepEqual(await readAll(store.content.read(outcome!.entry)), b);
      assert.equal(packRows(dataDir).length, 1, 'a new pack, recorded');
      assert.equal(packFiles(dataDir).length, 2);
      await store.close();
      fs.rmSync(dataDir, { recursive: true });
    });

    it('fails a batch whose pack sync fails, cataloguing none of it, and puts the next batch in a new pack', async () => {
      const dataDir = tempDir();
      const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      const a = randomContent(100);
      await store.content.storeMany([{ parts: [a], entry: entryOf(a) }]);
      const faults = await injectSyncFailures();
      try {
        faults.failing = 1;
        const b = randomContent(300);
        await assert.rejects(store.content.storeMany([{ parts: [b], entry: entryOf(b) }]), /fdatasync failed/);
        assert.equal(await store.catalog.findByKey(keyOf(b)), undefined);
        const [outcome] = await store.content.storeMany([{ parts: [b], entry: entryOf(b) }]);
        assert.deepEqual(await readAll(store.content.read(outcome!.entry)), b);
        assert.equal(packFiles(dataDir).length, 2, 'the failed pack takes no more bytes');
      } finally {
        faults.restore();
      }
      assert.deepEqual(await readAll(store.content.read((await store.catalog.findByKey(keyOf(a)))!)), a);
      await store.close();
      fs.rmSync(dataDir, { recursive: true });
    });
  });

  it('reads what another process committed (two processes can share one DATA_DIR)', async () => {
    const dataDir = tempDir();
    const writer = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const reader = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const data = randomContent(3000);
    const id = await writer.content.stage(new Date());
    await writer.content.write(id, 0, [data.subarray(0, 1024), data.subarray(1024, 2048), data.subarray(2048)]);
    const { entry } = await writer.content.commit(id, {
      key: keyOf(data),
      fileName: 'x',
      contentType: 'text/plain',
      uploadDate: new Date(),
    });
    assert.deepEqual(await readAll(reader.content.read(entry)), data);
    await writer.close();
    await reader.close();
    fs.rmSync(dataDir, { recursive: true });
  });

  it('drops staged bytes after a failed sync at commit, so a retried commit cannot catalogue bytes the disk may have lost', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const faults = await injectSyncFailures();
    try {
      const data = randomContent(5000);
      const entry = { key: keyOf(data), fileName: 'x.pdf', contentType: 'application/pdf', uploadDate: new Date() };
      const id = await store.content.stage(new Date());
      await store.content.write(id, 0, [data]);
      faults.failing = 1;
      await assert.rejects(
        store.content.commit(id, entry),
        (err: unknown) =>
          err instanceof StagedBytesLostError &&
          err.keptBytes === 0 &&
          (err.cause as NodeJS.ErrnoException).code === 'EIO',
      );
      // The retry's sync succeeds (the kernel may have marked the lost pages clean): the bytes must be gone.
      await assert.rejects(store.content.commit(id, entry), /holds not all/);
      assert.equal(await store.catalog.findByKey(entry.key), undefined, 'nothing catalogued');
      // Sent again, they commit, and read back with their checksums.
      await store.content.write(id, 0, [data.subarray(0, 3000), data.subarray(3000)]);
      const { status, entry: committed } = await store.content.commit(id, entry);
      assert.equal(status, 'stored');
      assert.deepEqual(await readAll(store.content.read(committed)), data);
    } finally {
      faults.restore();
      await store.close();
      fs.rmSync(dataDir, { recursive: true });
    }
  });

  it('keeps what a background sync put on disk and drops what followed a failed one, also when another process commits', async () => {
    const dataDir = tempDir();
    let store = openEmbeddedStore({ dataDir, chunkSize: 1024, syncEveryBytes: 4096 });
    const faults = await injectSyncFailures();
    try {
      const data = randomContent(10_000);
      const entry = { key: keyOf(data), fileName: 'x.pdf', contentType: 'application/pdf', uploadDate: new Date() };
      const id = await store.content.stage(new Date());
      await store.content.write(id, 0, [data.subarray(0, 4096)]); // a background sync: on disk
      await faults.settled();
      faults.failing = 1;
      await store.content.write(id, 4096, [data.subarray(4096, 8200)]); // a background sync that fails
      await faults.settled();
      await store.content.write(id, 8200, [data.subarray(8200)]);
      // The failure outlives the process that saw it: another one commits, and its own sync succeeds.
      await store.close();
      store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      await assert.rejects(
        store.content.commit(id, entry),
        (err: unknown) => err instanceof StagedBytesLostError && err.keptBytes === 4096,
      );
      assert.equal(fs.statSync(path.join(dataDir, 'content', id.slice(0, 2), id.slice(2, 4), id)).size, 4096);
      await store.content.write(id, 4096, [data.subarray(4096)]);
      const { entry: committed } = await store.content.commit(id, entry);
      assert.deepEqual(await readAll(store.content.read(committed)), data);
    } finally {
      faults.restore();
      await store.close();
      fs.rmSync(dataDir, { recursive: true });
    }
  });

  it('refuses to change or remove audit events, even through SQL on the database file', async () => {
    const dir = tempDir();
    const store = openEmbeddedStore({ dataDir: dir, chunkSize: 1024 });
    await store.audit.append({
      at: new Date(),
      action: 'login',
      userId: 'u',
      userName: 'clerk',
      note: null,
      unit: null,
      address: null,
      fileId: null,
      fileName: null,
      detail: '',
    });
    await store.close();
    const db = new Database(path.join(dir, 'archive.sqlite'));
    try {
      assert.throws(() => db.prepare("UPDATE audit SET user_name = 'someone else'").run(), /append-only/);
      assert.throws(() => db.prepare('DELETE FROM audit').run(), /append-only/);
      assert.equal(db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM audit').get()!.n, 1);
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('near-duplicate lookup keys in two levels', () => {
    const fingerprint = (n: number, keys: number[]) => nearFingerprint(n.toString(16).padStart(24, '0'), keys);
    const rows = (db: Database.Database, table: string) =>
      db.prepare<[], { n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n;
    const found = async (index: EmbeddedNearDuplicateIndex, keys: number[]) =>
      (await index.candidates('f'.repeat(24), keys, 10)).map((f) => f.fileId).sort();

    it('merges the recent keys into the main table once they reach the limit, and finds and replaces fingerprints on either side of a merge', async () => {
      const dir = tempDir();
      const db = openEmbeddedDatabase(dir);
      try {
        const index = new EmbeddedNearDuplicateIndex(db, 10);
        await index.put([fingerprint(1, [10, 11, 12, 13]), fingerprint(2, [20, 21, 22, 13])]);
        assert.deepEqual([rows(db, 'near_keys_recent'), rows(db, 'near_keys')], [8, 0], 'below the limit: all recent');
        await index.put([fingerprint(3, [30, 31, 32, 2 ** 53 - 1])]);
        assert.deepEqual([rows(db, 'near_keys_recent'), rows(db, 'near_keys')], [0, 12], 'merged at the limit');
        await index.put([fingerprint(4, [40, 13])]);
        assert.deepEqual(
          await found(index, [13]),
          [fingerprint(1, []).fileId, fingerprint(2, []).fileId, fingerprint(4, []).fileId],
          'one key, found in both levels',
        );
        assert.deepEqual(await found(index, [2 ** 53 - 1]), [fingerprint(3, []).fileId]);
        // Fingerprinted again: its merged keys and its recent ones give way to the new keys.
        await index.put([fingerprint(1, [50]), fingerprint(4, [50])]);
        assert.deepEqual(await found(index, [10, 11, 12, 40]), []);
        assert.deepEqual(await found(index, [13]), [fingerprint(2, []).fileId]);
        assert.deepEqual(await found(index, [50]), [fingerprint(1, []).fileId, fingerprint(4, []).fileId]);
        assert.deepEqual((await index.get(fingerprint(4, []).fileId))?.keys, [50]);
        // A second index over the same file (another process) counts what the first added before merging.
        const other = new EmbeddedNearDuplicateIndex(db, 10);
        await other.put([fingerprint(5, [60, 61, 62, 63, 64, 65, 66, 67])]);
        assert.deepEqual(
          [rows(db, 'near_keys_recent'), rows(db, 'near_keys')],
          [0, 18],
          'merged: the 2 recent rows of the first count too',
        );
        assert.deepEqual(
          await found(index, [13, 50, 65]),
          [1, 2, 4, 5].map((n) => fingerprint(n, []).fileId),
        );
      } finally {
        db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('files every key of a large batch under its own fingerprint, whatever order the keys are written in', async () => {
      const dir = tempDir();
      const db = openEmbeddedDatabase(dir);
      try {
        const index = new EmbeddedNearDuplicateIndex(db);
        // 40 fingerprints × 30 keys: several statements' worth, keys spread over the whole range, some shared.
        const keysOf = (n: number) =>
          Array.from({ length: 30 }, (_, k) => (k === 0 ? 7 : Math.floor(((n * 31 + k) * 2654435761) % 2 ** 48)));
        const fps = Array.from({ length: 40 }, (_, n) => fingerprint(n + 1, keysOf(n + 1)));
        await index.put(fps);
        for (const fp of fps)
          assert.deepEqual(await found(index, fp.keys.slice(1)), [fp.fileId], `the keys of ${fp.fileId}`);
        assert.equal((await index.candidates('f'.repeat(24), [7], 100)).length, 40, 'the shared key');
        assert.equal(rows(db, 'near_keys_recent'), 40 * 29 + 40);
        // Keys outside the range the fast sort packs still go with their own fingerprint.
        const odd = [fingerprint(41, [-3, 9, 2 ** 50]), fingerprint(42, [9, 2 ** 52])];
        await index.put(odd);
        assert.deepEqual(await found(index, [-3, 2 ** 50]), [odd[0]!.fileId]);
        assert.deepEqual(await found(index, [2 ** 52]), [odd[1]!.fileId]);
      } finally {
        db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('replaces a near-duplicate index with text keys (its first form) and queues every catalogued file to be fingerprinted again, keeping the pairs', async () => {
      const dir = tempDir();
      const store = openEmbeddedStore({ dataDir: dir, chunkSize: 1024 });
      const data = randomContent(100);
      const id = await store.content.stage(new Date());
      await store.content.write(id, 0, [data]);
      const { entry } = await store.content.commit(id, {
        key: keyOf(data),
        fileName: 'a.txt',
        contentType: 'text/plain',
        uploadDate: new Date(),
      });
      await store.close();
      const old = new Database(path.join(dir, 'archive.sqlite'));
      old.exec(`DROP TABLE near_keys; DROP TABLE near_fingerprints;
        CREATE TABLE near_fingerprints (file_id TEXT PRIMARY KEY, format TEXT, skipped TEXT, units INTEGER NOT NULL, short INTEGER NOT NULL, simhash TEXT, keys TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE near_keys (key TEXT NOT NULL, file_id TEXT NOT NULL, PRIMARY KEY (key, file_id)) WITHOUT ROWID;
        DELETE FROM fingerprint_jobs;
        ALTER TABLE near_pairs DROP COLUMN pages;`);
      old
        .prepare(`INSERT INTO near_fingerprints VALUES (?, 'txt', NULL, 800, 0, '0123456789abcdef', '["s0:123"]', 0)`)
        .run(entry.fileId);
      old.prepare(`INSERT INTO near_keys VALUES ('s0:123', ?)`).run(entry.fileId);
      old
        .prepare(`INSERT INTO near_pairs VALUES (?, ?, 'simhash', 1, 0.9, 0.9, 'a', 'b', 0)`)
        .run(entry.fileId, 'f'.repeat(24));
      old.close();
      const reopened = openEmbeddedStore({ dataDir: dir, chunkSize: 1024 });
      try {
        assert.equal(await reopened.nearDuplicates.get(entry.fileId), undefined, 'the old fingerprint is gone');
        assert.deepEqual(await reopened.fingerprintQueue.counts(new Date()), { queued: 1, running: 0, failed: 0 });
        assert.deepEqual(
          (await reopened.fingerprintQueue.take('me', new Date(), 60_000, 10)).map((j) => j.fileId),
          [entry.fileId],
        );
        assert.equal((await reopened.nearDuplicates.counts()).pairs, 1);
        // Pairs found before scans were compared page by page have no pages.
        assert.equal((await reopened.nearDuplicates.pair(entry.fileId, 'f'.repeat(24)))?.pages, undefined);
      } finally {
        await reopened.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('adds the pages column to a near-duplicate index made before scanned pages had image fingerprints, its fingerprints kept with no pages', async () => {
      const dir = tempDir();
      const store = openEmbeddedStore({ dataDir: dir, chunkSize: 1024 });
      const { entry } = await commitBytes(store, randomContent(100));
      await store.nearDuplicates.put([nearFingerprint(entry.fileId, [7])]);
      await store.close();
      const old = new Database(path.join(dir, 'archive.sqlite'));
      old.exec('ALTER TABLE near_fingerprints DROP COLUMN pages');
      old.close();
      const reopened = openEmbeddedStore({ dataDir: dir, chunkSize: 1024 });
      try {
        assert.deepEqual(await reopened.nearDuplicates.get(entry.fileId), nearFingerprint(entry.fileId, [7]));
        const pages: PageFingerprint[] = [{ hash: '3a5f0c91e7b24d68', units: 2, box: [229, 152, 548, 378] }];
        await reopened.nearDuplicates.put([nearFingerprint(entry.fileId, [7], { pages })]);
        assert.deepEqual((await reopened.nearDuplicates.get(entry.fileId))?.pages, pages);
      } finally {
        await reopened.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it("gives the pages recorded before their ink's box was kept no box (they are not paired on their images)", async () => {
      const dir = tempDir();
      const store = openEmbeddedStore({ dataDir: dir, chunkSize: 1024 });
      try {
        const { entry } = await commitBytes(store, randomContent(100));
        await store.nearDuplicates.put([nearFingerprint(entry.fileId, [7])]);
        const db = new Database(path.join(dir, 'archive.sqlite'));
        db.prepare('UPDATE near_fingerprints SET pages = ? WHERE file_id = ?').run(
          JSON.stringify([{ hash: '3a5f0c91e7b24d68', units: 2 }]),
          entry.fileId,
        );
        db.close();
        assert.deepEqual((await store.nearDuplicates.get(entry.fileId))?.pages, [
          { hash: '3a5f0c91e7b24d68', units: 2, box: null },
        ]);
      } finally {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

describe('a data directory made before the ledger recorded what each upload action counted', () => {
  it('opens, answers the actions it counted, leaves them counted, and reverses and restores those counted since', async () => {
    const dataDir = tempDir();
    try {
      const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      const { entry } = await commitBytes(store, randomContent(100));
      const clerk = testAccount();
      const earlier = uploadAction(
        uploadRecord(clerk, entry.fileId, '旧.pdf', new Date(Date.UTC(2026, 0, 1))),
        'tus:old',
      );
      const answer = await store.ledger.count(earlier);
      await store.close();
      // As that version made them: the keys with their answers only, no changes.
      const db = new Database(path.join(dataDir, 'archive.sqlite'));
      db.exec(`
        DROP INDEX upload_keys_entry;
        DROP TABLE upload_changes;
        CREATE TABLE upload_keys_before (key TEXT PRIMARY KEY, account_id TEXT NOT NULL, file_id TEXT NOT NULL,
          status TEXT NOT NULL, stored INTEGER NOT NULL, upload_count INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO upload_keys_before SELECT key, account_id, file_id, status, stored, upload_count, at FROM upload_keys;
        DROP TABLE upload_keys;
        ALTER TABLE upload_keys_before RENAME TO upload_keys;`);
      db.close();

      const upgraded = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      try {
        assert.deepEqual(await upgraded.ledger.count(earlier), { ...answer, repeated: true });
        assert.equal(await upgraded.ledger.reverse('tus:old', 'r1'), 'unrecorded');
        const later = uploadAction(
          uploadRecord(clerk, entry.fileId, '新.pdf', new Date(Date.UTC(2026, 0, 5))),
          'tus:new',
        );
        assert.equal((await upgraded.ledger.count(later)).uploadCount, 2);
        assert.equal(await upgraded.ledger.reverse('tus:new', 'r2'), 'reversed');
        // The upload counted before, known by its entry only, is the entry's first and last.
        const [e] = await upgraded.ledger.entriesForFile(entry.fileId);
        assert.deepEqual(
          [e!.uploadCount, e!.uploadFileName, e!.lastUploadFileName, e!.lastUploadTime],
          [1, '旧.pdf', '旧.pdf', new Date(Date.UTC(2026, 0, 1))],
        );
        assert.equal(await upgraded.ledger.restore('tus:old', 's1'), 'unrecorded');
        assert.equal(await upgraded.ledger.restore('tus:new', 's2'), 'restored');
        const [restored] = await upgraded.ledger.entriesForFile(entry.fileId);
        assert.deepEqual(
          [restored!.uploadCount, restored!.uploadFileName, restored!.lastUploadFileName, restored!.lastUploadTime],
          [2, '旧.pdf', '新.pdf', new Date(Date.UTC(2026, 0, 5))],
        );
      } finally {
        await upgraded.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('embedded store: a batch of reversals fails whole within its transaction', () => {
  it('leaves every change of a failed batch unmade, and the batch sent again makes each once', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    try {
      const { entry } = await commitBytes(store, randomContent(100));
      const clerk = testAccount();
      const keys: string[] = [];
      for (const d of [1, 2, 3]) {
        const action = uploadAction(uploadRecord(clerk, entry.fileId, `${d}.pdf`, new Date(Date.UTC(2026, 2, d))));
        await store.ledger.count(action);
        keys.push(action.key);
      }
      // The disk "fails" at the second change's record (another connection's trigger, as a full disk would).
      const db = new Database(path.join(dataDir, 'archive.sqlite'));
      db.exec(
        "CREATE TRIGGER failing BEFORE INSERT ON upload_changes WHEN new.key = 'r1' BEGIN SELECT RAISE(ABORT, 'disk full'); END",
      );
      const batch = keys.map((actionKey, i) => ({ actionKey, changeKey: `r${i}` }));
      await assert.rejects(store.ledger.reverseMany(batch), /disk full/);
      const uploadCount = async () => (await store.ledger.entriesForFile(entry.fileId))[0]?.uploadCount ?? 0;
      assert.equal(await uploadCount(), 3, 'the first change, made before the failure, was rolled back with it');
      db.exec('DROP TRIGGER failing');
      db.close();
      assert.deepEqual(await store.ledger.reverseMany(batch), ['reversed', 'reversed', 'reversed']);
      assert.deepEqual(await store.ledger.reverseMany(batch), ['repeated', 'repeated', 'repeated']);
      assert.equal(await uploadCount(), 0);
    } finally {
      await store.close();
    }
  });
});
