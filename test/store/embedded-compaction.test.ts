import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { ContentDamagedError } from '../../server/errors.js';
import type { CatalogEntry } from '../../server/store/catalog/port.js';
import type { CompactionStep } from '../../server/store/content/embedded-compaction.js';
import { forgetPackedContent } from '../../server/store/content/embedded.js';
import { PackFiles, packsFolder } from '../../server/store/content/packs.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import { openEmbeddedStore } from '../../server/store/embedded.js';
import { keyOf, randomContent, readAll } from '../support/content.js';
import { tempDir } from '../support/stores.js';

const CHUNK = 1024;
/** Past the staging TTL of every pack written in a test: compaction may take them all. */
const later = () => new Date(Date.now() + 3600_000);

const entryOf = (data: Uint8Array) => ({
  key: keyOf(data),
  fileName: '第0001页.jpg',
  contentType: 'image/jpeg',
  uploadDate: new Date(),
});

const packFiles = (dataDir: string) =>
  fs.existsSync(packsFolder(dataDir)) ? fs.readdirSync(packsFolder(dataDir)).sort() : [];
const packRows = (dataDir: string) => {
  const db = new Database(path.join(dataDir, 'archive.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT pack_id FROM packs ORDER BY pack_id').pluck().all() as string[]).map(
      (id) => `${id}.pack`,
    );
  } finally {
    db.close();
  }
};
const packBytes = (dataDir: string) =>
  packFiles(dataDir).reduce((sum, name) => sum + fs.statSync(path.join(packsFolder(dataDir), name)).size, 0);

/** Every file under content/ (packs and content files), read whole. */
function everyStoredFile(dataDir: string): Buffer[] {
  return (fs.readdirSync(path.join(dataDir, 'content'), { recursive: true }) as string[])
    .map((name) => path.join(dataDir, 'content', name))
    .filter((file) => fs.statSync(file).isFile())
    .map((file) => fs.readFileSync(file));
}

/** Removes a content from the catalog as a purge does: the catalog's row, and the content's record of where it is. */
function removeFromCatalog(dataDir: string, entry: CatalogEntry): void {
  const db = new Database(path.join(dataDir, 'archive.sqlite'));
  try {
    db.transaction(() => {
      const { file_no } = db.prepare('SELECT file_no FROM catalog WHERE file_id = ?').get(entry.fileId) as {
        file_no: number;
      };
      forgetPackedContent(db, file_no);
      db.prepare('DELETE FROM catalog WHERE file_no = ?').run(file_no);
    })();
  } finally {
    db.close();
  }
}

interface Archive {
  dataDir: string;
  live: Array<{ data: Buffer; entry: CatalogEntry }>;
  /** Contents removed from the catalog: their bytes must be found nowhere after compaction. */
  removed: Buffer[];
  /** The live contents' bytes, all told. */
  readonly liveBytes: number;
}

/**
 * A pack as batch uploads leave it, more than half dead: 120 contents catalogued, then a batch
 * of 40 duplicates of them (appended, never located), then 60 of the first removed from the
 * catalog; another process (this one gone) compacts it.
 */
async function halfDeadPack(removeSome = true): Promise<Archive> {
  const dataDir = tempDir();
  const store = openEmbeddedStore({ dataDir, chunkSize: CHUNK });
  const contents = Array.from({ length: 120 }, (_, i) => randomContent(1 + ((i * 7919) % 5000)));
  const outcomes = await store.content.storeMany(contents.map((data) => ({ parts: [data], entry: entryOf(data) })));
  const again = await store.content.storeMany(
    contents.slice(0, 40).map((data) => ({ parts: [data], entry: entryOf(data) })),
  );
  assert.ok(again.every((o) => o.status === 'duplicate'));
  await store.close();
  const live: Archive['live'] = [];
  const removed: Buffer[] = [];
  for (const [i, data] of contents.entries()) {
    if (removeSome && i % 2 === 1) {
      removeFromCatalog(dataDir, outcomes[i]!.entry);
      removed.push(data);
    } else live.push({ data, entry: outcomes[i]!.entry });
  }
  return {
    dataDir,
    live,
    removed,
    get liveBytes(): number {
      return live.reduce((sum, c) => sum + c.data.length, 0);
    },
  };
}

/** Every live content reads back whole, its chunks checked against their checksums. */
async function assertReadable(store: ArchiveStore, archive: Archive): Promise<void> {
  for (const { data, entry } of archive.live) {
    assert.deepEqual(await readAll(store.content.read(entry)), data, `${entry.fileId} reads back`);
    const [part] = await store.content.readRanges(entry, [{ start: 0, end: Math.min(100, data.length) }]);
    assert.deepEqual(Buffer.from(part!), data.subarray(0, 100), `${entry.fileId}: its proof ranges`);
  }
}

/** Deletes a content as the purge does: its entry marked, its bytes removed, then the entry. */
async function deleteAsPurgeDoes(store: ArchiveStore, fileId: string): Promise<void> {
  const entry = await store.catalog.beginDeletion(fileId, new Date());
  await store.content.remove(entry!);
  await store.catalog.remove(fileId);
}

/** No stored file holds any of the removed contents' bytes. */
function assertErased(archive: Archive): void {
  const files = everyStoredFile(archive.dataDir);
  for (const data of archive.removed.filter((d) => d.length >= 32))
    assert.ok(!files.some((file) => file.includes(data)), 'a removed content’s bytes are found nowhere');
}

describe('compaction of pack files (embedded store)', () => {
  it('copies a half-dead pack’s live contents into a new pack, removes the old one, and gives back its dead bytes', async () => {
    const archive = await halfDeadPack();
    const [old] = packFiles(archive.dataDir);
    const before = packBytes(archive.dataDir);
    const store = openEmbeddedStore({ dataDir: archive.dataDir, chunkSize: CHUNK });
    const report = await store.content.compact(later());
    assert.deepEqual(report, { packs: 1, reclaimedBytes: before - archive.liveBytes });
    const packs = packFiles(archive.dataDir);
    assert.equal(packs.length, 1);
    assert.notEqual(packs[0], old, 'a new pack');
    assert.deepEqual(packRows(archive.dataDir), packs, 'the old pack forgotten, the new one recorded');
    assert.equal(packBytes(archive.dataDir), archive.liveBytes, 'the live contents’ bytes only');
    await assertReadable(store, archive);
    assertErased(archive);
    assert.deepEqual(await store.content.compact(later()), { packs: 0, reclaimedBytes: 0 }, 'nothing more to do');
    await store.close();
    fs.rmSync(archive.dataDir, { recursive: true });
  });

  it('keeps checking the moved contents’ chunks: a byte changed in the new pack fails the read', async () => {
    const archive = await halfDeadPack();
    const store = openEmbeddedStore({ dataDir: archive.dataDir, chunkSize: CHUNK });
    await store.content.compact(later());
    const [pack] = packFiles(archive.dataDir);
    const file = path.join(packsFolder(archive.dataDir), pack!);
    const bytes = fs.readFileSync(file);
    // The first live content of more than one chunk: its second chunk's first byte changed.
    const big = archive.live.find((c) => c.data.length > 2 * CHUNK)!;
    const at = bytes.indexOf(big.data);
    bytes[at + CHUNK] = bytes[at + CHUNK]! ^ 0xff;
    fs.writeFileSync(file, bytes);
    await assert.rejects(
      readAll(store.content.read(big.entry)),
      (err: unknown) => err instanceof ContentDamagedError && err.kind === 'corrupted' && err.offset === CHUNK,
    );
    await store.close();
    fs.rmSync(archive.dataDir, { recursive: true });
  });

  it('leaves a pack less than half dead as it is, unless a content removed from the catalog is in it', async () => {
    const archive = await halfDeadPack(false);
    // 40 duplicates of 120: a quarter of the pack or so is dead.
    const packs = packFiles(archive.dataDir);
    const size = packBytes(archive.dataDir);
    assert.ok(size - archive.liveBytes < size / 2 && size > archive.liveBytes);
    let store = openEmbeddedStore({ dataDir: archive.dataDir, chunkSize: CHUNK });
    assert.deepEqual(await store.content.compact(later()), { packs: 0, reclaimedBytes: 0 });
    assert.deepEqual(packFiles(archive.dataDir), packs);
    // Not yet idle past the staging TTL: left alone whatever it holds.
    await store.close();
    const [gone] = archive.live.splice(7, 1);
    removeFromCatalog(archive.dataDir, gone!.entry);
    archive.removed.push(gone!.data);
    store = openEmbeddedStore({ dataDir: archive.dataDir, chunkSize: CHUNK });
    assert.deepEqual(await store.content.compact(new Date(Date.now() - 3600_000)), { packs: 0, reclaimedBytes: 0 });
    assert.deepEqual(await store.content.compact(later()), {
      packs: 1,
      reclaimedBytes: size - archive.liveBytes,
    });
    await assertReadable(store, archive);
    assertErased(archive);
    await store.close();
    fs.rmSync(archive.dataDir, { recursive: true });
  });

  it('erases the bytes of a content whose catalog entry went without its pack being told', async () => {
    const archive = await halfDeadPack(false);
    const db = new Database(path.join(archive.dataDir, 'archive.sqlite'));
    const [gone] = archive.live.splice(3, 1);
    db.prepare('DELETE FROM catalog WHERE file_id = ?').run(gone!.entry.fileId);
    db.close();
    archive.removed.push(gone!.data);
    const store = openEmbeddedStore({ dataDir: archive.dataDir, chunkSize: CHUNK });
    assert.equal((await store.content.compact(later())).packs, 1);
    assert.equal(packBytes(archive.dataDir), archive.liveBytes);
    await assertReadable(store, archive);
    assertErased(archive);
    await store.close();
    fs.rmSync(archive.dataDir, { recursive: true });
  });

  it('erases the bytes of a content deleted as a purge deletes it (marked, bytes removed, entry removed), however little of its pack is dead', async () => {
    const archive = await halfDeadPack(false);
    const store = openEmbeddedStore({ dataDir: archive.dataDir, chunkSize: CHUNK });
    const [gone] = archive.live.splice(50, 1);
    await deleteAsPurgeDoes(store, gone!.entry.fileId);
    archive.removed.push(gone!.data);
    assert.equal((await store.content.compact(later())).packs, 1);
    assert.equal(packBytes(archive.dataDir), archive.liveBytes);
    await assertReadable(store, archive);
    assertErased(archive);
    await store.close();
    fs.rmSync(archive.dataDir, { recursive: true });
  });

  it('erases the dead copy a later batch wrote of a content once that content is deleted, however little of its pack is dead', async () => {
    const dataDir = tempDir();
    const deleted = randomContent(3000);
    let store = openEmbeddedStore({ dataDir, chunkSize: CHUNK });
    const [first] = await store.content.storeMany([{ parts: [deleted], entry: entryOf(deleted) }]);
    await store.close();
    // Another process's batch, in a pack of its own: 30 new contents and the same bytes again.
    store = openEmbeddedStore({ dataDir, chunkSize: CHUNK });
    const fresh = Array.from({ length: 30 }, (_, i) => randomContent(2000 + i));
    const outcomes = await store.content.storeMany(
      [...fresh, deleted].map((data) => ({ parts: [data], entry: entryOf(data) })),
    );
    assert.equal(outcomes.at(-1)!.status, 'duplicate');
    assert.equal(packFiles(dataDir).length, 2);
    await store.close();
    store = openEmbeddedStore({ dataDir, chunkSize: CHUNK });
    await deleteAsPurgeDoes(store, first!.entry.fileId);
    assert.equal((await store.content.compact(later())).packs, 1, 'the pack holding the copy');
    // Its own pack holds nothing live any more: the garbage collector removes it.
    await store.content.collectGarbage(later());
    const live = fresh.map((data, i) => ({ data, entry: outcomes[i]!.entry }));
    await assertReadable(store, { dataDir, live, removed: [deleted], liveBytes: 0 });
    assertErased({ dataDir, live, removed: [deleted], liveBytes: 0 });
    await store.close();
    fs.rmSync(dataDir, { recursive: true });
  });

  it('erases a dead copy in a pack whose only live content is empty (0 bytes)', async () => {
    // Fault seed 1638333920: a pack holding no live byte, but locating a 0-byte content, was taken
    // for one that locates nothing (GC's to remove), and GC kept it for the content it locates.
    const dataDir = tempDir();
    const deleted = randomContent(3000);
    let store = openEmbeddedStore({ dataDir, chunkSize: CHUNK });
    const [first] = await store.content.storeMany([{ parts: [deleted], entry: entryOf(deleted) }]);
    await store.close();
    store = openEmbeddedStore({ dataDir, chunkSize: CHUNK });
    const empty = Buffer.alloc(0);
    const outcomes = await store.content.storeMany(
      [empty, deleted].map((data) => ({ parts: [data], entry: entryOf(data) })),
    );
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['stored', 'duplicate'],
    );
    assert.equal(packFiles(dataDir).length, 2);
    await store.close();
    store = openEmbeddedStore({ dataDir, chunkSize: CHUNK });
    await deleteAsPurgeDoes(store, first!.entry.fileId);
    await store.content.compact(later());
    await store.content.collectGarbage(later());
    const live = [{ data: empty, entry: outcomes[0]!.entry }];
    assertErased({ dataDir, live, removed: [deleted], liveBytes: 0 });
    await assertReadable(store, { dataDir, live, removed: [deleted], liveBytes: 0 });
    await store.close();
    fs.rmSync(dataDir, { recursive: true });
  });

  it('never compacts the pack this process appends to', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: CHUNK });
    const data = randomContent(3000);
    const [stored] = await store.content.storeMany([{ parts: [data], entry: entryOf(data) }]);
    // Duplicates only: the pack is three quarters dead.
    for (let i = 0; i < 3; i++) await store.content.storeMany([{ parts: [data], entry: entryOf(data) }]);
    assert.deepEqual(await store.content.compact(later()), { packs: 0, reclaimedBytes: 0 });
    await store.close();
    const next = openEmbeddedStore({ dataDir, chunkSize: CHUNK });
    assert.deepEqual(await next.content.compact(later()), { packs: 1, reclaimedBytes: 9000 });
    assert.deepEqual(await readAll(next.content.read(stored!.entry)), data);
    await next.close();
    fs.rmSync(dataDir, { recursive: true });
  });

  it('serves reads and batch uploads while it compacts: a stream begun on the old pack ends whole after the pack is gone', async () => {
    const dataDir = tempDir();
    let store = openEmbeddedStore({ dataDir, chunkSize: 64 * 1024 });
    // Large enough to be streamed from the file (not read at once), in many chunks.
    const big = randomContent(3 * 1024 * 1024 + 17);
    const dead = randomContent(4 * 1024 * 1024);
    const [stored, doomed] = await store.content.storeMany([
      { parts: [big], entry: entryOf(big) },
      { parts: [dead], entry: entryOf(dead) },
    ]);
    await store.close();
    removeFromCatalog(dataDir, doomed!.entry);
    const during: Array<Promise<Buffer>> = [];
    const uploaded: Buffer[] = [];
    let stream: AsyncIterator<unknown> | undefined;
    const steps: CompactionStep[] = [];
    let uploads: Promise<unknown> = Promise.resolve();
    store = openEmbeddedStore({
      dataDir,
      chunkSize: 64 * 1024,
      compaction: {
        afterStep: (step) => {
          steps.push(step);
          if (step === 'copied') {
            // Begun before the switch, on the old pack: one piece read now, the rest after it is removed.
            stream = store.content.read(stored!.entry)[Symbol.asyncIterator]();
            // A batch upload meanwhile goes to this process's own pack.
            const more = [randomContent(5000), randomContent(7000)];
            uploaded.push(...more);
            uploads = store.content.storeMany(more.map((data) => ({ parts: [data], entry: entryOf(data) })));
          }
          if (step === 'switched') during.push(readAll(store.content.read(stored!.entry)));
        },
      },
    });
    const compacting = store.content.compact(later());
    const report = await compacting;
    assert.deepEqual(steps, ['begun', 'copied', 'switched', 'removed']);
    assert.equal(report.packs, 1);
    assert.ok(stream, 'a read began during compaction');
    const firstPiece = await stream.next();
    const first = Buffer.from(firstPiece.value as Uint8Array);
    const rest: Buffer[] = [first];
    for (let r = await stream.next(); !r.done; r = await stream.next()) rest.push(Buffer.from(r.value as Uint8Array));
    assert.deepEqual(Buffer.concat(rest), big, 'the stream begun on the old pack');
    for (const bytes of await Promise.all(during)) assert.deepEqual(bytes, big, 'a read begun after the switch');
    await uploads;
    for (const data of uploaded)
      assert.deepEqual(await readAll(store.content.read((await store.catalog.findByKey(keyOf(data)))!)), data);
    assert.deepEqual(await readAll(store.content.read(stored!.entry)), big, 'a read after it all');
    assert.ok(!everyStoredFile(dataDir).some((file) => file.includes(dead.subarray(0, 4096))), 'the dead bytes gone');
    await store.close();
    fs.rmSync(dataDir, { recursive: true });
  });

  it('finds a content again where another process’s compaction moved it, when the pack it located is gone', () => {
    const dir = tempDir();
    const packs = new PackFiles(dir, { onNewPack: () => {}, newId: () => 'x' });
    fs.writeFileSync(packs.pathOf('bbbbbbbbbbbbbbbbbbbbbbbb'), Buffer.from('..hello'));
    // Located first in a pack removed meanwhile, then, asked again, in the one it was moved to.
    const places = [
      { pack_id: 'aaaaaaaaaaaaaaaaaaaaaaaa', pack_offset: 0 },
      { pack_id: 'bbbbbbbbbbbbbbbbbbbbbbbb', pack_offset: 2 },
    ];
    let asked = 0;
    const [bytes] = packs.readRanges(() => places[Math.min(asked++, 1)], [{ start: 0, end: 5 }])!;
    assert.equal(bytes!.toString(), 'hello');
    // Gone, and located nowhere else: the reader is told (ENOENT, which the store calls missing).
    assert.throws(() => packs.readRanges(() => places[0], [{ start: 0, end: 5 }]), { code: 'ENOENT' });
    fs.rmSync(dir, { recursive: true });
  });

  for (const step of ['begun', 'copied', 'switched', 'removed'] as const)
    it(`leaves every content readable when the process is killed after the step “${step}”, and the next run finishes`, async () => {
      const archive = await halfDeadPack();
      const storeModule = new URL('../../server/store/embedded.js', import.meta.url).href;
      const script = `
        import { openEmbeddedStore } from ${JSON.stringify(storeModule)};
        const store = openEmbeddedStore({
          dataDir: ${JSON.stringify(archive.dataDir)},
          chunkSize: ${CHUNK},
          compaction: { afterStep: (step) => { if (step === ${JSON.stringify(step)}) process.kill(process.pid, 'SIGKILL'); } },
        });
        await store.content.compact(new Date(Date.now() + 3600_000));
        process.stdout.write('finished without being killed\\n');
      `;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let said = '';
      child.stdout.on('data', (d: Buffer) => (said += d.toString()));
      const [, signal] = (await once(child, 'exit')) as [number | null, string | null];
      assert.equal(signal, 'SIGKILL', `killed after ${step} (${said})`);
      const store = openEmbeddedStore({ dataDir: archive.dataDir, chunkSize: CHUNK });
      await assertReadable(store, archive);
      // The next run: GC removes what the killed one left (a new pack that locates nothing, an
      // old pack no row owns), compaction does what is left to do.
      await store.content.collectGarbage(later());
      await store.content.compact(later());
      assert.equal(packFiles(archive.dataDir).length, 1);
      assert.deepEqual(packRows(archive.dataDir), packFiles(archive.dataDir));
      assert.equal(packBytes(archive.dataDir), archive.liveBytes);
      await assertReadable(store, archive);
      assertErased(archive);
      await store.close();
      fs.rmSync(archive.dataDir, { recursive: true });
    });
});
