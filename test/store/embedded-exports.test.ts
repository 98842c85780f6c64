import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { openEmbeddedDatabase, openEmbeddedStore } from '../../server/store/embedded.js';
import { EmbeddedReports } from '../../server/store/reports/embedded.js';
import { commitBytes, countUpload, randomContent, testAccount, unit, uploadRecord } from '../support/content.js';
import { tempDir } from '../support/stores.js';

describe('embedded store exports', () => {
  it('read each cross-unit file’s units on connections of the export’s own, never on the store’s (whose page cache the uploads need)', async () => {
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
      const reports = new EmbeddedReports(db);
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
      // The page of the same table is read on the store's connection, as before.
      await reports.crossUnit({ ...query, limit: 50, offset: 0 });
      assert.ok(onStoreConnection.length > 0);
    } finally {
      db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('sort a grouped report page in a temporary file past the page cache, then keep the store’s statements’ sorts in memory again', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const clerk = testAccount({ unit: unit('east') });
    const { entry } = await commitBytes(store, randomContent(100));
    for (const day of [3, 4])
      await countUpload(store, uploadRecord(clerk, entry.fileId, 'a.pdf', new Date(Date.UTC(2026, 2, day))));
    await store.close();
    const db = openEmbeddedDatabase(dataDir);
    const settings: string[] = [];
    const pragma = db.pragma.bind(db);
    db.pragma = (source: string, options?: { simple?: boolean }) => {
      if (source.startsWith('temp_store')) settings.push(source);
      return pragma(source, options);
    };
    try {
      const page = await new EmbeddedReports(db).repeatUploaders({
        group: 'user',
        min: 2,
        sort: 'repeatUploads',
        order: 'desc',
        limit: 50,
        offset: 0,
      });
      assert.deepEqual(
        page.items.map((r) => 'repeatUploads' in r && r.repeatUploads),
        [1],
      );
      assert.deepEqual(settings, ['temp_store = FILE', 'temp_store = MEMORY']);
      assert.equal(pragma('temp_store', { simple: true }), 2, 'MEMORY, as the store opened it');
    } finally {
      db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
