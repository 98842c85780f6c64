import type { RequestHandler } from 'express';

/**
 * The bulk requests (many checks, proofs or small files at once) an instance works on at a time;
 * the rest wait their turn in arrival order. Each works in short slices (TimeSlice), so with at
 * most this many at once, any other request waits a few milliseconds at most for its turn,
 * however many bulk requests arrive together.
 */
export function bulkLane(atOnce: number): RequestHandler {
  let running = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return (_req, res, next) => {
    const start = () => {
      // The slot is held until the answer is sent or the client goes away.
      res.once('close', release);
      next();
    };
    if (running < atOnce) {
      running++;
      start();
    } else waiting.push(start);
  };
}
