import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { describeFsError } from './file-errors.js';

/** Asks for the MD5 and SHA-256 of one file. */
export interface FingerprintRequest {
  job: number;
  fsPath: string | Uint8Array;
  /** A file of at most this many bytes comes back with its bytes (a small file sent in a batch is then not read twice). */
  keepUpTo: number;
}

/** The file as it was read: its hashes and the state it had (checked unchanged from start to end). */
export interface FileFingerprint {
  md5: string;
  sha256: string;
  size: number;
  mtimeMs: number;
  ino: number;
  /** The bytes hashed, when the file was small enough to keep. */
  bytes?: Uint8Array;
}

export type FingerprintReply =
  | { job: number; type: 'progress'; hashed: number }
  | { job: number; type: 'done'; fingerprint: FileFingerprint }
  | { job: number; type: 'failed'; reason: string };

const SLICE = 4 * 1024 * 1024;
const buffer = Buffer.allocUnsafe(SLICE);

/**
 * Reads a file once, feeding both digests. Synchronous reads are right here: this thread does
 * nothing else, and they avoid a round trip through the thread pool per slice.
 */
function fingerprint(request: FingerprintRequest, post: (reply: FingerprintReply) => void): FileFingerprint {
  // O_NONBLOCK: a file replaced by a named pipe since it was listed must not hang the import.
  const fd = fs.openSync(Buffer.from(request.fsPath as Uint8Array), fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const before = fs.fstatSync(fd);
    if (!before.isFile()) throw new FingerprintError('not a regular file any more; skipped');
    if (before.size <= request.keepUpTo) return kept(fd, before);
    const md5 = createHash('md5');
    const sha256 = createHash('sha256');
    let read = 0;
    let reported = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, 0, SLICE, read);
      if (n === 0) break;
      const slice = buffer.subarray(0, n);
      md5.update(slice);
      sha256.update(slice);
      read += n;
      if (read - reported >= SLICE * 4) {
        reported = read;
        post({ job: request.job, type: 'progress', hashed: read });
      }
    }
    const after = fs.fstatSync(fd);
    if (read !== before.size || after.size !== before.size || after.mtimeMs !== before.mtimeMs) {
      throw new FingerprintError(
        'the file changed while it was being read (still being written?); skipped, run the import again later',
      );
    }
    return {
      md5: md5.digest('hex'),
      sha256: sha256.digest('hex'),
      size: read,
      mtimeMs: before.mtimeMs,
      ino: before.ino,
    };
  } finally {
    fs.closeSync(fd);
  }
}

/** A small file read whole into a buffer of its own (handed to the importer's thread without a copy). */
function kept(fd: number, before: fs.Stats): FileFingerprint {
  const bytes = new Uint8Array(before.size);
  let read = 0;
  while (read < bytes.byteLength) {
    const n = fs.readSync(fd, bytes, read, bytes.byteLength - read, read);
    if (n === 0) break;
    read += n;
  }
  // One more byte would mean the file grew since it was looked at.
  const grew = fs.readSync(fd, buffer, 0, 1, read) > 0;
  const after = fs.fstatSync(fd);
  if (grew || read !== before.size || after.size !== before.size || after.mtimeMs !== before.mtimeMs) {
    throw new FingerprintError(
      'the file changed while it was being read (still being written?); skipped, run the import again later',
    );
  }
  return {
    md5: createHash('md5').update(bytes).digest('hex'),
    sha256: createHash('sha256').update(bytes).digest('hex'),
    size: read,
    mtimeMs: before.mtimeMs,
    ino: before.ino,
    bytes,
  };
}

class FingerprintError extends Error {}

/**
 * A few files at a time (small ones go in groups: one message each way for several files, not
 * two per file); each answered once all are done, progress as it comes.
 */
const port = parentPort;
port?.on('message', (requests: FingerprintRequest[]) => {
  const post = (reply: FingerprintReply) => port.postMessage([reply]);
  const replies: FingerprintReply[] = [];
  const kept: ArrayBuffer[] = [];
  for (const request of requests) {
    try {
      const done = fingerprint(request, post);
      replies.push({ job: request.job, type: 'done', fingerprint: done });
      if (done.bytes) kept.push(done.bytes.buffer as ArrayBuffer);
    } catch (err) {
      replies.push({
        job: request.job,
        type: 'failed',
        reason: err instanceof FingerprintError ? err.message : `${describeFsError(err)}; skipped`,
      });
    }
  }
  port.postMessage(replies, kept);
});
