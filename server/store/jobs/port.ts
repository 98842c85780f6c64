/** A background job's record: who runs it (a lease, so one instance at a time) and its state. */
export interface JobRecord {
  name: string;
  holder: string | null;
  leaseUntil: Date | null;
  /** The job's own JSON state: its progress while it runs, its result after. */
  state: unknown;
}

export interface JobStore {
  /** Takes the job's lease when nobody holds it or the holder's lease ran out; false otherwise. */
  acquire(name: string, holder: string, now: Date, leaseMs: number): Promise<boolean>;
  /** Extends a lease `holder` holds and saves the state; false when the lease was lost. */
  renew(name: string, holder: string, now: Date, leaseMs: number, state: unknown): Promise<boolean>;
  /** Saves the final state and gives the lease up (nothing when `holder` lost it). */
  release(name: string, holder: string, state: unknown): Promise<void>;
  get(name: string): Promise<JobRecord | undefined>;
}
