import { Router } from 'express';
import { auditQuery, type AuditEventView, type AuditList } from '../../../shared/schemas.js';
import type { AuditService } from '../../services/audit.js';
import type { UnitDirectory } from '../../services/unit-directory.js';
import { requireAuth } from '../auth.js';
import { sendCsv } from '../csv.js';
import { parse } from '../validate.js';
import { recordViewing } from '../viewing.js';

const CSV_HEADER = [
  'time',
  'action',
  'user',
  'user id',
  'unit id',
  'city',
  'county',
  'town',
  'street',
  'address',
  'file id',
  'file name',
  'detail',
];

const csvRow = (e: AuditEventView) => [
  e.at,
  e.action,
  e.userName,
  e.userId,
  e.unit?.id,
  e.unit?.city,
  e.unit?.county,
  e.unit?.town,
  e.unit?.street,
  e.address,
  e.fileId,
  e.fileName,
  e.detail,
];

/** `/api/audit`: administrators search the audit log (JSON, or CSV with `format=csv`). Viewing and exporting are audited too. */
export function auditRoutes(audit: AuditService, directory: Pick<UnitDirectory, 'narrowToReach'>): Router {
  const router = Router();
  router.get('/', requireAuth(['admin']), async (req, res) => {
    const { format, ...asked } = parse(auditQuery, { ...req.query }, 'query');
    // An administrator of a subtree sees the events of its reach's accounts.
    const query = await directory.narrowToReach(req.principal!.account, asked);
    const { items, total } = await audit.search(query);
    await recordViewing(audit, req, { view: 'audit_viewed', export: 'audit_exported' });
    // A CSV holds one page (up to 1,000 rows); the total says whether more pages remain.
    res.setHeader('X-Total-Count', String(total));
    if (format === 'csv') {
      sendCsv(res, 'audit', CSV_HEADER, items.map(csvRow));
      return;
    }
    const body: AuditList = { items, total, limit: query.limit, offset: query.offset };
    res.json(body);
  });
  return router;
}
