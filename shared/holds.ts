import { z } from 'zod';
import { fileIdSchema } from './schemas.js';

/**
 * 冻结: an administrator holds files, or every file of a unit of their reach, with a reason; a
 * held file cannot be withdrawn, purged or disposed of until the hold is lifted (解除冻结).
 */

export const HOLD_REASON_MAX = 500;
/** At most this many files named in one hold (a whole unit goes by its id). */
export const HOLD_MAX_FILES = 1000;

/** A hold's id: made by the archive, in the list of holds and in the answer that placed it. */
export const holdIdSchema = z.string().regex(/^[0-9a-f]{32}$/, 'a hold id is 32 lowercase hexadecimal characters');

/** Files by their ids, or a unit by its id (one of the two), and why. */
export const holdRequest = z
  .strictObject({
    files: z.array(fileIdSchema).min(1).max(HOLD_MAX_FILES).optional(),
    unit: z.string().min(1).max(100).optional(),
    reason: z
      .string()
      .trim()
      .min(1, '请填写冻结原因（reason）')
      .max(HOLD_REASON_MAX, `冻结原因最多 ${HOLD_REASON_MAX} 个字`),
  })
  .refine((r) => (r.files === undefined) !== (r.unit === undefined), {
    message: '请给出要冻结的文件（files：文件编号列表）或单位（unit：单位编号），二者选一',
    path: ['files'],
  });
export type HoldRequest = z.infer<typeof holdRequest>;

export const HOLD_STATES = ['active', 'lifted', 'all'] as const;
export type HoldState = (typeof HOLD_STATES)[number];

export const holdsQuery = z.strictObject({
  /** 冻结中, 已解除, or both (the default). */
  state: z.enum(HOLD_STATES).default('all'),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});
export type HoldsQuery = z.infer<typeof holdsQuery>;

export interface HoldView {
  id: string;
  /** The files named (each with the name it was held under), or the unit whose every file it holds. */
  scope:
    | { kind: 'files'; files: Array<{ id: string; name: string }> }
    | { kind: 'unit'; unit: { id: string; name: string; path: string } };
  reason: string;
  placedBy: { id: string; username: string };
  placedAt: string;
  /** Null while the hold lasts. */
  liftedBy: { id: string; username: string } | null;
  liftedAt: string | null;
  active: boolean;
}

export interface HoldList {
  items: HoldView[];
  total: number;
  limit: number;
  offset: number;
}
