import { z } from 'zod';
import { receiptIdSchema } from './receipts.js';
import { calendarDay, fileIdSchema, withUnitLevels } from './schemas.js';

/**
 * 销毁 and 销毁清册: a top-level administrator disposes of files, with a reason and an approval
 * reference (审批文号), confirmed twice; the bytes are deleted for every holder at once, the
 * uploads leave every count, and the disposal register keeps an entry for ever.
 */

/** What the administrator types as the second confirmation. */
export const DISPOSAL_CONFIRMATION = '销毁';

/** At most this many files by id in one request (a whole folder goes by its receipt). */
export const DISPOSE_MAX_FILES = 1000;

/** By file ids, or the files of a receipt (one of the two). */
export const disposalRequest = z
  .strictObject({
    fileIds: z.array(fileIdSchema).min(1).max(DISPOSE_MAX_FILES).optional(),
    receipt: receiptIdSchema.optional(),
    reason: z
      .string()
      .trim()
      .min(1, '请填写销毁原因（reason），如“保管期满，经鉴定无继续保存价值”')
      .max(500, '销毁原因最多 500 个字'),
    approvalRef: z
      .string()
      .trim()
      .min(1, '请填写审批文号（approvalRef），如“沧档销〔2026〕7号”')
      .max(100, '审批文号最多 100 个字'),
    confirm: z.literal(DISPOSAL_CONFIRMATION, {
      error: `销毁不能撤销：请在确认框中输入“${DISPOSAL_CONFIRMATION}”（confirm）`,
    }),
  })
  .refine((r) => (r.fileIds === undefined) !== (r.receipt === undefined), {
    message: '请给出要销毁的文件（fileIds：文件编号列表）或上传清单（receipt），二者选一',
    path: ['fileIds'],
  });
export type DisposalRequest = z.infer<typeof disposalRequest>;

/** A register entry's id: made by the archive. */
export const disposalIdSchema = z
  .string()
  .regex(/^[0-9a-f]{32}$/, 'a disposal id is 32 lowercase hexadecimal characters');

/**
 * The register: disposed of from `from` to `to` (days, both included, in the archive's time zone),
 * of a unit (by its id, for scripts) or of a place (市, 县, 乡 by name, as the reports filter).
 */
export const registerQuery = withUnitLevels(
  z.strictObject({
    from: calendarDay.optional(),
    to: calendarDay.optional(),
    /** Entries with an upload of this unit (an id of the directory); without it, everything the caller reaches. */
    unit: z.string().min(1).max(100).optional(),
    city: z.string().trim().min(1).max(100).optional(),
    county: z.string().trim().min(1).max(100).optional(),
    town: z.string().trim().min(1).max(100).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  }),
)
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, {
    message: '起始日期不能晚于截止日期',
    path: ['from'],
  })
  .refine((q) => q.unit === undefined || q.city === undefined, {
    message: 'filter by a unit id (unit) or by a place (city, county, town), not both',
    path: ['unit'],
  });
export type RegisterQuery = z.infer<typeof registerQuery>;

export interface DisposalUnitView {
  id: string;
  city: string;
  county?: string;
  town?: string;
  street?: string;
}

/** One entry of the register (销毁清册). */
export interface DisposalView {
  id: string;
  /** The file's system number (系统编号). */
  fileId: string;
  fileName: string;
  size: number;
  /** When the archive first stored it. */
  storedAt: string;
  /** Units and uploaders that held it (counted or in the trash); for an administrator below the top, those of their reach. */
  units: DisposalUnitView[];
  uploaders: Array<{ id: string; username: string }>;
  /** Units outside the caller's reach, not named. */
  otherUnits: number;
  firstUploadAt: string | null;
  lastUploadAt: string | null;
  /** Uploads that counted when it was disposed of (they left every count), and those that were in the trash. */
  countedUploads: number;
  withdrawnUploads: number;
  reason: string;
  approvalRef: string;
  disposedBy: { id: string; username: string };
  disposedAt: string;
  /** `disposing`: begun, not finished (a retry or the sweep finishes it). */
  state: 'disposing' | 'disposed';
}

export interface DisposalList {
  items: DisposalView[];
  total: number;
  limit: number;
  offset: number;
}

export interface DisposalAnswer {
  /** Disposed of by this request (or finished by it after an interrupted one). */
  disposed: DisposalView[];
  /** In the register before: left as they were. */
  alreadyDisposed: DisposalView[];
  /** A receipt's rows that name no file (failed uploads). */
  skippedRows: number;
}
