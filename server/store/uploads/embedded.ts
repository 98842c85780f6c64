import type { ContentKey } from '../catalog/port.js';
import { addMissingColumns, type Db, type EmbeddedSchema } from '../embedded/database.js';
import type { LockAttempt, NewUpload, UploadLock, UploadOutcome, UploadState, UploadStore } from './port.js';

export const uploadSchema: EmbeddedSchema = {
  tables: `
-- Resumable (tus) uploads: their state, so any process on DATA_DIR can continue one.
CREATE TABLE IF NOT EXISTS uploads (
  id         TEXT PRIMARY KEY,
  owner_id   TEXT NOT NULL,
  staging_id TEXT NOT NULL UNIQUE,
  length     INTEGER NOT NULL,
  "offset"   INTEGER NOT NULL DEFAULT 0,
  metadata   TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  active_at  INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  lock_holder TEXT,
  lock_host   TEXT,
  lock_pid    INTEGER,
  lock_until  INTEGER,
  completing TEXT,
  outcome    TEXT
);
CREATE INDEX IF NOT EXISTS uploads_expiry ON uploads (expires_at);
`,
  upgrade(db) {
    // Data directories made before resumable uploads recorded their completion.
    addMissingColumns(db, 'uploads', { completing: 'TEXT' });
  },
};

interface UploadRow {
  id: string;
  owner_id: string;
  staging_id: string;
  length: number;
  offset: number;
  metadata: string;
  created_at: number;
  active_at: number;
  expires_at: number;
  lock_holder: string | null;
  lock_host: string | null;
  lock_pid: number | null;
  lock_until: number | null;
  completing: string | null;
  outcome: string | null;
}

function uploadFromRow(row: UploadRow): UploadState {
  return {
    id: row.id,
    ownerId: row.owner_id,
    stagingId: row.staging_id,
    length: row.length,
    offset: row.offset,
    metadata: JSON.parse(row.metadata) as Record<string, string | null>,
    createdAt: new Date(row.created_at),
    activeAt: new Date(row.active_at),
    expiresAt: new Date(row.expires_at),
    lock:
      row.lock_holder === null
        ? null
        : {
            holder: row.lock_holder,
            host: row.lock_host ?? '',
            pid: row.lock_pid ?? 0,
            until: new Date(row.lock_until ?? 0),
          },
    completing: row.completing === null ? null : (JSON.parse(row.completing) as ContentKey),
    outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as UploadOutcome),
  };
}

/** Resumable uploads in SQLite; the lock is a row lease, so processes sharing DATA_DIR exclude each other. */
export class EmbeddedUploadStore implements UploadStore {
  constructor(private readonly db: Db) {}

  async create(u: NewUpload): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO uploads (id, owner_id, staging_id, length, metadata, created_at, active_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        u.id,
        u.ownerId,
        u.stagingId,
        u.length,
        JSON.stringify(u.metadata),
        u.createdAt.getTime(),
        u.activeAt.getTime(),
        u.expiresAt.getTime(),
      );
  }

  async get(id: string): Promise<UploadState | undefined> {
    const row = this.db.prepare<[string], UploadRow>('SELECT * FROM uploads WHERE id = ?').get(id);
    return row && uploadFromRow(row);
  }

  async acquire(id: string, lock: UploadLock, now: Date, replacing?: string): Promise<LockAttempt> {
    const taken = this.db
      .prepare(
        `UPDATE uploads SET lock_holder = ?, lock_host = ?, lock_pid = ?, lock_until = ?
         WHERE id = ? AND (lock_holder IS NULL OR lock_until < ? OR lock_holder = ?)`,
      )
      .run(lock.holder, lock.host, lock.pid, lock.until.getTime(), id, now.getTime(), replacing ?? null);
    const upload = await this.get(id);
    if (!upload) return { status: 'missing' };
    if (taken.changes === 1) return { status: 'acquired', upload };
    return { status: 'busy', lock: upload.lock! };
  }

  async advance(
    id: string,
    holder: string,
    p: { offset: number; activeAt: Date; expiresAt: Date; lockUntil: Date },
  ): Promise<boolean> {
    const { changes } = this.db
      .prepare(
        'UPDATE uploads SET "offset" = ?, active_at = ?, expires_at = ?, lock_until = ? WHERE id = ? AND lock_holder = ?',
      )
      .run(p.offset, p.activeAt.getTime(), p.expiresAt.getTime(), p.lockUntil.getTime(), id, holder);
    return changes === 1;
  }

  async renew(id: string, holder: string, until: Date): Promise<void> {
    this.db
      .prepare('UPDATE uploads SET lock_until = ? WHERE id = ? AND lock_holder = ?')
      .run(until.getTime(), id, holder);
  }

  async rewind(id: string, holder: string, offset: number): Promise<boolean> {
    const { changes } = this.db
      .prepare(
        'UPDATE uploads SET "offset" = MIN("offset", ?), completing = NULL WHERE id = ? AND lock_holder = ? AND outcome IS NULL',
      )
      .run(offset, id, holder);
    return changes === 1;
  }

  async markCompleting(id: string, holder: string, key: ContentKey): Promise<boolean> {
    const { changes } = this.db
      .prepare('UPDATE uploads SET completing = ? WHERE id = ? AND lock_holder = ?')
      .run(JSON.stringify(key), id, holder);
    return changes === 1;
  }

  async finish(id: string, holder: string, outcome: UploadOutcome): Promise<boolean> {
    const { changes } = this.db
      .prepare('UPDATE uploads SET outcome = ?, "offset" = length WHERE id = ? AND lock_holder = ?')
      .run(JSON.stringify(outcome), id, holder);
    return changes === 1;
  }

  async release(id: string, holder: string): Promise<void> {
    this.db
      .prepare(
        'UPDATE uploads SET lock_holder = NULL, lock_host = NULL, lock_pid = NULL, lock_until = NULL WHERE id = ? AND lock_holder = ?',
      )
      .run(id, holder);
  }

  async delete(id: string): Promise<void> {
    this.db.prepare('DELETE FROM uploads WHERE id = ?').run(id);
  }

  async listExpired(now: Date, limit: number): Promise<UploadState[]> {
    return this.db
      .prepare<[number, number], UploadRow>('SELECT * FROM uploads WHERE expires_at < ? ORDER BY expires_at LIMIT ?')
      .all(now.getTime(), limit)
      .map(uploadFromRow);
  }
}
