import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { IDEMPOTENCY_KEY_HEADER, idempotencyKey } from '../../shared/schemas.js';
import { ValidationError } from '../errors.js';

/** The client's Idempotency-Key, checked: call before reading a body, so a bad key costs nothing. */
export function clientKey(req: Request): string | undefined {
  const sent = req.get(IDEMPOTENCY_KEY_HEADER);
  if (sent === undefined) return undefined;
  const parsed = idempotencyKey.safeParse(sent);
  if (!parsed.success) throw new ValidationError(`${IDEMPOTENCY_KEY_HEADER} ${parsed.error.issues[0]!.message}.`);
  return parsed.data;
}

/**
 * The key an upload action is counted under: the client's, scoped to its account, so that a
 * retry carrying it is counted once. Without one the server makes a key; a retry of a request
 * whose answer was lost is then a new upload (README, Limits).
 */
export function actionKey(req: Request, via: 'direct' | 'batch'): string {
  const sent = clientKey(req);
  return sent === undefined ? `${via}:${randomUUID()}` : `${via}:${req.principal!.account.id}:${sent}`;
}

/**
 * The key a file of a batch is counted under when its client gave it one: per account, and the
 * same whichever batch carries the file (a page sending it again after a reload).
 */
export function fileKey(req: Request, sent: string | undefined): string | undefined {
  return sent === undefined ? undefined : `file:${req.principal!.account.id}:${sent}`;
}
