import { z } from 'zod';
import { typedNameField, type NameRule } from './typed-name.js';
import { ARCHIVE_UNIT_ID, unitIdSchema, type UnitView } from './units.js';

/** Accounts and API tokens as administrators and their owners see them over HTTP. */

export const ROLES = ['clerk', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Where an account stands; the first that applies. */
export const ACCOUNT_STATES = ['disabled', 'throttled', 'must_change_password', 'active'] as const;
export type AccountState = (typeof ACCOUNT_STATES)[number];

export interface AccountSummary {
  id: string;
  username: string;
  /** The person's name (姓名); null: none given, the login stands for them. */
  displayName: string | null;
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
  /** How many the filters take, counted up to 1,000; beyond, 1,000 and `totalCapped` (no filter: exact). */
  total: number;
  /** There are more than `total` ("more than 1,000"): counting them all would read them all. */
  totalCapped: boolean;
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

/** The longest display name, in characters (not UTF-16 units: a rare character of a name may take two). */
export const DISPLAY_NAME_MAX = 50;
/** A display name: typed by a person (shared/typed-name.ts); empty for none. */
export const DISPLAY_NAME_RULE: NameRule = { max: DISPLAY_NAME_MAX, optional: true };

/**
 * An account's display name (姓名) as a request gives it, normalised and checked as every typed
 * name is (typedName); empty or null for none.
 */
export const displayNameField = typedNameField(DISPLAY_NAME_RULE)
  .nullable()
  .transform((s) => (s === null || s === '' ? null : s));

/**
 * How a person is shown wherever a page or export names one: 姓名（login）, or the login alone
 * when the account has no name (or is not an account of this archive).
 */
export function personLabel(login: string, displayName: string | null | undefined, language: 'zh-CN' | 'en'): string {
  if (!displayName) return login;
  return language === 'zh-CN' ? `${displayName}（${login}）` : `${displayName} (${login})`;
}

/** `POST /api/accounts`: the password is made by the archive and shown once. */
export const newAccountRequest = z.strictObject({
  username: usernameField,
  displayName: displayNameField.optional(),
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
    /** A new display name; "" or null removes it. */
    displayName: displayNameField.optional(),
  })
  .refine(
    (p) => p.role !== undefined || p.unitId !== undefined || p.disabled !== undefined || p.displayName !== undefined,
    { message: 'say what to change: role, unitId, disabled or displayName' },
  );
export type AccountPatchRequest = z.infer<typeof accountPatchRequest>;

/** `PUT /api/session/name`: the caller's own display name ("" or null removes it). */
export const ownDisplayNameRequest = z.strictObject({ displayName: displayNameField });
export type OwnDisplayNameRequest = z.infer<typeof ownDisplayNameRequest>;

/** The answer to creating an account or resetting its password: the one-time password, shown this once. */
export interface OneTimePasswordView {
  account: AccountSummary;
  oneTimePassword: string;
}

/** `GET /api/accounts/imports`: an import of the caller's whose answer (the one-time passwords) is kept, not yet downloaded. */
export interface KeptImportView {
  id: string;
  createdAt: string;
  /** Forgotten then, if not downloaded before. */
  expiresAt: string;
  /** How many accounts it created. */
  count: number;
}

/** One refused row of an account import (`line` counts from 1, the header included). */
export interface ImportRowProblem {
  line: number;
  username: string;
  /** What is wrong, in English (the server's words, for scripts and logs). */
  problems: string[];
  /** The same as codes with their values, for the page to word in its language. */
  codes: ImportProblem[];
}

/** One thing wrong with a row of an account import. */
export type ImportProblem =
  | { code: 'too_many_columns' }
  | { code: 'bad_name' }
  | { code: 'bad_role'; role: string }
  | { code: 'bad_username' }
  | { code: 'username_repeated'; line: number }
  | { code: 'username_taken' }
  /** To administrators below the top level, who are not told whether another county has the name. */
  | { code: 'username_unavailable' }
  | { code: 'no_unit' }
  /** A unit that exists, outside the caller's reach. */
  | { code: 'unit_outside_reach'; unit: string }
  /** No unit has this code (or id); `closest`: the unit within the caller's reach it most likely meant. */
  | { code: 'unit_unknown'; unit: string; closest?: UnitSuggestion }
  /**
   * A unit within reach that an account of this role cannot belong to: an administrator below a
   * town or in a province with cities, a clerk in the whole archive.
   */
  | { code: 'unit_not_for_role'; unit: string; role: Role };

/** A unit offered instead of one that does not exist: "是否为 陈嘴乡 130922203？". */
export interface UnitSuggestion {
  /** What the row should say: the code, or a custom unit's id. */
  id: string;
  name: string;
  /** Its path, top down, e.g. 河北省 / 沧州市 / 青县 / 陈嘴乡. */
  path: string;
}

/**
 * Why an import's file as a whole was refused (`details` of its 400, beside the English
 * message), for the page to say in its language.
 */
export type ImportFileReason =
  | { reason: 'not_a_table'; problem: string }
  | { reason: 'not_a_workbook' }
  | { reason: 'old_excel' }
  | { reason: 'sheet_too_large'; maxBytes: number }
  | { reason: 'no_accounts'; examples: number }
  | { reason: 'too_many_rows'; rows: number; max: number };

/**
 * A row whose first cell starts with this is an example (the template's is one) and never
 * imported; so is one starting with "#". Usernames cannot start with either.
 */
export const IMPORT_EXAMPLE_MARK = '示例';
/**
 * Headers of an import's answer (201): the lines of the example rows skipped (comma-separated;
 * absent: none), and how many rows of empty cells were skipped (absent: none).
 */
export const IMPORT_SKIPPED_EXAMPLES_HEADER = 'Import-Skipped-Examples';
export const IMPORT_SKIPPED_BLANK_HEADER = 'Import-Skipped-Blank';

/**
 * The columns of an account import, in order; a first row naming them is skipped. The fourth,
 * the display name, may be left out (a header of the first three is recognised too).
 */
export const IMPORT_COLUMNS = ['username', 'role', 'unit', 'name'] as const;
/** The same in the template offered for download (either header is recognised). */
export const IMPORT_COLUMNS_ZH = ['用户名', '角色', '单位代码', '姓名'] as const;
/** Roles as a spreadsheet may name them. */
export const ROLE_NAMES: Record<string, Role> = { clerk: 'clerk', admin: 'admin', 档案员: 'clerk', 管理员: 'admin' };
/** A CSV import holds at most this many accounts. */
export const IMPORT_MAX_ROWS = 1000;

/**
 * The template the accounts page offers for download: the columns, and one example row, marked
 * as one in its first cell so that it is never imported (left in the file, it is skipped and said so).
 */
export const IMPORT_TEMPLATE = `\uFEFF${IMPORT_COLUMNS_ZH.join(',')}\r\n${IMPORT_EXAMPLE_MARK}：zhangsan,档案员,130922100,张三\r\n`;

/**
 * What an API token may do beyond uploading, reading and reports, chosen when it is made (none by
 * default): `tokens` make further tokens (never outliving it, never with a scope it lacks);
 * `accounts` create, import and change accounts, reset their passwords and unblock them
 * (administrators' tokens only). A browser session needs no scope.
 */
export const TOKEN_SCOPES = ['tokens', 'accounts'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export interface TokenView {
  id: string;
  label: string;
  accountId: string;
  username: string;
  /** The owner's display name (null: none). */
  displayName: string | null;
  createdAt: string;
  /** null: never. */
  expiresAt: string | null;
  lastUsedAt: string | null;
  expired: boolean;
  /** What the token may do beyond uploading, reading and reports (TOKEN_SCOPES); empty: nothing more. */
  scopes: TokenScope[];
}

/** A token's label (what it is used for): typed by a person, shown to administrators; empty for none. */
export const TOKEN_LABEL_RULE: NameRule = { max: 100, optional: true };

/** `POST /api/tokens`. */
export const newTokenRequest = z.strictObject({
  label: typedNameField(TOKEN_LABEL_RULE).default(''),
  /** null: never expires. */
  expiresInDays: z.number().int().min(1).max(3650).nullable().default(365),
  /** Scopes beyond uploading, reading and reports (none by default); each named once. */
  scopes: z
    .array(z.enum(TOKEN_SCOPES))
    .max(TOKEN_SCOPES.length)
    .refine((s) => new Set(s).size === s.length, 'name each scope once')
    .default([]),
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
