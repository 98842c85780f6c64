import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Db } from '../../server/store/embedded/database.js';
import { databaseFile } from '../../server/store/embedded/database.js';
import { openEmbeddedDatabase } from '../../server/store/embedded.js';
import { EmbeddedFingerprintQueue } from '../../server/store/near-duplicates/embedded.js';
import { tempDir } from '../support/stores.js';
import { watchedStatements, type RanStatement } from '../support/watched-statements.js';

/**
 * How the embedded store reads the fingerprint queue (issue 43: 2,000,000 files queued at once,
 * polled on the server's main thread): each read that the queue's LIMIT serves, asked of SQLite's
 * planner, walks an index in the order it returns, so it stops after the rows it returns instead
 * of sorting every job due first.
 */
describe('the fingerprint queue on the embedded store: read in index order, never sorted whole', () => {
  let db: Db;
  let queue: EmbeddedFingerprintQueue;
  const ran: RanStatement[] = [];
  const now = new Date(Date.UTC(2026, 10, 29, 12));

  before(async () => {
    db = openEmbeddedDatabase(tempDir());
    // The queue's statements, with the values they ran with, as they are run.
    const watched = watchedStatements(db, ran);
    queue = new EmbeddedFingerprintQueue(watched);
    const ids = Array.from({ length: 2_000 }, (_, i) => `f${String(i).padStart(5, '0')}`);
    await queue.enqueue(ids, new Date(now.getTime() - 60_000));
    await queue.take('h', new Date(now.getTime() - 30_000), 10_000, 20);
    for (const id of ids.slice(0, 5)) await queue.fail(id, 'h', 'unreadable', null);
    // The planner's figures for the table and its indexes, as a real queue's would be.
    db.exec('ANALYZE');
  });
  after(() => db.close());

  const plansOf = (read: () => Promise<unknown>) => async () => {
    ran.length = 0;
    await read();
    assert.ok(ran.length > 0, 'the read ran a statement');
    return ran.map(({ sql, args }) =>
      db
        .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...args)
        .map((row) => row.detail),
    );
  };

  it('a take reads the jobs due and the leases run out in order, each by the index, merged', async () => {
    const [plan] = await plansOf(() => queue.take('h2', now, 60_000, 8))();
    assert.ok(
      plan!.filter((d) => /^SEARCH fingerprint_jobs USING INDEX fingerprint_jobs_order \(state=\?/.test(d)).length ===
        2 && plan!.every((d) => !/TEMP B-TREE|MULTI-INDEX OR|^SCAN fingerprint_jobs/.test(d)),
      `no sort of the jobs due, no walk through the queue:\n${plan!.join('\n')}`,
    );
  });

  it('the counts of each state are read from the index, the queued and failed from it alone', async () => {
    const [plan] = await plansOf(() => queue.counts(now))();
    const searches = plan!.filter((d) =>
      /^SEARCH fingerprint_jobs USING (COVERING )?INDEX fingerprint_jobs_order \(state=\?\)/.test(d),
    );
    assert.ok(
      searches.length === 4 &&
        searches.filter((d) => d.includes('COVERING')).length === 2 &&
        plan!.every((d) => !/^SCAN fingerprint_jobs/.test(d)),
      `no walk through the queue:\n${plan!.join('\n')}`,
    );
  });

  it('a page of failures reads the index backwards', async () => {
    const [plan] = await plansOf(() => queue.failures(20))();
    assert.ok(
      plan!.some((d) => /^SEARCH fingerprint_jobs USING INDEX fingerprint_jobs_order \(state=\?\)/.test(d)) &&
        plan!.every((d) => !/TEMP B-TREE/.test(d)),
      `no sort of the failures:\n${plan!.join('\n')}`,
    );
  });
});

describe('the fingerprint queue of an earlier version on the embedded store', () => {
  it("gets the index in the take's order at its first open, in place of the one without file ids", () => {
    const dir = tempDir();
    openEmbeddedDatabase(dir).close();
    // As an earlier version left it.
    const earlier = new Database(databaseFile(dir));
    earlier.exec(
      'DROP INDEX fingerprint_jobs_order; CREATE INDEX fingerprint_jobs_due ON fingerprint_jobs (state, due_at)',
    );
    earlier.close();
    const db = openEmbeddedDatabase(dir);
    try {
      const indexes = db
        .prepare<[], { name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'fingerprint_jobs' AND sql IS NOT NULL ORDER BY name",
        )
        .all()
        .map((r) => r.name);
      assert.deepEqual(indexes, ['fingerprint_jobs_order']);
    } finally {
      db.close();
    }
  });
});
