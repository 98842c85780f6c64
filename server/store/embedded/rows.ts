import type { Unit } from '../../../shared/schemas.js';
import type { Account, CatalogEntry, LedgerEntry } from '../port.js';

/** Row shapes of the embedded tables and their mapping to the port's types. */

export interface CatalogRow {
  file_id: string;
  md5: string;
  sha256: string;
  length: number;
  chunk_size: number;
  chunk_count: number;
  file_name: string;
  content_type: string;
  upload_date: number;
  md5_collision: number;
}

export function catalogEntryFromRow(row: CatalogRow): CatalogEntry {
  return {
    fileId: row.file_id,
    fileMD5: row.md5,
    fileSHA256: row.sha256,
    fileLength: row.length,
    chunkSize: row.chunk_size,
    chunkCount: row.chunk_count,
    fileName: row.file_name,
    contentType: row.content_type,
    uploadDate: new Date(row.upload_date),
    md5Collision: row.md5_collision === 1,
  };
}

export interface LedgerRow {
  user_id: string;
  user_name: string;
  unit_id: string;
  unit: string;
  file_id: string;
  upload_time: number;
  last_upload_time: number;
  upload_file_name: string;
  last_upload_file_name: string;
  last_content_type: string;
  upload_count: number;
}

export function ledgerEntryFromRow(row: LedgerRow): LedgerEntry {
  return {
    userId: row.user_id,
    userName: row.user_name,
    unit: JSON.parse(row.unit) as Unit,
    fileId: row.file_id,
    uploadTime: new Date(row.upload_time),
    lastUploadTime: new Date(row.last_upload_time),
    uploadFileName: row.upload_file_name,
    lastUploadFileName: row.last_upload_file_name,
    lastContentType: row.last_content_type,
    uploadCount: row.upload_count,
  };
}

export interface AccountRow {
  id: string;
  username: string;
  password_hash: string;
  role: Account['role'];
  unit: string;
  created_at: number;
  must_change_password: number;
}

export function accountFromRow(row: AccountRow): Account {
  return {
    id: row.id,
    username: row.username,
    passwordHash: row.password_hash,
    role: row.role,
    unit: JSON.parse(row.unit) as Unit,
    createdAt: new Date(row.created_at),
    mustChangePassword: row.must_change_password === 1,
  };
}

/** Escapes a user's search text for `LIKE … ESCAPE '\\'`. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
