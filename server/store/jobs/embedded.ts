import type { Db, EmbeddedSchema } from '../embedded/database.js';
import type { JobRecord, JobStore } from './port.js';

export const jobSchema: EmbeddedSchema = {
  tables: `
-- Background jobs (the fixity check): a lease keeps each to one process; state is JSON.
CREATE TABLE IF NOT EXISTS jobs (
  name        TEXT PRIMARY KEY,
  holder      TEXT,
  lease_until INTEGER,
  state       TEXT
);
`,
};

interface JobRow {
  name: string;
  holder: string | null;
  lease_until: number | null;
  state: string | null;
}

/** Job leases in one row per job; each step is one statement, so processes sharing DATA_DIR agree. */
export class EmbeddedJobStore implements JobStore {
  constructor(private readonly db: Db) {}

  async acquire(name: string, holder: string, now: Date, leaseMs: number): Promise<boolean> {
    const r = this.db
      .prepare(
        `INSERT INTO jobs (name, holder, lease_until, state) VALUES (@name, @holder, @until, NULL)
         ON CONFLICT (name) DO UPDATE SET holder = @holder, lease_until = @until
         WHERE jobs.holder IS NULL OR jobs.lease_until < @now`,
      )
      .run({ name, holder, until: now.getTime() + leaseMs, now: now.getTime() });
    return r.changes === 1;
  }

  async renew(name: string, holder: string, now: Date, leaseMs: number, state: unknown): Promise<boolean> {
    const r = this.db
      .prepare('UPDATE jobs SET lease_until = ?, state = ? WHERE name = ? AND holder = ?')
      .run(now.getTime() + leaseMs, JSON.stringify(state), name, holder);
    return r.changes === 1;
  }

  async release(name: string, holder: string, state: unknown): Promise<void> {
    this.db
      .prepare('UPDATE jobs SET holder = NULL, lease_until = NULL, state = ? WHERE name = ? AND holder = ?')
      .run(JSON.stringify(state), name, holder);
  }

  async get(name: string): Promise<JobRecord | undefined> {
    const row = this.db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE name = ?').get(name);
    if (!row) return undefined;
    return {
      name: row.name,
      holder: row.holder,
      leaseUntil: row.lease_until === null ? null : new Date(row.lease_until),
      state: row.state === null ? null : JSON.parse(row.state),
    };
  }
}
