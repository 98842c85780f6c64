import type { CatalogEntry } from '../catalog/port.js';

/**
 * A catalog row as it is read (`SELECT * FROM catalog`, or a read model's columns with the same
 * names), and the entry it is: shared by the catalog, the content's commit (which answers with
 * the entry it catalogued) and the listing of a unit's files.
 */
export interface CatalogRow {
  file_no: number;
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
  /** When its content began to be deleted; NULL (or absent from a read model's columns): live. */
  deleting_at?: number | null;
  /** 1 once the deletion was cleared of holds (`Catalog.clearDeletion`); 0 or NULL: not yet. */
  deletion_cleared?: number | null;
  /** 1: a deleted content's tombstone (the catalog's own reads only). */
  removed?: number | null;
}

export function catalogEntryFromRow(row: CatalogRow): CatalogEntry {
  return {
    fileId: row.file_id,
    md5: row.md5,
    // An entry being deleted has its SHA-256 suffixed (out of the content's identity): the first 64 are the content's.
    sha256: row.sha256.slice(0, 64),
    length: row.length,
    chunkSize: row.chunk_size,
    chunkCount: row.chunk_count,
    fileName: row.file_name,
    contentType: row.content_type,
    uploadDate: new Date(row.upload_date),
    md5Collision: row.md5_collision === 1,
  };
}
