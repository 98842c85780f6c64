import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import * as tus from 'tus-js-client';
import { Client } from './server.js';

export const TUS = '/api/tus';

/** The path of the upload a creation answered with (its Location is relative unless PUBLIC_URL is set). */
export function uploadPath(created: { headers: Headers }): string {
  const location = created.headers.get('location');
  assert.ok(location, `no Location in the answer (status ${'status' in created ? String(created.status) : '?'})`);
  return new URL(location, 'http://archive.invalid').pathname;
}

export interface TusResult {
  url: string;
  fileId: string | null;
  status: string | null;
  uploadCount: string | null;
}

export interface TusOptions {
  metadata?: Record<string, string>;
  /** Bytes per PATCH request; tus-js-client's default sends everything in one. */
  chunkSize?: number;
  /** Resume this upload instead of creating one. */
  uploadUrl?: string;
  /** Declare the file's MD5 and SHA-256, as the browser client does (default true). */
  declareHashes?: boolean;
  retryDelays?: number[];
  onProgress?: (sent: number) => void;
  /** Read the bytes from this file (holding `data`) as a stream, like a client uploading from disk. */
  fromFile?: string;
  /** Lets a test keep the running upload, to abort it. */
  onStart?: (upload: tus.Upload) => void;
  /** Once the upload has its URL (created, or found by HEAD when resuming). */
  onUploadUrl?: (url: string) => void;
  /** After each PATCH the server acknowledged, with the bytes acknowledged so far. */
  onChunkComplete?: (accepted: number) => void;
  /** Each request just before it is sent, and each response, for tests that follow the exchange. */
  onBeforeRequest?: (req: tus.HttpRequest) => void;
  onAfterResponse?: (req: tus.HttpRequest, res: tus.HttpResponse) => void;
  /** Each failed request (no answer, or an error status) while retries remain: whether to retry (tus-js-client's default rule if absent). */
  onShouldRetry?: (err: tus.DetailedError, attempt: number) => boolean;
}

export function md5(data: Uint8Array): string {
  return createHash('md5').update(data).digest('hex');
}

export function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Uploads `data` with tus-js-client, as any standard tus client would, and reports the archive's answer. */
export function tusUpload(client: Client, data: Buffer, options: TusOptions = {}): Promise<TusResult> {
  const headers: Record<string, string> = {};
  if (client.credentials.bearer) headers.authorization = `Bearer ${client.credentials.bearer}`;
  if (client.credentials.cookie) headers.cookie = client.credentials.cookie;
  if (client.credentials.csrf) headers['x-csrf-token'] = client.credentials.csrf;
  const metadata: Record<string, string> = { filename: 'doc.pdf', filetype: 'application/pdf', ...options.metadata };
  if (options.declareHashes !== false) {
    metadata.md5 ??= md5(data);
    metadata.sha256 ??= sha256(data);
  }
  return new Promise((resolve, reject) => {
    const result: TusResult = { url: '', fileId: null, status: null, uploadCount: null };
    const source = options.fromFile ? fs.createReadStream(options.fromFile) : data;
    const upload = new tus.Upload(source, {
      endpoint: `${client.url}${TUS}`,
      uploadUrl: options.uploadUrl ?? null,
      headers,
      metadata,
      chunkSize: options.chunkSize ?? Infinity,
      retryDelays: options.retryDelays ?? [],
      storeFingerprintForResuming: false,
      onProgress: (sent) => options.onProgress?.(sent),
      onUploadUrlAvailable: () => options.onUploadUrl?.(upload.url!),
      onChunkComplete: (_chunk, accepted) => options.onChunkComplete?.(accepted),
      onBeforeRequest: (req) => options.onBeforeRequest?.(req),
      onShouldRetry: options.onShouldRetry ? (err, attempt) => options.onShouldRetry!(err, attempt) : null,
      onAfterResponse: (req, res) => {
        options.onAfterResponse?.(req, res);
        const fileId = res.getHeader('Archive-File-Id');
        if (fileId) {
          result.fileId = fileId;
          result.status = res.getHeader('Archive-Status') ?? null;
          result.uploadCount = res.getHeader('Archive-Upload-Count') ?? null;
        }
      },
      onSuccess: () => resolve({ ...result, url: upload.url! }),
      onError: reject,
    });
    options.onStart?.(upload);
    upload.start();
  });
}

/** A raw tus request (for protocol tests): Tus-Resumable 1.0.0 unless given otherwise. */
export function tusRequest(
  client: Client,
  path: string,
  method: string,
  headers: Record<string, string | undefined> = {},
  body?: Uint8Array,
): Promise<Response> {
  const h = new Headers();
  if (!('tus-resumable' in headers)) h.set('tus-resumable', '1.0.0');
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) h.set(k, v);
  return client.fetch(path, { method, headers: h, body: body as Uint8Array<ArrayBuffer> | undefined });
}

/** Encodes tus Upload-Metadata. */
export function tusMetadata(pairs: Record<string, string>): string {
  return Object.entries(pairs)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');
}

/** The offset the server reports for an upload (HEAD). */
export async function offsetOf(client: Client, path: string): Promise<number> {
  const head = await tusRequest(client, path, 'HEAD');
  assert.equal(head.status, 200, `HEAD ${path}`);
  return Number(head.headers.get('upload-offset'));
}

/**
 * Opens a PATCH for all of `data` from `from`, sends it up to `upTo` and waits until the server
 * has taken the request in (its "100 Continue"); the request stays open (a client that stopped
 * sending, or one whose server is about to be killed). Whether any of it is persisted yet is the
 * caller's to wait for: bytes short of a write batch are recorded only when the request ends.
 * Errors on it are ignored: it is expected to be cut off.
 */
export async function openPatch(
  url: string,
  upload: string,
  token: string,
  data: Buffer,
  from: number,
  upTo: number,
): Promise<http.ClientRequest> {
  const req = patchRequest(url, upload, token, from, data.length - from);
  req.setHeader('expect', '100-continue');
  const takenIn = once(req, 'continue');
  req.on('error', () => {});
  for (let at = from; at < upTo; at += 256 * 1024) {
    if (!req.write(data.subarray(at, Math.min(upTo, at + 256 * 1024)))) await once(req, 'drain');
  }
  await takenIn;
  return req;
}

/** A raw tus PATCH of `length` bytes at `offset` with an API token, its body left to the caller (to stall or trickle). */
export function patchRequest(
  url: string,
  upload: string,
  token: string,
  offset: number,
  length: number,
): http.ClientRequest {
  return http.request(new URL(upload, url), {
    method: 'PATCH',
    headers: {
      'content-type': 'application/offset+octet-stream',
      'tus-resumable': '1.0.0',
      'upload-offset': String(offset),
      'content-length': String(length),
      authorization: `Bearer ${token}`,
    },
  });
}
