import express, { Router, type Response } from 'express';
import {
  accountListQuery,
  accountPatchRequest,
  IMPORT_SKIPPED_BLANK_HEADER,
  IMPORT_SKIPPED_EXAMPLES_HEADER,
  newAccountRequest,
} from '../../../shared/accounts.js';
import type { AccountAdministration, KeptImportAnswer } from '../../services/administration.js';
import { BadRequestError } from '../../errors.js';
import { requireAuth, requireScope } from '../auth.js';
import { sendCsv } from '../csv.js';
import { parse } from '../validate.js';
import { z } from 'zod';

const accountId = z.string().min(1).max(64);

/** What the import's answer says to hand out (the one-time passwords, shown this once). */
const IMPORT_ANSWER_HEADER = ['用户名', '姓名', '角色', '单位', '一次性密码（首次登录后须修改）'];

const importId = z.string().min(1).max(64);

/** The types an import's file may come as: a CSV as browsers and scripts label it, or a workbook. */
const IMPORT_TYPES = [
  'text/csv',
  'text/plain',
  'application/csv',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/octet-stream',
];
/** An import's file: 1,000 accounts take about 60 KB as CSV, 40 KB as a workbook. */
const IMPORT_MAX_BYTES = '2mb';

function sendImportAnswer(res: Response, answer: KeptImportAnswer): void {
  sendCsv(
    res,
    'accounts-one-time-passwords',
    IMPORT_ANSWER_HEADER,
    answer.accounts.map((c) => [
      c.username,
      c.displayName,
      c.role === 'admin' ? '管理员' : '档案员',
      c.unitText,
      c.oneTimePassword,
    ]),
  );
}

/** `/api/accounts`: the accounts an administrator keeps (all within its reach). */
export function accountRoutes(admin: AccountAdministration): Router {
  const router = Router();
  router.use(requireAuth(['admin']));
  // Answers carry one-time passwords: no cache keeps them.
  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });

  router.get('/', async (req, res) => {
    res.json(await admin.list(req.principal!.account, parse(accountListQuery, req.query, 'query')));
  });

  // Changes to accounts (and the one-time passwords they answer with) over a token need its "accounts" scope.
  const administering = requireScope('accounts');

  router.post('/', administering, async (req, res) => {
    const body = parse(newAccountRequest, req.body, 'body');
    res.status(201).json(await admin.create(req.principal!.account, body, req.ip ?? null));
  });

  router.post(
    '/import',
    administering,
    // The file's bytes as they are: import-file.ts tells a workbook from a CSV, and UTF-8 from GBK.
    express.raw({ type: IMPORT_TYPES, limit: IMPORT_MAX_BYTES }),
    async (req, res) => {
      if (!Buffer.isBuffer(req.body))
        throw new BadRequestError(
          'Send the CSV or Excel (.xlsx) file itself as the body, with Content-Type: text/csv or application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.',
        );
      const answer = await admin.importFile(req.principal!.account, req.body, req.ip ?? null);
      // The answer is kept there too, for this administrator, until downloaded once (or 24 hours).
      res.status(201).location(`/api/accounts/imports/${answer.id}`);
      if (answer.skipped.examples.length > 0)
        res.set(IMPORT_SKIPPED_EXAMPLES_HEADER, answer.skipped.examples.join(','));
      if (answer.skipped.blank > 0) res.set(IMPORT_SKIPPED_BLANK_HEADER, String(answer.skipped.blank));
      sendImportAnswer(res, answer);
    },
  );

  // One-time passwords are account administration: over a token, only with the accounts scope.
  /** The caller's imports whose passwords are kept, not yet downloaded. */
  router.get('/imports', administering, async (req, res) => {
    res.json({ items: await admin.keptImports(req.principal!.account) });
  });

  /** A kept import's answer, once: it is forgotten as it is handed over. */
  router.get('/imports/:id', administering, async (req, res) => {
    const id = parse(importId, req.params.id, 'import id');
    sendImportAnswer(res, await admin.takeKeptImport(req.principal!.account, id));
  });

  /** The administrator has the passwords (saved from the import's answer): the kept copy is forgotten. */
  router.delete('/imports/:id', administering, async (req, res) => {
    const id = parse(importId, req.params.id, 'import id');
    await admin.takeKeptImport(req.principal!.account, id);
    res.status(204).end();
  });

  router.patch('/:id', administering, async (req, res) => {
    const id = parse(accountId, req.params.id, 'account id');
    const patch = parse(accountPatchRequest, req.body, 'body');
    res.json(await admin.update(req.principal!.account, id, patch, req.ip ?? null));
  });

  router.post('/:id/password-reset', administering, async (req, res) => {
    const id = parse(accountId, req.params.id, 'account id');
    res.json(await admin.resetPassword(req.principal!.account, id, req.ip ?? null));
  });

  router.post('/:id/unblock', administering, async (req, res) => {
    const id = parse(accountId, req.params.id, 'account id');
    res.json(await admin.unblock(req.principal!.account, id, req.ip ?? null));
  });

  return router;
}
