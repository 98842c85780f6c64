import { tusMetadata } from '../../shared/schemas.js';
import { cleanContentType, cleanFileName, cleanUploadPath } from '../../shared/file-name.js';
import {
  BadRequestError,
  ChecksumMismatchError,
  NotFoundError,
  OffsetMismatchError,
  PayloadTooLargeError,
  ServerStoppingError,
  StagedBytesLostError,
  UploadExpiredError,
  UploadLockedError,
  ValidationError,
} from '../errors.js';
import type { Account } from '../store/accounts/port.js';
import type { ArchiveStore } from '../store/archive-store.js';
import type { UploadLock, UploadOutcome, UploadState } from '../store/uploads/port.js';
import { ChunkWriter, type ChunkPool } from '../threads/chunk-writer.js';
import type { DigestJob, DigestPool, Digests } from '../threads/digest.js';
import type { IngestService } from './ingest.js';
import type { LockIdentity } from '../threads/upload-lock.js';

/** A write lock is a lease: renewed while its request runs, free once it lapses (a crashed holder). */
const LOCK_LEASE_MS = 30_000;
const LOCK_RENEW_MS = 10_000;
/** Hash states kept for uploads between requests; beyond this the oldest is dropped (re-read at completion). */
const MAX_IDLE_HASHES = 256;

export interface ResumableUploadOptions {
  store: Pick<ArchiveStore, 'content' | 'uploads'>;
  ingest: Pick<IngestService, 'commit'>;
  digests: DigestPool;
  pool: ChunkPool;
  identity: LockIdentity;
  maxFileSize: number;
  /** An unfinished upload that receives no bytes for this long expires. */
  idleMs: number;
  clock?: () => Date;
}

/** The metadata the archive takes from a tus upload. */
export interface UploadDescription {
  fileName: string;
  /** Its path in the clerk's folder, when the name carried one: what the upload is recorded under. */
  path: string;
  contentType: string;
  md5: string | undefined;
  sha256: string | undefined;
  /** The client's key for this upload action (tus metadata `idempotencyKey`), if it sent one. */
  idempotencyKey: string | undefined;
}

/** This process's running hash of an upload's bytes [0, at). */
interface RunningHash {
  digest: DigestJob;
  at: number;
}

/**
 * Resumable uploads (the rules behind the tus endpoint): an upload belongs to the account that
 * created it, receives bytes at its current offset under a write lock held in the store (so
 * any server instance can continue it, and two requests never write at once), and when its
 * last byte arrives it is verified and committed exactly like a direct upload.
 *
 * Hashing: each process keeps the MD5 and SHA-256 state of the uploads it is receiving, so a
 * client that sends its requests to one instance has its bytes hashed once, as they arrive.
 * When that state is missing (a restart, another instance took some requests), the completing
 * request re-reads the staged bytes once.
 */
export class ResumableUploadService {
  /** Aborted when the server stops: long work inside a request ends early. */
  private readonly stopping = new AbortController();
  private readonly clock: () => Date;
  private readonly hashes = new Map<string, RunningHash>();
  private readonly receiving = new Set<Promise<number>>();

  constructor(private readonly deps: ResumableUploadOptions) {
    this.clock = deps.clock ?? (() => new Date());
  }

  get idleMs(): number {
    return this.deps.idleMs;
  }

  /** Reads what the archive needs from tus metadata, refusing malformed hashes. */
  describe(metadata: Record<string, string | null>): UploadDescription {
    const parsed = tusMetadata.safeParse(metadata);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ValidationError(`Upload-Metadata "${issue.path.join('.')}": ${issue.message}.`);
    }
    const m = parsed.data;
    const name = m.filename ?? m.name ?? '';
    return {
      fileName: cleanFileName(name),
      path: cleanUploadPath(name),
      contentType: cleanContentType(m.filetype ?? m.type ?? undefined),
      md5: m.md5,
      sha256: m.sha256,
      idempotencyKey: m.idempotencyKey,
    };
  }

  async create(
    owner: Account,
    upload: { id: string; length: number; metadata: Record<string, string | null> },
    address: string | null = null,
  ): Promise<UploadState> {
    this.describe(upload.metadata);
    if (upload.length > this.deps.maxFileSize) throw new PayloadTooLargeError(this.deps.maxFileSize);
    const now = this.clock();
    const stagingId = await this.deps.store.content.stage(now);
    const state = {
      id: upload.id,
      ownerId: owner.id,
      stagingId,
      length: upload.length,
      metadata: upload.metadata,
      createdAt: now,
      activeAt: now,
      expiresAt: new Date(now.getTime() + this.deps.idleMs),
    };
    await this.deps.store.uploads.create(state);
    // Nothing to send: an empty file is complete the moment it is announced.
    if (upload.length === 0) await this.receive(owner, upload.id, 0, (async function* () {})(), address);
    return (await this.deps.store.uploads.get(upload.id))!;
  }

  /** The upload, if `account` created it; anyone else is told there is none. */
  async ownedBy(account: Account, id: string): Promise<UploadState> {
    const upload = await this.deps.store.uploads.get(id);
    if (!upload || upload.ownerId !== account.id) {
      throw new NotFoundError(
        'There is no upload at this address: it was cancelled, it expired, or it belongs to another account.',
      );
    }
    return upload;
  }

  /** An upload's state as it is now, for what a response tells of it (callers checked already). */
  state(id: string): Promise<UploadState | undefined> {
    return this.deps.store.uploads.get(id);
  }

  isExpired(upload: UploadState): boolean {
    return upload.expiresAt.getTime() < this.clock().getTime();
  }

  /**
   * Appends a request's bytes at `offset`; returns the new offset. The bytes that arrived are
   * kept even if the request breaks off. The last byte commits the file.
   */
  receive(
    account: Account,
    id: string,
    offset: number,
    source: AsyncIterable<Uint8Array>,
    address: string | null = null,
  ): Promise<number> {
    const work = this.receiveBytes(account, id, offset, source, address);
    this.receiving.add(work);
    const forget = () => this.receiving.delete(work);
    work.then(forget, forget);
    return work;
  }

  /**
   * Settles when every request receiving bytes right now has ended: a stopping server cuts the
   * requests still running after its grace period, then waits here until each has persisted what
   * arrived, recorded the offset and released its lock, before it closes the store.
   */
  async drain(): Promise<void> {
    // A completion re-reading a large upload would hold the exit for minutes: it stops, and the
    // client's retry completes the upload (its bytes are all kept).
    this.stopping.abort();
    await Promise.allSettled([...this.receiving]);
  }

  private async receiveBytes(
    account: Account,
    id: string,
    offset: number,
    source: AsyncIterable<Uint8Array>,
    address: string | null,
  ): Promise<number> {
    const { lock, upload } = await this.lock(id);
    const stopRenewing = this.keepRenewing(id, lock);
    try {
      if (this.isExpired(upload)) throw new UploadExpiredError();
      if (offset !== upload.offset) throw new OffsetMismatchError(upload.offset, offset);
      // A finished upload takes no more bytes; an empty PATCH at its end is answered again.
      if (upload.outcome) return upload.offset;
      // Every byte was in and hashed, but the completion was cut short: finish it, ignoring
      // whatever the client sends again.
      if (upload.completing) {
        await this.complete(account, upload, lock, undefined, address);
        return upload.length;
      }
      const hash = this.takeHash(upload);
      const writer = new ChunkWriter({
        content: this.deps.store.content,
        pool: this.deps.pool,
        stagingId: upload.stagingId,
        digest: hash?.digest,
        offset,
        // The last byte is recorded with the outcome, never before: until then HEAD reports
        // less, and the client's retry finds the completion to finish.
        onPersisted: (end) => (end < upload.length ? this.advance(id, lock, end) : Promise.resolve()),
      });
      let received: { end: number; broken?: unknown };
      try {
        received = await this.pour(source, writer, upload.length);
      } catch (err) {
        hash?.digest.abort();
        throw err;
      }
      const { end, broken } = received;
      if (end < upload.length) {
        // Every byte that arrived was hashed and persisted, also when the request broke off.
        if (hash) this.keepHash(id, { digest: hash.digest, at: end });
        if (broken !== undefined)
          throw new BadRequestError(
            `The request broke off after ${end - offset} bytes; the upload keeps them. Ask for its offset (HEAD) and resume from there.`,
          );
        return end;
      }
      await this.complete(account, upload, lock, hash?.digest, address);
      return end;
    } finally {
      stopRenewing();
      await this.deps.store.uploads.release(id, lock.holder).catch(() => {});
    }
  }

  /**
   * Moves the request's bytes into the writer. When the request breaks off, what arrived is
   * still written (the next HEAD acknowledges it), and the break is returned, not thrown.
   */
  private async pour(
    source: AsyncIterable<Uint8Array>,
    writer: ChunkWriter,
    length: number,
  ): Promise<{ end: number; broken?: unknown }> {
    const bytes = source[Symbol.asyncIterator]();
    let broken: unknown;
    try {
      for (;;) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await bytes.next();
        } catch (err) {
          broken = err;
          break;
        }
        if (next.done) break;
        if (writer.end + next.value.byteLength > length)
          throw new PayloadTooLargeError(
            length,
            'More bytes arrived than the upload is long (its Upload-Length); nothing past that was kept.',
          );
        await writer.push(next.value);
      }
    } catch (err) {
      await writer.settle();
      throw err;
    }
    return { end: await writer.flush(), broken };
  }

  private async complete(
    account: Account,
    upload: UploadState,
    lock: UploadLock,
    running: DigestJob | undefined,
    address: string | null,
  ): Promise<void> {
    const description = this.describe(upload.metadata);
    let key = upload.completing;
    if (!key) {
      const digests = running ? await running.finish() : await this.rehash(upload);
      key = { ...digests, length: upload.length };
      if (!(await this.deps.store.uploads.markCompleting(upload.id, lock.holder, key))) throw new UploadLockedError();
    }
    let outcome: UploadOutcome;
    try {
      // Safe to repeat: a staging area committed before is answered as stored, never removed.
      outcome = await this.deps.ingest.commit(
        { stagingId: upload.stagingId, key },
        {
          uploader: account,
          fileName: description.fileName,
          path: description.path,
          contentType: description.contentType,
          declaredMd5: description.md5,
          declaredSha256: description.sha256,
        },
        // Counted once per upload; a client's key also joins uploads it had to create again (the
        // answer to an upload created and completed in one request was lost).
        {
          via: 'tus',
          address,
          key: description.idempotencyKey ? `tus:${account.id}:${description.idempotencyKey}` : `tus:${upload.id}`,
        },
      );
    } catch (err) {
      // A refused upload (declared hashes do not match) is gone: its bytes were removed.
      if (err instanceof ChecksumMismatchError) await this.deps.store.uploads.delete(upload.id);
      // Bytes that may not have reached the disk were dropped: the upload goes back to those
      // kept, and forgets the identity taken from the bytes as they arrived, so the client's
      // retry sends the rest again rather than complete over what the disk may have lost.
      if (err instanceof StagedBytesLostError)
        await this.deps.store.uploads.rewind(upload.id, lock.holder, err.keptBytes);
      throw err;
    }
    if (!(await this.deps.store.uploads.finish(upload.id, lock.holder, outcome))) throw new UploadLockedError();
  }

  /** Hashes an upload's staged bytes from the start: the running hash was lost. */
  private async rehash(upload: UploadState): Promise<Digests> {
    const digest = this.deps.digests.start();
    // The bytes are stored already: a writer that only hashes, for its pooled shared buffers.
    const hasher = new ChunkWriter({
      content: { write: async () => {} },
      pool: this.deps.pool,
      stagingId: upload.stagingId,
      digest,
      offset: 0,
    });
    try {
      for await (const data of this.deps.store.content.readStaged(upload.stagingId, upload.length)) {
        if (this.stopping.signal.aborted) throw new ServerStoppingError();
        await hasher.push(data as Uint8Array);
      }
      await hasher.flush();
      return await digest.finish();
    } catch (err) {
      digest.abort();
      throw err;
    }
  }

  /** Cancels an upload: an unfinished one loses its bytes; a finished one only its record. */
  async terminate(id: string): Promise<void> {
    const { lock, upload } = await this.lock(id);
    try {
      await this.remove(upload);
    } finally {
      await this.deps.store.uploads.release(id, lock.holder).catch(() => {});
    }
  }

  /** Removes uploads idle past their expiry, except any a request is writing to right now. */
  async expire(): Promise<number> {
    let removed = 0;
    for (;;) {
      const now = this.clock();
      const expired = await this.deps.store.uploads.listExpired(now, 100);
      let progress = false;
      for (const upload of expired) {
        const attempt = await this.deps.store.uploads.acquire(
          upload.id,
          this.deps.identity.newLock(this.leaseEnd()),
          now,
        );
        if (attempt.status !== 'acquired') continue;
        if (attempt.upload.expiresAt >= now) {
          await this.deps.store.uploads.release(upload.id, attempt.upload.lock!.holder);
          continue;
        }
        await this.remove(attempt.upload);
        removed++;
        progress = true;
      }
      if (expired.length < 100 || !progress) return removed;
    }
  }

  private async remove(upload: UploadState): Promise<void> {
    this.dropHash(upload.id);
    if (!upload.outcome) await this.deps.store.content.discard(upload.stagingId);
    await this.deps.store.uploads.delete(upload.id);
  }

  /** Takes the upload's write lock, or refuses: one request writes to an upload at a time. */
  private async lock(id: string): Promise<{ lock: UploadLock; upload: UploadState }> {
    const lock = this.deps.identity.newLock(this.leaseEnd());
    let attempt = await this.deps.store.uploads.acquire(id, lock, this.clock());
    if (attempt.status === 'busy' && this.deps.identity.isGone(attempt.lock)) {
      attempt = await this.deps.store.uploads.acquire(id, lock, this.clock(), attempt.lock.holder);
    }
    if (attempt.status === 'missing')
      throw new NotFoundError('There is no upload at this address: it was cancelled or it expired.');
    if (attempt.status === 'busy') throw new UploadLockedError();
    return { lock, upload: attempt.upload };
  }

  private leaseEnd(): Date {
    return new Date(this.clock().getTime() + LOCK_LEASE_MS);
  }

  private async advance(id: string, lock: UploadLock, offset: number): Promise<void> {
    const now = this.clock();
    const held = await this.deps.store.uploads.advance(id, lock.holder, {
      offset,
      activeAt: now,
      expiresAt: new Date(now.getTime() + this.deps.idleMs),
      lockUntil: this.leaseEnd(),
    });
    // Only if this process stalled past its lease and another request took over.
    if (!held) throw new UploadLockedError();
  }

  /** Renews the lease while a request runs, also when its bytes come slowly. */
  private keepRenewing(id: string, lock: UploadLock): () => void {
    const timer = setInterval(() => {
      this.deps.store.uploads.renew(id, lock.holder, this.leaseEnd()).catch(() => {});
    }, LOCK_RENEW_MS);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** The running hash for an upload at its offset, a fresh one at 0, or none (lost: re-read at completion). */
  private takeHash(upload: UploadState): RunningHash | undefined {
    const kept = this.hashes.get(upload.id);
    this.hashes.delete(upload.id);
    if (kept && kept.at === upload.offset) return kept;
    kept?.digest.abort();
    return upload.offset === 0 ? { digest: this.deps.digests.start(), at: 0 } : undefined;
  }

  private keepHash(id: string, hash: RunningHash): void {
    this.hashes.set(id, hash);
    if (this.hashes.size > MAX_IDLE_HASHES) {
      const [oldest] = this.hashes.keys();
      this.dropHash(oldest!);
    }
  }

  private dropHash(id: string): void {
    this.hashes.get(id)?.digest.abort();
    this.hashes.delete(id);
  }
}
