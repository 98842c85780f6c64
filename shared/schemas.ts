import { z } from 'zod';

/** One schema per request, shared by the browser client and the server. */

export const md5Hex = z.string().regex(/^[0-9a-fA-F]{32}$/, 'an MD5 is 32 hexadecimal characters').transform((s) => s.toLowerCase());
export const fileIdSchema = z.string().regex(/^[0-9a-f]{24}$/, 'a file id is 24 lowercase hexadecimal characters');

export const loginRequest = z.strictObject({
  username: z.string().min(1).max(64),
  password: z.string().min(1).max(1024),
});
export type LoginRequest = z.infer<typeof loginRequest>;

export const MIN_PASSWORD_LENGTH = 10;
export const passwordChangeRequest = z.strictObject({
  currentPassword: z.string().min(1).max(1024),
  newPassword: z.string().min(MIN_PASSWORD_LENGTH, `a password has at least ${MIN_PASSWORD_LENGTH} characters`).max(1024),
});
export type PasswordChangeRequest = z.infer<typeof passwordChangeRequest>;

/** Non-file fields of `POST /api/files`. */
export const uploadFields = z.strictObject({
  md5: md5Hex.optional(),
});

export const fileListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  q: z.string().max(200).optional(),
});
export type FileListQuery = z.infer<typeof fileListQuery>;

export const GEO_TYPES = ['city', 'county', 'town', 'street'] as const;
export type GeoType = (typeof GEO_TYPES)[number];
export const ROLES = ['clerk', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** An administrative unit an account belongs to; its deepest named level is its GeoType. */
export interface Unit {
  id: string;
  geoType: GeoType;
  city: string;
  county?: string;
  town?: string;
  street?: string;
  /** Optional location as [longitude, latitude]. */
  coordinates?: [number, number];
}

export interface AccountView {
  id: string;
  username: string;
  role: Role;
  unit: Unit;
}

export interface SessionView {
  account: AccountView;
  /** Send back as `X-CSRF-Token` on state-changing requests made with the session cookie. */
  csrfToken: string | null;
  mustChangePassword: boolean;
}

export interface UploadResult {
  status: 'stored' | 'duplicate';
  fileId: string;
  /** The caller's own upload count for this file, for the caller's unit. */
  uploadCount: number;
}

export interface FileSummary {
  fileId: string;
  fileName: string;
  contentType: string;
  fileLength: number;
  fileMD5: string;
  uploadDate: string;
  /** Uploads the caller can see: the unit's for a clerk, everybody's for an admin. */
  uploadCount: number;
  /** The caller's own uploads of this file. */
  myUploadCount: number;
  lastUploadTime: string;
}

export interface FileList {
  items: FileSummary[];
  total: number;
  limit: number;
  offset: number;
}
