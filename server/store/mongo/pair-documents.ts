import type { Db, ObjectId } from 'mongodb';
import type { NearDuplicatePair, PairReview } from '../near-duplicates/port.js';

/**
 * Near-duplicate pairs and their reviews (`nearDuplicates.pairs`, `.reviews`). Written only by
 * the near-duplicate index (server/store/near-duplicates/mongo.ts); read also by the reports.
 */

/** Two files found nearly the same (`nearDuplicates.pairs`); `_id` is "<fileA>:<fileB>". */
export type NearPairDoc = Omit<NearDuplicatePair, 'fileA' | 'fileB' | 'pages'> & {
  _id: string;
  fileA: ObjectId;
  fileB: ObjectId;
  /** Null (or missing, in pairs found before scans were compared page by page) for a pair of documents not so compared. */
  pages?: NearDuplicatePair['pages'] | null;
};

/** A pair marked handled (`nearDuplicates.reviews`); `_id` is the pair's, "<fileA>:<fileB>". */
export type PairReviewDoc = Omit<PairReview, 'fileA' | 'fileB'> & { _id: string; fileA: ObjectId; fileB: ObjectId };

export function pairCollections(db: Db) {
  return {
    nearPairs: db.collection<NearPairDoc>('nearDuplicates.pairs'),
    nearReviews: db.collection<PairReviewDoc>('nearDuplicates.reviews'),
  };
}

export type PairCollections = ReturnType<typeof pairCollections>;
