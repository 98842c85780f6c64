import type { Db } from 'mongodb';
import { recordFromDoc } from '../mongo/documents.js';
import type { ClaimRecord, ClaimStore } from './port.js';

export interface ClaimDoc {
  _id: string;
  accountId: string;
  fileId: string;
  fileName: string;
  contentType: string;
  ranges: Array<{ start: number; end: number }>;
  expected: string[];
  expiresAt: Date;
}

export function claimCollections(db: Db) {
  return { claims: db.collection<ClaimDoc>('uploads.claims') };
}

export type ClaimCollections = ReturnType<typeof claimCollections>;

export async function createClaimIndexes(c: ClaimCollections): Promise<void> {
  await Promise.all([
    c.claims.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
    c.claims.createIndex({ accountId: 1, expiresAt: 1 }, { name: 'account_expiry' }),
  ]);
}

export class MongoClaimStore implements ClaimStore {
  constructor(private readonly c: ClaimCollections) {}

  async create(claim: ClaimRecord): Promise<void> {
    await this.createMany([claim]);
  }

  async createMany(claims: readonly ClaimRecord[]): Promise<void> {
    if (claims.length > 0) await this.c.claims.insertMany(claims.map(({ id, ...rest }) => ({ _id: id, ...rest })));
  }

  async take(id: string): Promise<ClaimRecord | undefined> {
    const doc = await this.c.claims.findOneAndDelete({ _id: id });
    return doc ? recordFromDoc(doc) : undefined;
  }

  async takeMany(ids: readonly string[]): Promise<Map<string, ClaimRecord>> {
    const taken = new Map<string, ClaimRecord>();
    // Each taken on its own, atomically (no transactions needed); the driver pipelines them.
    await Promise.all(
      [...new Set(ids)].map(async (id) => {
        const claim = await this.take(id);
        if (claim) taken.set(id, claim);
      }),
    );
    return taken;
  }

  async countOutstanding(accountId: string, now: Date): Promise<number> {
    return this.c.claims.countDocuments({ accountId, expiresAt: { $gt: now } });
  }

  async purgeExpired(now: Date): Promise<void> {
    // The TTL index does this eventually; this keeps expiry exact on servers without one.
    await this.c.claims.deleteMany({ expiresAt: { $lte: now } });
  }
}
