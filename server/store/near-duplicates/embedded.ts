import type Database from 'better-sqlite3';
import type { Db, EmbeddedSchema } from '../embedded/database.js';
import type {
  InkBox,
  NearDuplicateIndex,
  NearDuplicatePair,
  NearFingerprint,
  PageFingerprint,
  PairPages,
  PairReview,
} from './port.js';
import type { FingerprintJob, FingerprintQueue } from './port.js';
import type { PairRow } from '../embedded/pair-rows.js';

/**
 * Near-duplicates: each file's fingerprint, and its lookup keys (the SimHash's 16-bit blocks, the
 * MinHash's LSH bands: fingerprints sharing a key are candidates) in two levels. A key table with
 * millions of random keys costs a page written per key inserted; new keys therefore go to the small
 * near_keys_recent, whose pages a round of fingerprints shares, and are merged in key order into
 * near_keys (one pass over its pages) once it has grown. A lookup reads both.
 */
const NEAR_INDEX = `
CREATE TABLE IF NOT EXISTS near_fingerprints (
  id      INTEGER PRIMARY KEY,
  file_id TEXT NOT NULL UNIQUE,
  format  TEXT,
  skipped TEXT,
  units   INTEGER NOT NULL,
  short   INTEGER NOT NULL,
  simhash TEXT,
  -- The lookup keys as 64-bit floats: what to remove when the file is fingerprinted again.
  keys    BLOB NOT NULL,
  at      INTEGER NOT NULL,
  -- An image's pages' fingerprints and text units, as JSON ([] for a text document).
  pages   TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS near_keys (
  key         INTEGER NOT NULL,
  fingerprint INTEGER NOT NULL,
  PRIMARY KEY (key, fingerprint)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS near_keys_recent (
  key         INTEGER NOT NULL,
  fingerprint INTEGER NOT NULL,
  PRIMARY KEY (key, fingerprint)
) WITHOUT ROWID;
`;

export const nearDuplicateSchema: EmbeddedSchema = {
  tables: `
${NEAR_INDEX}
CREATE TABLE IF NOT EXISTS near_pairs (
  file_a      TEXT NOT NULL,
  file_b      TEXT NOT NULL,
  method      TEXT NOT NULL,
  hamming     INTEGER,
  jaccard     REAL NOT NULL,
  containment REAL NOT NULL,
  snippet_a   TEXT NOT NULL,
  snippet_b   TEXT NOT NULL,
  found_at    INTEGER NOT NULL,
  -- Two scans compared page by page: their page counts and matching pages, as JSON (PairPages).
  pages       TEXT,
  PRIMARY KEY (file_a, file_b)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS near_pairs_b ON near_pairs (file_b);
CREATE INDEX IF NOT EXISTS near_pairs_found ON near_pairs (found_at);
-- Pairs an administrator marked handled (已处理); not cleared with the index.
CREATE TABLE IF NOT EXISTS near_reviews (
  file_a    TEXT NOT NULL,
  file_b    TEXT NOT NULL,
  at        INTEGER NOT NULL,
  user_id   TEXT NOT NULL,
  user_name TEXT NOT NULL,
  note      TEXT NOT NULL,
  PRIMARY KEY (file_a, file_b)
) WITHOUT ROWID;
-- Files waiting to be fingerprinted (or failed), leased by one process at a time.
CREATE TABLE IF NOT EXISTS fingerprint_jobs (
  file_id     TEXT PRIMARY KEY,
  state       TEXT NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0,
  due_at      INTEGER NOT NULL,
  holder      TEXT,
  lease_until INTEGER,
  error       TEXT
);
-- The queue in the order it is taken (oldest due first), for each state: a take reads the few jobs
-- it leases, never sorts every job due (issue 43: 0.3-0.8 s a poll with 2,000,000 queued).
CREATE INDEX IF NOT EXISTS fingerprint_jobs_order ON fingerprint_jobs (state, due_at, file_id);
`,
  upgrade: (db) => {
    replaceTextKeyedNearIndex(db);
    addPageFingerprints(db);
    addPairPages(db);
    // The queue's index of earlier versions, without file_id: fingerprint_jobs_order serves all it did.
    db.exec('DROP INDEX IF EXISTS fingerprint_jobs_due');
  },
};

/**
 * Data directories made before pages had image fingerprints: the column is added, empty; the
 * settings recorded with the index lack the image thresholds, so the first start under these
 * settings fingerprints every file again (NearDuplicateService.adoptSettings).
 */
function addPageFingerprints(db: Db): void {
  const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('near_fingerprints')").all();
  if (!columns.some((c) => c.name === 'pages'))
    db.exec("ALTER TABLE near_fingerprints ADD COLUMN pages TEXT NOT NULL DEFAULT '[]'");
}

/** Data directories made before scans were compared page by page: their pairs have no pages. */
function addPairPages(db: Db): void {
  const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('near_pairs')").all();
  if (!columns.some((c) => c.name === 'pages')) db.exec('ALTER TABLE near_pairs ADD COLUMN pages TEXT');
}

/**
 * Data directories made when lookup keys were text (the first near-duplicate index): its tables are
 * made anew and every catalogued file is queued to be fingerprinted again; the pairs found stay.
 */
function replaceTextKeyedNearIndex(db: Db): void {
  db.transaction(() => {
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('near_fingerprints')").all();
    if (columns.some((c) => c.name === 'id')) return;
    db.exec('DROP TABLE IF EXISTS near_keys; DROP TABLE IF EXISTS near_fingerprints; DELETE FROM near_keys_recent;');
    db.exec(NEAR_INDEX);
    db.prepare(
      `INSERT INTO fingerprint_jobs (file_id, state, attempts, due_at) SELECT file_id, 'queued', 0, ? FROM catalog WHERE true
       ON CONFLICT (file_id) DO UPDATE SET state = 'queued', attempts = 0, due_at = excluded.due_at, holder = NULL, lease_until = NULL, error = NULL`,
    ).run(Date.now());
  }).immediate();
}

interface FingerprintRow {
  id: number;
  file_id: string;
  format: string | null;
  skipped: string | null;
  units: number;
  short: number;
  simhash: string | null;
  keys: Buffer;
  at: number;
  pages: string;
}

/** Keys are stored with their fingerprint as 64-bit floats (every key is an integer below 2^53). */
const keysBlob = (keys: readonly number[]) => Buffer.from(Float64Array.from(keys).buffer);
const keysOf = (blob: Buffer) =>
  Array.from(new Float64Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength)));

const fingerprintOf = (r: FingerprintRow, keys: number[]): NearFingerprint => ({
  fileId: r.file_id,
  format: r.format,
  skipped: r.skipped,
  units: r.units,
  short: r.short === 1,
  simhash: r.simhash,
  keys,
  // Pages recorded before their ink's box was kept have none.
  pages: (JSON.parse(r.pages) as Array<Omit<PageFingerprint, 'box'> & { box?: InkBox | null }>).map(
    ({ hash, units, box }) => ({ hash, units, box: box ?? null }),
  ),
  at: new Date(r.at),
});

/** A batch's lookup-key rows (key, fingerprint id), to be inserted in key order. */
class KeyRows {
  private readonly keys: Float64Array;
  private readonly ids: Float64Array;
  length = 0;

  constructor(capacity: number) {
    this.keys = new Float64Array(capacity);
    this.ids = new Float64Array(capacity);
  }

  push(key: number, id: number): void {
    this.keys[this.length] = key;
    this.ids[this.length++] = id;
  }

  /** The rows as flat [key, id, key, id, …] parameter lists of at most `size` rows, in key order. */
  *inKeyOrder(size: number): Generator<number[]> {
    const order = this.order();
    for (let start = 0; start < this.length; start += size) {
      const end = Math.min(this.length, start + size);
      const rows = new Array<number>(2 * (end - start));
      for (let i = start; i < end; i++) {
        rows[2 * (i - start)] = this.keys[order[i]!]!;
        rows[2 * (i - start) + 1] = this.ids[order[i]!]!;
      }
      yield rows;
    }
  }

  /**
   * Row positions sorted by key. Lookup keys are in [0, 2^49), so a key's top 32 bits and a position
   * below 2^20 fit one float64 and the typed array's native sort does it (a comparator costs ~3×
   * more); keys sharing their top 32 bits are rare and need no order for the pages' sake.
   */
  private order(): Uint32Array {
    const order = new Uint32Array(this.length);
    if (this.length >= 2 ** 20 || this.keys.some((key) => key < 0 || key >= 2 ** 49)) {
      for (let i = 0; i < this.length; i++) order[i] = i;
      return order.sort((a, b) => this.keys[a]! - this.keys[b]!);
    }
    const packed = new Float64Array(this.length);
    for (let i = 0; i < this.length; i++) packed[i] = Math.floor(this.keys[i]! / 2 ** 17) * 2 ** 20 + i;
    packed.sort();
    for (let i = 0; i < this.length; i++) order[i] = packed[i]! % 2 ** 20;
    return order;
  }
}

/**
 * Rows near_keys_recent holds before they are merged into near_keys: about 32 MB, so its pages stay
 * cached while rounds add to it, and each merge (one ordered pass over near_keys) carries many.
 * Measured on 1M fingerprints (25M keys): 2^20 rows 51 s, 2^21 47-48 s, 2^22 56 s.
 */
export const NEAR_KEYS_MERGE_ROWS = 1 << 21;
/** Rows a statement adds to near_keys_recent (SQLite allows 32,766 parameters). */
const KEYS_PER_STATEMENT = 256;

export class EmbeddedNearDuplicateIndex implements NearDuplicateIndex {
  private readonly putTx;
  private readonly mergeTx;
  private readonly addPairsTx;
  private readonly countRecent: () => number;
  /** Rows in near_keys_recent as this process saw them last (others add too: counted again before a merge). */
  private recentRows: number;

  constructor(
    private readonly db: Db,
    private readonly mergeRows = NEAR_KEYS_MERGE_ROWS,
  ) {
    const earlier = db.prepare<[string], { id: number; keys: Buffer }>(
      'SELECT id, keys FROM near_fingerprints WHERE file_id = ?',
    );
    const insert = db.prepare<Omit<FingerprintRow, 'id' | 'file_id'> & { fileId: string }>(
      'INSERT INTO near_fingerprints (file_id, format, skipped, units, short, simhash, keys, at, pages) VALUES (@fileId, @format, @skipped, @units, @short, @simhash, @keys, @at, @pages) ON CONFLICT (file_id) DO NOTHING',
    );
    const update = db.prepare(
      'UPDATE near_fingerprints SET format = @format, skipped = @skipped, units = @units, short = @short, simhash = @simhash, keys = @keys, at = @at, pages = @pages WHERE id = @id',
    );
    const dropKey = db.prepare('DELETE FROM near_keys WHERE key = ? AND fingerprint = ?');
    const dropRecentKey = db.prepare('DELETE FROM near_keys_recent WHERE key = ? AND fingerprint = ?');
    // Keys go in many to a statement (prepared once per count): a call per key costs more than the insert.
    const addKeys = new Map<number, Database.Statement>();
    const addKeysOf = (n: number) => {
      let statement = addKeys.get(n);
      if (!statement)
        addKeys.set(
          n,
          (statement = db.prepare(
            `INSERT OR IGNORE INTO near_keys_recent (key, fingerprint) VALUES ${Array(n).fill('(?, ?)').join(', ')}`,
          )),
        );
      return statement;
    };
    this.putTx = db.transaction((fps: readonly NearFingerprint[]) => {
      const added = new KeyRows(fps.reduce((n, fp) => n + fp.keys.length, 0));
      for (const fp of fps) {
        const values = {
          fileId: fp.fileId,
          format: fp.format,
          skipped: fp.skipped,
          units: fp.units,
          short: fp.short ? 1 : 0,
          simhash: fp.simhash,
          keys: keysBlob(fp.keys),
          at: fp.at.getTime(),
          pages: JSON.stringify(fp.pages.map(({ hash, units, box }) => ({ hash, units, box }))),
        };
        // Most files are new: one insert; one fingerprinted before gives way to its new fingerprint.
        const inserted = insert.run(values);
        const before = inserted.changes === 0 ? earlier.get(fp.fileId)! : undefined;
        const id = before ? before.id : Number(inserted.lastInsertRowid);
        if (before) {
          for (const key of keysOf(before.keys)) {
            dropKey.run(key, id);
            dropRecentKey.run(key, id);
          }
          update.run({ ...values, id });
        }
        for (const key of fp.keys) added.push(key, id);
      }
      // In key order, a batch's inserts walk near_keys_recent's pages once instead of jumping about:
      // building 1M fingerprints' index took 66 s in arrival order, 51 s so.
      for (const rows of added.inKeyOrder(KEYS_PER_STATEMENT)) addKeysOf(rows.length / 2).run(rows);
      return added.length;
    });
    const countRecent = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM near_keys_recent');
    this.countRecent = () => countRecent.get()!.n;
    this.mergeTx = db.transaction(() => {
      if (this.countRecent() < this.mergeRows) return;
      db.prepare(
        'INSERT OR IGNORE INTO near_keys (key, fingerprint) SELECT key, fingerprint FROM near_keys_recent ORDER BY key, fingerprint',
      ).run();
      db.prepare('DELETE FROM near_keys_recent').run();
    });
    this.recentRows = this.countRecent();
    const upsertPair = db.prepare(
      `INSERT INTO near_pairs (file_a, file_b, method, hamming, jaccard, containment, snippet_a, snippet_b, found_at, pages)
       VALUES (@fileA, @fileB, @method, @hamming, @jaccard, @containment, @snippetA, @snippetB, @foundAt, @pages)
       ON CONFLICT (file_a, file_b) DO UPDATE SET method = excluded.method, hamming = excluded.hamming, jaccard = excluded.jaccard,
         containment = excluded.containment, snippet_a = excluded.snippet_a, snippet_b = excluded.snippet_b, found_at = excluded.found_at,
         pages = excluded.pages`,
    );
    this.addPairsTx = db.transaction((pairs: readonly NearDuplicatePair[]) => {
      for (const p of pairs)
        upsertPair.run({ ...p, foundAt: p.foundAt.getTime(), pages: p.pages ? JSON.stringify(p.pages) : null });
    });
  }

  async put(fingerprints: readonly NearFingerprint[]): Promise<void> {
    this.recentRows += this.putTx(fingerprints);
    if (this.recentRows < this.mergeRows) return;
    // IMMEDIATE: processes sharing DATA_DIR merge one after the other; the second finds little left.
    this.mergeTx.immediate();
    this.recentRows = this.countRecent();
  }

  async get(fileId: string): Promise<NearFingerprint | undefined> {
    const row = this.db
      .prepare<[string], FingerprintRow>('SELECT * FROM near_fingerprints WHERE file_id = ?')
      .get(fileId);
    return (
      row &&
      fingerprintOf(
        row,
        keysOf(row.keys).sort((a, b) => a - b),
      )
    );
  }

  async candidates(fileId: string, keys: readonly number[], limit: number): Promise<NearFingerprint[]> {
    if (keys.length === 0) return [];
    // One indexed lookup per key in each level, the fingerprints found counted once.
    const rows = this.db
      .prepare<unknown[], FingerprintRow>(
        `WITH wanted(key) AS (SELECT value FROM json_each(?))
         SELECT f.id, f.file_id, f.format, f.skipped, f.units, f.short, f.simhash, X'' AS keys, f.at, f.pages FROM near_fingerprints f WHERE f.id IN (
           SELECT fingerprint FROM near_keys WHERE key IN wanted UNION SELECT fingerprint FROM near_keys_recent WHERE key IN wanted
         ) AND f.file_id <> ? LIMIT ?`,
      )
      .all(JSON.stringify(keys), fileId, limit);
    return rows.map((r) => fingerprintOf(r, []));
  }

  async addPairs(pairs: readonly NearDuplicatePair[]): Promise<void> {
    this.addPairsTx(pairs);
  }

  async clear(): Promise<void> {
    this.db
      .transaction(() => {
        this.db.prepare('DELETE FROM near_keys').run();
        this.db.prepare('DELETE FROM near_keys_recent').run();
        this.db.prepare('DELETE FROM near_fingerprints').run();
        this.db.prepare('DELETE FROM near_pairs').run();
      })
      .immediate();
    this.recentRows = 0;
  }

  async forget(fileId: string): Promise<void> {
    this.db
      .transaction(() => {
        const fp = this.db
          .prepare<[string], { id: number; keys: Buffer }>('SELECT id, keys FROM near_fingerprints WHERE file_id = ?')
          .get(fileId);
        if (fp) {
          const dropKey = this.db.prepare('DELETE FROM near_keys WHERE key = ? AND fingerprint = ?');
          const dropRecentKey = this.db.prepare('DELETE FROM near_keys_recent WHERE key = ? AND fingerprint = ?');
          for (const key of keysOf(fp.keys)) {
            dropKey.run(key, fp.id);
            dropRecentKey.run(key, fp.id);
          }
          this.db.prepare('DELETE FROM near_fingerprints WHERE id = ?').run(fp.id);
        }
        this.db.prepare('DELETE FROM near_pairs WHERE file_a = ? OR file_b = ?').run(fileId, fileId);
        this.db.prepare('DELETE FROM near_reviews WHERE file_a = ? OR file_b = ?').run(fileId, fileId);
      })
      .immediate();
  }

  async pair(fileA: string, fileB: string): Promise<NearDuplicatePair | undefined> {
    const r = this.db
      .prepare<[string, string], PairRow>('SELECT * FROM near_pairs WHERE file_a = ? AND file_b = ?')
      .get(fileA, fileB);
    return r && pairOfRow(r);
  }

  async review(r: PairReview): Promise<void> {
    this.db
      .prepare(
        `INSERT OR REPLACE INTO near_reviews (file_a, file_b, at, user_id, user_name, note)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .run(r.fileA, r.fileB, r.at.getTime(), r.userId, r.userName, r.note);
  }

  async reopen(fileA: string, fileB: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM near_reviews WHERE file_a = ? AND file_b = ?').run(fileA, fileB).changes > 0;
  }

  async getReview(fileA: string, fileB: string): Promise<PairReview | undefined> {
    const r = this.db
      .prepare<
        [string, string],
        { file_a: string; file_b: string; at: number; user_id: string; user_name: string; note: string }
      >('SELECT * FROM near_reviews WHERE file_a = ? AND file_b = ?')
      .get(fileA, fileB);
    return (
      r && {
        fileA: r.file_a,
        fileB: r.file_b,
        at: new Date(r.at),
        userId: r.user_id,
        userName: r.user_name,
        note: r.note,
      }
    );
  }

  async counts(): Promise<{ fingerprinted: number; skipped: number; pairs: number }> {
    const f = this.db
      .prepare<[], { fingerprinted: number; skipped: number }>(
        'SELECT COUNT(*) - COUNT(skipped) AS fingerprinted, COUNT(skipped) AS skipped FROM near_fingerprints',
      )
      .get()!;
    const p = this.db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM near_pairs').get()!;
    return { fingerprinted: f.fingerprinted, skipped: f.skipped, pairs: p.n };
  }
}

const pairOfRow = (r: PairRow): NearDuplicatePair => ({
  fileA: r.file_a,
  fileB: r.file_b,
  method: r.method,
  hamming: r.hamming,
  jaccard: r.jaccard,
  containment: r.containment,
  snippetA: r.snippet_a,
  snippetB: r.snippet_b,
  foundAt: new Date(r.found_at),
  ...(r.pages !== null && { pages: JSON.parse(r.pages) as PairPages }),
});

interface JobRow {
  file_id: string;
  state: FingerprintJob['state'];
  attempts: number;
  due_at: number;
  error: string | null;
}

const jobOf = (r: JobRow): FingerprintJob => ({
  fileId: r.file_id,
  state: r.state,
  attempts: r.attempts,
  dueAt: new Date(r.due_at),
  error: r.error,
});

/** The fingerprinting queue in one table; each step is one statement or transaction, so processes sharing DATA_DIR agree. */
export class EmbeddedFingerprintQueue implements FingerprintQueue {
  private readonly takeTx;

  constructor(private readonly db: Db) {
    // Queued jobs due and running jobs whose lease ran out, each read in the index's order and
    // merged, so the LIMIT stops both after a few rows: an OR of the two was read whole and sorted.
    const due = db.prepare<{ now: number; limit: number }, JobRow>(
      `SELECT * FROM fingerprint_jobs WHERE state = 'queued' AND due_at <= @now
       UNION ALL SELECT * FROM fingerprint_jobs WHERE state = 'running' AND lease_until < @now
       ORDER BY due_at, file_id LIMIT @limit`,
    );
    const lease = db.prepare(
      `UPDATE fingerprint_jobs SET state = 'running', holder = ?, lease_until = ?, attempts = attempts + 1 WHERE file_id = ?`,
    );
    this.takeTx = db.transaction((holder: string, now: number, leaseMs: number, limit: number) => {
      const rows = due.all({ now, limit });
      for (const r of rows) lease.run(holder, now + leaseMs, r.file_id);
      return rows.map((r) => jobOf({ ...r, state: 'running', attempts: r.attempts + 1 }));
    });
  }

  async forget(fileId: string): Promise<void> {
    this.db.prepare('DELETE FROM fingerprint_jobs WHERE file_id = ?').run(fileId);
  }

  async enqueue(fileIds: readonly string[], now: Date): Promise<void> {
    const insert = this.db.prepare(
      `INSERT OR IGNORE INTO fingerprint_jobs (file_id, state, attempts, due_at) VALUES (?, 'queued', 0, ?)`,
    );
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
    this.db
      .prepare(`DELETE FROM fingerprint_jobs WHERE file_id = ? AND holder = ? AND state = 'running'`)
      .run(fileId, holder);
  }

  async fail(fileId: string, holder: string, error: string, retryAt: Date | null): Promise<void> {
    this.db
      .prepare(
        `UPDATE fingerprint_jobs SET state = ?, due_at = COALESCE(?, due_at), error = ?, holder = NULL, lease_until = NULL WHERE file_id = ? AND holder = ? AND state = 'running'`,
      )
      .run(retryAt ? 'queued' : 'failed', retryAt?.getTime() ?? null, error, fileId, holder);
  }

  async counts(now: Date): Promise<{ queued: number; running: number; failed: number }> {
    // Each state counted in the queue's index (the queued and failed from it alone), not by reading
    // every job: 2,000,000 queued jobs took 2.2-6.2 s so, 0.8-2.5 s this way (load average 13).
    return this.db
      .prepare<{ now: number }, { queued: number; running: number; failed: number }>(
        `SELECT (SELECT COUNT(*) FROM fingerprint_jobs WHERE state = 'queued')
                  + (SELECT COUNT(*) FROM fingerprint_jobs WHERE state = 'running' AND lease_until < @now) AS queued,
                (SELECT COUNT(*) FROM fingerprint_jobs WHERE state = 'running' AND lease_until >= @now) AS running,
                (SELECT COUNT(*) FROM fingerprint_jobs WHERE state = 'failed') AS failed`,
      )
      .get({ now: now.getTime() })!;
  }

  async failures(limit: number): Promise<FingerprintJob[]> {
    return this.db
      .prepare<[number], JobRow>(
        // The index read backwards: a queue whose every file failed is not sorted for a page of them.
        `SELECT * FROM fingerprint_jobs WHERE state = 'failed' ORDER BY due_at DESC, file_id DESC LIMIT ?`,
      )
      .all(limit)
      .map(jobOf);
  }
}
