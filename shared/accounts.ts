import { z } from 'zod';
import { ROLES, type Role } from './schemas.js';
import { ARCHIVE_UNIT_ID, unitIdSchema, type UnitView } from './units.js';

/** Accounts and API tokens as administrators and their owners see them over HTTP. */

/** Where an account stands; the first that applies. */
export const ACCOUNT_STATES = ['disabled', 'throttled', 'must_change_password', 'active'] as const;
export type AccountState = (typeof ACCOUNT_STATES)[number];

export interface AccountSummary {
  id: string;
  username: string;
  role: Role;
  /** The account's unit; null for a unit of an earlier version that is not in the directory (see `unitText`). */
  unit: UnitView | null;
  /** The unit's path, or an earlier version's free-text unit; `全部` / everything for the archive's own unit. */
  unitText: string;
  /** The archive's own unit: a top-level administrator. */
  topLevel: boolean;
  state: AccountState;
  createdAt: string;
  lastLoginAt: string | null;
  /** API tokens that work (not expired). */
  tokens: number;
}

export interface AccountList {
  items: AccountSummary[];
  total: number;
  limit: number;
  offset: number;
}

/** A unit an account may belong to: a directory unit, or the archive itself (top-level administrators). */
export const accountUnitId = unitIdSchema.or(z.literal(ARCHIVE_UNIT_ID));

/** `GET /api/accounts`: every filter optional; `unit` takes its whole subtree. */
export const accountListQuery = z.strictObject({
  unit: accountUnitId.optional(),
  role: z.enum(ROLES).optional(),
  state: z.enum(ACCOUNT_STATES).optional(),
  q: z.string().trim().min(1).max(64).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});
export type AccountListQuery = z.infer<typeof accountListQuery>;

export const usernameField = z.string().trim().min(1, 'a username is needed').max(64);

/** `POST /api/accounts`: the password is made by the archive and shown once. */
export const newAccountRequest = z.strictObject({
  username: usernameField,
  role: z.enum(ROLES),
  unitId: accountUnitId,
});
export type NewAccountRequest = z.infer<typeof newAccountRequest>;

/** `PATCH /api/accounts/:id`. */
export const accountPatchRequest = z
  .strictObject({
    role: z.enum(ROLES).optional(),
    unitId: accountUnitId.optional(),
    disabled: z.boolean().optional(),
  })
  .refine((p) => p.role !== undefined || p.unitId !== undefined || p.disabled !== undefined, {
    message: 'say what to change: role, unitId or disabled',
  });
export type AccountPatchRequest = z.infer<typeof accountPatchRequest>;

/** The answer to creating an account or resetting its password: the one-time password, shown this once. */
export interface OneTimePasswordView {
  account: AccountSummary;
  oneTimePassword: string;
}

/** One refused row of an account import (`line` counts from 1, the header included). */
export interface ImportRowProblem {
  line: number;
  username: string;
  problems: string[];
}

/** The columns of an account import, in order; a first row naming them is skipped. */
export const IMPORT_COLUMNS = ['username', 'role', 'unit'] as const;
/** The same in the template offered for download (either header is recognised). */
export const IMPORT_COLUMNS_ZH = ['用户名', '角色', '单位代码'] as const;
/** Roles as a spreadsheet may name them. */
export const ROLE_NAMES: Record<string, Role> = { clerk: 'clerk', admin: 'admin', 档案员: 'clerk', 管理员: 'admin' };
/** A CSV import holds at most this many accounts. */
export const IMPORT_MAX_ROWS = 1000;

export interface TokenView {
  id: string;
  label: string;
  accountId: string;
  username: string;
  createdAt: string;
  /** null: never. */
  expiresAt: string | null;
  lastUsedAt: string | null;
  expired: boolean;
}

/** `POST /api/tokens`. */
export const newTokenRequest = z.strictObject({
  label: z.string().trim().max(100).default(''),
  /** null: never expires. */
  expiresInDays: z.number().int().min(1).max(3650).nullable().default(365),
});
export type NewTokenRequest = z.infer<typeof newTokenRequest>;

export interface NewTokenView {
  token: string;
  view: TokenView;
}

/** `GET /api/tokens`: the caller's own, or (`scope=reach`, administrators) every account's in reach. */
export const tokenListQuery = z.strictObject({
  scope: z.enum(['mine', 'reach']).default('mine'),
});
