import * as tus from 'tus-js-client';
import {
  ARCHIVE_FILE_ID_HEADER,
  ARCHIVE_STATUS_HEADER,
  ARCHIVE_UPLOAD_COUNT_HEADER,
  TUS_ENDPOINT,
  type UploadResult,
} from '../../../shared/schemas.js';
import { tusShouldRetry } from '../../../shared/tus-retry.js';
import { waitCause } from './retry-waits.js';
import { errorFromResponse } from '../api.js';
import { NetworkError } from '../errors.js';
import type { LargeSender } from './folder-upload.js';
import type { ResumeIndex } from './resume-index.js';

/**
 * Longer than a crashed server instance's upload lock (a 30 s lease) lasts, so an upload cut off
 * by a crash resumes on another instance instead of failing.
 */
const RETRY_DELAYS_MS = [0, 1000, 3000, 5000, 10_000, 15_000, 20_000, 30_000];

/**
 * Large files with tus (tus-js-client): resumable, and remembered by content in the resume index
 * as soon as the server names the upload, so the same document chosen again, after a reload and
 * from any folder, continues from the server's offset. The archive checks the declared digests
 * against the bytes it received and counts the upload once under the file's key.
 */
export function tusSender(csrfToken: () => string | null, resumeIndex: ResumeIndex): LargeSender {
  return (item, onProgress, signal, retries) =>
    new Promise<UploadResult>((resolve, reject) => {
      const content = { md5: item.md5, sha256: item.sha256, size: item.size };
      const csrf = csrfToken();
      const upload = new tus.Upload(item.file, {
        endpoint: TUS_ENDPOINT,
        uploadUrl: resumeIndex.get(content) ?? null,
        metadata: {
          filename: item.path,
          filetype: item.type || 'application/octet-stream',
          md5: item.md5,
          sha256: item.sha256,
          idempotencyKey: item.key,
        },
        headers: csrf ? { 'X-CSRF-Token': csrf } : {},
        retryDelays: RETRY_DELAYS_MS,
        // The resume index (per account, by content) does this; tus-js-client's own would keep
        // names and digests in storage shared by every account on this browser.
        storeFingerprintForResuming: false,
        onShouldRetry: (error, attempt, options) => {
          const status = error.originalResponse?.getStatus() ?? 0;
          const again = tusShouldRetry(status, attempt, options.retryDelays?.length ?? 0);
          // tus-js-client waits retryDelays[attempt] next; 立即重试 cuts the wait short (abort
          // clears its timer; start goes on from the server's offset).
          if (again)
            retries?.waiting(options.retryDelays![attempt]!, waitCause(status), () => {
              void upload.abort(false).then(() => {
                if (!signal.aborted) upload.start();
              });
            });
          return again;
        },
        onBeforeRequest: () => retries?.trying(),
        onAfterResponse: (_request, response) => {
          const status = response.getStatus();
          if (status < 500 && status !== 423 && status !== 409 && status !== 429) retries?.answered();
        },
        onUploadUrlAvailable: () => {
          if (upload.url) resumeIndex.set(content, upload.url);
        },
        onProgress: (sent) => onProgress(sent),
        onSuccess: ({ lastResponse }) => {
          resumeIndex.delete(content);
          const status = lastResponse.getHeader(ARCHIVE_STATUS_HEADER);
          resolve({
            status: status === 'duplicate' ? 'duplicate' : 'stored',
            fileId: lastResponse.getHeader(ARCHIVE_FILE_ID_HEADER) ?? '',
            uploadCount: Number(lastResponse.getHeader(ARCHIVE_UPLOAD_COUNT_HEADER) ?? 1),
          });
        },
        onError: (error) => {
          const response = (error as tus.DetailedError).originalResponse;
          if (!response) return reject(new NetworkError(error));
          const apiError = errorFromResponse(
            response.getStatus(),
            safeJson(response.getBody()),
            response.getHeader('Retry-After') ?? null,
          );
          // The server no longer has the upload, or refused its bytes: the next try starts afresh.
          if (['not_found', 'upload_expired', 'checksum_mismatch'].includes(apiError.code)) resumeIndex.delete(content);
          reject(apiError);
        },
      });
      const stop = () => {
        // Stops sending; the upload stays on the server, where the next try continues it.
        void upload.abort(false).finally(() => reject(signal.reason as Error));
      };
      if (signal.aborted) return stop();
      signal.addEventListener('abort', stop, { once: true });
      upload.start();
    });
}

function safeJson(text: unknown): unknown {
  try {
    return typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
