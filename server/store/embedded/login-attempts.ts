import type { LoginAttemptStore, LoginRecord } from '../port.js';
import type { Db } from './database.js';

interface LoginRow {
  key: string;
  failures: number;
  last_failure_at: number | null;
  known_until: number | null;
  expires_at: number;
}

const record = (r: LoginRow): LoginRecord => ({
  failures: r.failures,
  lastFailureAt: r.last_failure_at === null ? null : new Date(r.last_failure_at),
  knownUntil: r.known_until === null ? null : new Date(r.known_until),
  expiresAt: new Date(r.expires_at),
});

/** Login records in one table; every process on DATA_DIR throttles with the same rows. */
export class EmbeddedLoginAttempts implements LoginAttemptStore {
  private writes = 0;

  constructor(private readonly db: Db) {}

  async get(keys: string[], now: Date): Promise<Map<string, LoginRecord>> {
    const found = new Map<string, LoginRecord>();
    const read = this.db.prepare<[string, number], LoginRow>('SELECT * FROM login_attempts WHERE key = ? AND expires_at > ?');
    for (const key of keys) {
      const row = read.get(key, now.getTime());
      if (row) found.set(key, record(row));
    }
    return found;
  }

  async fail(key: string, at: Date, expiresAt: Date): Promise<LoginRecord> {
    this.sweep(at);
    const row = this.db
      .prepare<{ key: string; at: number; expires: number }, LoginRow>(
        `INSERT INTO login_attempts (key, failures, last_failure_at, known_until, expires_at) VALUES (@key, 1, @at, NULL, @expires)
         ON CONFLICT (key) DO UPDATE SET
           failures = CASE WHEN expires_at <= @at THEN 1 ELSE failures + 1 END,
           known_until = CASE WHEN expires_at <= @at THEN NULL ELSE known_until END,
           last_failure_at = @at,
           expires_at = MAX(CASE WHEN expires_at <= @at THEN 0 ELSE expires_at END, @expires)
         RETURNING *`,
      )
      .get({ key, at: at.getTime(), expires: expiresAt.getTime() });
    return record(row!);
  }

  async succeed(key: string, knownUntil: Date): Promise<void> {
    this.sweep(new Date());
    this.db
      .prepare(
        `INSERT INTO login_attempts (key, failures, last_failure_at, known_until, expires_at) VALUES (@key, 0, NULL, @until, @until)
         ON CONFLICT (key) DO UPDATE SET failures = 0, last_failure_at = NULL, known_until = @until, expires_at = @until`,
      )
      .run({ key, until: knownUntil.getTime() });
  }

  // Expired records are dropped now and then, so the table holds only what is remembered.
  private sweep(now: Date): void {
    if (++this.writes % 100 === 0) this.db.prepare('DELETE FROM login_attempts WHERE expires_at <= ?').run(now.getTime());
  }
}
