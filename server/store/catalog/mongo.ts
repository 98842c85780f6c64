import { Long } from 'mongodb';
import { objectIdOf } from '../mongo/documents.js';
import { catalogEntryFromDoc, type CatalogCollections, type CatalogDoc } from '../mongo/catalog-documents.js';
import type { Catalog, CatalogEntry, ContentKey } from './port.js';

export async function createCatalogIndexes(c: CatalogCollections): Promise<void> {
  await Promise.all([
    c.catalog.createIndex({ fileSHA256: 1, fileMD5: 1, fileLength: 1 }, { unique: true, name: 'content_identity' }),
    c.catalog.createIndex({ fileMD5: 1 }, { name: 'md5' }),
    c.catalog.createIndex({ uploadDate: -1 }, { name: 'upload_date' }),
    // The collisions report's (created by the reports until 2026-11-28, under the same name).
    c.catalog.createIndex(
      { md5Collision: 1, uploadDate: 1 },
      { name: 'collisions', partialFilterExpression: { md5Collision: true } },
    ),
  ]);
}

/**
 * The catalog's writes that the content's commit makes (the entry, written last, is what makes
 * stored bytes part of the archive): the only way into `fileInfo.files` from outside the catalog.
 */
export interface MongoCatalogEntries {
  /** The entry that holds a content; `onPrimary`: as the primary holds it now (after a duplicate-key error). */
  held(key: ContentKey, options?: { onPrimary?: boolean }): Promise<CatalogDoc | null>;
  /** Inserts an entry; a content held already fails with MongoDB's duplicate-key error. */
  insert(doc: CatalogDoc): Promise<void>;
  /**
   * Flags every entry with this MD5 as a collision when another content shares it; says whether one
   * does. Checked after the entry's insert, so of two colliding uploads racing, the later one sees
   * the other; idempotent, so a retried commit flags what a crash left unflagged.
   */
  flagCollision(md5: string, sha256: string): Promise<boolean>;
}

export function catalogEntries(c: CatalogCollections): MongoCatalogEntries {
  return {
    held: (key, options = {}) =>
      (options.onPrimary ? c.catalogOnPrimary : c.catalog).findOne({
        fileSHA256: key.sha256,
        fileMD5: key.md5,
        fileLength: Long.fromNumber(key.length),
      }),
    async insert(doc) {
      await c.catalog.insertOne(doc);
    },
    async flagCollision(md5, sha256) {
      const collision = await c.catalog.findOne(
        { fileMD5: md5, fileSHA256: { $ne: sha256 } },
        { projection: { _id: 1 } },
      );
      if (collision)
        await c.catalog.updateMany({ fileMD5: md5, md5Collision: false }, { $set: { md5Collision: true } });
      return collision !== null;
    },
  };
}

export class MongoCatalog implements Catalog {
  constructor(private readonly c: CatalogCollections) {}

  async get(fileId: string): Promise<CatalogEntry | undefined> {
    const _id = objectIdOf(fileId);
    const doc = _id && (await this.c.catalog.findOne({ _id }));
    return doc ? catalogEntryFromDoc(doc) : undefined;
  }

  async findByKey(key: ContentKey): Promise<CatalogEntry | undefined> {
    const doc = await this.c.catalog.findOne({
      fileSHA256: key.sha256,
      fileMD5: key.md5,
      fileLength: Long.fromNumber(key.length),
    });
    return doc ? catalogEntryFromDoc(doc) : undefined;
  }

  async scan(afterFileId: string | undefined, limit: number): Promise<CatalogEntry[]> {
    const after = afterFileId === undefined ? undefined : objectIdOf(afterFileId);
    const docs = await this.c.catalog
      .find(after ? { _id: { $gt: after } } : {})
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map(catalogEntryFromDoc);
  }

  async count(): Promise<number> {
    return this.c.catalog.estimatedDocumentCount();
  }
}
