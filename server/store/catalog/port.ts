import type { UnitSubtree } from '../ledger/port.js';
/**
 * Content identity: MD5 alone never merges two files. (`{md5, sha256, size}` on the wire; the
 * MongoDB catalog documents keep the seed design's fileMD5, fileSHA256 and fileLength.)
 */
export interface ContentKey {
  md5: string;
  sha256: string;
  length: number;
}

/** One entry per distinct content (`fileInfo.files`), known by its identity. */
export interface CatalogEntry extends ContentKey {
  fileId: string;
  chunkSize: number;
  chunkCount: number;
  /** The name the content was first uploaded under. */
  fileName: string;
  contentType: string;
  uploadDate: Date;
  /** Another entry shares this MD5 with a different SHA-256. */
  md5Collision: boolean;
}

export interface NewCatalogEntry {
  key: ContentKey;
  fileName: string;
  contentType: string;
  uploadDate: Date;
}

export interface CatalogListQuery {
  /** Only files this unit uploaded (a clerk's view); all files when absent (an admin's view). */
  unitId?: string;
  /** Only files uploaded by the units of this subtree (an administrator's reach), under their latest names there. */
  subtree?: UnitSubtree;
  /** Whose uploads count as "mine". */
  accountId: string;
  nameContains?: string;
  limit: number;
  offset: number;
}

export interface CatalogListing {
  entry: CatalogEntry;
  /** The name shown: the unit's own upload name in a unit view, the first name otherwise. */
  displayName: string;
  /** The media type shown, chosen the same way. */
  displayType: string;
  uploadCount: number;
  myUploadCount: number;
  /** When the counted uploads began: the unit's first upload in a unit view (so a clerk does
   * not learn how long the archive has held it), the catalog date otherwise. */
  firstUploadTime: Date;
  lastUploadTime: Date;
}

export interface Catalog {
  get(fileId: string): Promise<CatalogEntry | undefined>;
  findByKey(key: ContentKey): Promise<CatalogEntry | undefined>;
  list(query: CatalogListQuery): Promise<{ items: CatalogListing[]; total: number }>;
  /** Every entry in file id order, a page at a time: the entries after `afterFileId`. */
  scan(afterFileId: string | undefined, limit: number): Promise<CatalogEntry[]>;
  count(): Promise<number>;
}
