import { ConflictError } from '../../errors.js';
import type { Account, AccountStore, ApiTokenRecord, ClaimRecord, ClaimStore, NewAccount, SessionRecord, SessionStore, TokenStore } from '../port.js';
import { isDuplicateKey, type Collections } from './collections.js';
import { accountFromDoc, recordFromDoc } from './mapping.js';

export class MongoAccountStore implements AccountStore {
  constructor(private readonly c: Collections) {}

  async create(a: NewAccount): Promise<void> {
    const { id, ...rest } = a;
    try {
      await this.c.accounts.insertOne({ _id: id, ...rest });
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError(`The username "${a.username}" is taken.`);
      throw err;
    }
  }

  async get(id: string): Promise<Account | undefined> {
    const doc = await this.c.accounts.findOne({ _id: id });
    return doc ? accountFromDoc(doc) : undefined;
  }

  async findByUsername(username: string): Promise<Account | undefined> {
    const doc = await this.c.accounts.findOne({ username });
    return doc ? accountFromDoc(doc) : undefined;
  }

  async list(): Promise<Account[]> {
    return (await this.c.accounts.find().sort({ username: 1 }).toArray()).map(accountFromDoc);
  }

  async count(): Promise<number> {
    return this.c.accounts.countDocuments();
  }

  async setPassword(id: string, passwordHash: string, mustChangePassword: boolean): Promise<void> {
    await this.c.accounts.updateOne({ _id: id }, { $set: { passwordHash, mustChangePassword }, $unset: { failedLogins: '', lockedUntil: '' } });
  }
}

export class MongoSessionStore implements SessionStore {
  constructor(private readonly c: Collections) {}

  async create(s: SessionRecord): Promise<void> {
    const { idHash, ...rest } = s;
    await this.c.sessions.insertOne({ _id: idHash, ...rest });
  }

  async get(idHash: string, now: Date): Promise<SessionRecord | undefined> {
    // The TTL index removes expired sessions eventually; the filter makes expiry exact.
    const doc = await this.c.sessions.findOne({ _id: idHash, expiresAt: { $gt: now } });
    if (!doc) return undefined;
    const { _id, ...rest } = doc;
    return { idHash: _id, ...rest };
  }

  async delete(idHash: string): Promise<void> {
    await this.c.sessions.deleteOne({ _id: idHash });
  }

  async deleteForAccount(accountId: string): Promise<void> {
    await this.c.sessions.deleteMany({ accountId });
  }

  async purgeExpired(now: Date): Promise<void> {
    await this.c.sessions.deleteMany({ expiresAt: { $lte: now } });
  }
}

export class MongoTokenStore implements TokenStore {
  constructor(private readonly c: Collections) {}

  async create(t: ApiTokenRecord): Promise<void> {
    const { id, ...rest } = t;
    await this.c.tokens.insertOne({ _id: id, ...rest });
  }

  async get(id: string): Promise<ApiTokenRecord | undefined> {
    const doc = await this.c.tokens.findOne({ _id: id });
    return doc ? recordFromDoc(doc) : undefined;
  }

  async list(): Promise<ApiTokenRecord[]> {
    return (await this.c.tokens.find().sort({ createdAt: 1 }).toArray()).map(recordFromDoc);
  }

  async revoke(id: string): Promise<boolean> {
    return (await this.c.tokens.deleteOne({ _id: id })).deletedCount > 0;
  }

  async revokeForAccount(accountId: string): Promise<number> {
    return (await this.c.tokens.deleteMany({ accountId })).deletedCount;
  }
}

export class MongoClaimStore implements ClaimStore {
  constructor(private readonly c: Collections) {}

  async create(claim: ClaimRecord): Promise<void> {
    const { id, ...rest } = claim;
    await this.c.claims.insertOne({ _id: id, ...rest });
  }

  async take(id: string): Promise<ClaimRecord | undefined> {
    const doc = await this.c.claims.findOneAndDelete({ _id: id });
    return doc ? recordFromDoc(doc) : undefined;
  }

  async countOutstanding(accountId: string, now: Date): Promise<number> {
    return this.c.claims.countDocuments({ accountId, expiresAt: { $gt: now } });
  }

  async purgeExpired(now: Date): Promise<void> {
    // The TTL index does this eventually; this keeps expiry exact on servers without one.
    await this.c.claims.deleteMany({ expiresAt: { $lte: now } });
  }
}
