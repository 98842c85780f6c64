import { RequestBatcher } from '../../../shared/request-batcher.js';
import { newRequestKey } from '../request-keys.js';
import {
  BATCH_FILE_MAX_BYTES,
  BATCH_MAX_FILES,
  type BatchFileResult,
  type ByteRangeView,
  type OwnUpload,
  type ProofResult,
  type UploadCheckRequest,
  type UploadCheckResult,
  type UploadResult,
} from '../../../shared/schemas.js';
import type { ContentDigest } from '../hashing/content-hash.js';
import { ApiError, NetworkError } from '../errors.js';
import { receiptReason, SKIPPED_AS_UPLOADED, type ReceiptRequest } from '../../../shared/receipts.js';
import { RepeatQuestion, type RepeatChoice } from './repeat-question.js';
import type {
  JournalEntry,
  JournalOutcome,
  JournalState,
  KeptReceipt,
  UploadAction,
  UploadJournal,
} from './upload-journal.js';
import { RetryWaits, waitCause, type RetryWait, type WaitCause, type WokenBy } from './retry-waits.js';

/** Where a file stands, as the clerk sees it. */
export type Phase = 'waiting' | 'hashing' | 'twin' | 'checking' | 'asking' | 'proving' | 'sending' | 'done' | 'failed';

export type Outcome = JournalOutcome;

/** One file of the folder being uploaded. */
export interface UploadItem {
  /** Its path in the folder the clerk chose ("2026年移交/副本/第0012页.jpg"), or its name. */
  readonly path: string;
  /** The sub-folder it is listed under ("2026年移交/副本"; "" for files chosen on their own). */
  readonly folder: string;
  size: number;
  lastModified: number;
  type: string;
  /** Its bytes; absent for a file remembered from before a reload until the clerk drops it again. */
  file: File | undefined;
  key: string;
  phase: Phase;
  /** Bytes hashed or sent so far (large files). */
  progress: number;
  md5?: string;
  sha256?: string;
  /** A request that may have counted it went out unanswered: it is sent again the same way. */
  pending?: 'proof' | 'send';
  claim?: { claimId: string; digests: string[] };
  outcome?: Outcome;
  finishedAt?: number;
  running: boolean;
  /** The question of the drop it came in (sent into this unit before: skip or count again?). */
  question?: RepeatQuestion;
  /** Waiting for that answer, it gave its place among the files under way to the next. */
  slotLent?: boolean;
  /** A request for it failed and is to be tried again (等待重试). */
  retrying?: boolean;
  /**
   * Counted without its bytes because an identical file of this list (this path) went first: the
   * archive keeps one copy.
   */
  sameAs?: string;
}

export interface UploadApi {
  checks(files: UploadCheckRequest[]): Promise<UploadCheckResult[]>;
  proofs(proofs: Array<{ claimId: string; digests: string[] }>): Promise<ProofResult[]>;
  batch(
    files: Array<{ file: Blob; md5: string; sha256: string; name: string; type?: string; key: string }>,
  ): Promise<BatchFileResult[]>;
}

export interface UploadHasher {
  readonly size: number;
  hash(file: Blob, options: { onProgress?: (hashed: number, total: number) => void }): Promise<ContentDigest>;
  hashSmall(files: Blob[]): Promise<Array<ContentDigest | Error>>;
  proofs(file: Blob, ranges: ByteRangeView[]): Promise<string[]>;
}

/**
 * How a large file's sender tells of its own retries (tus-js-client retries on its own): it
 * waits `ms` before trying again (`wake` tries at once), a request went out, the archive answered.
 */
export interface RetryWatch {
  waiting(ms: number, cause: WaitCause, wake: (by: WokenBy) => void): void;
  trying(): void;
  answered(): void;
}

/** Sends one large file (tus, resumable); rejects with the signal's reason when it fires. */
export type LargeSender = (
  item: UploadItem & { md5: string; sha256: string; file: File },
  onProgress: (sent: number) => void,
  signal: AbortSignal,
  retries?: RetryWatch,
) => Promise<UploadResult>;

export interface FolderUploadOptions {
  api: UploadApi;
  hasher: UploadHasher;
  journal: UploadJournal;
  sendLarge: LargeSender;
  /** The archive's limit (MAX_FILE_SIZE): larger files are refused before they are read. */
  maxFileSize: number;
  /** Something changed: the page re-renders when it likes (it throttles). */
  onChange: () => void;
  /** Waits before a request is sent again after a network failure or a 5xx. */
  retryDelaysMs?: readonly number[];
  /** Keeps the receipt (上传清单) on the server: sent whenever the upload comes to rest. */
  saveReceipt?: (id: string, receipt: ReceiptRequest) => Promise<unknown>;
}

/** Whether the receipt of what has finished is kept on the server. */
export type ReceiptState =
  { kind: 'none' } | { kind: 'saving' } | { kind: 'saved'; id: string } | { kind: 'failed'; error: unknown };

/** Files up to this size go in batches; larger ones one by one with tus (the server's batch limit). */
export const SMALL_FILE_MAX_BYTES = BATCH_FILE_MAX_BYTES;
/** A batch upload request carries at most this much: a failure costs little, progress moves. */
const SEND_BATCH_MAX_BYTES = 8 * 1024 * 1024;
/** Files under way at once (hashing, checking, proving, sending); the rest wait their turn. */
const MAX_UNDER_WAY = 2000;
/** Files taken into the list per task when a folder is added. */
const ADD_SLICE = 100;
/** Journal entries written per transaction when a folder is added. */
const JOURNAL_SLICE = 1000;
/** Large files sent at once: a few keep the line busy without starving the batches. */
const LARGE_AT_ONCE = 2;
const RETRY_DELAYS_MS = [1000, 3000, 5000, 10_000, 20_000, 30_000];

/** The failure a file ends with; `retry`: whether trying again can succeed. */
export class FileFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
    this.name = 'FileFailure';
  }
}

/** Thrown into a large upload when the clerk pauses: it goes on from the server's offset later. */
class PausedError extends Error {}

/**
 * One folder upload (an upload action): every file is hashed, checked against the archive,
 * proved when the archive holds it (instant, 秒传) or sent: small files many to a request, large
 * ones resumably. Requests are batched (checks, proofs and small files up to 1,000 to a
 * request); identical files of the folder wait for the first and then finish instantly; what
 * could count a file is written to the journal before it is sent, so that after a reload the
 * same file is sent again under the same key or claim and counted once.
 */
export class FolderUpload {
  readonly items: UploadItem[] = [];
  readonly #byPath = new Map<string, UploadItem>();
  readonly #leaders = new Map<string, Promise<void>>();
  /** The first file of each content in this list that was counted: what its identical files are said to equal. */
  readonly #firstOf = new Map<string, string>();
  /** Requests that failed and wait to be tried again: the page shows them (与档案库的连接中断…). */
  readonly waits: RetryWaits;
  readonly #dirty = new Set<UploadItem>();
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  #paused: { promise: Promise<void>; resume: () => void } | undefined;
  readonly #pauseControllers = new Set<AbortController>();
  #largeRunning = 0;
  #underWay = 0;
  /** Files remembered from before a reload, unfinished, whose bytes the clerk has not given again. */
  readonly #withoutBytes = new Set<UploadItem>();
  /** Files started and not yet ended (under way or queued). */
  #running = 0;
  readonly #queue: UploadItem[] = [];
  readonly #largeQueue: Array<() => void> = [];
  readonly #hashes: RequestBatcher<File, ContentDigest>;
  readonly #checks: RequestBatcher<UploadItem, UploadCheckResult>;
  readonly #proofs: RequestBatcher<UploadItem, ProofResult>;
  readonly #sends: RequestBatcher<UploadItem, UploadResult>;
  #action: UploadAction | undefined;
  #restoring: Promise<void> = Promise.resolve();
  #receiptTimer: ReturnType<typeof setTimeout> | undefined;
  /** Receipts on their way, by id, with the shape each holds: the same is not sent twice at once. */
  readonly #inFlight = new Map<string, string>();
  /**
   * Receipts of lists cleared before the archive kept them: sent again with the next list's
   * receipt, and after a reload, so that their uploads are still known as one upload each. Kept
   * in the journal until the archive has them.
   */
  readonly #owed = new Map<string, KeptReceipt>();
  receipt: ReceiptState = { kind: 'none' };
  /** Each drop's question, in the order dropped. */
  readonly #questions: RepeatQuestion[] = [];
  /**
   * Contents this upload counted: a file of them is a copy within the upload (a twin, the same
   * page in two folders), not one sent before, and is not asked about.
   */
  readonly #countedHere = new Set<string>();

  constructor(private readonly options: FolderUploadOptions) {
    const { api, hasher } = options;
    this.waits = new RetryWaits(() => options.onChange());
    this.#hashes = new RequestBatcher({
      maxItems: 64,
      maxBytes: 4 * 1024 * 1024,
      sizeOf: (file) => file.size,
      waitMs: 0,
      concurrency: hasher.size,
      send: (files) => hasher.hashSmall(files),
    });
    this.#checks = new RequestBatcher({
      maxItems: BATCH_MAX_FILES,
      waitMs: 20,
      concurrency: 2,
      send: (items) =>
        this.#retrying(items, () =>
          api.checks(
            items.map((i) => ({
              md5: i.md5!,
              sha256: i.sha256!,
              size: i.size,
              name: i.path,
              ...(i.type ? { type: i.type } : {}),
            })),
          ),
        ),
    });
    this.#proofs = new RequestBatcher({
      maxItems: BATCH_MAX_FILES,
      waitMs: 20,
      concurrency: 2,
      send: async (items) => {
        for (const item of items) item.pending = 'proof';
        await this.#journalNow(items);
        return this.#retrying(items, () => api.proofs(items.map((i) => i.claim!)));
      },
    });
    this.#sends = new RequestBatcher({
      maxItems: BATCH_MAX_FILES,
      maxBytes: SEND_BATCH_MAX_BYTES,
      sizeOf: (item) => item.size,
      waitMs: 20,
      concurrency: 2,
      send: async (items) => {
        for (const item of items) item.pending = 'send';
        await this.#journalNow(items);
        const results = await this.#retrying(items, () =>
          api.batch(
            items.map((i) => ({
              file: i.file!,
              md5: i.md5!,
              sha256: i.sha256!,
              name: i.path,
              ...(i.type ? { type: i.type } : {}),
              key: i.key,
            })),
          ),
        );
        return results.map((r): UploadResult | Error =>
          r.status === 'failed' ? new FileFailure(r.error, r.message, true) : r,
        );
      },
    });
  }

  /** The upload remembered from before a reload: finished files with their outcome, the rest waiting for their bytes. */
  restore(): Promise<void> {
    this.#restoring = this.#restore();
    return this.#restoring;
  }

  async #restore(): Promise<void> {
    for (const owed of await this.options.journal.loadOwed().catch(() => []))
      if (!this.#owed.has(owed.action.receiptId)) this.#owed.set(owed.action.receiptId, owed);
    this.#keepOwed();
    this.#action = await this.options.journal.loadAction().catch(() => undefined);
    const entries = await this.options.journal.load().catch(() => []);
    entries.sort((a, b) => byCodePoints(a.path, b.path));
    for (const entry of entries) {
      if (this.#byPath.has(entry.path)) continue;
      const item: UploadItem = {
        ...entry,
        folder: folderOf(entry.path),
        file: undefined,
        phase: entry.outcome ? (entry.outcome.kind === 'failed' ? 'failed' : 'done') : 'waiting',
        progress: 0,
        pending: entry.state === 'proving' ? 'proof' : entry.state === 'sending' ? 'send' : undefined,
        running: false,
      };
      this.items.push(item);
      this.#byPath.set(item.path, item);
      if (!item.outcome) this.#withoutBytes.add(item);
      if (counts(item.outcome)) this.#countedHere.add(contentOf(item));
    }
    // The page may have been closed before the receipt was kept: it is sent again (it replaces).
    if (this.#action && this.items.some((i) => i.outcome) && this.#action.kept !== this.#receiptShape())
      this.#receiptSoon();
    // Kept as it is: its link (and 撤回 of its files) is offered again after the reload.
    else if (this.#action?.kept !== undefined) this.receipt = { kind: 'saved', id: this.#action.receiptId };
    this.options.onChange();
  }

  /**
   * Files dropped or chosen. A file the upload already holds (the same path, size and time) is
   * not sent again: finished, it stays as it ended; unfinished (after a reload), it continues
   * under its key. A changed file at a known path is a new upload.
   */
  async add(files: ReadonlyArray<{ file: File; path: string }>): Promise<void> {
    // Files dropped while the remembered upload is still being read join it once it is read.
    await this.#restoring;
    if (!this.#action && files.length > 0) {
      this.#action = {
        receiptId: newRequestKey(),
        title: files[0]!.path.split('/')[0]!,
        startedAt: new Date().toISOString(),
      };
      void this.options.journal.saveAction(this.#action).catch(() => undefined);
    }
    // One question for the drop, not asked before every file of it is in the list.
    const question = new RepeatQuestion(this.options.onChange);
    this.#questions.push(question);
    question.join(files);
    // A file's size and time are read from the disk the first time they are asked (a few
    // tenths of a millisecond each in Chromium): they are taken a slice at a time, each in a task
    // of its own (not in the one that handed them over), and the list fills as they come.
    for (let at = 0; at < files.length; at += ADD_SLICE) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      this.#addSlice(files.slice(at, at + ADD_SLICE), question);
    }
    question.settle(files);
  }

  /** The question of a drop to show: all its files checked, some sent into this unit before. */
  get question(): RepeatQuestion | undefined {
    return this.#questions.find((q) => q.open);
  }

  #addSlice(files: ReadonlyArray<{ file: File; path: string }>, question: RepeatQuestion): void {
    const added: UploadItem[] = [];
    for (const { file, path } of files) {
      let item = this.#byPath.get(path);
      if (item && (item.size !== file.size || item.lastModified !== file.lastModified)) {
        if (item.running) continue;
        Object.assign(item, {
          size: file.size,
          lastModified: file.lastModified,
          key: newRequestKey(),
          phase: 'waiting',
          pending: undefined,
          claim: undefined,
          outcome: undefined,
          md5: undefined,
          sha256: undefined,
        });
      }
      if (!item) {
        item = {
          path,
          folder: folderOf(path),
          size: file.size,
          lastModified: file.lastModified,
          type: file.type,
          file,
          key: newRequestKey(),
          phase: 'waiting',
          progress: 0,
          running: false,
        };
        this.items.push(item);
        this.#byPath.set(path, item);
        added.push(item);
      }
      item.file = file;
      this.#withoutBytes.delete(item);
      if (item.phase === 'done' || item.running) continue;
      if (item.outcome?.kind === 'failed' && !item.outcome.retry) continue;
      item.question = question;
      question.join(item);
      this.#start(item);
    }
    void this.#remember(added);
    this.options.onChange();
  }

  /**
   * Every file of the folder is remembered as soon as it is added, so that after a reload the
   * page can say how many were not finished; in slices, giving the page back in between.
   */
  async #remember(items: UploadItem[]): Promise<void> {
    for (let at = 0; at < items.length; at += JOURNAL_SLICE) {
      if (at > 0) await new Promise((resolve) => setTimeout(resolve, 0));
      await this.options.journal.save(items.slice(at, at + JOURNAL_SLICE).map(entryOf)).catch(() => undefined);
    }
  }

  /** Starts a file's way, or queues it: a few thousand under way at once fill every batch, and the page stays responsive. */
  #start(item: UploadItem): void {
    item.running = true;
    this.#running++;
    if (this.#underWay < MAX_UNDER_WAY) {
      this.#underWay++;
      void this.#run(item).finally(() => this.#ended(item));
    } else this.#queue.push(item);
  }

  /** A file's way ended: its place goes to the next, unless it gave it away while it waited for an answer. */
  #ended(item: UploadItem): void {
    if (item.slotLent) item.slotLent = false;
    else this.#next();
  }

  #next(): void {
    const item = this.#queue.shift();
    if (!item) {
      this.#underWay--;
      return;
    }
    // A new task for each: the files queued behind do not all start in one.
    setTimeout(() => void this.#run(item).finally(() => this.#ended(item)), 0);
  }

  /** Tries every failed file again that can succeed and whose bytes are at hand. */
  retryFailed(): void {
    for (const item of this.items)
      if (item.outcome?.kind === 'failed' && item.outcome.retry && item.file && !item.running) this.#start(item);
    this.options.onChange();
  }

  /** Nothing new starts; large uploads stop where they are (continued from the server's offset). */
  pause(): void {
    if (this.#paused) return;
    let resume!: () => void;
    const promise = new Promise<void>((resolve) => (resume = resolve));
    this.#paused = { promise, resume };
    for (const controller of this.#pauseControllers) controller.abort(new PausedError());
    this.options.onChange();
  }

  resume(): void {
    const paused = this.#paused;
    this.#paused = undefined;
    paused?.resume();
    this.options.onChange();
  }

  get paused(): boolean {
    return this.#paused !== undefined;
  }

  get active(): boolean {
    return this.#running > 0;
  }

  /**
   * Forgets the finished upload, here and in the journal (only when nothing is running). Its
   * receipt, if the archive does not hold it as it ended, is sent first: a folder dropped right
   * after the last one finished must not cost the last one its receipt, without which its copies
   * of a page would count as re-sends.
   */
  async clear(): Promise<void> {
    if (this.active) return;
    clearTimeout(this.#receiptTimer);
    this.#receiptTimer = undefined;
    const receipt = this.#receiptNow();
    if (receipt && receipt.action.kept !== receipt.shape) {
      // Owed until the archive has it: the page may be closed before the answer comes.
      this.#owed.set(receipt.action.receiptId, receipt);
      await this.#saveOwed();
      this.#keep(receipt);
    }
    this.items.length = 0;
    this.#byPath.clear();
    this.#firstOf.clear();
    this.#dirty.clear();
    this.#withoutBytes.clear();
    this.#action = undefined;
    this.receipt = { kind: 'none' };
    this.#questions.length = 0;
    this.#countedHere.clear();
    await this.options.journal.clear().catch(() => undefined);
    this.options.onChange();
  }

  /** Writes what changed since the last write (also when the page is being left). */
  flush(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    const changed = [...this.#dirty];
    this.#dirty.clear();
    return this.options.journal.save(changed.map(entryOf)).catch(() => undefined);
  }

  async #run(item: UploadItem): Promise<void> {
    item.running = true;
    item.outcome = undefined;
    let release: (() => void) | undefined;
    try {
      const file = item.file!;
      if (item.size > this.options.maxFileSize)
        throw new FileFailure('payload_too_large', String(this.options.maxFileSize), false);
      await this.#whileRunning();
      this.#set(item, 'hashing');
      const digest = await this.#hash(item, file);
      if (item.md5 !== undefined && (item.md5 !== digest.md5 || item.sha256 !== digest.sha256)) {
        // Other bytes than before the reload: another upload, under a key of its own.
        Object.assign(item, { key: newRequestKey(), pending: undefined, claim: undefined });
      }
      item.md5 = digest.md5;
      item.sha256 = digest.sha256;
      release = await this.#leadOrWait(item);

      if (item.pending === 'proof' && item.claim) {
        const { claimId } = item.claim;
        const answer = await this.#proofs.add(item);
        if (answer.status !== 'rejected') return this.#finish(item, { kind: 'instant', ...counted(answer), claimId });
        Object.assign(item, { pending: undefined, claim: undefined });
      }
      for (let attempt = 0; ; attempt++) {
        try {
          if (item.pending !== 'send' && (await this.#instant(item, file, release))) return;
          await this.#whileRunning();
          this.#set(item, 'sending');
          const answer = await this.#send(item, file);
          const via = file.size <= SMALL_FILE_MAX_BYTES ? 'batch' : 'tus';
          return this.#finish(item, { kind: answer.status, ...counted(answer), via });
        } catch (error) {
          // The key was counted for other bytes (the file changed under its path): a new upload.
          if (!(error instanceof FileFailure && error.code === 'idempotency_key_reused') || attempt > 0) throw error;
          Object.assign(item, { key: newRequestKey(), pending: undefined });
        }
      }
    } catch (error) {
      this.#finish(item, failureOf(error));
    } finally {
      item.running = false;
      this.#running--;
      release?.();
      if (!this.active) this.#receiptSoon();
      this.options.onChange();
    }
  }

  /** The receipt goes to the server once the upload comes to rest (every file finished or waiting for its bytes). */
  #receiptSoon(): void {
    const save = this.options.saveReceipt;
    if (!save) return;
    clearTimeout(this.#receiptTimer);
    this.#receiptTimer = setTimeout(() => {
      this.#receiptTimer = undefined;
      const receipt = this.#receiptNow();
      if (!receipt || this.active) return;
      this.#keepOwed();
      this.#keep(receipt);
    }, 300);
  }

  /** The receipt of the list as it stands: its action, its finished files' rows, their shape. */
  #receiptNow(): KeptReceipt | undefined {
    const action = this.#action;
    const rows = this.items
      .filter((i) => i.outcome)
      .map(receiptRowOf)
      .sort((a, b) => byCodePoints(a.path, b.path));
    if (!action || rows.length === 0) return undefined;
    return {
      action,
      request: { title: action.title, startedAt: action.startedAt, rows },
      shape: this.#receiptShape(),
    };
  }

  /**
   * Sends a receipt (unless the same is on its way). The list's own is shown as saving, saved or
   * failed (with 重试); one of a list cleared meanwhile that fails is owed, and sent again later.
   */
  #keep(receipt: KeptReceipt): void {
    const save = this.options.saveReceipt;
    const { action, request, shape } = receipt;
    const id = action.receiptId;
    if (!save || this.#inFlight.get(id) === shape) return;
    this.#inFlight.set(id, shape);
    if (this.#action === action) this.receipt = { kind: 'saving' };
    this.options.onChange();
    save(id, request).then(
      () => {
        if (this.#inFlight.get(id) === shape) this.#inFlight.delete(id);
        if (this.#owed.get(id)?.shape === shape) {
          this.#owed.delete(id);
          void this.#saveOwed();
        }
        action.kept = shape;
        if (this.#action === action) {
          this.receipt = { kind: 'saved', id };
          void this.options.journal.saveAction(action).catch(() => undefined);
        }
        this.options.onChange();
      },
      (error: unknown) => {
        if (this.#inFlight.get(id) === shape) this.#inFlight.delete(id);
        if (this.#action === action) this.receipt = { kind: 'failed', error };
        else if (action.kept !== shape && this.#owed.get(id) !== receipt) {
          this.#owed.set(id, receipt);
          void this.#saveOwed();
        }
        this.options.onChange();
      },
    );
  }

  /** Receipts of cleared lists the archive has not kept yet, sent again. */
  #keepOwed(): void {
    for (const owed of this.#owed.values()) this.#keep(owed);
  }

  #saveOwed(): Promise<void> {
    return this.options.journal.saveOwed([...this.#owed.values()]).catch(() => undefined);
  }

  /** The finished files by outcome: what a receipt of them holds, in short. */
  #receiptShape(): string {
    const counts = new Map<string, number>();
    for (const item of this.items)
      if (item.outcome) counts.set(item.outcome.kind, (counts.get(item.outcome.kind) ?? 0) + 1);
    return [...counts].sort().join(',');
  }

  /** Sends the receipt again (after it could not be kept). */
  saveReceipt(): void {
    this.#receiptSoon();
  }

  /** Small files are hashed many to a message; a large one alone, with its progress shown. */
  async #hash(item: UploadItem, file: File): Promise<ContentDigest> {
    try {
      if (file.size <= SMALL_FILE_MAX_BYTES) return await this.#hashes.add(file);
      return await this.options.hasher.hash(file, {
        onProgress: (hashed) => {
          item.progress = hashed;
          this.options.onChange();
        },
      });
    } catch (error) {
      throw unreadable(error);
    }
  }

  /**
   * The first file of each content goes ahead; identical ones wait for it, and then find the
   * archive holding the content (instant) instead of sending it again.
   */
  async #leadOrWait(item: UploadItem): Promise<() => void> {
    const content = `${item.md5}:${item.sha256}:${item.size}`;
    for (let leader = this.#leaders.get(content); leader; leader = this.#leaders.get(content)) {
      this.#set(item, 'twin');
      await leader;
    }
    let release!: () => void;
    this.#leaders.set(content, new Promise<void>((resolve) => (release = resolve)));
    let released = false;
    // Called early by a file that waits for the clerk's answer (its twins are then checked too).
    return () => {
      if (released) return;
      released = true;
      this.#leaders.delete(content);
      release();
    };
  }

  /** Check, and prove when the archive holds the content: true when counted without its bytes (or skipped). */
  async #instant(item: UploadItem, file: File, release: () => void): Promise<boolean> {
    this.#set(item, 'checking');
    let check = await this.#checks.add(item);
    const earlier = check.status === 'prove' && !this.#countedHere.has(contentOf(item)) ? check.ownUpload : undefined;
    if (!earlier) item.question?.settle(item);
    else {
      const waits = item.question?.choice === undefined;
      if ((await this.#askRepeat(item, earlier, release)) === 'skip') {
        // Counted nowhere: the claim is left to expire.
        this.#finish(item, { kind: 'skipped', ...earlier });
        return true;
      }
      // The clerk may have read the question for longer than a claim lives: a fresh one.
      if (waits) check = await this.#checks.add(item);
    }
    if (check.status !== 'prove') return false;
    this.#set(item, 'proving');
    let digests: string[];
    try {
      // No ranges: the archive knows this clerk sent these bytes before; nothing to read.
      digests = check.ranges.length === 0 ? [] : await this.options.hasher.proofs(file, check.ranges);
    } catch (error) {
      throw unreadable(error);
    }
    item.claim = { claimId: check.claimId, digests };
    // A proof counts the file: a paused upload records nothing until it is resumed.
    await this.#whileRunning();
    const answer = await this.#proofs.add(item);
    if (answer.status === 'rejected') {
      // The file differs from what the archive holds where it was asked: it is sent instead.
      Object.assign(item, { pending: undefined, claim: undefined });
      return false;
    }
    this.#finish(item, { kind: 'instant', ...counted(answer), claimId: check.claimId });
    return true;
  }

  /**
   * The clerk's answer for a file it sent into this unit before. While it waits, the file gives its
   * place among the files under way to the next (a drop larger than those is checked whole before
   * the question), and its twins go on to their own checks (they are asked about with it).
   */
  async #askRepeat(item: UploadItem, earlier: OwnUpload, release: () => void): Promise<RepeatChoice> {
    const question = (item.question ??= new RepeatQuestion(this.options.onChange));
    if (!this.#questions.includes(question)) this.#questions.push(question);
    if (question.choice) return question.choice;
    this.#set(item, 'asking');
    release();
    if (!item.slotLent) {
      item.slotLent = true;
      this.#next();
    }
    return question.ask(item, earlier.lastUploadTime);
  }

  async #send(item: UploadItem, file: File): Promise<UploadResult> {
    if (file.size <= SMALL_FILE_MAX_BYTES) return this.#sends.add(item);
    item.pending = 'send';
    await this.#journalNow([item]);
    const large = item as UploadItem & { md5: string; sha256: string; file: File };
    for (;;) {
      await this.#largeTurn();
      const controller = new AbortController();
      this.#pauseControllers.add(controller);
      // Paused while this file waited for its journal entry or its turn: it starts once resumed.
      if (this.#paused) controller.abort(new PausedError());
      // tus-js-client retries on its own; it tells of its waits here, so the page shows them too.
      let wait: RetryWait | undefined;
      const retries: RetryWatch = {
        waiting: (ms, cause, wake) => (wait ??= this.waits.begin([item])).holding(ms, cause, wake),
        trying: () => wait?.trying(),
        answered: () => {
          wait?.end();
          wait = undefined;
          this.waits.answered();
        },
      };
      try {
        return await this.options.sendLarge(
          large,
          (sent) => {
            item.progress = sent;
            this.options.onChange();
          },
          controller.signal,
          retries,
        );
      } catch (error) {
        if (!(error instanceof PausedError)) throw error;
        await this.#whileRunning();
      } finally {
        wait?.end();
        this.#pauseControllers.delete(controller);
        this.#largeDone();
      }
    }
  }

  #largeTurn(): Promise<void> {
    if (this.#largeRunning < LARGE_AT_ONCE) {
      this.#largeRunning++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#largeQueue.push(resolve));
  }

  #largeDone(): void {
    const next = this.#largeQueue.shift();
    if (next) next();
    else this.#largeRunning--;
  }

  #finish(item: UploadItem, outcome: Outcome): void {
    item.outcome = outcome;
    item.question?.settle(item);
    item.sameAs = undefined;
    if (counts(outcome)) {
      const content = contentOf(item);
      this.#countedHere.add(content);
      // Identical files of one list wait for the first (#leadOrWait): each is counted, one copy kept.
      const first = this.#firstOf.get(content);
      if (first === undefined) this.#firstOf.set(content, item.path);
      else if (first !== item.path && outcome.kind !== 'stored') item.sameAs = first;
    }
    item.finishedAt = Date.now();
    // A failed file keeps what it sent unanswered: tried again, it goes the same way, under the
    // same key or claim, so an answer lost on the way cannot make it count twice.
    if (outcome.kind !== 'failed') {
      item.pending = undefined;
      item.claim = undefined;
    }
    item.progress = 0;
    if (outcome.kind !== 'failed') this.#retireRemembered(item);
    this.#set(item, outcome.kind === 'failed' ? 'failed' : 'done');
    this.#dirty.add(item);
    this.#flushTimer ??= setTimeout(() => void this.flush(), 500);
  }

  /**
   * Files remembered from before a reload, still without their bytes, whose content has now
   * finished from another path (the same document chosen from another folder continued their
   * upload): nothing is left to do for them.
   */
  #retireRemembered(finished: UploadItem): void {
    if (this.#withoutBytes.size === 0) return;
    const retired = [...this.#withoutBytes].filter(
      (other) =>
        other !== finished &&
        !other.file &&
        !other.outcome &&
        other.md5 === finished.md5 &&
        other.sha256 === finished.sha256 &&
        other.size === finished.size,
    );
    if (retired.length === 0) return;
    for (const other of retired) {
      this.items.splice(this.items.indexOf(other), 1);
      this.#byPath.delete(other.path);
      this.#dirty.delete(other);
      this.#withoutBytes.delete(other);
    }
    void this.options.journal.remove(retired.map((other) => other.path)).catch(() => undefined);
  }

  #set(item: UploadItem, phase: Phase): void {
    item.phase = phase;
    this.options.onChange();
  }

  async #journalNow(items: readonly UploadItem[]): Promise<void> {
    for (const item of items) this.#dirty.delete(item);
    // Without a journal (private window) the upload goes on; only a reload loses its place.
    await this.options.journal.save(items.map(entryOf)).catch(() => undefined);
  }

  async #whileRunning(): Promise<void> {
    while (this.#paused) await this.#paused.promise;
  }

  /**
   * A request for `items` sent again after a network failure, a 5xx or a 429 (the same body: keys
   * and claims make that safe). While it waits, its files show 等待重试 and the page its countdown;
   * a wait the clerk cut short (立即重试) costs no attempt (one cut short by another request's
   * answer does: a request that fails on its own while others pass must not loop).
   */
  async #retrying<T>(items: readonly UploadItem[], send: () => Promise<T>): Promise<T> {
    const delays = this.options.retryDelaysMs ?? RETRY_DELAYS_MS;
    let wait: RetryWait | undefined;
    try {
      for (let attempt = 0; ;) {
        try {
          const answer = await send();
          wait?.end();
          this.waits.answered();
          return answer;
        } catch (error) {
          const cause = transientCause(error);
          if (!cause || attempt >= delays.length) throw error;
          const ms = Math.max(delays[attempt]!, 1000 * ((error as ApiError).retryAfterSeconds ?? 0));
          wait ??= this.waits.begin(items);
          if ((await wait.sleep(ms, cause)) !== 'clerk') attempt++;
        }
      }
    } finally {
      wait?.end();
    }
  }
}

/** Whether a failed request is tried again, and why: no answer, a 5xx (but a full disk), or a 429. */
function transientCause(error: unknown): WaitCause | undefined {
  if (error instanceof NetworkError) return waitCause(0);
  if (!(error instanceof ApiError)) return undefined;
  const again = error.status === 429 || (error.status >= 500 && error.code !== 'storage_full');
  return again ? waitCause(error.status) : undefined;
}

/** The file could not be read (moved, changed, a permission): tried again, it is read again. */
function unreadable(error: unknown): FileFailure {
  return new FileFailure('unreadable', error instanceof Error ? error.message : String(error), true);
}

function counted(answer: UploadResult): { fileId: string; uploadCount: number } {
  return { fileId: answer.fileId, uploadCount: answer.uploadCount };
}

function failureOf(error: unknown): Outcome {
  if (error instanceof FileFailure)
    return { kind: 'failed', code: error.code, message: error.message, retry: error.retry };
  if (error instanceof ApiError) {
    // An over-size refusal keeps the archive's limit, to say it (as the page's own refusal does).
    const { limitBytes } = error.details;
    return {
      kind: 'failed',
      code: error.code,
      message:
        error.code === 'payload_too_large' && typeof limitBytes === 'number' ? String(limitBytes) : error.message,
      // Refusals that trying again cannot change (a refused account may be let in meanwhile).
      retry: !['payload_too_large', 'validation_failed'].includes(error.code),
    };
  }
  if (error instanceof NetworkError) return { kind: 'failed', code: 'network', message: 'network', retry: true };
  return {
    kind: 'failed',
    code: 'unknown',
    message: error instanceof Error ? error.message : String(error),
    retry: true,
  };
}

function receiptRowOf(item: UploadItem): ReceiptRequest['rows'][number] {
  const outcome = item.outcome!;
  const at = new Date(item.finishedAt ?? Date.now()).toISOString();
  const { path, size } = item;
  switch (outcome.kind) {
    case 'failed':
      return { path, size, outcome: 'failed', reason: receiptReason(outcome.code, outcome.message), at };
    case 'instant':
      return { path, size, outcome: 'instant', claimId: outcome.claimId, at };
    case 'skipped':
      return { path, size, outcome: 'skipped', reason: SKIPPED_AS_UPLOADED, at };
    default:
      return { path, size, outcome: outcome.kind, via: outcome.via, key: item.key, at };
  }
}

function journalState(item: UploadItem): JournalState {
  if (item.outcome) return item.outcome.kind === 'failed' ? 'failed' : 'done';
  return item.pending === 'proof' ? 'proving' : item.pending === 'send' ? 'sending' : 'waiting';
}

function entryOf(item: UploadItem): JournalEntry {
  return {
    path: item.path,
    size: item.size,
    lastModified: item.lastModified,
    type: item.type,
    key: item.key,
    state: journalState(item),
    ...(item.md5 && item.sha256 ? { md5: item.md5, sha256: item.sha256 } : {}),
    ...(item.claim ? { claim: item.claim } : {}),
    ...(item.outcome ? { outcome: item.outcome } : {}),
    ...(item.finishedAt ? { finishedAt: item.finishedAt } : {}),
    ...(item.sameAs ? { sameAs: item.sameAs } : {}),
  };
}

/** Whether a file's outcome counted it (in the ledger). */
function counts(outcome: Outcome | undefined): boolean {
  return outcome !== undefined && outcome.kind !== 'failed' && outcome.kind !== 'skipped';
}

/** A file's content, as the archive knows it. */
function contentOf(item: UploadItem): string {
  return `${item.md5}:${item.sha256}:${item.size}`;
}

/** Code-point order: the same every time, and cheap enough to sort ten thousand paths often (localeCompare is not). */
export const byCodePoints = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The folder a path is listed under: everything before its name. */
export function folderOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at < 0 ? '' : path.slice(0, at);
}
