import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { StagedBytesLostError } from '../../server/errors.js';
import { openEmbeddedStore } from '../../server/store/embedded/index.js';
import { keyOf, randomContent, readAll } from '../support/content.js';
import { embeddedTarget, injectSyncFailures, tempDir } from '../support/stores.js';
import { storeConformance } from './conformance.js';
import { reportsConformance } from './reports-conformance.js';

storeConformance(embeddedTarget);
reportsConformance(embeddedTarget);

describe('embedded store specifics', () => {
  it('keeps its records in one SQLite file in WAL mode and the bytes in content files, all inside DATA_DIR', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const data = randomContent(2500);
    const id = await store.content.stage(new Date());
    await store.content.write(id, 0, [data.subarray(0, 1024), data.subarray(1024, 2048), data.subarray(2048)]);
    const { entry } = await store.content.commit(id, { key: keyOf(data), fileName: 'x', contentType: 'text/plain', uploadDate: new Date() });
    await store.close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    db.close();
    const file = path.join(dataDir, 'content', entry.fileId.slice(0, 2), entry.fileId.slice(2, 4), entry.fileId);
    assert.deepEqual(fs.readFileSync(file), data, 'chunk n at offset n x chunk size');
    fs.rmSync(dataDir, { recursive: true });
  });

  it('shows no half-committed file after the process is killed while committing', async () => {
    // A child process stages and commits files in a loop and is killed (SIGKILL) at a random
    // moment, several times; every catalogued file must then read back whole and intact.
    const dataDir = tempDir();
    const storeModule = new URL('../../server/store/embedded/index.js', import.meta.url).href;
    const script = `
      import { createHash, randomBytes } from 'node:crypto';
      import { openEmbeddedStore } from ${JSON.stringify(storeModule)};
      const store = openEmbeddedStore({ dataDir: ${JSON.stringify(dataDir)}, chunkSize: 1024 });
      process.stdout.write('ready\\n');
      for (;;) {
        const data = randomBytes(1 + Math.floor(Math.random() * 20000));
        const id = await store.content.stage(new Date());
        const chunks = [];
        for (let i = 0; i < data.length; i += 1024) chunks.push(data.subarray(i, i + 1024));
        await store.content.write(id, 0, chunks);
        const key = { md5: createHash('md5').update(data).digest('hex'), sha256: createHash('sha256').update(data).digest('hex'), length: data.length };
        await store.content.commit(id, { key, fileName: 'f', contentType: 'application/octet-stream', uploadDate: new Date() });
      }
    `;
    for (let round = 0; round < 5; round++) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      await once(child.stdout, 'data');
      await delay(50 + Math.random() * 200);
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const { items, total } = await store.catalog.list({ accountId: 'nobody', limit: 200, offset: 0 });
    assert.ok(total > 0, 'the child committed files before it was killed');
    const sample = items.slice(0, 200);
    for (const { entry } of sample) {
      const bytes = await readAll(store.content.read(entry));
      assert.deepEqual(keyOf(bytes), { md5: entry.fileMD5, sha256: entry.fileSHA256, length: entry.fileLength });
    }
    await store.close();
    fs.rmSync(dataDir, { recursive: true });
  });

  it('collects content files that no record owns', async () => {
    const dataDir = tempDir();
    const store = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const orphan = path.join(dataDir, 'content', 'ab', 'cd', 'abcd00000000000000000000');
    fs.mkdirSync(path.dirname(orphan), { recursive: true });
    fs.writeFileSync(orphan, randomContent(3000));
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(orphan, old, old);
    assert.deepEqual(await store.content.collectGarbage(new Date(Date.now() - 60_000)), { stagingAreas: 0, orphans: 1 });
    assert.equal(fs.existsSync(orphan), false);
    await store.close();
    fs.rmSync(dataDir, { recursive: true });
  });

  it('reads what another process committed (two processes can share one DATA_DIR)', async () => {
    const dataDir = tempDir();
    const writer = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const reader = openEmbeddedStore({ dataDir, chunkSize: 1024 });
    const data = randomContent(3000);
    const id = await writer.content.stage(new Date());
    await writer.content.write(id, 0, [data.subarray(0, 1024), data.subarray(1024, 2048), data.subarray(2048)]);
    const { entry } = await writer.content.commit(id, { key: keyOf(data), fileName: 'x', contentType: 'text/plain', uploadDate: new Date() });
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
        (err: unknown) => err instanceof StagedBytesLostError && err.keptBytes === 0 && (err.cause as NodeJS.ErrnoException).code === 'EIO',
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
      await assert.rejects(store.content.commit(id, entry), (err: unknown) => err instanceof StagedBytesLostError && err.keptBytes === 4096);
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
    await store.audit.append({ at: new Date(), action: 'login', userId: 'u', userName: 'clerk', unit: null, address: null, fileId: null, fileName: null, detail: '' });
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
});
