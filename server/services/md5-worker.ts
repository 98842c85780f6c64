import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

/**
 * Computes MD5 off the main thread, one incremental hash per job. Chunks usually arrive in
 * SharedArrayBuffers, so nothing is copied on the way here.
 */
export type Md5WorkerRequest =
  | { op: 'update'; job: number; data: Uint8Array }
  | { op: 'finish'; job: number }
  | { op: 'abort'; job: number };

export type Md5WorkerReply = { op: 'ack'; job: number; bytes: number } | { op: 'digest'; job: number; md5: string };

const jobs = new Map<number, Hash>();
const port = parentPort!;

port.on('message', (m: Md5WorkerRequest) => {
  switch (m.op) {
    case 'update': {
      let hash = jobs.get(m.job);
      if (!hash) jobs.set(m.job, (hash = createHash('md5')));
      hash.update(m.data);
      port.postMessage({ op: 'ack', job: m.job, bytes: m.data.byteLength } satisfies Md5WorkerReply);
      break;
    }
    case 'finish': {
      const md5 = (jobs.get(m.job) ?? createHash('md5')).digest('hex');
      jobs.delete(m.job);
      port.postMessage({ op: 'digest', job: m.job, md5 } satisfies Md5WorkerReply);
      break;
    }
    case 'abort':
      jobs.delete(m.job);
      break;
  }
});
