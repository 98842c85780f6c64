import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { openEmbeddedDatabase, openEmbeddedStore } from '../../server/store/embedded.js';
import { selectionBatches } from '../../server/store/embedded/batches.js';
import { readConnection, type Db } from '../../server/store/embedded/database.js';
import { EmbeddedReports } from '../../server/store/reports/embedded.js';
import { commitBytes, countUpload, randomContent, testAccount, unit, uploadRecord } from '../support/content.js';
import { tempDir } from '../support/stores.js';

describe('embedded store reports and exports', () => {
  it('read pages and each exported cross-unit file’s units on connections of their own, never on the store’s (whose page cache the uploads need)', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const east = testAccount({ unit: unit('east') });
    const west = testAccount({ unit: unit('west') });
    for (let i = 0; i < 3; i++) {
      const { entry } = await commitBytes(store, randomContent(100));
      await countUpload(store, uploadRecord(east, entry.fileId, `${i}.pdf`, new Date(Date.UTC(2026, 2, 3))));
      await countUpload(store, uploadRecord(west, entry.fileId, `${i}.pdf`, new Date(Date.UTC(2026, 2, 5))));
    }
    await store.close();
    const db = openEmbeddedDatabase(dataDir);
    const onStoreConnection: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = (sql: string) => {
      onStoreConnection.push(sql);
      return prepare(sql);
    };
    try {
      const reports = EmbeddedReports.open(db);
      const query = { min: 2, sort: 'units', order: 'desc' } as const;
      const rows = [];
      for await (const batch of reports.crossUnitBatches(query, 2)) rows.push(...batch.items);
      assert.equal(rows.length, 3);
      for (const row of rows)
        assert.deepEqual(
          row.uploaders.map((u) => [u.unit.id, u.uploads]),
          [
            ['east', 1],
            ['west', 1],
          ],
        );
      assert.deepEqual(onStoreConnection, [], 'statements the export ran on the store’s connection');
      const page = await reports.crossUnit({ ...query, limit: 50, offset: 0 });
      assert.equal(page.total, 3);
      assert.deepEqual(onStoreConnection, [], 'statements the page ran on the store’s connection');
      reports.close();
    } finally {
      db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('read on a read-only connection that sees what the store committed, sorts past its small cache in a file, and leaves the store’s settings as they are', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const clerk = testAccount({ unit: unit('east') });
    const { entry } = await commitBytes(store, randomContent(100));
    await store.close();
    const db = openEmbeddedDatabase(dataDir);
    const reads = readConnection(db, 1024);
    const reports = EmbeddedReports.open(db);
    try {
      assert.equal(reads.pragma('temp_store', { simple: true }), 1, 'FILE');
      assert.equal(reads.pragma('cache_size', { simple: true }), -1024);
      assert.throws(() => reads.exec('DELETE FROM ledger'), /readonly/);
      const grouped = { group: 'user', min: 2, sort: 'repeatUploads', order: 'desc', limit: 50, offset: 0 } as const;
      assert.equal((await reports.repeatUploaders(grouped)).total, 0);
      // Uploads counted on the store's connection after the reports' was opened.
      const store2 = openEmbeddedStore({ dataDir, chunkSize: 1024 });
      for (const day of [3, 4])
        await countUpload(store2, uploadRecord(clerk, entry.fileId, 'a.pdf', new Date(Date.UTC(2026, 2, day))));
      await store2.close();
      const page = await reports.repeatUploaders(grouped);
      assert.deepEqual(
        page.items.map((r) => 'repeatUploads' in r && r.repeatUploads),
        [1],
      );
      assert.equal(db.pragma('temp_store', { simple: true }), 2, 'MEMORY, as the store opened it');
      assert.equal(db.pragma('cache_size', { simple: true }), -32768);
    } finally {
      reports.close();
      reads.close();
      db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('read an export’s selection off the thread that serves requests: a selection that sorts every row before its first leaves the event loop turning', async () => {
    await onEmptyArchive(async (db) => {
      let turns = 0;
      const ticking = setInterval(() => turns++, 1);
      const batches = numbers(db, 1_000_000, 1000, 'SELECT n, COUNT(*) OVER () AS total FROM c ORDER BY n % 1000, n');
      const first = await batches.next();
      clearInterval(ticking);
      assert.ok(!first.done);
      assert.equal(first.value.total, 1_000_000);
      assert.deepEqual(first.value.items.slice(0, 3), [1000, 2000, 3000]);
      assert.ok(turns >= 5, `the event loop turned ${turns} times while the first batch was read`);
      let rows = first.value.items.length;
      for await (const batch of batches) rows += batch.items.length;
      assert.equal(rows, 1_000_000);
    });
  });

  it('stop reading an export the writer stops taking, and read another afterwards', async () => {
    await onEmptyArchive(async (db) => {
      let taken = 0;
      for await (const batch of numbers(db, 100_000, 100)) {
        assert.equal(batch.total, 100_000);
        taken += batch.items.length;
        if (taken === 300) break;
      }
      assert.equal(taken, 300);
      let all = 0;
      for await (const batch of numbers(db, 100_000, 10_000)) all += batch.items.length;
      assert.equal(all, 100_000);
    });
  });

  it('read at most four exports at once: a fifth begins when one of them ends', async () => {
    await onEmptyArchive(async (db) => {
      const four = [1, 2, 3, 4].map(() => numbers(db, 1000, 10));
      for (const e of four) assert.equal((await e.next()).done, false);
      const fifth = numbers(db, 1000, 10);
      let began = false;
      const first = fifth.next().then((r) => {
        began = true;
        return r;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(began, false, 'the fifth export began while four were being read');
      await four[0]!.return(undefined);
      assert.deepEqual((await first).value?.items.slice(0, 2), [1, 2]);
      for (const e of [...four.slice(1), fifth]) await e.return(undefined);
    });
  });
});

/** `use` given the database of a new, empty archive, closed and removed after it. */
async function onEmptyArchive(use: (db: Db) => Promise<void>): Promise<void> {
  const dataDir = tempDir();
  await openEmbeddedStore({ dataDir, chunkSize: 1024 }).close();
  const db = openEmbeddedDatabase(dataDir);
  try {
    await use(db);
  } finally {
    db.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** An export of the numbers 1 to `count` (`select` over them as `c(n)`; by default in order, counted apart). */
const numbers = (db: Db, count: number, batch: number, select = 'SELECT n FROM c') =>
  selectionBatches<{ n: number }, number>(
    db,
    {
      sql: `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${count}) ${select}`,
      params: {},
      count: select.includes('total') ? undefined : `SELECT ${count} AS n`,
    },
    batch,
    (rows) => rows.map((r) => r.n),
  );
