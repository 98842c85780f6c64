import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { inPartition, ReadThreads } from '../../server/store/embedded/read-threads.js';
import { tempDir } from '../support/stores.js';

describe('read threads: one statement over partitions of the files, off the thread that serves requests', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = tempDir();
    file = path.join(dir, 'archive.sqlite');
    const db = new Database(file);
    db.exec('CREATE TABLE files (file_no INTEGER PRIMARY KEY)');
    const insert = db.prepare('INSERT INTO files (file_no) VALUES (?)');
    db.transaction(() => {
      for (let n = 1; n <= 20_000; n++) insert.run(n);
    })();
    db.close();
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('gives every file to exactly one partition, in blocks of consecutive numbers', async () => {
    const threads = new ReadThreads(file, 1024, 3);
    try {
      const parts = await threads.partitioned<{ file_no: number }>(
        `SELECT file_no FROM files WHERE ${inPartition('file_no')} ORDER BY file_no`,
        {},
      );
      assert.equal(parts.length, 3);
      const all = parts.flat().map((r) => r.file_no);
      assert.equal(all.length, 20_000);
      assert.equal(new Set(all).size, 20_000);
      assert.ok(parts.every((rows) => rows.length > 0));
      assert.deepEqual(
        parts.map((rows) => rows[0]!.file_no),
        [1, 4096, 8192],
      );
    } finally {
      threads.close();
    }
  });

  it('lets the event loop turn while the partitions run', async () => {
    const threads = new ReadThreads(file, 1024, 2);
    try {
      let turns = 0;
      const ticking = setInterval(() => turns++, 1);
      const [first] = await threads.partitioned<{ n: number }>(
        `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3000000 + @part * 0 + @parts * 0)
         SELECT COUNT(*) AS n FROM c`,
        {},
      );
      clearInterval(ticking);
      assert.equal(first![0]!.n, 3_000_000);
      assert.ok(turns >= 5, `the event loop turned ${turns} times`);
    } finally {
      threads.close();
    }
  });

  it('rejects with the statement’s error, and the threads answer the next statement', async () => {
    const threads = new ReadThreads(file, 1024, 2);
    try {
      await assert.rejects(
        threads.partitioned('SELECT missing_column FROM files WHERE @part + @parts', {}),
        /no such column/,
      );
      const parts = await threads.partitioned<{ n: number }>(
        `SELECT COUNT(*) AS n FROM files WHERE ${inPartition('file_no')}`,
        {},
      );
      assert.equal(parts[0]![0]!.n + parts[1]![0]!.n, 20_000);
    } finally {
      threads.close();
    }
  });

  it('start on first use and end after being idle', async () => {
    const threads = new ReadThreads(file, 1024, 2, 200);
    try {
      assert.equal(threads.running, 0);
      await threads.partitioned(`SELECT COUNT(*) AS n FROM files WHERE ${inPartition('file_no')}`, {});
      assert.equal(threads.running, 2);
      for (let waited = 0; threads.running > 0 && waited < 5000; waited += 50) await sleep(50);
      assert.equal(threads.running, 0);
      const parts = await threads.partitioned<{ n: number }>(
        `SELECT COUNT(*) AS n FROM files WHERE ${inPartition('file_no')}`,
        {},
      );
      assert.equal(parts[0]![0]!.n + parts[1]![0]!.n, 20_000);
    } finally {
      threads.close();
    }
  });
});
