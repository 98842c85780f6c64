import type { FileKind } from '../../../shared/file-types.js';
import type { FileSort } from '../../../shared/schemas.js';
import type { CatalogEntry } from '../catalog/port.js';
import type { UnitSubtree, ViewScope } from '../ledger/port.js';

/**
 * 本单位文件: the listing of a unit's files (or a reach's, or the whole archive's), a read model of
 * its own. It is where the ledger's data (who uploaded a file, where, under which names, how often)
 * and the catalog's (the file itself) meet, by design: neither the catalog nor the ledger joins the
 * other's tables, and this listing writes nothing (docs/decisions/unit-files.md).
 */

export interface UnitFilesQuery {
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

export interface UnitFileListing {
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
export function viewScopeOf(q: Pick<UnitFilesQuery, 'unitId' | 'subtree'>): ViewScope | undefined {
  if (q.unitId !== undefined) return { unitId: q.unitId };
  if (q.subtree !== undefined) return { subtree: q.subtree };
  return undefined;
}

/** A page of a listing, and the order it is in. */
export interface UnitFilesPage {
  items: UnitFileListing[];
  total: number;
  sort: FileSort;
  order: 'asc' | 'desc';
}

/**
 * One folder of the view, as a 网盘 shows it: the names the view's units uploaded files under are
 * paths (`案卷007/第0033页.tif`), so a folder holds the sub-folders and the files whose names
 * continue its path. A file uploaded under two paths is in both folders.
 */
export interface FolderQuery {
  unitId?: string;
  subtree?: UnitSubtree;
  accountId: string;
  /** The folder's path without a trailing '/' (`案卷007`, `2026年/案卷007`); '' the top. */
  folder: string;
  /** Sub-folders first, then files, each by name (A→Z, by code point); one page over both. */
  limit: number;
  offset: number;
}

/** A sub-folder, and how many file names lie under it at any depth. */
export interface FolderEntry {
  name: string;
  files: number;
}

export interface FolderFile extends UnitFileListing {
  /** The name in the folder (its path's last part); the whole path is the folder's and this. */
  path: string;
}

export interface FolderPage {
  /** The page's sub-folders (the page begins with them), then its files. */
  folders: FolderEntry[];
  files: FolderFile[];
  /** All sub-folders and all files of the folder (the page's total is their sum). */
  folderTotal: number;
  fileTotal: number;
}

/**
 * The upload actions of a view that count now, of some files or of a folder (at any depth), as
 * 撤回 names them: by the uploader within a time when given (a clerk's own, within WITHDRAW_DAYS).
 */
export interface ViewUploadsQuery {
  unitId?: string;
  subtree?: UnitSubtree;
  /** Uploads of these files (public ids)… */
  fileIds?: string[];
  /** …or uploads recorded under a name in this folder, at any depth (one of the two). */
  folder?: string;
  /** Only this account's uploads. */
  accountId?: string;
  /** Only uploads made at or after this instant. */
  since?: Date;
  /** At most this many (the earliest first). */
  limit: number;
}

export interface ViewUpload {
  /** The key the upload was counted under: what POST /api/withdrawals names. */
  key: string;
  fileId: string;
  /** The name (path) it was uploaded under. */
  fileName: string;
  accountId: string;
  at: Date;
}

export interface UnitFiles {
  list(query: UnitFilesQuery): Promise<UnitFilesPage>;
  /** One folder of the view: its sub-folders with their counts, then its files, a page at a time. */
  folder(query: FolderQuery): Promise<FolderPage>;
  /** The counted (not withdrawn) uploads behind some files or a folder of the view. */
  uploads(query: ViewUploadsQuery): Promise<ViewUpload[]>;
}
