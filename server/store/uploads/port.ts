import type { ContentKey } from '../catalog/port.js';

/** What a finished resumable upload became. */
export interface UploadOutcome {
  status: 'stored' | 'duplicate';
  fileId: string;
  uploadCount: number;
}

/** Who holds a resumable upload's write lock, and until when if it stops renewing it. */
export interface UploadLock {
  /** Unique per request: `<instance>/<n>`. */
  holder: string;
  /** Host and process of the holder: a holder on this host whose process is gone can be replaced at once. */
  host: string;
  pid: number;
  until: Date;
}

/** A resumable (tus) upload: state persisted so any server instance can continue it. */
export interface UploadState {
  id: string;
  ownerId: string;
  /** The staging area its bytes go to. */
  stagingId: string;
  length: number;
  /** Bytes received and persisted (the tus Upload-Offset). */
  offset: number;
  /** The tus Upload-Metadata, decoded. */
  metadata: Record<string, string | null>;
  createdAt: Date;
  /** Last time bytes arrived (or the upload was created); an idle upload expires from here. */
  activeAt: Date;
  expiresAt: Date;
  lock: UploadLock | null;
  /**
   * The content's identity, recorded once every byte is in and hashed, before the commit: a
   * completion cut short (a crash) is finished from it, without the bytes or their hashes.
   */
  completing: ContentKey | null;
  /** Set once the upload is complete and committed (its offset is then its length). */
  outcome: UploadOutcome | null;
}

export type NewUpload = Omit<UploadState, 'offset' | 'lock' | 'completing' | 'outcome'>;

export type LockAttempt =
  { status: 'acquired'; upload: UploadState } | { status: 'busy'; lock: UploadLock } | { status: 'missing' };

export interface UploadStore {
  create(upload: NewUpload): Promise<void>;
  get(id: string): Promise<UploadState | undefined>;
  /**
   * Takes the write lock when it is free, expired at `now`, or held by `replacing` (a holder
   * known to be dead). Atomic: of two callers, one gets it.
   */
  acquire(id: string, lock: UploadLock, now: Date, replacing?: string): Promise<LockAttempt>;
  /**
   * Records progress while holding the lock: new offset and activity, lock renewed to
   * `lockUntil`. Returns false (and changes nothing) if `holder` no longer holds it.
   */
  advance(
    id: string,
    holder: string,
    progress: { offset: number; activeAt: Date; expiresAt: Date; lockUntil: Date },
  ): Promise<boolean>;
  /** Extends the lease of a lock `holder` still holds. */
  renew(id: string, holder: string, until: Date): Promise<void>;
  /**
   * Takes an upload back to `offset` (at most; staged bytes past it were lost), forgetting a
   * completion under way, under the lock; a finished upload is left as it is.
   */
  rewind(id: string, holder: string, offset: number): Promise<boolean>;
  /** Records the content's identity before the commit, under the lock. */
  markCompleting(id: string, holder: string, key: ContentKey): Promise<boolean>;
  /** Marks the upload finished (offset = length, and its outcome), under the lock. */
  finish(id: string, holder: string, outcome: UploadOutcome): Promise<boolean>;
  /** Lets go of the lock if `holder` still holds it. */
  release(id: string, holder: string): Promise<void>;
  delete(id: string): Promise<void>;
  /** Uploads whose expiry is before `now`, at most `limit` of them. */
  listExpired(now: Date, limit: number): Promise<UploadState[]>;
}
