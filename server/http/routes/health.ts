import { Router } from 'express';
import type { ErrorBody } from '../../../shared/errors.js';

const STORE_TIMEOUT_MS = 2_000;

/**
 * Probes for orchestrators and load balancers. `/api/health` (liveness): the process serves
 * requests; restarting it will not help otherwise. `/api/ready` (readiness): send it traffic: its
 * store answers and it is not shutting down.
 */
export function healthRoutes(probes: { ping: () => Promise<void>; draining: () => boolean }): Router {
  const router = Router();
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/ready', async (_req, res) => {
    const notReady = (body: ErrorBody) => res.status(503).setHeader('Retry-After', '5').json(body);
    if (probes.draining())
      return notReady({
        error: 'store_unavailable',
        message: 'This server is shutting down; another instance takes the requests.',
      });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        probes.ping(),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), STORE_TIMEOUT_MS))),
      ]);
      res.json({ status: 'ready' });
    } catch {
      notReady({ error: 'store_unavailable', message: 'The archive store does not answer.' });
    } finally {
      clearTimeout(timer);
    }
  });
  return router;
}
