import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

/**
 * Computes digests off the request's thread: one digest of a stream per job, or both digests of
 * each of many small files. Bytes arrive in SharedArrayBuffers (no copy); each update is
 * acknowledged so the sender knows when it may reuse the buffer.
 */
export type Algorithm = 'md5' | 'sha256';

export type HashWorkerRequest =
  | { op: 'update'; job: number; algorithm: Algorithm; data: Uint8Array }
  | { op: 'finish'; job: number; algorithm: Algorithm }
  | { op: 'abort'; job: number }
  | { op: 'digest-many'; job: number; files: ReadonlyArray<readonly Uint8Array[]> };

export type HashWorkerReply =
  | { op: 'hashed'; job: number }
  | { op: 'digest'; job: number; hex: string }
  | { op: 'digests'; job: number; list: FileDigests[] };

export interface FileDigests {
  md5: string;
  sha256: string;
}

/** Both digests read a part in pieces of this size, so the second finds it in the cache. */
const PIECE = 256 * 1024;

function digestsOf(parts: readonly Uint8Array[]): FileDigests {
  const md5 = createHash('md5');
  const sha256 = createHash('sha256');
  for (const part of parts) {
    for (let at = 0; at < part.byteLength; at += PIECE) {
      const piece = part.subarray(at, at + PIECE);
      md5.update(piece);
      sha256.update(piece);
    }
  }
  return { md5: md5.digest('hex'), sha256: sha256.digest('hex') };
}

const hashes = new Map<number, Hash>();
const port = parentPort!;

function hashOf(job: number, algorithm: Algorithm): Hash {
  let hash = hashes.get(job);
  if (!hash) hashes.set(job, (hash = createHash(algorithm)));
  return hash;
}

port.on('message', (m: HashWorkerRequest) => {
  switch (m.op) {
    case 'update':
      hashOf(m.job, m.algorithm).update(m.data);
      port.postMessage({ op: 'hashed', job: m.job } satisfies HashWorkerReply);
      break;
    case 'finish': {
      const hex = hashOf(m.job, m.algorithm).digest('hex');
      hashes.delete(m.job);
      port.postMessage({ op: 'digest', job: m.job, hex } satisfies HashWorkerReply);
      break;
    }
    case 'abort':
      hashes.delete(m.job);
      break;
    case 'digest-many':
      port.postMessage({ op: 'digests', job: m.job, list: m.files.map(digestsOf) } satisfies HashWorkerReply);
      break;
  }
});
