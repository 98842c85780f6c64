import { Router } from 'express';
import { disposalIdSchema, disposalRequest, registerQuery, type DisposalView } from '../../../shared/disposals.js';
import type { AuditService } from '../../services/audit.js';
import type { DisposalService } from '../../services/disposals.js';
import { requireAuth } from '../auth.js';
import { EXPORT_BATCH_ROWS, streamCsv } from '../export.js';
import { parse } from '../validate.js';
import { recordViewing } from '../viewing.js';

/** The columns of the 销毁清册, as printed and exported. */
export const REGISTER_HEADER = [
  '系统编号',
  '文件名',
  '大小（字节）',
  '单位',
  '上传者',
  '首次上传',
  '最后上传',
  '入库时间',
  '计数的上传',
  '回收站中的上传',
  '销毁原因',
  '审批文号',
  '销毁人',
  '销毁时间',
  '状态',
];

const unitPath = (u: DisposalView['units'][number]) => [u.city, u.county, u.town, u.street].filter(Boolean).join(' / ');

/**
 * `/api/disposals` (POST: 销毁, top-level administrators; GET: the register, paged, and one entry)
 * and `/api/disposals.csv` (the register as CSV, every entry the filters select). Administrators
 * below the top read the entries of their reach.
 */
export function disposalRoutes(disposals: DisposalService, audit: AuditService, timeZone: string): Router {
  const router = Router();
  const time = new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  });
  const at = (iso: string | null) => (iso === null ? '' : time.format(new Date(iso)));
  const row = (d: DisposalView) => [
    d.fileId,
    d.fileName,
    d.size,
    [...d.units.map(unitPath), ...(d.otherUnits > 0 ? [`其他 ${d.otherUnits} 个单位`] : [])].join('；'),
    d.uploaders.map((u) => u.username).join('；'),
    at(d.firstUploadAt),
    at(d.lastUploadAt),
    at(d.storedAt),
    d.countedUploads,
    d.withdrawnUploads,
    d.reason,
    d.approvalRef,
    d.disposedBy.username,
    at(d.disposedAt),
    d.state === 'disposed' ? '已销毁' : '销毁中',
  ];

  router.post('/disposals', requireAuth(['admin']), async (req, res) => {
    const request = parse(disposalRequest, req.body, 'body');
    res.json(await disposals.dispose(req.principal!.account, request, req.ip ?? null));
  });

  router.get('/disposals', requireAuth(['admin']), async (req, res) => {
    const list = await disposals.list(req.principal!.account, parse(registerQuery, req.query, 'query'));
    await recordViewing(audit, req, { view: 'report_viewed', export: 'report_exported' }, 'disposals');
    res.setHeader('X-Total-Count', String(list.total));
    res.json(list);
  });

  router.get('/disposals.csv', requireAuth(['admin']), async (req, res) => {
    const { limit: _limit, offset: _offset, ...query } = parse(registerQuery, req.query, 'query');
    const batches = disposals.batches(req.principal!.account, query, EXPORT_BATCH_ROWS);
    await recordViewing(audit, req, { view: 'report_exported', export: 'report_exported' }, 'disposals');
    await streamCsv(res, 'disposals', REGISTER_HEADER, batches, row);
  });

  router.get('/disposals/:id', requireAuth(['admin']), async (req, res) => {
    res.json(await disposals.get(req.principal!.account, parse(disposalIdSchema, req.params.id, 'disposal id')));
  });

  return router;
}
