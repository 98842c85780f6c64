import { z } from 'zod';

/**
 * 上传清单: the receipt of one folder upload, every file with its path, size, outcome and time,
 * kept on the server for the clerk to fetch again (`/api/receipts`).
 */

/** A receipt lists at most this many files (a folder of scanned pages rarely holds more). */
export const RECEIPT_MAX_ROWS = 50_000;

/** `skipped`: a file this clerk had uploaded into its unit before, not counted again (the clerk's choice). */
export const RECEIPT_OUTCOMES = ['stored', 'duplicate', 'instant', 'failed', 'skipped'] as const;
export type ReceiptOutcome = (typeof RECEIPT_OUTCOMES)[number];

/** A receipt's id: made by the page when the folder upload starts. */
export const receiptIdSchema = z
  .string()
  .regex(/^[0-9a-f]{32}$/, 'a receipt id is 32 lowercase hexadecimal characters');

/**
 * One file as the page reports it. A finished upload names how it was counted: `key`, the
 * file's upload key (a batch or tus upload), or `claimId` (an instant upload); the archive looks
 * the count up and records its own answer. A failed one says why (`reason`: the error code); a
 * skipped one was counted nowhere (`reason`: SKIPPED_AS_UPLOADED unless it says otherwise).
 */
export const receiptRowRequest = z.strictObject({
  path: z.string().min(1).max(1000),
  size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  outcome: z.enum(RECEIPT_OUTCOMES),
  via: z.enum(['batch', 'tus', 'instant']).optional(),
  key: z
    .string()
    .regex(/^[\x21-\x7e]{1,128}$/)
    .optional(),
  claimId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,64}$/)
    .optional(),
  reason: z.string().max(100).optional(),
  at: z.iso.datetime(),
});
export type ReceiptRowRequest = z.infer<typeof receiptRowRequest>;

/** A skipped file's reason: this clerk uploaded it into its unit before (跳过：本单位已上传). */
export const SKIPPED_AS_UPLOADED = 'already_uploaded';

export const receiptRequest = z.strictObject({
  /** The folder (or the first file's name) the clerk chose. */
  title: z.string().min(1).max(1000),
  startedAt: z.iso.datetime(),
  rows: z.array(receiptRowRequest).min(1).max(RECEIPT_MAX_ROWS),
});
export type ReceiptRequest = z.infer<typeof receiptRequest>;

export interface ReceiptRow {
  path: string;
  size: number;
  outcome: ReceiptOutcome;
  /** The file in the archive (not for a failed one). */
  fileId?: string;
  /** The clerk's upload count of the file once this upload was counted. */
  uploadCount?: number;
  /**
   * The upload as the archive counted it (its key): what `POST /api/withdrawals` names. Absent on
   * failed and skipped rows and on receipts kept before withdrawals (2026-11-28).
   */
  uploadId?: string;
  /** Why it failed (an error code of the archive's or the page's), or why it was skipped. */
  reason?: string;
  at: string;
}

export interface ReceiptSummary {
  id: string;
  title: string;
  startedAt: string;
  updatedAt: string;
  counts: Record<ReceiptOutcome, number>;
  total: number;
}

/** A receipt's row as shown: a withdrawn upload says so (a restored one counts again and says nothing). */
export interface ReceiptRowView extends ReceiptRow {
  withdrawal?: { id: string; withdrawnAt: string; withdrawnBy: string; reason: string; note: string | null };
  /**
   * A copy inside this upload: the path of the row of the same file that was counted first in it
   * (与本批 … 相同，只保存一份). Its upload counts, as a copy, not as a re-send.
   */
  sameAs?: string;
}

export interface ReceiptView extends ReceiptSummary {
  rows: ReceiptRowView[];
}

export const receiptListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

/** A failed file's reason as a receipt keeps it: the error code, and an over-size file's limit (`payload_too_large:31457280`). */
export function receiptReason(code: string, message = ''): string {
  return (code === 'payload_too_large' && /^\d+$/.test(message) ? `${code}:${message}` : code).slice(0, 100);
}

/** The parts of a receipt's reason (see receiptReason). */
export function reasonParts(reason: string): { code: string; limitBytes?: number } {
  const [code = '', limit] = reason.split(':', 2);
  return limit !== undefined && /^\d+$/.test(limit) ? { code, limitBytes: Number(limit) } : { code };
}
