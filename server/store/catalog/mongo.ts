import { Long } from 'mongodb';
import { isDuplicateKey, objectIdOf } from '../mongo/documents.js';
import { catalogEntryFromDoc, type CatalogCollections, type CatalogDoc } from '../mongo/catalog-documents.js';
import type { Catalog, CatalogEntry, ContentKey, DeletingEntry } from './port.js';

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
    // Entries being deleted, for the sweep that finishes deletions a crash interrupted.
    c.catalog.createIndex({ deletingAt: 1 }, { name: 'deleting', sparse: true }),
    // 本单位文件 of the whole archive, a page at a time in each sort's default order (ties by _id):
    // read in index order, not sorted whole (docs/deployment.md, Queries and their indexes).
    c.catalog.createIndex({ uploadDate: -1, _id: 1 }, { name: 'listing_first_upload' }),
    c.catalog.createIndex({ fileName: 1, _id: 1 }, { name: 'listing_name' }),
    c.catalog.createIndex({ fileLength: -1, _id: 1 }, { name: 'listing_size' }),
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
      // Another content: an entry of this one being deleted (its SHA-256 suffixed) is no collision.
      const sharing = await c.catalog
        .find({ fileMD5: md5, fileSHA256: { $ne: sha256 } }, { projection: { fileSHA256: 1 } })
        .toArray();
      const collision = sharing.some((doc) => doc.fileSHA256.slice(0, 64) !== sha256);
      if (collision)
        await c.catalog.updateMany({ fileMD5: md5, md5Collision: false }, { $set: { md5Collision: true } });
      return collision;
    },
  };
}

export class MongoCatalog implements Catalog {
  constructor(private readonly c: CatalogCollections) {}

  async get(fileId: string): Promise<CatalogEntry | undefined> {
    const _id = objectIdOf(fileId);
    const doc = _id && (await this.c.catalog.findOne({ _id, deletingAt: { $exists: false } }));
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
      .find(after ? { _id: { $gt: after }, deletingAt: { $exists: false } } : { deletingAt: { $exists: false } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map(catalogEntryFromDoc);
  }

  /** An estimate (the collection's count), entries being deleted included: a progress figure. */
  async count(): Promise<number> {
    return this.c.catalog.estimatedDocumentCount();
  }

  async beginDeletion(fileId: string, at: Date): Promise<DeletingEntry | undefined> {
    const _id = objectIdOf(fileId);
    if (!_id) return undefined;
    const doc = await this.c.catalogOnPrimary.findOne({ _id });
    if (!doc) return undefined;
    if (!doc.deletingAt) {
      // One conditional write: the mark and the identity freed together (the filter's SHA-256
      // makes it apply once, whoever races).
      await this.c.catalog.updateOne(
        { _id, deletingAt: { $exists: false }, fileSHA256: doc.fileSHA256 },
        {
          $set: { deletingAt: at, fileSHA256: `${doc.fileSHA256.slice(0, 64)}~${fileId}` },
          $unset: { deletionCleared: '' },
        },
      );
    }
    const now = await this.c.catalogOnPrimary.findOne({ _id });
    return now?.deletingAt ? deletingEntryOf(now, now.deletingAt) : undefined;
  }

  async cancelDeletion(fileId: string): Promise<boolean> {
    const _id = objectIdOf(fileId);
    // Only a deletion not cleared of holds: one document's update, which a clear excludes.
    const uncleared = { _id, deletingAt: { $exists: true }, deletionCleared: { $exists: false } };
    const doc = _id && (await this.c.catalogOnPrimary.findOne(uncleared));
    if (!_id || !doc) return false;
    try {
      const { modifiedCount } = await this.c.catalog.updateOne(uncleared, {
        $unset: { deletingAt: '' },
        $set: { fileSHA256: doc.fileSHA256.slice(0, 64) },
      });
      return modifiedCount > 0;
    } catch (err) {
      // The content was stored anew meanwhile: this entry stays live out of its identity.
      if (!isDuplicateKey(err)) throw err;
      const { modifiedCount } = await this.c.catalog.updateOne(uncleared, { $unset: { deletingAt: '' } });
      return modifiedCount > 0;
    }
  }

  async clearDeletion(fileId: string): Promise<boolean> {
    const _id = objectIdOf(fileId);
    if (!_id) return false;
    const { matchedCount } = await this.c.catalog.updateOne(
      { _id, deletingAt: { $exists: true } },
      { $set: { deletionCleared: true } },
    );
    return matchedCount === 1;
  }

  async deletions(before: Date, limit: number): Promise<DeletingEntry[]> {
    const docs = await this.c.catalog
      .find({ deletingAt: { $exists: true, $lt: before } })
      .sort({ deletingAt: 1 })
      .limit(limit)
      .toArray();
    return docs.map((doc) => deletingEntryOf(doc, doc.deletingAt!));
  }

  async remove(fileId: string): Promise<void> {
    const _id = objectIdOf(fileId);
    if (_id) await this.c.catalog.deleteOne({ _id, deletingAt: { $exists: true } });
  }
}

const deletingEntryOf = (doc: CatalogDoc, since: Date): DeletingEntry => ({
  ...catalogEntryFromDoc(doc),
  deletingSince: since,
  deletionCleared: doc.deletionCleared === true,
});
