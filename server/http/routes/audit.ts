import { Router } from 'express';
import { AUDIT_ACTION_NAMES, auditNoteText } from '../../../shared/audit-notes.js';
import { auditQuery, type AuditEventView, type AuditList } from '../../../shared/schemas.js';
import type { AuditService } from '../../services/audit.js';
import type { UnitDirectory } from '../../services/unit-directory.js';
import { requireAuth } from '../auth.js';
import { EXPORT_BATCH_ROWS, readableColumns, streamCsv, type ExportLanguage } from '../export.js';
import { parse } from '../validate.js';
import { recordViewing } from '../viewing.js';

const CSV_HEADER = [
  'time',
  'action',
  'user',
  'name',
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
  e.userDisplayName,
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

const ACTION_COLUMN = CSV_HEADER.indexOf('action');
const DETAIL_COLUMN = CSV_HEADER.indexOf('detail');

/** The same row for people: the action's name and the note in their language. */
const readableRow = (language: ExportLanguage, e: AuditEventView) => {
  const row = csvRow(e);
  row[ACTION_COLUMN] = AUDIT_ACTION_NAMES[language][e.action];
  if (e.note) row[DETAIL_COLUMN] = auditNoteText(language, e.note);
  return row;
};

/**
 * `/api/audit`: administrators search the audit log (JSON, or with `format=csv` every event the
 * filters select, streamed). Viewing and exporting are audited too.
 */
export function auditRoutes(
  audit: AuditService,
  directory: Pick<UnitDirectory, 'narrowToReach'>,
  timeZone: string,
): Router {
  const router = Router();
  router.get('/', requireAuth(['admin']), async (req, res) => {
    const { format, lang, ...asked } = parse(auditQuery, { ...req.query }, 'query');
    // An administrator of a subtree sees the events of its reach's accounts.
    const query = await directory.narrowToReach(req.principal!.account, asked);
    if (format === 'csv') {
      await recordViewing(audit, req, { view: 'audit_viewed', export: 'audit_exported' });
      // Held at this moment (its own export event included): the export is the log as it was
      // then, on either store (a cursor may see documents written while it reads).
      const until = new Date(Date.now() + 1);
      const to = query.to && query.to < until ? query.to : until;
      const readable = lang && readableColumns(lang, timeZone, CSV_HEADER);
      await streamCsv(
        res,
        'audit',
        readable ? readable.header : CSV_HEADER,
        audit.searchRows({ ...query, to }, EXPORT_BATCH_ROWS),
        (e) => (lang && readable ? readable.cells(readableRow(lang, e)) : csvRow(e)),
      );
      return;
    }
    const { items, total } = await audit.search(query);
    await recordViewing(audit, req, { view: 'audit_viewed', export: 'audit_exported' });
    res.setHeader('X-Total-Count', String(total));
    const body: AuditList = { items, total, limit: query.limit, offset: query.offset };
    res.json(body);
  });
  return router;
}
