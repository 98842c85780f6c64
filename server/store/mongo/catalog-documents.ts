import type { Db, Long, ObjectId } from 'mongodb';
import type { CatalogEntry } from '../catalog/port.js';
import { toNumber } from './documents.js';

/**
 * The catalog's documents (`fileInfo.files`, the seed design's field names). Written only by the
 * catalog (server/store/catalog/mongo.ts: `insertCatalogEntry`, `flagMd5Collisions`); read also by
 * the content's commit, the reports and the listing of a unit's files.
 */

/** A catalog entry in `fileInfo.files`, with the seed design's field names. */
export type CatalogDoc = Omit<CatalogEntry, 'fileId' | 'md5' | 'sha256' | 'length'> & {
  _id: ObjectId;
  fileMD5: string;
  fileSHA256: string;
  fileLength: Long | number;
  /** When its content began to be deleted (absent: live); its fileSHA256 is then suffixed with `~<id>`. */
  deletingAt?: Date;
  /** Present (true) once that deletion was cleared of holds (`Catalog.clearDeletion`). */
  deletionCleared?: true;
};

export function catalogCollections(db: Db) {
  return {
    catalog: db.collection<CatalogDoc>('fileInfo.files'),
    /**
     * The catalog read as the primary holds it now. After a duplicate-key error the winner is on
     * the primary but perhaps not yet majority-committed: a majority read could miss it.
     */
    catalogOnPrimary: db.collection<CatalogDoc>('fileInfo.files', {
      readConcern: { level: 'local' },
      readPreference: 'primary',
    }),
  };
}

export type CatalogCollections = ReturnType<typeof catalogCollections>;

export function catalogEntryFromDoc(doc: CatalogDoc): CatalogEntry {
  return {
    fileId: doc._id.toHexString(),
    md5: doc.fileMD5,
    // An entry being deleted has its SHA-256 suffixed (out of the content's identity): the first 64 are the content's.
    sha256: doc.fileSHA256.slice(0, 64),
    length: toNumber(doc.fileLength),
    chunkSize: doc.chunkSize,
    chunkCount: doc.chunkCount,
    fileName: doc.fileName,
    contentType: doc.contentType,
    uploadDate: doc.uploadDate,
    md5Collision: doc.md5Collision,
  };
}
