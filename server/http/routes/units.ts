import { Router } from 'express';
import {
  newUnitRequest,
  unitIdSchema,
  unitListQuery,
  unitRenameRequest,
  unmappedQuery,
} from '../../../shared/units.js';
import type { AccountAdministration } from '../../services/administration.js';
import { unitView, type UnitDirectory } from '../../services/unit-directory.js';
import { requireAuth } from '../auth.js';
import { parse } from '../validate.js';

/** `/api/units`: the unit directory within the caller's reach; administrators add and rename custom units. */
export function unitRoutes(directory: UnitDirectory, admin: AccountAdministration): Router {
  const router = Router();

  // Before /:id. Accounts whose units of an earlier version are not in the directory yet.
  router.get('/unmapped', requireAuth(['admin']), async (req, res) => {
    const page = parse(unmappedQuery, req.query, 'query');
    res.json({ items: await admin.unmapped(req.principal!.account, page), ...page });
  });

  router.get('/', requireAuth(['clerk', 'admin']), async (req, res) => {
    res.json(await directory.list(req.principal!.account, parse(unitListQuery, req.query, 'query')));
  });

  router.get('/:id', requireAuth(['clerk', 'admin']), async (req, res) => {
    const id = parse(unitIdSchema, req.params.id, 'unit id');
    res.json(unitView(await directory.unitInReach(req.principal!.account, id)));
  });

  router.post('/', requireAuth(['admin']), async (req, res) => {
    const body = parse(newUnitRequest, req.body, 'body');
    res.status(201).json(unitView(await admin.addUnit(req.principal!.account, body, req.ip ?? null)));
  });

  router.patch('/:id', requireAuth(['admin']), async (req, res) => {
    const id = parse(unitIdSchema, req.params.id, 'unit id');
    const { name } = parse(unitRenameRequest, req.body, 'body');
    res.json(unitView(await admin.renameUnit(req.principal!.account, id, name, req.ip ?? null)));
  });

  return router;
}
