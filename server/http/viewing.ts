import type { Request } from 'express';
import type { AuditAction } from '../../shared/schemas.js';
import type { AuditService } from '../services/audit.js';

/**
 * Records an administrator's look at a report or the audit log, with the filters as given, before
 * the answer is sent: an export that cannot be recorded is not sent.
 */
export async function recordViewing(
  audit: AuditService,
  req: Request,
  actions: { view: AuditAction; export: AuditAction },
  table?: string,
): Promise<void> {
  // A HEAD answer shows nothing (Express runs the GET handler for it).
  if (req.method === 'HEAD') return;
  const filters = Object.entries(req.query)
    .filter(([name]) => name !== 'format' && name !== 'lang')
    // Express 5's query parser (node:querystring) gives a string, or strings for a repeated name.
    .map(([name, value]): [string, string] => [name, [value as string | string[]].flat().join(',')]);
  const exported = req.query.format === 'csv';
  await audit.record(exported ? actions.export : actions.view, req.principal!.account, {
    address: req.ip ?? null,
    note: { code: 'viewed', ...(table ? { table } : {}), filters },
  });
}
