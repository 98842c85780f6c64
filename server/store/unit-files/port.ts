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

export interface UnitFiles {
  list(query: UnitFilesQuery): Promise<UnitFilesPage>;
}
