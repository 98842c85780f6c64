import express, { Router } from 'express';
import { receiptIdSchema, receiptListQuery, receiptRequest } from '../../../shared/receipts.js';
import type { Quotas } from '../../services/quotas.js';
import type { ReceiptService } from '../../services/receipts.js';
import { requireAuth } from '../auth.js';
import { parse } from '../validate.js';

/** Receipts are sent whole: up to 50,000 files, parsed by this route with its own limit. */
export const RECEIPTS_PATH = '/api/receipts';

/** `/api/receipts`: the clerk's own receipts of folder uploads (上传清单). */
export function receiptRoutes(receipts: ReceiptService, quotas: Quotas): Router {
  const router = Router();
  router.use(requireAuth(['clerk', 'admin']));
  const receiptJson = express.json({ limit: '16mb', strict: true });

  router.get('/', async (req, res) => {
    res.json(await receipts.list(req.principal!.account, parse(receiptListQuery, req.query, 'query')));
  });

  router.get('/:id', async (req, res) => {
    res.json(await receipts.get(req.principal!.account, parse(receiptIdSchema, req.params.id, 'receipt id')));
  });

  router.put('/:id', receiptJson, async (req, res) => {
    const id = parse(receiptIdSchema, req.params.id, 'receipt id');
    const body = parse(receiptRequest, req.body, 'body');
    await quotas.take(req.principal!.account, 'receipts', body.rows.length);
    res.json(await receipts.put(req.principal!.account, id, body));
  });

  return router;
}
