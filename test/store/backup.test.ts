import assert from 'node:assert/strict';
import fs from 'node:fs';
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { backupEmbedded, restoreEmbedded } from '../../server/store/embedded/backup.js';
import { openEmbeddedStore } from '../../server/store/embedded.js';
import { keyOf, randomContent, readAll, stageBytes } from '../support/content.js';
import { damageContent, embeddedTarget, tempDir, type OpenedStore } from '../support/stores.js';
import { downgradeToFileIds } from '../support/earlier-schema.js';

const CS = 1024;

describe('embedded store backup', () => {
  let opened: OpenedStore;
  let dirs: string[];
  beforeEach(async () => {
    opened = await embeddedTarget.open({ chunkSize: CS });
    dirs = [];
  });
  afterEach(async () => {
    mock.restoreAll();
    await opened.dispose();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  const dir = (prefix: string) => {
    const made = tempDir(prefix);
    dirs.push(made);
    return made;
  };
  const commit = async (data: Buffer) => {
    const staged = await stageBytes(opened.store, data);
    return (
      await opened.store.content.commit(staged.stagingId, {
        key: staged.key,
        fileName: 'f.pdf',
        contentType: 'application/pdf',
        uploadDate: new Date(),
      })
    ).entry;
  };
  const contentFile = (root: string, fileId: string) =>
    path.join(root, 'content', fileId.slice(0, 2), fileId.slice(2, 4), fileId);
  const restoredFiles = async (backup: string) => {
    const restored = dir('archive-restored-');
    fs.rmSync(restored, { recursive: true });
    await restoreEmbedded(backup, restored);
    const store = openEmbeddedStore({ dataDir: restored, chunkSize: CS });
    try {
      return (await store.catalog.scan(undefined, 100)).map((e) => e.fileId).sort();
    } finally {
      await store.close();
    }
  };

  it('names each chunk changed on disk (file and chunk) in the report and the manifest, and still backs the file up as it is', async () => {
    const data = randomContent(5 * CS + 17);
    const changed = await commit(data);
    const intact = await commit(randomContent(3 * CS));
    const short = await commit(randomContent(4 * CS));
    await damageContent(opened, changed.fileId, { kind: 'flip-byte', offset: 2 * CS + 5 });
    await damageContent(opened, changed.fileId, { kind: 'flip-byte', offset: 5 * CS + 3 });
    await damageContent(opened, short.fileId, { kind: 'lose-chunk', n: 3 });
    const target = dir('archive-backup-');
    const byFile = (a: { fileId: string; chunk: number }, b: { fileId: string; chunk: number }) =>
      a.fileId.localeCompare(b.fileId) || a.chunk - b.chunk;
    const expected = [
      { fileId: changed.fileId, chunk: 2, kind: 'corrupted' },
      { fileId: changed.fileId, chunk: 5, kind: 'corrupted' },
      { fileId: short.fileId, chunk: 3, kind: 'missing' },
    ].sort(byFile);

    const report = await backupEmbedded(opened.dataDir!, target);
    assert.deepEqual([...report.damaged].sort(byFile), expected);
    assert.deepEqual(
      [...JSON.parse(fs.readFileSync(path.join(target, 'backup.json'), 'utf8')).damaged].sort(byFile),
      expected,
    );
    assert.deepEqual(
      fs.readFileSync(contentFile(target, changed.fileId)),
      fs.readFileSync(contentFile(opened.dataDir!, changed.fileId)),
      'copied as it is',
    );
    assert.deepEqual(
      await readAll(opened.store.content.read(intact)),
      fs.readFileSync(contentFile(target, intact.fileId)),
    );

    // Brought up to date, the backup still names the damage it holds.
    const again = await backupEmbedded(opened.dataDir!, target);
    assert.deepEqual([...again.damaged].sort(byFile), expected);
    assert.equal(again.copiedFiles, 2, 'the damaged files were checked again, the intact one not copied again');
    assert.deepEqual(await restoredFiles(target), [changed.fileId, intact.fileId, short.fileId].sort());
  });

  it('is not taken for a complete backup when an update is interrupted after its database is in place, and keeps the previous one whole when interrupted before', async () => {
    const first = await commit(randomContent(2 * CS));
    const target = dir('archive-backup-');
    await backupEmbedded(opened.dataDir!, target);
    const second = await commit(randomContent(3 * CS));

    // Interrupted just before the database goes into place: the previous backup, whole.
    const rename = fs.renameSync;
    mock.method(fs, 'renameSync', (from: fs.PathLike, to: fs.PathLike) => {
      if (String(to).endsWith('archive.sqlite')) throw new Error('interrupted');
      return rename(from, to);
    });
    await assert.rejects(backupEmbedded(opened.dataDir!, target), /interrupted/);
    mock.restoreAll();
    assert.deepEqual(await restoredFiles(target), [first.fileId]);

    // Interrupted once the database is in place, before the manifest is (however it is written).
    const writeFile = fs.writeFileSync;
    mock.method(fs, 'renameSync', (from: fs.PathLike, to: fs.PathLike) => {
      if (String(to).endsWith('backup.json')) throw new Error('interrupted');
      return rename(from, to);
    });
    mock.method(fs, 'writeFileSync', (file: fs.PathOrFileDescriptor, ...rest: [string]) => {
      if (String(file).endsWith('backup.json')) throw new Error('interrupted');
      return writeFile(file, ...rest);
    });
    await assert.rejects(backupEmbedded(opened.dataDir!, target), /interrupted/);
    mock.restoreAll();
    JSON.parse(fs.readFileSync(path.join(target, 'backup.json'), 'utf8')); // the previous manifest, never a torn one
    await assert.rejects(
      restoreEmbedded(target, path.join(dir('archive-restored-'), 'data')),
      /is not a complete archive backup .*interrupted/,
    );

    // Run again, it completes.
    await backupEmbedded(opened.dataDir!, target);
    assert.deepEqual(await restoredFiles(target), [first.fileId, second.fileId].sort());
  });
  it('backs up contents kept in pack files: later backups copy only what a pack gained, damage is named, a restore reads them back', async () => {
    const storeMany = async (contents: Buffer[]) =>
      (
        await opened.store.content.storeMany(
          contents.map((bytes) => ({
            parts: [bytes],
            entry: { key: keyOf(bytes), fileName: '页.jpg', contentType: 'image/jpeg', uploadDate: new Date() },
          })),
        )
      ).map((o) => o.entry);
    const firstBatch = [randomContent(3 * CS + 1), randomContent(10), randomContent(CS)];
    const first = await storeMany(firstBatch);
    const own = await commit(randomContent(2 * CS));
    const target = dir('archive-backup-');
    const report = await backupEmbedded(opened.dataDir!, target);
    assert.deepEqual([report.files, report.copiedFiles, report.damaged], [4, 4, []]);
    const firstBytes = 3 * CS + 1 + 10 + CS;
    assert.equal(report.copiedBytes, firstBytes + 2 * CS);

    const later = [randomContent(2 * CS + 5)];
    const [added] = await storeMany(later);
    await damageContent(opened, added!.fileId, { kind: 'flip-byte', offset: CS + 1 });
    const again = await backupEmbedded(opened.dataDir!, target);
    assert.equal(again.copiedFiles, 1, 'only the content the pack gained');
    assert.equal(again.copiedBytes, 2 * CS + 5);
    assert.deepEqual(again.damaged, [{ fileId: added!.fileId, chunk: 1, kind: 'corrupted' }]);

    // The pack cut short inside the last of two new contents: that one is missing bytes, the other intact.
    const [whole, cut] = await storeMany([randomContent(CS + 3), randomContent(3 * CS)]);
    await damageContent(opened, cut!.fileId, { kind: 'lose-chunk', n: 2 });
    const third = await backupEmbedded(opened.dataDir!, target);
    assert.equal(third.copiedFiles, 3, 'the two new ones, and the one found damaged before, again');
    assert.deepEqual(
      third.damaged.filter((d) => d.fileId !== added!.fileId),
      [{ fileId: cut!.fileId, chunk: 2, kind: 'missing' }],
    );
    assert.ok(!third.damaged.some((d) => d.fileId === whole!.fileId));

    const restored = dir('archive-restored-');
    fs.rmSync(restored, { recursive: true });
    await restoreEmbedded(target, restored);
    const store = openEmbeddedStore({ dataDir: restored, chunkSize: CS });
    try {
      for (const [k, entry] of first.entries())
        assert.deepEqual(await readAll(store.content.read(entry)), firstBatch[k], `packed content ${k}`);
      assert.deepEqual(await readAll(store.content.read(own)), await readAll(opened.store.content.read(own)));
      await assert.rejects(readAll(store.content.read(added!)), /does not match its checksum/);
    } finally {
      await store.close();
    }
  });

  it('backs up a data directory of the version before file numbers, naming its damage, and its restore is brought up to date at open', async () => {
    const contents = [randomContent(2 * CS + 7), randomContent(30)];
    const packed = (
      await opened.store.content.storeMany(
        contents.map((bytes) => ({
          parts: [bytes],
          entry: { key: keyOf(bytes), fileName: '页.jpg', contentType: 'image/jpeg', uploadDate: new Date() },
        })),
      )
    ).map((o) => o.entry);
    const ownBytes = randomContent(2 * CS);
    const own = await commit(ownBytes);
    await damageContent(opened, packed[0]!.fileId, { kind: 'flip-byte', offset: CS + 2 });
    // As the earlier version left it (this version has not opened it since).
    const db = new Database(path.join(opened.dataDir!, 'archive.sqlite'));
    downgradeToFileIds(db);
    db.close();

    const target = dir('archive-backup-');
    const report = await backupEmbedded(opened.dataDir!, target);
    assert.equal(report.files, 3);
    assert.deepEqual(report.damaged, [{ fileId: packed[0]!.fileId, chunk: 1, kind: 'corrupted' }]);
    const restored = dir('archive-restored-');
    fs.rmSync(restored, { recursive: true });
    await restoreEmbedded(target, restored);
    const store = openEmbeddedStore({ dataDir: restored, chunkSize: CS });
    try {
      assert.deepEqual(await readAll(store.content.read(packed[1]!)), contents[1]);
      assert.deepEqual(await readAll(store.content.read(own)), ownBytes);
      await assert.rejects(readAll(store.content.read(packed[0]!)), /does not match its checksum/);
    } finally {
      await store.close();
    }
  });

  it('refuses to restore a backup whose pack file is shorter than its contents need', async () => {
    const bytes = randomContent(2 * CS);
    await opened.store.content.storeMany([
      {
        parts: [bytes],
        entry: { key: keyOf(bytes), fileName: 'p.jpg', contentType: 'image/jpeg', uploadDate: new Date() },
      },
    ]);
    const target = dir('archive-backup-');
    await backupEmbedded(opened.dataDir!, target);
    const packs = path.join(target, 'content', 'packs');
    const [pack] = fs.readdirSync(packs);
    fs.truncateSync(path.join(packs, pack!), CS);
    await assert.rejects(restoreEmbedded(target, path.join(dir('archive-restored-'), 'data')), /too short .*damaged/);
  });
});
