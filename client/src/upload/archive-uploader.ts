import { BasePlugin, type Uppy, type UppyFile } from '@uppy/core';
import Tus, { type TusOptions } from '@uppy/tus';
import type { DetailedError } from 'tus-js-client';
import { ARCHIVE_FILE_ID_HEADER, ARCHIVE_STATUS_HEADER, ARCHIVE_UPLOAD_COUNT_HEADER } from '../../../shared/schemas.js';
import type { ArchiveApi } from '../api.js';
import { errorFromResponse } from '../api.js';
import { HashAbortedError, type Hasher } from '../hashing/hasher.js';
import { ApiError, NetworkError, type MessageKey } from '../i18n/index.js';
import { ResumeIndex, type ContentKey } from './resume-index.js';

/** `idempotencyKey`: this file's upload, the same on every retry, so the archive counts it once. */
export type ArchiveMeta = { md5?: string; sha256?: string; idempotencyKey?: string; relativePath?: string | null };
export type ArchiveBody = Record<string, unknown>;
export type ArchiveFile = UppyFile<ArchiveMeta, ArchiveBody>;

/** How a file ended, as the clerk is told. */
export type Outcome =
  | { kind: 'instant'; fileId: string; uploadCount: number }
  | { kind: 'stored' | 'duplicate'; fileId: string; uploadCount: number }
  | { kind: 'failed'; error: unknown };

export interface ArchiveUploaderOptions {
  id?: string;
  api: ArchiveApi;
  hasher: Hasher;
  resumeIndex: ResumeIndex;
  /** Texts for the progress shown while a file is prepared. */
  label: (key: MessageKey) => string;
  onOutcome: (file: ArchiveFile, outcome: Outcome) => void;
  tus: TusOptions<ArchiveMeta, ArchiveBody>;
}

type SendViaTus = (fileIDs: string[]) => Promise<void>;

/** Events after which a paused file may have been resumed. */
const PAUSE_EVENTS = ['upload-pause', 'resume-all', 'pause-all', 'file-removed'] as const;

/** Thrown by the pipeline when the clerk removed the file: not a failure to report. */
class FileRemovedError extends Error {}

/**
 * The archive's upload step for Uppy: each file goes hash → check → prove → done (instant), or
 * on to tus when the archive lacks it or the proof fails. Files move through the steps on their
 * own, so the next file is hashed while the previous one uploads (Uppy's pre-processor stage
 * would hash the whole batch before the first byte is sent). The tus transfer itself is
 * @uppy/tus, driven one file at a time; identical files in one batch wait for the first, which
 * makes the others instant.
 */
export class ArchiveUploader extends BasePlugin<ArchiveUploaderOptions & { id: string }, ArchiveMeta, ArchiveBody> {
  #sendViaTus: SendViaTus | undefined;
  readonly #controllers = new Map<string, AbortController>();
  /** First file of each content in flight; identical files wait for it. */
  readonly #leaders = new Map<string, Promise<void>>();
  /** Errors this plugin reported itself, so the tus error listener does not report them twice. */
  readonly #reported = new WeakSet<Error>();
  #holdAll = false;

  constructor(uppy: Uppy<ArchiveMeta, ArchiveBody>, opts: ArchiveUploaderOptions) {
    super(uppy, { ...opts, id: opts.id ?? 'ArchiveUploader' });
    this.id = this.opts.id;
    this.type = 'uploader';
  }

  override install(): void {
    const { resumeIndex } = this.opts;
    // Remember each upload's URL under its content as soon as tus learns it.
    class ResumableTus extends Tus<ArchiveMeta, ArchiveBody> {
      override onReceiveUploadUrl(file: ArchiveFile, uploadURL: string | null): void {
        // Called with every progress event: the index (local storage) is written only on a change.
        const known = this.uppy.getFile(file.id)?.tus?.uploadUrl;
        super.onReceiveUploadUrl(file, uploadURL);
        const key = contentKey(file);
        if (uploadURL && key && uploadURL !== known) resumeIndex.set(key, uploadURL);
      }
    }
    // @uppy/tus registers its uploader in install(); take it, so that this plugin decides
    // which files it gets and when, one at a time.
    const captured: SendViaTus[] = [];
    const uppy = this.uppy as unknown as { addUploader?: (fn: SendViaTus) => void };
    uppy.addUploader = (fn) => void captured.push(fn);
    try {
      this.uppy.use(ResumableTus, this.opts.tus);
    } finally {
      delete uppy.addUploader;
    }
    if (captured.length !== 1) throw new Error('@uppy/tus did not register exactly one uploader');
    this.#sendViaTus = captured[0];

    this.uppy.addUploader(this.#upload);
    this.uppy.on('file-removed', this.#onRemoved);
    this.uppy.on('cancel-all', this.#onCancelAll);
    this.uppy.on('pause-all', this.#onPauseAll);
    this.uppy.on('resume-all', this.#onResumeAll);
    this.uppy.on('upload-success', this.#onTusSuccess);
    this.uppy.on('upload-error', this.#onTusError);
  }

  override uninstall(): void {
    this.uppy.removeUploader(this.#upload);
    this.uppy.off('file-removed', this.#onRemoved);
    this.uppy.off('cancel-all', this.#onCancelAll);
    this.uppy.off('pause-all', this.#onPauseAll);
    this.uppy.off('resume-all', this.#onResumeAll);
    this.uppy.off('upload-success', this.#onTusSuccess);
    this.uppy.off('upload-error', this.#onTusError);
    const tus = this.uppy.getPlugin('Tus');
    if (tus) this.uppy.removePlugin(tus);
    for (const controller of this.#controllers.values()) controller.abort();
  }

  #upload = async (fileIDs: string[]): Promise<void> => {
    // Files count as started only when their bytes or their proof go out: until then Uppy shows
    // the fingerprinting progress.
    await Promise.allSettled(fileIDs.map((id) => this.#process(id)));
  };

  async #process(id: string): Promise<void> {
    const controller = new AbortController();
    const { signal } = controller;
    this.#controllers.get(id)?.abort();
    this.#controllers.set(id, controller);
    try {
      // A file restored without its bytes (a large one after a reload) waits until the clerk re-selects it.
      let file = await this.#until(id, (f) => !f.isGhost && !!f.data, ['files-added'], signal);
      if (file.progress.uploadComplete) return;
      file = await this.#fingerprint(file, signal);
      const key = contentKey(file)!;
      const keyText = ResumeIndex.keyOf(key);

      const leader = this.#leaders.get(keyText);
      let finished!: () => void;
      const mine = new Promise<void>((resolve) => (finished = resolve));
      const turn = leader ? leader.then(() => mine) : mine;
      this.#leaders.set(keyText, turn);
      try {
        if (leader) {
          this.#preparing(file, 'waitingForTwin');
          await Promise.race([leader, aborted(signal)]);
        }
        // Paused (one file or all) while it was being prepared: nothing is recorded or sent until resumed.
        let instant: 'instant' | 'upload' | 'paused';
        do {
          await this.#until(id, (f) => !this.#held(f), PAUSE_EVENTS, signal);
          instant = await this.#tryInstant(this.uppy.getFile(id), key, signal);
        } while (instant === 'paused');
        if (instant === 'instant') return;
        const resumeUrl = this.opts.resumeIndex.get(key);
        if (resumeUrl) this.uppy.setFileState(id, { tus: { ...this.uppy.getFile(id).tus, uploadUrl: resumeUrl } });
        this.uppy.emit('preprocess-complete', this.uppy.getFile(id));
        await this.#until(id, (f) => !this.#held(f), PAUSE_EVENTS, signal);
        await this.#sendViaTus!([id]);
      } finally {
        finished();
        if (this.#leaders.get(keyText) === turn) this.#leaders.delete(keyText);
      }
    } catch (error) {
      if (error instanceof FileRemovedError || error instanceof HashAbortedError) return;
      const file = this.uppy.getFile(id);
      if (!file) return;
      const reported = error instanceof Error ? error : new Error(String(error));
      this.#reported.add(reported);
      if (reported instanceof HashReadError) this.#forgetFingerprint(file);
      this.uppy.emit('preprocess-complete', file);
      this.uppy.emit('upload-error', file, reported);
      this.opts.onOutcome(this.uppy.getFile(id), { kind: 'failed', error: reported });
    } finally {
      if (this.#controllers.get(id) === controller) this.#controllers.delete(id);
    }
  }

  /**
   * The file once `ready` holds, checked again whenever one of `events` fires; FileRemovedError
   * when the file is removed or cancelled meanwhile.
   */
  async #until(
    id: string,
    ready: (file: ArchiveFile) => boolean,
    events: ReadonlyArray<'files-added' | (typeof PAUSE_EVENTS)[number]>,
    signal: AbortSignal,
  ): Promise<ArchiveFile> {
    for (;;) {
      const file = this.uppy.getFile(id);
      if (!file || signal.aborted) throw new FileRemovedError();
      if (ready(file)) return file;
      await new Promise<void>((resolve) => {
        const done = () => {
          for (const event of events) this.uppy.off(event, done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        for (const event of events) this.uppy.on(event, done);
        signal.addEventListener('abort', done);
      });
    }
  }

  /** Hashes that proved wrong (the file changed, or could not be read) are computed anew on retry. */
  #forgetFingerprint(file: ArchiveFile): void {
    const key = contentKey(file);
    if (key) this.opts.resumeIndex.delete(key);
    // Other bytes are another upload: a new key, or the archive refuses the old one for them.
    this.uppy.setFileMeta(file.id, { md5: undefined, sha256: undefined, idempotencyKey: newUploadKey() });
    this.uppy.setFileState(file.id, { tus: { ...file.tus, uploadUrl: undefined } });
  }

  async #fingerprint(file: ArchiveFile, signal: AbortSignal): Promise<ArchiveFile> {
    if (contentKey(file)) return file;
    // Queued files say nothing until their turn: a thousand "0 %" updates at once would each
    // re-render the whole list.
    const digest = await this.opts.hasher
      .hash(file.data as Blob, {
        signal,
        onStart: () => this.#preparing(file, 'hashing', 0),
        onProgress: (hashed, total) => this.#preparing(file, 'hashing', total === 0 ? 1 : hashed / total),
      })
      .catch((error: unknown) => {
        if (error instanceof HashAbortedError) throw error;
        throw new HashReadError(error);
      });
    this.uppy.setFileMeta(file.id, {
      md5: digest.md5,
      sha256: digest.sha256,
      idempotencyKey: file.meta.idempotencyKey ?? newUploadKey(),
    });
    return this.uppy.getFile(file.id);
  }

  /** Check, then prove: 'instant' when the archive recorded the file without its bytes. */
  async #tryInstant(file: ArchiveFile, key: ContentKey, signal: AbortSignal): Promise<'instant' | 'upload' | 'paused'> {
    this.#preparing(file, 'checking');
    const check = await this.opts.api.check({
      ...key,
      name: file.name ?? file.meta.name,
      type: file.type || undefined,
    });
    if (signal.aborted) throw new FileRemovedError();
    if (check.status !== 'prove') return 'upload';
    this.#preparing(file, 'proving');
    const digests = await this.opts.hasher.proofs(file.data as Blob, check.ranges).catch((error: unknown) => {
      throw new HashReadError(error);
    });
    // Removed or paused while the ranges were read: record nothing.
    if (signal.aborted) throw new FileRemovedError();
    const current = this.uppy.getFile(file.id);
    if (current && this.#held(current)) return 'paused';
    try {
      const result = await this.#prove(check.claimId, digests, signal);
      if (signal.aborted) throw new FileRemovedError();
      this.opts.resumeIndex.delete(key);
      const latest = this.uppy.getFile(file.id);
      this.uppy.emit('preprocess-complete', latest);
      this.uppy.emit('upload-start', [latest]);
      this.uppy.emit('upload-success', this.uppy.getFile(file.id), {
        status: 200,
        body: { archiveStatus: 'instant', fileId: result.fileId, uploadCount: result.uploadCount },
      });
      this.opts.onOutcome(this.uppy.getFile(file.id), {
        kind: 'instant',
        fileId: result.fileId,
        uploadCount: result.uploadCount,
      });
      this.#retireGhosts(file.id, key);
      return 'instant';
    } catch (error) {
      // A proof the archive does not accept (the file differs from what it holds) means: upload it.
      if (error instanceof ApiError && error.code === 'claim_rejected') return 'upload';
      throw error;
    }
  }

  /**
   * A proof, sent again with the same claim when no answer came (the network, a restarting
   * server): a proof counted before its answer was lost is answered as counted, not counted twice.
   */
  async #prove(claimId: string, digests: string[], signal: AbortSignal) {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.opts.api.prove(claimId, digests);
      } catch (error) {
        const transient =
          error instanceof NetworkError ||
          (error instanceof ApiError && error.status >= 500 && error.code !== 'storage_full');
        if (!transient || attempt >= PROOF_RETRY_DELAYS_MS.length || signal.aborted) throw error;
        await new Promise((resolve) => setTimeout(resolve, PROOF_RETRY_DELAYS_MS[attempt]));
      }
    }
  }

  #preparing(file: ArchiveFile, key: MessageKey, value?: number): void {
    const latest = this.uppy.getFile(file.id);
    if (!latest) return;
    const message = value === undefined ? this.opts.label(key) : `${this.opts.label(key)} ${Math.floor(value * 100)}%`;
    this.uppy.emit(
      'preprocess-progress',
      latest,
      value === undefined ? { mode: 'indeterminate', message } : { mode: 'determinate', message, value },
    );
  }

  #onRemoved = (file: ArchiveFile) => this.#controllers.get(file.id)?.abort();
  #onCancelAll = () => {
    this.#holdAll = false;
    for (const controller of this.#controllers.values()) controller.abort();
  };

  /**
   * Uppy's pause-all pauses only files whose transfer has started; files still being prepared
   * (fingerprinted, checked) are held here until resume-all, before anything is recorded or sent.
   * (Marking them paused in Uppy's state would make its status bar offer "pause" again.)
   */
  #onPauseAll = () => {
    this.#holdAll = true;
  };
  #onResumeAll = () => {
    this.#holdAll = false;
  };

  /** Whether a file must wait: paused itself, or held by a pause-all that is still in force. */
  #held(file: ArchiveFile): boolean {
    if (file.isPaused) return true;
    // Once nothing is paused any more (the paused transfers were removed), neither is the hold.
    if (this.#holdAll && !this.uppy.getObjectOfFilesPerState().isAllPaused) this.#holdAll = false;
    return this.#holdAll;
  }

  #onTusSuccess = (file: ArchiveFile | undefined, response: { body?: ArchiveBody }) => {
    const xhr = response.body?.xhr as XMLHttpRequest | undefined;
    if (!file || !xhr) return;
    const key = contentKey(file);
    if (key) this.opts.resumeIndex.delete(key);
    const status = xhr.getResponseHeader(ARCHIVE_STATUS_HEADER);
    const fileId = xhr.getResponseHeader(ARCHIVE_FILE_ID_HEADER) ?? '';
    const uploadCount = Number(xhr.getResponseHeader(ARCHIVE_UPLOAD_COUNT_HEADER) ?? 1);
    this.opts.onOutcome(file, { kind: status === 'duplicate' ? 'duplicate' : 'stored', fileId, uploadCount });
    if (key) this.#retireGhosts(file.id, key);
  };

  /**
   * A file restored after a reload without its bytes, whose content was then re-selected from
   * another folder and finished there: nothing is left to upload for it.
   */
  #retireGhosts(finishedId: string, key: ContentKey): void {
    const text = ResumeIndex.keyOf(key);
    for (const other of this.uppy.getFiles()) {
      const otherKey = contentKey(other);
      if (other.id !== finishedId && other.isGhost && otherKey && ResumeIndex.keyOf(otherKey) === text)
        this.uppy.removeFile(other.id);
    }
  }

  #onTusError = (file: ArchiveFile | undefined, error: Error & { originalResponse?: unknown }) => {
    if (!file || this.#reported.has(error)) return;
    const response = (error as Partial<DetailedError>).originalResponse;
    if (!response) {
      this.opts.onOutcome(file, { kind: 'failed', error: new NetworkError(error) });
      return;
    }
    const apiError = errorFromResponse(
      response.getStatus(),
      safeJson(response.getBody()),
      response.getHeader('Retry-After') ?? null,
    );
    if (apiError.code === 'checksum_mismatch') this.#forgetFingerprint(file);
    // The server no longer has the upload: the next try starts a fresh one.
    else if (apiError.code === 'not_found' || apiError.code === 'upload_expired') {
      const key = contentKey(file);
      if (key) this.opts.resumeIndex.delete(key);
      this.uppy.setFileState(file.id, { tus: { ...file.tus, uploadUrl: undefined } });
    }
    this.opts.onOutcome(file, { kind: 'failed', error: apiError });
  };
}

/** Reading the file failed (moved, changed, permission): a per-file error with its own advice. */
export class HashReadError extends Error {
  constructor(cause: unknown) {
    super('the file could not be read', { cause });
    this.name = 'HashReadError';
  }
}

/** Rejects when the file is removed; handled even when nobody waits on it any more. */
function aborted(signal: AbortSignal): Promise<never> {
  const promise = new Promise<never>((_resolve, reject) => {
    if (signal.aborted) reject(new FileRemovedError());
    signal.addEventListener('abort', () => reject(new FileRemovedError()), { once: true });
  });
  promise.catch(() => undefined);
  return promise;
}

function contentKey(file: ArchiveFile): ContentKey | undefined {
  const { md5, sha256 } = file.meta;
  return md5 && sha256 && typeof file.size === 'number' ? { md5, sha256, size: file.size } : undefined;
}

function safeJson(text: unknown): unknown {
  try {
    return typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** Waits before a proof is sent again (a restarted server instance answers within seconds). */
const PROOF_RETRY_DELAYS_MS = [1000, 3000, 5000];

/** A new upload key: random, and made in any page (crypto.randomUUID needs HTTPS or localhost). */
function newUploadKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}
