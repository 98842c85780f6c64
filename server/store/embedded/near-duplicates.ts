import type { FingerprintJob, FingerprintQueue, NearDuplicateIndex, NearDuplicatePair, NearFingerprint } from '../port.js';
import type { Db } from './database.js';

interface FingerprintRow {
  file_id: string;
  format: string | null;
  skipped: string | null;
  units: number;
  short: number;
  simhash: string | null;
  keys: string;
  at: number;
}

const fingerprintOf = (r: FingerprintRow, keys: string[] = (JSON.parse(r.keys) as string[]).sort()): NearFingerprint => ({
  fileId: r.file_id,
  format: r.format,
  skipped: r.skipped,
  units: r.units,
  short: r.short === 1,
  simhash: r.simhash,
  keys,
  at: new Date(r.at),
});

export class EmbeddedNearDuplicateIndex implements NearDuplicateIndex {
  private readonly putTx;
  private readonly addPairsTx;

  constructor(private readonly db: Db) {
    const upsert = db.prepare(
      `INSERT INTO near_fingerprints (file_id, format, skipped, units, short, simhash, keys, at) VALUES (@fileId, @format, @skipped, @units, @short, @simhash, @keys, @at)
       ON CONFLICT (file_id) DO UPDATE SET format = excluded.format, skipped = excluded.skipped, units = excluded.units, short = excluded.short,
         simhash = excluded.simhash, keys = excluded.keys, at = excluded.at`,
    );
    const earlierKeys = db.prepare<[string], { keys: string }>('SELECT keys FROM near_fingerprints WHERE file_id = ?');
    const dropKey = db.prepare('DELETE FROM near_keys WHERE key = ? AND file_id = ?');
    const addKey = db.prepare('INSERT OR IGNORE INTO near_keys (key, file_id) VALUES (?, ?)');
    this.putTx = db.transaction((fps: readonly NearFingerprint[]) => {
      for (const fp of fps) {
        const earlier = earlierKeys.get(fp.fileId);
        if (earlier) for (const key of JSON.parse(earlier.keys) as string[]) dropKey.run(key, fp.fileId);
        upsert.run({ fileId: fp.fileId, format: fp.format, skipped: fp.skipped, units: fp.units, short: fp.short ? 1 : 0, simhash: fp.simhash, keys: JSON.stringify(fp.keys), at: fp.at.getTime() });
        for (const key of fp.keys) addKey.run(key, fp.fileId);
      }
    });
    const upsertPair = db.prepare(
      `INSERT INTO near_pairs (file_a, file_b, method, hamming, jaccard, containment, snippet_a, snippet_b, found_at)
       VALUES (@fileA, @fileB, @method, @hamming, @jaccard, @containment, @snippetA, @snippetB, @foundAt)
       ON CONFLICT (file_a, file_b) DO UPDATE SET method = excluded.method, hamming = excluded.hamming, jaccard = excluded.jaccard,
         containment = excluded.containment, snippet_a = excluded.snippet_a, snippet_b = excluded.snippet_b, found_at = excluded.found_at`,
    );
    this.addPairsTx = db.transaction((pairs: readonly NearDuplicatePair[]) => {
      for (const p of pairs) upsertPair.run({ ...p, foundAt: p.foundAt.getTime() });
    });
  }

  async put(fingerprints: readonly NearFingerprint[]): Promise<void> {
    this.putTx(fingerprints);
  }

  async get(fileId: string): Promise<NearFingerprint | undefined> {
    const row = this.db.prepare<[string], FingerprintRow>('SELECT * FROM near_fingerprints WHERE file_id = ?').get(fileId);
    return row && fingerprintOf(row);
  }

  async candidates(fileId: string, keys: readonly string[], limit: number): Promise<NearFingerprint[]> {
    if (keys.length === 0) return [];
    // One indexed lookup per key (the keys table is the four pigeonhole tables and the LSH
    // buckets in one), the files found counted once.
    const rows = this.db
      .prepare<unknown[], FingerprintRow>(
        `SELECT f.file_id, f.format, f.skipped, f.units, f.short, f.simhash, '[]' AS keys, f.at FROM near_fingerprints f WHERE f.file_id IN (
           SELECT DISTINCT file_id FROM near_keys WHERE key IN (SELECT value FROM json_each(?)) AND file_id <> ?
         ) LIMIT ?`,
      )
      .all(JSON.stringify(keys), fileId, limit);
    return rows.map((r) => fingerprintOf(r, []));
  }

  async addPairs(pairs: readonly NearDuplicatePair[]): Promise<void> {
    this.addPairsTx(pairs);
  }

  async clear(): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM near_keys').run();
      this.db.prepare('DELETE FROM near_fingerprints').run();
      this.db.prepare('DELETE FROM near_pairs').run();
    }).immediate();
  }

  async counts(): Promise<{ fingerprinted: number; skipped: number; pairs: number }> {
    const f = this.db.prepare<[], { fingerprinted: number; skipped: number }>('SELECT COUNT(*) - COUNT(skipped) AS fingerprinted, COUNT(skipped) AS skipped FROM near_fingerprints').get()!;
    const p = this.db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM near_pairs').get()!;
    return { fingerprinted: f.fingerprinted, skipped: f.skipped, pairs: p.n };
  }
}

interface JobRow {
  file_id: string;
  state: FingerprintJob['state'];
  attempts: number;
  due_at: number;
  error: string | null;
}

const jobOf = (r: JobRow): FingerprintJob => ({ fileId: r.file_id, state: r.state, attempts: r.attempts, dueAt: new Date(r.due_at), error: r.error });

/** The fingerprinting queue in one table; each step is one statement or transaction, so processes sharing DATA_DIR agree. */
export class EmbeddedFingerprintQueue implements FingerprintQueue {
  private readonly takeTx;

  constructor(private readonly db: Db) {
    const due = db.prepare<{ now: number; limit: number }, JobRow>(
      `SELECT * FROM fingerprint_jobs WHERE (state = 'queued' AND due_at <= @now) OR (state = 'running' AND lease_until < @now) ORDER BY due_at, file_id LIMIT @limit`,
    );
    const lease = db.prepare(`UPDATE fingerprint_jobs SET state = 'running', holder = ?, lease_until = ?, attempts = attempts + 1 WHERE file_id = ?`);
    this.takeTx = db.transaction((holder: string, now: number, leaseMs: number, limit: number) => {
      const rows = due.all({ now, limit });
      for (const r of rows) lease.run(holder, now + leaseMs, r.file_id);
      return rows.map((r) => jobOf({ ...r, state: 'running', attempts: r.attempts + 1 }));
    });
  }

  async enqueue(fileIds: readonly string[], now: Date): Promise<void> {
    const insert = this.db.prepare(`INSERT OR IGNORE INTO fingerprint_jobs (file_id, state, attempts, due_at) VALUES (?, 'queued', 0, ?)`);
    this.db.transaction(() => {
      for (const id of fileIds) insert.run(id, now.getTime());
    })();
  }

  async requeue(fileIds: readonly string[], now: Date): Promise<void> {
    const upsert = this.db.prepare(
      `INSERT INTO fingerprint_jobs (file_id, state, attempts, due_at) VALUES (?, 'queued', 0, ?)
       ON CONFLICT (file_id) DO UPDATE SET state = 'queued', attempts = 0, due_at = excluded.due_at, holder = NULL, lease_until = NULL, error = NULL`,
    );
    this.db.transaction(() => {
      for (const id of fileIds) upsert.run(id, now.getTime());
    })();
  }

  async take(holder: string, now: Date, leaseMs: number, limit: number): Promise<FingerprintJob[]> {
    // IMMEDIATE: two processes taking at once queue for the write lock instead of taking the same jobs.
    return this.takeTx.immediate(holder, now.getTime(), leaseMs, limit);
  }

  async done(fileId: string, holder: string): Promise<void> {
    this.db.prepare(`DELETE FROM fingerprint_jobs WHERE file_id = ? AND holder = ? AND state = 'running'`).run(fileId, holder);
  }

  async fail(fileId: string, holder: string, error: string, retryAt: Date | null): Promise<void> {
    this.db
      .prepare(`UPDATE fingerprint_jobs SET state = ?, due_at = COALESCE(?, due_at), error = ?, holder = NULL, lease_until = NULL WHERE file_id = ? AND holder = ? AND state = 'running'`)
      .run(retryAt ? 'queued' : 'failed', retryAt?.getTime() ?? null, error, fileId, holder);
  }

  async counts(now: Date): Promise<{ queued: number; running: number; failed: number }> {
    const r = this.db
      .prepare<[number, number], { queued: number; running: number; failed: number }>(
        `SELECT COALESCE(SUM(state = 'queued' OR (state = 'running' AND lease_until < ?)), 0) AS queued,
                COALESCE(SUM(state = 'running' AND lease_until >= ?), 0) AS running,
                COALESCE(SUM(state = 'failed'), 0) AS failed FROM fingerprint_jobs`,
      )
      .get(now.getTime(), now.getTime())!;
    return r;
  }

  async failures(limit: number): Promise<FingerprintJob[]> {
    return this.db.prepare<[number], JobRow>(`SELECT * FROM fingerprint_jobs WHERE state = 'failed' ORDER BY due_at DESC, file_id LIMIT ?`).all(limit).map(jobOf);
  }
}
