import type { Db, Long, ObjectId } from 'mongodb';

/**
 * Resumable uploads' documents (`uploads.resumable`). Written only by the upload store
 * (server/store/uploads/mongo.ts); the content's garbage collection reads which staging areas
 * they hold.
 */

/** A resumable (tus) upload's state; `_id` is the upload id. */
export interface UploadDoc {
  _id: string;
  ownerId: string;
  stagingId: ObjectId;
  length: Long | number;
  offset: Long | number;
  metadata: Record<string, string | null>;
  createdAt: Date;
  activeAt: Date;
  expiresAt: Date;
  lock: { holder: string; host: string; pid: number; until: Date } | null;
  completing?: { md5: string; sha256: string; length: Long | number } | null;
  outcome: { status: 'stored' | 'duplicate'; fileId: string; uploadCount: number } | null;
}

export function uploadCollections(db: Db) {
  return { uploads: db.collection<UploadDoc>('uploads.resumable') };
}

export type UploadCollections = ReturnType<typeof uploadCollections>;
