import type { Worker } from 'node:worker_threads';

/**
 * The worker's next message, or its error if it fails first. Each of the two listeners is removed
 * when the other fires: a worker asked page after page gathers no listeners (Node warns past ten
 * of one event, and each left behind would reject a promise long settled).
 */
export function nextReply<T>(worker: Worker): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onMessage = (message: T) => {
      worker.off('error', onError);
      resolve(message);
    };
    const onError = (error: Error) => {
      worker.off('message', onMessage);
      reject(error);
    };
    worker.once('message', onMessage).once('error', onError);
  });
}
