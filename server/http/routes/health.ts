import { Router } from 'express';

/** `/api/health`: the process is up and its store answers. */
export function healthRoutes(ping: () => Promise<void>): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    try {
      await ping();
      res.json({ status: 'ok' });
    } catch {
      res.status(503).json({ error: 'internal', message: 'The archive store does not answer.' });
    }
  });
  return router;
}
