import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

/**
 * Computes one digest per job off the request's thread. Chunks arrive in SharedArrayBuffers (no
 * copy); each update is acknowledged so the sender knows when it may reuse the buffer.
 */
export type Algorithm = 'md5' | 'sha256';

export type HashWorkerRequest =
  | { op: 'update'; job: number; algorithm: Algorithm; data: Uint8Array }
  | { op: 'finish'; job: number; algorithm: Algorithm }
  | { op: 'abort'; job: number };

export type HashWorkerReply = { op: 'hashed'; job: number } | { op: 'digest'; job: number; hex: string };

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
  }
});
