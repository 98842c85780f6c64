import { ObjectId, type Db } from 'mongodb';
import type {
  InkBox,
  NearDuplicateIndex,
  NearDuplicatePair,
  NearFingerprint,
  PageFingerprint,
  PairReview,
} from './port.js';
import type { FingerprintJob, FingerprintQueue } from './port.js';
import { pairCollections } from '../mongo/pair-documents.js';

/**
 * A file's near-duplicate fingerprints (`nearDuplicates.fingerprints`); `keys` holds its lookup
 * keys (multikey index). `pages` is missing from documents written before pages were fingerprinted.
 */
export type NearFingerprintDoc = Omit<NearFingerprint, 'fileId' | 'pages'> & {
  _id: ObjectId;
  /** A page's `box` is missing from documents written before the box of its ink was kept. */
  pages?: Array<Omit<PageFingerprint, 'box'> & { box?: InkBox | null }>;
};

/** A file waiting to be fingerprinted, or whose fingerprinting failed (`nearDuplicates.jobs`); `_id` is the file id. */
export type FingerprintJobDoc = Omit<FingerprintJob, 'fileId'> & {
  _id: string;
  holder: string | null;
  leaseUntil: Date | null;
};

export function nearDuplicateCollections(db: Db) {
  return {
    ...pairCollections(db),
    nearFingerprints: db.collection<NearFingerprintDoc>('nearDuplicates.fingerprints'),
    fingerprintJobs: db.collection<FingerprintJobDoc>('nearDuplicates.jobs'),
  };
}

export type NearDuplicateCollections = ReturnType<typeof nearDuplicateCollections>;

export async function createNearDuplicateIndexes(c: NearDuplicateCollections): Promise<void> {
  await Promise.all([
    // The lookup keys (the pigeonhole blocks and LSH bands) of every fingerprint.
    c.nearFingerprints.createIndex({ keys: 1 }, { name: 'keys' }),
    c.nearPairs.createIndex({ foundAt: -1 }, { name: 'found' }),
    c.nearPairs.createIndex({ fileB: 1 }, { name: 'file_b' }),
    // The queue in the order it is taken, for each state: a take's two branches (queued and due,
    // running with a lease run out) are each read in this order and merged, never sorted whole
    // (issue 43: 2,000,000 files queued at once).
    c.fingerprintJobs.createIndex({ state: 1, dueAt: 1, _id: 1 }, { name: 'due_order' }),
  ]);
  // The queue's index of earlier versions, without _id: due_order serves all it did. (Another
  // instance starting at once may have dropped it first.)
  if ((await c.fingerprintJobs.indexes()).some((index) => index.name === 'due'))
    await c.fingerprintJobs.dropIndex('due').catch((err: unknown) => {
      if ((err as { codeName?: string }).codeName !== 'IndexNotFound') throw err;
    });
}

const fingerprintOf = (d: NearFingerprintDoc): NearFingerprint => ({
  fileId: d._id.toHexString(),
  format: d.format,
  skipped: d.skipped,
  units: d.units,
  short: d.short,
  simhash: d.simhash,
  keys: [...d.keys].sort((a, b) => a - b),
  pages: (d.pages ?? []).map(({ hash, units, box }) => ({ hash, units, box: box ?? null })),
  at: d.at,
});

export class MongoNearDuplicateIndex implements NearDuplicateIndex {
  constructor(private readonly c: NearDuplicateCollections) {}

  async put(fingerprints: readonly NearFingerprint[]): Promise<void> {
    if (fingerprints.length === 0) return;
    await this.c.nearFingerprints.bulkWrite(
      fingerprints.map(({ fileId, ...rest }) => ({
        replaceOne: {
          filter: { _id: new ObjectId(fileId) },
          replacement: {
            ...rest,
            keys: [...rest.keys],
            pages: rest.pages.map(({ hash, units, box }) => ({ hash, units, box })),
          },
          upsert: true,
        },
      })),
      { ordered: false },
    );
  }

  async get(fileId: string): Promise<NearFingerprint | undefined> {
    const doc = await this.c.nearFingerprints.findOne({ _id: new ObjectId(fileId) });
    return doc ? fingerprintOf(doc) : undefined;
  }

  async candidates(fileId: string, keys: readonly number[], limit: number): Promise<NearFingerprint[]> {
    if (keys.length === 0) return [];
    const docs = await this.c.nearFingerprints
      .find({ keys: { $in: [...keys] }, _id: { $ne: new ObjectId(fileId) } }, { projection: { keys: 0 } })
      .limit(limit)
      .toArray();
    return docs.map((d) => fingerprintOf({ ...d, keys: [] }));
  }

  async addPairs(pairs: readonly NearDuplicatePair[]): Promise<void> {
    if (pairs.length === 0) return;
    await this.c.nearPairs.bulkWrite(
      pairs.map((p) => ({
        replaceOne: {
          filter: { _id: `${p.fileA}:${p.fileB}` },
          // A pair of documents not compared page by page has no pages (not a null).
          replacement: { ...p, fileA: new ObjectId(p.fileA), fileB: new ObjectId(p.fileB), pages: p.pages ?? null },
          upsert: true,
        },
      })),
      { ordered: false },
    );
  }

  /**
   * Fingerprints recorded when lookup keys were text (the first near-duplicate index) are found by
   * no lookup now: their files are queued to be fingerprinted again and the old records removed.
   */
  async replaceTextKeyed(now: Date): Promise<number> {
    // Any element a string: answered by the multikey index on keys, so a start with none reads no document.
    const textKeyed = { keys: { $type: 'string' } } as const;
    let count = 0;
    for (
      let ids;
      (ids = await this.c.nearFingerprints
        .find(textKeyed, { projection: { _id: 1 } })
        .limit(1000)
        .map((d) => d._id)
        .toArray()).length > 0;
    ) {
      await new MongoFingerprintQueue(this.c).requeue(
        ids.map((id) => id.toHexString()),
        now,
      );
      await this.c.nearFingerprints.deleteMany({ _id: { $in: ids } });
      count += ids.length;
    }
    return count;
  }

  async clear(): Promise<void> {
    await this.c.nearFingerprints.deleteMany({});
    await this.c.nearPairs.deleteMany({});
  }

  async forget(fileId: string): Promise<void> {
    const _id = new ObjectId(fileId);
    await this.c.nearFingerprints.deleteOne({ _id });
    // Pairs and reviews are keyed "<fileA>:<fileB>": the file's as A by a prefix of the key, as B by its index.
    await this.c.nearPairs.deleteMany({ _id: new RegExp(`^${fileId}:`) });
    await this.c.nearPairs.deleteMany({ fileB: _id });
    await this.c.nearReviews.deleteMany({
      $or: [{ _id: new RegExp(`^${fileId}:`) }, { _id: new RegExp(`:${fileId}$`) }],
    });
  }

  async pair(fileA: string, fileB: string): Promise<NearDuplicatePair | undefined> {
    const d = await this.c.nearPairs.findOne({ _id: `${fileA}:${fileB}` });
    if (!d) return undefined;
    const { _id, fileA: a, fileB: b, pages, ...rest } = d;
    return { ...rest, fileA: a.toHexString(), fileB: b.toHexString(), ...(pages && { pages }) };
  }

  async review(r: PairReview): Promise<void> {
    const { fileA, fileB, ...rest } = r;
    await this.c.nearReviews.replaceOne(
      { _id: `${fileA}:${fileB}` },
      { ...rest, fileA: new ObjectId(fileA), fileB: new ObjectId(fileB) },
      { upsert: true },
    );
  }

  async reopen(fileA: string, fileB: string): Promise<boolean> {
    return (await this.c.nearReviews.deleteOne({ _id: `${fileA}:${fileB}` })).deletedCount > 0;
  }

  async getReview(fileA: string, fileB: string): Promise<PairReview | undefined> {
    const d = await this.c.nearReviews.findOne({ _id: `${fileA}:${fileB}` });
    if (!d) return undefined;
    const { _id, fileA: a, fileB: b, ...rest } = d;
    return { ...rest, fileA: a.toHexString(), fileB: b.toHexString() };
  }

  async counts(): Promise<{ fingerprinted: number; skipped: number; pairs: number }> {
    const [all, skipped, pairs] = await Promise.all([
      this.c.nearFingerprints.countDocuments({}),
      this.c.nearFingerprints.countDocuments({ skipped: { $ne: null } }),
      this.c.nearPairs.countDocuments({}),
    ]);
    return { fingerprinted: all - skipped, skipped, pairs };
  }
}

const jobOf = (d: FingerprintJobDoc): FingerprintJob => ({
  fileId: d._id,
  state: d.state,
  attempts: d.attempts,
  dueAt: d.dueAt,
  error: d.error,
});

/** A job waiting from `now`, as a new or requeued file's. */
const queuedJob = (now: Date): Omit<FingerprintJobDoc, '_id'> => ({
  state: 'queued',
  attempts: 0,
  dueAt: now,
  holder: null,
  leaseUntil: null,
  error: null,
});

/** The fingerprinting queue: each job taken with one atomic findOneAndUpdate, so instances never take the same one. */
export class MongoFingerprintQueue implements FingerprintQueue {
  constructor(private readonly c: NearDuplicateCollections) {}

  async forget(fileId: string): Promise<void> {
    await this.c.fingerprintJobs.deleteOne({ _id: fileId });
  }

  async enqueue(fileIds: readonly string[], now: Date): Promise<void> {
    if (fileIds.length === 0) return;
    const job = queuedJob(now);
    await this.c.fingerprintJobs.bulkWrite(
      fileIds.map((id) => ({ updateOne: { filter: { _id: id }, update: { $setOnInsert: job }, upsert: true } })),
      { ordered: false },
    );
  }

  async requeue(fileIds: readonly string[], now: Date): Promise<void> {
    if (fileIds.length === 0) return;
    const job = queuedJob(now);
    await this.c.fingerprintJobs.bulkWrite(
      fileIds.map((id) => ({ replaceOne: { filter: { _id: id }, replacement: job, upsert: true } })),
      { ordered: false },
    );
  }

  async take(holder: string, now: Date, leaseMs: number, limit: number): Promise<FingerprintJob[]> {
    const taken: FingerprintJob[] = [];
    while (taken.length < limit) {
      const doc = await this.c.fingerprintJobs.findOneAndUpdate(
        {
          $or: [
            { state: 'queued', dueAt: { $lte: now } },
            { state: 'running', leaseUntil: { $lt: now } },
          ],
        },
        { $set: { state: 'running', holder, leaseUntil: new Date(now.getTime() + leaseMs) }, $inc: { attempts: 1 } },
        { sort: { dueAt: 1, _id: 1 }, returnDocument: 'after' },
      );
      if (!doc) break;
      taken.push(jobOf(doc));
    }
    return taken;
  }

  async done(fileId: string, holder: string): Promise<void> {
    await this.c.fingerprintJobs.deleteOne({ _id: fileId, holder, state: 'running' });
  }

  async fail(fileId: string, holder: string, error: string, retryAt: Date | null): Promise<void> {
    await this.c.fingerprintJobs.updateOne(
      { _id: fileId, holder, state: 'running' },
      {
        $set: {
          state: retryAt ? 'queued' : 'failed',
          error,
          holder: null,
          leaseUntil: null,
          ...(retryAt ? { dueAt: retryAt } : {}),
        },
      },
    );
  }

  async counts(now: Date): Promise<{ queued: number; running: number; failed: number }> {
    const [queued, running, failed] = await Promise.all([
      this.c.fingerprintJobs.countDocuments({
        $or: [{ state: 'queued' }, { state: 'running', leaseUntil: { $lt: now } }],
      }),
      this.c.fingerprintJobs.countDocuments({ state: 'running', leaseUntil: { $gte: now } }),
      this.c.fingerprintJobs.countDocuments({ state: 'failed' }),
    ]);
    return { queued, running, failed };
  }

  async failures(limit: number): Promise<FingerprintJob[]> {
    return (
      // due_order read backwards: a queue whose every file failed is not sorted for a page of them.
      (await this.c.fingerprintJobs.find({ state: 'failed' }).sort({ dueAt: -1, _id: -1 }).limit(limit).toArray()).map(
        jobOf,
      )
    );
  }
}
