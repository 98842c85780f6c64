/// <reference lib="webworker" />
import { sparkMd5Lane, type DigestLane } from './content-hash.js';

/**
 * The MD5 lane of the hash worker: spark-md5 is the slowest step, so it has a thread of its
 * own and the reading worker never waits on it except to bound what is in flight. Receives each
 * slice transferred (no copy) and acknowledges it.
 */
export type Md5Request = { type: 'update'; slice: ArrayBuffer } | { type: 'digest' };
export type Md5Reply = { type: 'ack' } | { type: 'digest'; hex: string } | { type: 'error'; message: string };

declare const self: DedicatedWorkerGlobalScope;
let lane: DigestLane = sparkMd5Lane();

self.onmessage = async (event: MessageEvent<Md5Request>) => {
  const reply = (message: Md5Reply) => self.postMessage(message);
  try {
    if (event.data.type === 'update') {
      await lane.update(event.data.slice);
      reply({ type: 'ack' });
    } else {
      reply({ type: 'digest', hex: await lane.digest() });
      lane = sparkMd5Lane();
    }
  } catch (error) {
    lane = sparkMd5Lane();
    reply({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  }
};
