/// <reference lib="webworker" />
import { createSHA256, type IHasher } from 'hash-wasm';

/**
 * The SHA-256 lane of the hash worker: receives each slice (transferred, no copy) after MD5 has
 * read it, so the two digests run on two cores. Acknowledges every slice so the sender can bound
 * what is in flight.
 */
export type Sha256Request = { type: 'update'; slice: ArrayBuffer } | { type: 'digest' };
export type Sha256Reply = { type: 'ack' } | { type: 'digest'; hex: string } | { type: 'error'; message: string };

declare const self: DedicatedWorkerGlobalScope;
let hasher: Promise<IHasher> = createSHA256();

self.onmessage = async (event: MessageEvent<Sha256Request>) => {
  const reply = (message: Sha256Reply) => self.postMessage(message);
  try {
    const sha = await hasher;
    if (event.data.type === 'update') {
      sha.update(new Uint8Array(event.data.slice));
      reply({ type: 'ack' });
    } else {
      reply({ type: 'digest', hex: sha.digest('hex') });
      sha.init();
    }
  } catch (error) {
    hasher = createSHA256();
    reply({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  }
};
