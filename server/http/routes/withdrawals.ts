import express, { Router } from 'express';
import { fileIdSchema } from '../../../shared/schemas.js';
import {
  emptyTrashRequest,
  fileUploadsQuery,
  purgeRequest,
  restoreRequest,
  trashQuery,
  withdrawalIdSchema,
  withdrawalRequest,
} from '../../../shared/withdrawals.js';
import type { PurgeService } from '../../services/purge.js';
import type { WithdrawalService } from '../../services/withdrawals.js';
import { requireAuth } from '../auth.js';
import { sendJson } from '../json-answer.js';
import { parse } from '../validate.js';

/** Paths whose lists are larger than the app's 64 kB body limit: their routes read them. */
export const WITHDRAWAL_LIST_PATHS = ['/api/withdrawals', '/api/withdrawals/restore'];

/**
 * `/api/withdrawals`: 撤回 uploads (by their upload ids, or a receipt's), a withdrawal as recorded,
 * and its restore, or the restore of many (by withdrawal ids, or a receipt's). Who may do what is the service's (its uploader within WITHDRAW_DAYS, an
 * administrator of its reach at any time).
 */
export function withdrawalRoutes(withdrawals: WithdrawalService): Router {
  const router = Router();
  router.use(requireAuth(['clerk', 'admin']));
  // 1,000 upload ids of up to 205 characters each: read only once the caller is known.
  const listJson = express.json({ limit: '512kb', strict: true });

  router.post('/', listJson, async (req, res) => {
    const request = parse(withdrawalRequest, req.body, 'body');
    // A receipt's 10,000 withdrawals: written as the client takes them, not as one text.
    await sendJson(res, await withdrawals.withdraw(req.principal!.account, request, req.ip ?? null));
  });

  router.post('/restore', listJson, async (req, res) => {
    const request = parse(restoreRequest, req.body, 'body');
    await sendJson(res, await withdrawals.restoreMany(req.principal!.account, request, req.ip ?? null));
  });

  router.get('/:id', async (req, res) => {
    res.json(await withdrawals.get(req.principal!.account, parse(withdrawalIdSchema, req.params.id, 'withdrawal id')));
  });

  router.post('/:id/restore', async (req, res) => {
    const id = parse(withdrawalIdSchema, req.params.id, 'withdrawal id');
    res.json(await withdrawals.restore(req.principal!.account, id, req.ip ?? null));
  });

  return router;
}

/**
 * `/api/trash`: 回收站, the withdrawn uploads of a unit (or of an administrator's reach), restorable;
 * 彻底删除 and 清空回收站 for administrators of the reach (a clerk is refused by the service: 403).
 */
export function trashRoutes(withdrawals: WithdrawalService, purge: PurgeService): Router {
  const router = Router();
  router.use(requireAuth(['clerk', 'admin']));
  router.get('/', async (req, res) => {
    res.json(await withdrawals.trash(req.principal!.account, parse(trashQuery, req.query, 'query')));
  });
  router.post('/purge', async (req, res) => {
    const { withdrawals: ids } = parse(purgeRequest, req.body, 'body');
    res.json(await purge.purge(req.principal!.account, ids, req.ip ?? null));
  });
  router.post('/empty', async (req, res) => {
    const { unit } = parse(emptyTrashRequest, req.body ?? {}, 'body');
    res.json(await purge.emptyTrash(req.principal!.account, unit, req.ip ?? null));
  });
  return router;
}

/**
 * `/api/files/:id/uploads`: a file's uploads the caller sees, each with its upload id (what
 * `POST /api/withdrawals` names) and whether the caller may withdraw it. Mounted beside the files'
 * routes, here because what it answers is the withdrawals' rules.
 */
export function fileUploadRoutes(withdrawals: WithdrawalService): Router {
  const router = Router();
  router.get('/:id/uploads', requireAuth(['clerk', 'admin']), async (req, res) => {
    const fileId = parse(fileIdSchema, req.params.id, 'file id');
    res.json(
      await withdrawals.fileUploads(req.principal!.account, fileId, parse(fileUploadsQuery, req.query, 'query')),
    );
  });
  return router;
}
