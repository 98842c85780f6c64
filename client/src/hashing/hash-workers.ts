import type { HashReply } from './hash-messages.js';
import type { HashWorker } from './hasher.js';

/** A hash worker of the page: hash.worker.ts on a thread of its own (the bundler follows this URL). */
export function startHashWorker(): HashWorker {
  const worker = new Worker(new URL('./hash.worker.ts', import.meta.url), { type: 'module' });
  return {
    postMessage: (request) => worker.postMessage(request),
    terminate: () => worker.terminate(),
    listen(onReply, onFailure) {
      worker.onmessage = (event: MessageEvent<HashReply>) => onReply(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        onFailure(event.message || 'load error');
      };
    },
  };
}
