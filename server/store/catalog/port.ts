import type { FileKind } from '../../../shared/file-types.js';
import type { FileSort } from '../../../shared/schemas.js';
import type { UnitSubtree, ViewScope } from '../ledger/port.js';
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
  /** Part of any name the view's units uploaded the file under (the whole archive: any name, or the catalog's). */
  nameContains?: string;
  /** Only files this account uploaded within the view. */
  uploaderId?: string;
  /** The view's first upload of the file (the catalog date for the whole archive) at or after… */
  firstUploadFrom?: Date;
  /** …and before this instant. */
  firstUploadBefore?: Date;
  /** Only files of this kind, by a view's upload's media type and name (the whole archive: the catalog's). */
  kind?: FileKind;
  /** Default: lastUpload in a unit or subtree view, firstUpload for the whole archive (the catalog's own order). */
  sort?: FileSort;
  /** Default: the sort's natural order (defaultFileOrder). */
  order?: 'asc' | 'desc';
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
  /** The view's names of the file, in the order first used (at most FILE_NAMES_SHOWN), and how many there are. */
  names: string[];
  nameCount: number;
  /** The view's uploaders of the file, by login (at most FILE_UPLOADERS_SHOWN), and how many there are. */
  uploaders: string[];
  uploaderCount: number;
}

/** The view a listing query asks for: a unit's, a subtree's, or (undefined) the whole archive's. */
export function viewScopeOf(q: Pick<CatalogListQuery, 'unitId' | 'subtree'>): ViewScope | undefined {
  if (q.unitId !== undefined) return { unitId: q.unitId };
  if (q.subtree !== undefined) return { subtree: q.subtree };
  return undefined;
}

/** A page of a listing, and the order it is in. */
export interface CatalogPage {
  items: CatalogListing[];
  total: number;
  sort: FileSort;
  order: 'asc' | 'desc';
}

export interface Catalog {
  get(fileId: string): Promise<CatalogEntry | undefined>;
  findByKey(key: ContentKey): Promise<CatalogEntry | undefined>;
  list(query: CatalogListQuery): Promise<CatalogPage>;
  /** Every entry in file id order, a page at a time: the entries after `afterFileId`. */
  scan(afterFileId: string | undefined, limit: number): Promise<CatalogEntry[]>;
  count(): Promise<number>;
}
