import type { Request, RequestHandler, Response } from 'express';

/** A request in the lane: whether its client has gone (or its answer went out), and whether its handler still works. */
interface Place {
  closed: boolean;
  working: boolean;
  release: () => void;
}

export interface BulkLane {
  /** Middleware: waits for a place in the lane, kept until the request has ended. */
  enter: RequestHandler;
  /**
   * The route's handler, run in the request's place: the place is kept until the handler has
   * finished, also when its client went away before (its work goes on, and counts).
   */
  work(handler: (req: Request, res: Response) => Promise<void>): RequestHandler;
}

/**
 * The bulk requests (many checks, proofs or small files at once) an instance works on at a time;
 * the rest wait their turn in arrival order. Each works in short slices (TimeSlice), so with at
 * most this many at once, any other request waits a few milliseconds at most for its turn,
 * however many bulk requests arrive together. A client that goes away does not free its place
 * while the archive still works on its request: otherwise requests sent and dropped at once would
 * all be worked on together.
 */
export function bulkLane(atOnce: number): BulkLane {
  let running = 0;
  const waiting: Array<() => void> = [];
  const places = new WeakMap<Response, Place>();
  const next = () => {
    const start = waiting.shift();
    if (start) start();
    else running--;
  };
  return {
    enter: (_req, res, proceed) => {
      const start = () => {
        let released = false;
        const place: Place = {
          closed: false,
          working: false,
          release: () => {
            if (released) return;
            released = true;
            next();
          },
        };
        places.set(res, place);
        // Answered, or the client gone: the place goes, unless the handler still works.
        res.once('close', () => {
          place.closed = true;
          if (!place.working) place.release();
        });
        proceed();
      };
      if (running < atOnce) {
        running++;
        start();
      } else waiting.push(start);
    },
    work: (handler) => async (req, res) => {
      const place = places.get(res);
      if (place) place.working = true;
      try {
        await handler(req, res);
      } finally {
        if (place) {
          place.working = false;
          if (place.closed) place.release();
        }
      }
    },
  };
}
