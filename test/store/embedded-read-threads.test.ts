import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { inPartition, inStripe, inStripes, ReadThreads } from '../../server/store/embedded/read-threads.js';
import { tempDir } from '../support/stores.js';

/** A database in a directory of its own whose table `files` (`columns`) has 20,000 rows, `row(n)` for n from 1. */
function filesDatabase(columns: string, row: (n: number) => unknown[]): { dir: string; file: string } {
  const dir = tempDir();
  const file = path.join(dir, 'archive.sqlite');
  const db = new Database(file);
  db.exec(`CREATE TABLE files (${columns})`);
  const insert = db.prepare(
    `INSERT INTO files VALUES (${columns
      .split(',')
      .map(() => '?')
      .join(', ')})`,
  );
  db.transaction(() => {
    for (let n = 1; n <= 20_000; n++) insert.run(...row(n));
  })();
  db.close();
  return { dir, file };
}

describe('read threads: one statement over partitions of the files, off the thread that serves requests', () => {
  let dir: string;
  let file: string;
  before(() => ({ dir, file } = filesDatabase('file_no INTEGER PRIMARY KEY', (n) => [n])));
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

  it('gives every file to exactly one partition by stripes of numbers, ranges and condition alike, files numbered since included', async () => {
    const threads = new ReadThreads(file, 1024, 3);
    try {
      // The stripes were measured when the last file was number 9,000: 11,000 have come since.
      const stripe = threads.stripeLength(9_000);
      const ranged = await threads.partitioned<{ file_no: number }>(
        inStripes('file_no', (range) => `SELECT file_no FROM files WHERE ${range}`),
        { stripe },
      );
      const all = ranged.flat().map((r) => r.file_no);
      assert.equal(all.length, 20_000);
      assert.equal(new Set(all).size, 20_000);
      assert.ok(ranged.every((rows) => rows.some((r) => r.file_no < 9_000)));
      const conditioned = await threads.partitioned<{ file_no: number }>(
        `SELECT file_no FROM files WHERE ${inStripe('file_no')}`,
        { stripe },
      );
      assert.deepEqual(
        conditioned.map((rows) => rows.map((r) => r.file_no).sort((a, b) => a - b)),
        ranged.map((rows) => rows.map((r) => r.file_no).sort((a, b) => a - b)),
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

describe('read threads: the first rows of a ranking in each partition, walked down an upper bound of the key', () => {
  let dir: string;
  let file: string;
  before(() => {
    // Each file's rank key is at most its bound; a fifth have no row (key NULL). Ties on the key
    // are broken by a name whose byte order is not JavaScript's (ｆ before 😀 in UTF-8, after in UTF-16).
    ({ dir, file } = filesDatabase('file_no INTEGER PRIMARY KEY, bound INTEGER, rank_key INTEGER, name TEXT', (n) => {
      const bound = (n * 7919) % 500;
      return [n, bound, n % 5 === 0 ? null : (n * 104729) % (bound + 1), n % 2 ? `ｆ${n}` : `😀${n}`];
    }));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const ranked = `FROM files WHERE rank_key IS NOT NULL AND ${inPartition('file_no')}`;
  const statements = (budget: number) => ({
    candidates: `SELECT file_no, bound, 1 AS cost FROM files WHERE ${inPartition('file_no')} ORDER BY bound DESC`,
    row: 'SELECT file_no, rank_key, name FROM files WHERE file_no = @file_no AND rank_key IS NOT NULL',
    count: `SELECT COUNT(*) AS total ${ranked}`,
    whole: `SELECT file_no, rank_key, name, COUNT(*) OVER () AS total, 'whole' AS ranked ${ranked} ORDER BY rank_key DESC, name LIMIT @rows`,
    key: 'rank_key',
    tie: 'name',
    rows: 120,
    budget,
  });
  type Ranked = { file_no: number; rank_key: number; name: string; total: number; ranked?: string };

  it('are the rows of ranking each partition whole, with its total, whether walked or, past the budget, ranked whole', async () => {
    const threads = new ReadThreads(file, 1024, 2);
    try {
      const whole = await threads.partitioned<Ranked>(statements(0).whole, { rows: 120 });
      assert.ok(whole.every((rows) => rows.length === 120));
      assert.equal(whole[0]![0]!.total + whole[1]![0]!.total, 16_000);
      const walked = await threads.partitionedTop<Ranked>(statements(20_000), { rows: 120 });
      const strip = (rows: Ranked[]) => rows.map(({ ranked: _, ...row }) => row);
      assert.deepEqual(walked, whole.map(strip));
      assert.ok(
        walked.flat().every((r) => r.ranked === undefined),
        'walked',
      );
      const pastBudget = await threads.partitionedTop<Ranked>(statements(50), { rows: 120 });
      assert.deepEqual(pastBudget, whole);
    } finally {
      threads.close();
    }
  });
});
