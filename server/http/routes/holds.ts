import { Router } from 'express';
import { holdIdSchema, holdRequest, holdsQuery } from '../../../shared/holds.js';
import type { HoldService } from '../../services/holds.js';
import { requireAuth } from '../auth.js';
import { clientKey } from '../idempotency-key.js';
import { parse } from '../validate.js';

/**
 * `/api/holds`: 冻结, for administrators: place a hold on files or a unit of their reach, list the
 * holds, read one, lift one. Clerks are refused; what is outside a reach is "not found".
 */
export function holdRoutes(holds: HoldService): Router {
  const router = Router();
  router.use(requireAuth(['admin']));

  // With an Idempotency-Key, a retry (its answer lost) answers the hold placed before, not another.
  router.post('/', async (req, res) => {
    const key = clientKey(req);
    const request = parse(holdRequest, req.body, 'body');
    res.status(201).json(await holds.place(req.principal!.account, request, req.ip ?? null, key));
  });

  router.get('/', async (req, res) => {
    res.json(await holds.list(req.principal!.account, parse(holdsQuery, req.query, 'query')));
  });

  router.get('/:id', async (req, res) => {
    res.json(await holds.get(req.principal!.account, parse(holdIdSchema, req.params.id, 'hold id')));
  });

  router.post('/:id/lift', async (req, res) => {
    const id = parse(holdIdSchema, req.params.id, 'hold id');
    res.json(await holds.lift(req.principal!.account, id, req.ip ?? null));
  });

  return router;
}
