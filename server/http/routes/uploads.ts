import { Router } from 'express';
import { uploadCheckRequest, uploadProveRequest } from '../../../shared/schemas.js';
import type { ClaimService } from '../../services/claims.js';
import { requireAuth } from '../auth.js';
import { parse } from '../validate.js';

/** `/api/uploads`: the instant-upload handshake (check, then prove possession of the bytes). */
export function uploadRoutes(claims: ClaimService): Router {
  const router = Router();

  router.post('/check', requireAuth(), async (req, res) => {
    const body = parse(uploadCheckRequest, req.body, 'body');
    res.json(await claims.check(req.principal!.account, body));
  });

  router.post('/prove', requireAuth(), async (req, res) => {
    const body = parse(uploadProveRequest, req.body, 'body');
    res.json(await claims.prove(req.principal!.account, body, req.ip ?? null));
  });

  return router;
}
