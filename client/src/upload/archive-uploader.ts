import { BasePlugin, type Uppy, type UppyFile } from '@uppy/core';
import Tus, { type TusOptions } from '@uppy/tus';
import type { DetailedError } from 'tus-js-client';
import { ARCHIVE_FILE_ID_HEADER, ARCHIVE_STATUS_HEADER, ARCHIVE_UPLOAD_COUNT_HEADER } from '../../../shared/schemas.js';
import type { ArchiveApi } from '../api.js';
import { errorFromResponse } from '../api.js';
import { HashAbortedError, type Hasher } from '../hashing/hasher.js';
import { ApiError, NetworkError, type MessageKey } from '../i18n/index.js';
import { ResumeIndex, type ContentKey } from './resume-index.js';

export type ArchiveMeta = { md5?: string; sha256?: string; relativePath?: string | null };
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
        super.onReceiveUploadUrl(file, uploadURL);
        const key = contentKey(file);
        if (uploadURL && key) resumeIndex.set(key, uploadURL);
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
    this.uppy.on('upload-success', this.#onTusSuccess);
    this.uppy.on('upload-error', this.#onTusError);
  }

  override uninstall(): void {
    this.uppy.removeUploader(this.#upload);
    this.uppy.off('file-removed', this.#onRemoved);
    this.uppy.off('cancel-all', this.#onCancelAll);
    this.uppy.off('upload-success', this.#onTusSuccess);
    this.uppy.off('upload-error', this.#onTusError);
    const tus = this.uppy.getPlugin('Tus');
    if (tus) this.uppy.removePlugin(tus);
    for (const controller of this.#controllers.values()) controller.abort();
  }

  #upload = async (fileIDs: string[]): Promise<void> => {
    // The files are under way from now on (hashing is the first leg): the status bar must not
    // offer to start them again.
    const waiting = this.uppy.getFilesByIds(fileIDs).filter((f) => !f.progress.uploadStarted && !f.progress.uploadComplete);
    if (waiting.length > 0) this.uppy.emit('upload-start', waiting);
    await Promise.allSettled(fileIDs.map((id) => this.#process(id)));
  };

  async #process(id: string): Promise<void> {
    const controller = new AbortController();
    this.#controllers.get(id)?.abort();
    this.#controllers.set(id, controller);
    try {
      let file = await this.#withData(id, controller.signal);
      if (file.progress.uploadComplete) return;
      file = await this.#fingerprint(file, controller.signal);
      const key = contentKey(file)!;
      const keyText = ResumeIndex.keyOf(key);

      const leader = this.#leaders.get(keyText);
      let finished!: () => void;
      const mine = new Promise<void>((resolve) => (finished = resolve));
      this.#leaders.set(keyText, leader ? leader.then(() => mine) : mine);
      try {
        if (leader) {
          this.#preparing(file, 'waitingForTwin');
          await leader;
        }
        if (await this.#tryInstant(file, key, controller.signal)) return;
        const resumeUrl = this.opts.resumeIndex.get(key);
        if (resumeUrl) this.uppy.setFileState(id, { tus: { ...file.tus, uploadUrl: resumeUrl } });
        this.uppy.emit('preprocess-complete', this.uppy.getFile(id));
        await this.#sendViaTus!([id]);
      } finally {
        finished();
        if (this.#leaders.get(keyText) === mine) this.#leaders.delete(keyText);
      }
    } catch (error) {
      if (error instanceof FileRemovedError || error instanceof HashAbortedError) return;
      const file = this.uppy.getFile(id);
      if (!file) return;
      const reported = error instanceof Error ? error : new Error(String(error));
      this.#reported.add(reported);
      this.uppy.emit('preprocess-complete', file);
      this.uppy.emit('upload-error', file, reported);
      this.opts.onOutcome(this.uppy.getFile(id), { kind: 'failed', error: reported });
    } finally {
      if (this.#controllers.get(id) === controller) this.#controllers.delete(id);
    }
  }

  /** A file restored without its bytes (a large one after a reload) waits until the clerk re-selects it. */
  async #withData(id: string, signal: AbortSignal): Promise<ArchiveFile> {
    for (;;) {
      const file = this.uppy.getFile(id);
      if (!file || signal.aborted) throw new FileRemovedError();
      if (!file.isGhost && file.data) return file;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.uppy.off('files-added', done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.uppy.on('files-added', done);
        signal.addEventListener('abort', done);
      });
    }
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
    this.uppy.setFileMeta(file.id, { md5: digest.md5, sha256: digest.sha256 });
    return this.uppy.getFile(file.id);
  }

  /** Check, then prove: true when the archive recorded the file without its bytes. */
  async #tryInstant(file: ArchiveFile, key: ContentKey, signal: AbortSignal): Promise<boolean> {
    this.#preparing(file, 'checking');
    const check = await this.opts.api.check({ ...key, name: file.name ?? file.meta.name, type: file.type || undefined });
    if (signal.aborted) throw new FileRemovedError();
    if (check.status !== 'prove') return false;
    this.#preparing(file, 'proving');
    const digests = await this.opts.hasher.proofs(file.data as Blob, check.ranges);
    try {
      const result = await this.opts.api.prove(check.claimId, digests);
      if (signal.aborted) throw new FileRemovedError();
      this.opts.resumeIndex.delete(key);
      const latest = this.uppy.getFile(file.id);
      this.uppy.emit('preprocess-complete', latest);
      this.uppy.emit('upload-start', [latest]);
      this.uppy.emit('upload-success', this.uppy.getFile(file.id), {
        status: 200,
        body: { archiveStatus: 'instant', fileId: result.fileId, uploadCount: result.uploadCount },
      });
      this.opts.onOutcome(this.uppy.getFile(file.id), { kind: 'instant', fileId: result.fileId, uploadCount: result.uploadCount });
      this.#retireGhosts(file.id, key);
      return true;
    } catch (error) {
      // A proof the archive does not accept (the file differs from what it holds) means: upload it.
      if (error instanceof ApiError && error.code === 'claim_rejected') return false;
      throw error;
    }
  }

  #preparing(file: ArchiveFile, key: MessageKey, value?: number): void {
    const latest = this.uppy.getFile(file.id);
    if (!latest) return;
    const message = value === undefined ? this.opts.label(key) : `${this.opts.label(key)} ${Math.floor(value * 100)}%`;
    this.uppy.emit('preprocess-progress', latest, value === undefined ? { mode: 'indeterminate', message } : { mode: 'determinate', message, value });
  }

  #onRemoved = (file: ArchiveFile) => this.#controllers.get(file.id)?.abort();
  #onCancelAll = () => {
    for (const controller of this.#controllers.values()) controller.abort();
  };

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
      if (other.id !== finishedId && other.isGhost && otherKey && ResumeIndex.keyOf(otherKey) === text) this.uppy.removeFile(other.id);
    }
  }

  #onTusError = (file: ArchiveFile | undefined, error: Error & { originalResponse?: unknown }) => {
    if (!file || this.#reported.has(error)) return;
    const response = (error as Partial<DetailedError>).originalResponse;
    if (!response) {
      this.opts.onOutcome(file, { kind: 'failed', error: new NetworkError(error) });
      return;
    }
    const apiError = errorFromResponse(response.getStatus(), safeJson(response.getBody()), response.getHeader('Retry-After') ?? null);
    // The server no longer has the upload: the next try starts a fresh one.
    if (apiError.code === 'not_found' || apiError.code === 'upload_expired') {
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
