import { z } from 'zod';
import { typedNameField, type NameRule } from './typed-name.js';

/**
 * The unit directory: the administrative divisions (GB/T 2260 codes for provinces, cities and
 * counties, the 9-digit codes of towns and streets) of the provinces an installation uses, and
 * the units administrators add under them (a bureau's departments, a 社区).
 */
export const UNIT_LEVELS = ['province', 'city', 'county', 'town', 'custom'] as const;
export type UnitLevel = (typeof UNIT_LEVELS)[number];

/**
 * The archive itself, above every province: the unit of the installation's top-level
 * administrators (their reach is everything). It is not in the directory's lists.
 */
export const ARCHIVE_UNIT_ID = 'archive';

/** One unit as the API shows it. */
export interface UnitView {
  /** What accounts refer to: a directory unit's code, or the id of a custom unit. */
  id: string;
  /** The official code; null for a custom unit. */
  code: string | null;
  name: string;
  level: UnitLevel;
  /** null at the top of the directory. */
  parentId: string | null;
  /** Names from the top down, e.g. 河北省 / 沧州市 / 青县 / 清州镇. */
  path: string;
}

export interface UnitList {
  items: UnitView[];
  total: number;
  limit: number;
  offset: number;
}

export const unitIdSchema = z
  .string()
  .regex(/^(?:\d{6}|\d{9}|u[0-9a-z]{12})$/, 'a unit id is a 6- or 9-digit code, or the id of a unit added here');

/** A custom unit's name: shows in reports and paths beside its siblings (shared/typed-name.ts). */
export const UNIT_NAME_RULE: NameRule = { max: 60, inPaths: true };
export const unitName = typedNameField(UNIT_NAME_RULE);

/** `GET /api/units`: one parent's children, or a search by name or code within the caller's reach. */
export const unitListQuery = z.strictObject({
  parent: unitIdSchema.optional(),
  q: z.string().trim().min(1).max(60).optional(),
  level: z.enum(UNIT_LEVELS).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});
export type UnitListQuery = z.infer<typeof unitListQuery>;

/** `GET /api/units/unmapped`: a page of the accounts whose units are not in the directory. */
export const unmappedQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});
export type UnmappedQuery = z.infer<typeof unmappedQuery>;

/** `POST /api/units`: a custom unit under a parent (null: at the top, for top-level administrators). */
export const newUnitRequest = z.strictObject({
  parentId: unitIdSchema.nullable(),
  name: unitName,
});
export type NewUnitRequest = z.infer<typeof newUnitRequest>;

/** `PATCH /api/units/:id`: a custom unit's new name. */
export const unitRenameRequest = z.strictObject({ name: unitName });
