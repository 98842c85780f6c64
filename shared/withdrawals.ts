import { z } from 'zod';
import { receiptIdSchema } from './receipts.js';

/**
 * 撤回 and 回收站: a clerk takes back their own uploads (within WITHDRAW_DAYS of each), an
 * administrator any upload of their reach; a withdrawn upload leaves every count and waits in its
 * unit's trash (TRASH_DAYS) to be restored.
 */

/** Why an upload is withdrawn: 传错文件 / 传错单位 / 重复上传 / 含不应保存的信息 / 其他 (with a note). */
export const WITHDRAWAL_REASONS = ['wrong_file', 'wrong_unit', 'repeated', 'must_not_keep', 'other'] as const;
export type WithdrawalReason = (typeof WITHDRAWAL_REASONS)[number];

export const WITHDRAWAL_REASON_NAMES: Record<WithdrawalReason, string> = {
  wrong_file: '传错文件',
  wrong_unit: '传错单位',
  repeated: '重复上传',
  must_not_keep: '含不应保存的信息',
  other: '其他',
};

/**
 * An upload as a client names it: the key the archive counted it under (a receipt row's
 * `uploadId`; a script's own `tus:`/`file:`/`direct:`/`batch:` key with its account, or
 * `claim:<claim id>`). Knowing one gives nothing outside the caller's reach: such an upload is
 * answered as unknown.
 */
export const uploadIdSchema = z
  .string()
  .regex(/^[a-z]+:[\x21-\x7e]{1,200}$/, 'an upload id is the uploadId of a receipt row (e.g. "tus:…" or "claim:…")');

/** At most this many uploads by id in one request (a whole folder goes by its receipt). */
export const WITHDRAW_MAX_UPLOADS = 1000;

/** By upload ids, or a whole folder's upload by its receipt (one of the two). */
export const withdrawalRequest = z
  .strictObject({
    uploads: z.array(uploadIdSchema).min(1).max(WITHDRAW_MAX_UPLOADS).optional(),
    receipt: receiptIdSchema.optional(),
    reason: z.enum(WITHDRAWAL_REASONS, {
      error: `reason is one of ${WITHDRAWAL_REASONS.join(', ')} (传错文件 / 传错单位 / 重复上传 / 含不应保存的信息 / 其他)`,
    }),
    note: z.string().trim().max(500).optional(),
  })
  .refine((r) => (r.uploads === undefined) !== (r.receipt === undefined), {
    message: '请给出要撤回的上传（uploads：上传编号列表）或上传清单（receipt），二者选一',
    path: ['uploads'],
  })
  .refine((r) => r.reason !== 'other' || (r.note !== undefined && r.note.length > 0), {
    message: '撤回原因选“其他”时请填写说明（note）',
    path: ['note'],
  });
export type WithdrawalRequest = z.infer<typeof withdrawalRequest>;

/** A withdrawal's id: made by the archive, in the trash's listing and in a withdrawal's answer. */
export const withdrawalIdSchema = z
  .string()
  .regex(/^[0-9a-f]{32}$/, 'a withdrawal id is 32 lowercase hexadecimal characters');

/** At most this many withdrawals by id in one restore (a whole folder goes by its receipt). */
export const RESTORE_MAX_WITHDRAWALS = 1000;

/** 恢复 of many: withdrawals by id, or every withdrawn upload of one of the caller's receipts (one of the two). */
export const restoreRequest = z
  .strictObject({
    withdrawals: z.array(withdrawalIdSchema).min(1).max(RESTORE_MAX_WITHDRAWALS).optional(),
    receipt: receiptIdSchema.optional(),
  })
  .refine((r) => (r.withdrawals === undefined) !== (r.receipt === undefined), {
    message: '请给出要恢复的撤回记录（withdrawals：撤回编号列表）或上传清单（receipt），二者选一',
    path: ['withdrawals'],
  });
export type RestoreRequest = z.infer<typeof restoreRequest>;

export const trashQuery = z.strictObject({
  /** One unit's trash; without it, the clerk's unit, or everything an administrator reaches. */
  unit: z.string().min(1).max(100).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});
export type TrashQuery = z.infer<typeof trashQuery>;

export interface WithdrawalView {
  id: string;
  uploadId: string;
  fileId: string;
  fileName: string;
  size: number;
  unit: { id: string; city: string; county?: string; town?: string };
  uploader: { id: string; username: string };
  uploadedAt: string;
  withdrawnBy: { id: string; username: string };
  withdrawnAt: string;
  reason: WithdrawalReason;
  note: string | null;
  state: 'withdrawn' | 'restored' | 'purged';
  restoredBy: { id: string; username: string } | null;
  restoredAt: string | null;
  /** Who purged it (`system`: the sweep, once its time in the trash was over) and when; null until then. */
  purgedBy: { id: string; username: string } | null;
  purgedAt: string | null;
}

export interface TrashItem extends WithdrawalView {
  /** Whole days left in the trash; 0 once expired: 待清除, still restorable until the next sweep purges it. */
  daysLeft: number;
  expired: boolean;
  /** Whether the caller may restore it (its uploader, or an administrator of its reach). */
  canRestore: boolean;
}

export interface TrashList {
  items: TrashItem[];
  total: number;
  limit: number;
  offset: number;
}

export interface RestoreAnswer {
  /** Restored by this request (or finished by it after an interrupted one): they count again. */
  restored: WithdrawalView[];
  /** Restored before: left as they were. */
  alreadyRestored: WithdrawalView[];
}

export interface WithdrawalAnswer {
  /** Withdrawn by this request (or finished by it after an interrupted one). */
  withdrawn: WithdrawalView[];
  /** Already withdrawn before: left as they were. */
  alreadyWithdrawn: WithdrawalView[];
  /** A receipt's rows that name no counted upload (failed files, rows of an earlier version, files disposed of or deleted). */
  skippedRows: number;
}

/** `GET /api/files/:id/uploads`: a page of a file's uploads (newest first). */
export const fileUploadsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});
export type FileUploadsQuery = z.infer<typeof fileUploadsQuery>;

/**
 * One upload of a file as its uploads' list shows it (who, from which unit, when, under which
 * upload id), with its withdrawal while it is withdrawn, and whether the caller may withdraw it.
 */
export interface FileUploadView {
  uploadId: string;
  uploader: { id: string; username: string };
  unit: { id: string; city: string; county?: string; town?: string };
  /** The name (its path in the uploader's folder) it was uploaded under. */
  fileName: string;
  size: number;
  uploadedAt: string;
  /** It counts now: neither withdrawn nor otherwise taken back. */
  counts: boolean;
  withdrawal: {
    id: string;
    withdrawnAt: string;
    withdrawnBy: string;
    reason: WithdrawalReason;
    note: string | null;
  } | null;
  /** An administrator of its reach, or its uploader within WITHDRAW_DAYS, while it counts. */
  canWithdraw: boolean;
}

export interface FileUploadList {
  fileId: string;
  items: FileUploadView[];
  total: number;
  limit: number;
  offset: number;
}

/** At most this many withdrawals purged by id in one request. */
export const PURGE_MAX_WITHDRAWALS = 1000;

/**
 * 彻底删除 (administrators only): chosen withdrawals of the trash, ahead of their time; or 清空回收站:
 * every withdrawal in the trash of one unit, or of the administrator's whole reach (`{}`).
 */
export const purgeRequest = z.strictObject({
  withdrawals: z.array(withdrawalIdSchema).min(1).max(PURGE_MAX_WITHDRAWALS),
});
export type PurgeRequest = z.infer<typeof purgeRequest>;

export const emptyTrashRequest = z.strictObject({
  /** One unit of the administrator's reach; without it, all of their reach. */
  unit: z.string().min(1).max(100).optional(),
});
export type EmptyTrashRequest = z.infer<typeof emptyTrashRequest>;

export interface PurgeAnswer {
  /** Purged by this request: out of the trash for good. */
  purged: WithdrawalView[];
  /** Left in the trash: `held` (冻结: a hold on its file), `busy` (being withdrawn or restored right now: try again). */
  skipped: Array<{ id: string; fileName: string; reason: 'held' | 'busy' }>;
  /** Contents deleted with their bytes because no upload holds them any more. */
  contentsDeleted: number;
}
