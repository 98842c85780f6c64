import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import * as tus from 'tus-js-client';
import type { ErrorCode } from '../../shared/errors.js';
import { tusShouldRetry } from '../../shared/tus-retry.js';
import { exchange, type HttpAnswer, type HttpBody } from './http-exchange.js';
import {
  ARCHIVE_FILE_ID_HEADER,
  ARCHIVE_STATUS_HEADER,
  ARCHIVE_UPLOAD_COUNT_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  TUS_ENDPOINT,
} from '../../shared/schemas.js';
import type {
  BatchFileResult,
  ByteRangeView,
  ProofResult,
  SessionView,
  UploadCheckRequest,
  UploadCheckResult,
  UploadResult,
} from '../../shared/schemas.js';

/** An answer of the archive that is not a success, with its stable code. */
export class ArchiveAnswerError extends Error {
  override name = 'ArchiveAnswerError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode | 'network',
    message: string,
  ) {
    super(message);
  }

  /** The whole import must stop: nothing else will succeed either. */
  get fatal(): boolean {
    return this.status === 401 || this.status === 403 || this.code === 'storage_full';
  }
}

/** A file's bytes as the importer sends them: opened once, checked unchanged since it was hashed. */
export interface FileToSend {
  fsPath: string | Buffer;
  size: number;
  mtimeMs: number;
}

export interface SendOptions {
  metadata: Record<string, string>;
  /** An upload an earlier run started: continued where the archive says it stands. */
  uploadUrl?: string;
  onUploadUrl?: (url: string) => void;
  /** Bytes put on the wire (a resumed upload sends only the rest). */
  onBytesSent?: (bytes: number) => void;
  signal?: AbortSignal;
}

/**
 * A batch's multipart body, the files' bytes as they were read (not copied): cheaper than a
 * FormData of Blobs, and the names travel in the manifest (JSON), so no name is bent by multipart
 * header quoting.
 */
function multipartBody(manifest: unknown, files: readonly Uint8Array[]): HttpBody {
  const boundary = `archive-batch-${randomBytes(16).toString('hex')}`;
  const pieces: Array<string | Uint8Array> = [
    `--${boundary}\r\nContent-Disposition: form-data; name="manifest"\r\n\r\n${JSON.stringify(manifest)}\r\n`,
  ];
  const fileHead = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const crlf = Buffer.from('\r\n');
  for (const bytes of files) pieces.push(fileHead, bytes, crlf);
  pieces.push(`--${boundary}--\r\n`);
  return { type: `multipart/form-data; boundary=${boundary}`, pieces };
}

/** A small file for a batch upload, with the digests the importer took. */
export interface BatchSend {
  bytes: Uint8Array;
  name: string;
  type: string;
  md5: string;
  sha256: string;
}

/** The file as hashed: the same size and modification time, and a regular file still. */
async function openUnchanged(file: FileToSend): Promise<FileHandle> {
  const handle = await fs.promises.open(file.fsPath, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const now = await handle.stat().catch(async (err: unknown) => {
    await handle.close();
    throw err;
  });
  if (!now.isFile() || now.size !== file.size || now.mtimeMs !== file.mtimeMs) {
    await handle.close();
    throw new ArchiveAnswerError(
      0,
      'checksum_mismatch',
      'the file changed after it was hashed; skipped, run the import again',
    );
  }
  return handle;
}

/**
 * Which failures of a request are tried again (at most once per RETRY_DELAYS_MS): network errors
 * and 5xx answers up to `failures` times, and 429 (a quota) as long as the delays last when
 * `rateLimited`.
 */
interface RetryRule {
  failures: number;
  rateLimited: boolean;
}
const RETRY_ALL: RetryRule = { failures: Infinity, rateLimited: true };
const NO_RETRY: RetryRule = { failures: 0, rateLimited: false };
/**
 * A batch failed twice more (1 and 3 s later, long enough for an instance to restart) is sent
 * file by file with tus instead: a proxy or an instance that fails batches should not hold an
 * import for a minute per batch.
 */
const BATCH_RETRY: RetryRule = { failures: 2, rateLimited: true };

/** Waits before a retry of a failed request: long enough for a restarted instance. */
const RETRY_DELAYS_MS = [0, 1000, 3000, 5000, 10_000, 20_000, 30_000];

/**
 * The archive's public HTTP API as a script uses it: an API token, JSON for the handshake,
 * tus for the bytes. The same protocol as the browser app, so an import works against any
 * reachable server.
 */
export class ArchiveConnection {
  readonly #base: string;
  readonly #auth: Record<string, string>;

  constructor(
    server: string,
    token: string,
    private readonly retryDelays: readonly number[] = RETRY_DELAYS_MS,
  ) {
    this.#base = server.replace(/\/+$/, '');
    this.#auth = { authorization: `Bearer ${token}` };
  }

  /** Who the token belongs to: checks server and token before any file is read (no retries: a wrong address fails at once). */
  async session(): Promise<SessionView> {
    return this.#json<SessionView>('GET', '/api/session', undefined, NO_RETRY);
  }

  /** Checks in one request (at most BATCH_MAX_FILES), answered in order. */
  async checkMany(requests: UploadCheckRequest[]): Promise<UploadCheckResult[]> {
    return (await this.#json<{ results: UploadCheckResult[] }>('POST', '/api/uploads/checks', { files: requests }))
      .results;
  }

  /**
   * Proofs in one request, answered in order. Retried: a proof counted before its answer was lost
   * is answered again as counted (a claim taken but not counted is refused: check again).
   */
  async proveMany(proofs: Array<{ claimId: string; digests: string[] }>): Promise<ProofResult[]> {
    return (await this.#json<{ results: ProofResult[] }>('POST', '/api/uploads/proofs', { proofs })).results;
  }

  /**
   * Sends small files, as they were read and hashed, in one request (POST /api/uploads/batch).
   * Retried under one Idempotency-Key: files counted before a lost answer are not counted again.
   */
  async sendMany(files: readonly BatchSend[]): Promise<BatchFileResult[]> {
    const manifest = files.map((f) => ({ md5: f.md5, sha256: f.sha256, name: f.name, type: f.type }));
    const body = multipartBody(
      manifest,
      files.map((f) => f.bytes),
    );
    return (
      await this.#request<{ results: BatchFileResult[] }>('POST', '/api/uploads/batch', body, BATCH_RETRY, {
        [IDEMPOTENCY_KEY_HEADER]: randomUUID(),
      })
    ).results;
  }

  #json<T>(method: string, path: string, body?: unknown, retry = RETRY_ALL): Promise<T> {
    return this.#request(
      method,
      path,
      body === undefined ? undefined : { type: 'application/json', pieces: [JSON.stringify(body)] },
      retry,
    );
  }

  async #request<T>(
    method: string,
    path: string,
    body: HttpBody | undefined,
    retry: RetryRule,
    headers: Record<string, string> = {},
  ): Promise<T> {
    let failures = 0;
    for (let attempt = 0; ; attempt++) {
      let res: HttpAnswer;
      try {
        res = await exchange(`${this.#base}${path}`, method, { ...this.#auth, ...headers }, body);
      } catch (err) {
        const error = new ArchiveAnswerError(
          0,
          'network',
          `the archive at ${this.#base} did not answer (${causeOf(err)})`,
        );
        if (failures++ >= retry.failures || attempt >= this.retryDelays.length) throw error;
        await delay(this.retryDelays[attempt]!);
        continue;
      }
      if (res.ok) return JSON.parse(res.text) as T;
      const error = await answerError(res.status, res.text, res.header('retry-after'));
      const again =
        res.status === 429
          ? retry.rateLimited
          : res.status >= 500 && error.code !== 'storage_full' && failures++ < retry.failures;
      if (!again || attempt >= this.retryDelays.length) throw error;
      await delay(Math.max(this.retryDelays[attempt]!, 1000 * Number(res.header('retry-after') ?? 0)));
    }
  }

  /**
   * Sends a file with tus, resuming `uploadUrl` when given; resolves with the archive's
   * outcome once the last byte is stored (the server re-hashes and checks the declared hashes).
   */
  async send(file: FileToSend, options: SendOptions): Promise<UploadResult> {
    const handle = await openUnchanged(file);
    try {
      return await this.#tus(handle, file.size, options);
    } finally {
      await handle.close();
    }
  }

  #tus(handle: FileHandle, size: number, options: SendOptions): Promise<UploadResult> {
    const { signal } = options;
    let onAbort: (() => void) | undefined;
    // One signal serves every file of an import: each upload's listener goes when it ends.
    const forget = () => onAbort && signal?.removeEventListener('abort', onAbort);
    return new Promise<UploadResult>((resolve, reject) => {
      const upload = new tus.Upload(Buffer.alloc(0), {
        endpoint: `${this.#base}${TUS_ENDPOINT}`,
        ...(options.uploadUrl ? { uploadUrl: options.uploadUrl } : {}),
        headers: this.#auth,
        // A creation retried after its answer was lost makes a second upload: the key counts them once.
        metadata: { idempotencyKey: randomUUID(), ...options.metadata },
        // One PATCH streams the whole file; an interrupted one is resumed from the archive's offset.
        fileReader: { openFile: async () => fileSource(handle, size, options.onBytesSent) },
        retryDelays: [...this.retryDelays],
        onShouldRetry: (err, attempt, opts) =>
          tusShouldRetry(err.originalResponse?.getStatus() ?? 0, attempt, opts.retryDelays?.length ?? 0),
        onUploadUrlAvailable: () => {
          if (upload.url) options.onUploadUrl?.(upload.url);
        },
        onSuccess: ({ lastResponse }) => {
          const fileId = lastResponse.getHeader(ARCHIVE_FILE_ID_HEADER);
          const status = lastResponse.getHeader(ARCHIVE_STATUS_HEADER);
          if (!fileId || (status !== 'stored' && status !== 'duplicate')) {
            reject(
              new ArchiveAnswerError(
                lastResponse.getStatus(),
                'internal',
                'the archive finished the upload without naming the stored file',
              ),
            );
            return;
          }
          resolve({ status, fileId, uploadCount: Number(lastResponse.getHeader(ARCHIVE_UPLOAD_COUNT_HEADER) ?? 1) });
        },
        onError: (err) => {
          const response = (err as tus.DetailedError).originalResponse;
          if (!response) reject(new ArchiveAnswerError(0, 'network', `the upload was cut off (${causeOf(err)})`));
          else
            void answerError(response.getStatus(), response.getBody(), response.getHeader('Retry-After') ?? null).then(
              reject,
            );
        },
      });
      if (signal) {
        // Stops sending; the upload stays on the server, and the journal knows where.
        onAbort = () => void upload.abort(false).finally(() => reject(signal.reason as Error));
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
      }
      upload.start();
    }).finally(forget);
  }
}

/** Reads per socket write: fewer, larger writes cost the sending thread less than the 64 KiB default. */
const SEND_BUFFER_BYTES = 1024 * 1024;

/** tus-js-client's source over an open file: each PATCH reads the part it sends. */
function fileSource(handle: FileHandle, size: number, onBytesSent?: (bytes: number) => void) {
  return {
    size,
    slice: async (start: number, end: number) => {
      const stop = Math.min(end, size);
      if (stop <= start) return { value: Buffer.alloc(0), done: stop >= size };
      const stream = handle.createReadStream({
        start,
        end: stop - 1,
        autoClose: false,
        emitClose: false,
        highWaterMark: SEND_BUFFER_BYTES,
      }) as Readable & { size?: number };
      stream.size = stop - start;
      if (onBytesSent) stream.on('data', (chunk: Buffer) => onBytesSent(chunk.byteLength));
      return { value: stream, done: stop >= size };
    },
    close: () => {},
  };
}

async function answerError(status: number, text: string, retryAfter: string | null): Promise<ArchiveAnswerError> {
  let body: { error?: ErrorCode; message?: string } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // Not the archive's JSON (a proxy's page): the status is all there is.
  }
  const code = body.error ?? (status === 401 ? 'unauthenticated' : status === 404 ? 'not_found' : 'internal');
  const hint =
    status === 401 ? ' (is the API token right and not revoked?)' : retryAfter ? ` (retry after ${retryAfter} s)` : '';
  return new ArchiveAnswerError(status, code, `${body.message ?? `the archive answered ${status}`}${hint}`);
}

/** A network error's code (ECONNREFUSED, ...), also when wrapped as a cause. */
function causeOf(err: unknown): string {
  const { code, cause } = err as { code?: string; cause?: { code?: string; message?: string } };
  return cause?.code ?? cause?.message ?? code ?? (err as Error).message;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export type { ByteRangeView };
