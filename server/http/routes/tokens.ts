import { Router } from 'express';
import { z } from 'zod';
import { newTokenRequest, tokenListQuery } from '../../../shared/accounts.js';
import type { AccountAdministration } from '../../services/administration.js';
import { requireAuth, requireScope } from '../auth.js';
import { parse } from '../validate.js';

const tokenId = z.string().regex(/^[0-9a-f]{12}$/, 'a token id is 12 hexadecimal characters');

/** `/api/tokens`: everyone's own API tokens; administrators also those of the accounts in reach. */
export function tokenRoutes(admin: AccountAdministration): Router {
  const router = Router();
  router.use(requireAuth(['clerk', 'admin']));

  router.get('/', async (req, res) => {
    const { scope } = parse(tokenListQuery, req.query, 'query');
    res.json({ items: await admin.listTokens(req.principal!.account, scope) });
  });

  // Over a token: only one made with the "tokens" scope, and the new one stays within it.
  router.post('/', requireScope('tokens'), async (req, res) => {
    const body = parse(newTokenRequest, req.body, 'body');
    res.set('Cache-Control', 'no-store');
    const { account, token } = req.principal!;
    res.status(201).json(await admin.createToken(account, body, req.ip ?? null, token));
  });

  router.delete('/:id', async (req, res) => {
    await admin.revokeToken(req.principal!.account, parse(tokenId, req.params.id, 'token id'), req.ip ?? null);
    res.status(204).end();
  });

  return router;
}
