import { randomBytes } from 'node:crypto';
import type { Db, Filter } from 'mongodb';
import type { Unit } from '../../../shared/schemas.js';
import type { WithdrawalReason } from '../../../shared/withdrawals.js';
import { isDuplicateKey } from '../mongo/documents.js';
import type { ViewScope } from '../ledger/port.js';
import type { Person, WithdrawalRecord, WithdrawalState, WithdrawalStore } from './port.js';

/** One withdrawal; `OpenKey` (the upload's key) only while it is not restored: unique, so one open per upload. */
export interface WithdrawalDoc {
  _id: string;
  UploadKey: string;
  OpenKey?: string;
  Upload: { Account: Person; Unit: Unit; FileID: string; FileName: string; FileLength: number; At: Date };
  By: Person;
  At: Date;
  Reason: WithdrawalReason;
  Note: string | null;
  State: WithdrawalState;
  /**
   * Present while `withdrawing` and not cleared of holds: `true`, or the token of the `stopMany`
   * call removing it. Absent: cleared (and in documents written before holds were asked after).
   */
  Uncleared?: true | string;
  ChangedAt: Date;
  RestoredBy: Person | null;
  RestoredAt: Date | null;
  /** Absent before its purge. */
  PurgedBy?: Person | null;
  PurgedAt?: Date | null;
  /** Which `advanceMany` moved it last (a random token of that call). */
  MovedBy?: string;
}

export function withdrawalCollections(db: Db) {
  return { withdrawals: db.collection<WithdrawalDoc>('uploads.withdrawals') };
}

export type WithdrawalCollections = ReturnType<typeof withdrawalCollections>;

export async function createWithdrawalIndexes(c: WithdrawalCollections): Promise<void> {
  await Promise.all([
    c.withdrawals.createIndex({ OpenKey: 1 }, { name: 'open_upload', unique: true, sparse: true }),
    c.withdrawals.createIndex(
      { 'Upload.Unit.city': 1, 'Upload.Unit.county': 1, 'Upload.Unit.town': 1, At: -1 },
      { name: 'trash' },
    ),
    // `unfinished`: the states asked for, each a range of ChangedAt (ties by _id, few).
    c.withdrawals.createIndex({ State: 1, ChangedAt: 1 }, { name: 'unfinished' }),
    c.withdrawals.createIndex({ State: 1, At: 1 }, { name: 'expiring' }),
    c.withdrawals.createIndex({ 'Upload.FileID': 1 }, { name: 'file' }),
  ]);
}

const docOf = (r: WithdrawalRecord): WithdrawalDoc => ({
  _id: r.id,
  UploadKey: r.uploadKey,
  ...(r.state !== 'restored' && r.state !== 'disposed' && { OpenKey: r.uploadKey }),
  Upload: {
    Account: r.upload.account,
    Unit: r.upload.unit,
    FileID: r.upload.fileId,
    FileName: r.upload.fileName,
    FileLength: r.upload.fileLength,
    At: r.upload.at,
  },
  By: r.withdrawnBy,
  At: r.withdrawnAt,
  Reason: r.reason,
  Note: r.note,
  State: r.state,
  ...(!r.cleared && { Uncleared: true as const }),
  ChangedAt: r.changedAt,
  RestoredBy: r.restoredBy,
  RestoredAt: r.restoredAt,
  PurgedBy: r.purgedBy,
  PurgedAt: r.purgedAt,
});

const person = (p: Person): Person => ({ id: p.id, username: p.username });

const recordOf = (d: WithdrawalDoc): WithdrawalRecord => ({
  id: d._id,
  uploadKey: d.UploadKey,
  upload: {
    account: person(d.Upload.Account),
    unit: d.Upload.Unit,
    fileId: d.Upload.FileID,
    fileName: d.Upload.FileName,
    fileLength: d.Upload.FileLength,
    at: d.Upload.At,
  },
  withdrawnBy: person(d.By),
  withdrawnAt: d.At,
  reason: d.Reason,
  note: d.Note,
  state: d.State,
  cleared: d.Uncleared === undefined,
  changedAt: d.ChangedAt,
  restoredBy: d.RestoredBy && person(d.RestoredBy),
  restoredAt: d.RestoredAt,
  purgedBy: d.PurgedBy ? person(d.PurgedBy) : null,
  purgedAt: d.PurgedAt ?? null,
});

function scopeFilter(scope: ViewScope | undefined): Filter<WithdrawalDoc> {
  if (!scope) return {};
  if ('unitId' in scope) return { 'Upload.Unit.id': scope.unitId };
  const { city, county, town } = scope.subtree;
  return {
    'Upload.Unit.city': city,
    ...(county !== undefined && { 'Upload.Unit.county': county }),
    ...(town !== undefined && { 'Upload.Unit.town': town }),
  };
}

/** Every write is one document's: a withdrawal's steps are finished by the service from its state. */
export class MongoWithdrawalStore implements WithdrawalStore {
  constructor(private readonly c: WithdrawalCollections) {}

  async open(r: WithdrawalRecord): Promise<{ record: WithdrawalRecord; opened: boolean }> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.c.withdrawals.insertOne(docOf(r));
        return { record: r, opened: true };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const open = await this.c.withdrawals.findOne({ OpenKey: r.uploadKey });
      if (open) return { record: recordOf(open), opened: false };
      // Restored between the insert and the read: try again. The same id twice is a retry.
      const same = await this.c.withdrawals.findOne({ _id: r.id });
      if (same) return { record: recordOf(same), opened: false };
      if (attempt >= 3) throw new Error(`upload ${r.uploadKey}: its withdrawals keep changing`);
    }
  }

  async openMany(records: readonly WithdrawalRecord[]): Promise<Array<{ record: WithdrawalRecord; opened: boolean }>> {
    const answers: Array<{ record: WithdrawalRecord; opened: boolean }> = [];
    for (let at = 0; at < records.length; at += 1000) {
      const some = records.slice(at, at + 1000);
      const refused = new Set<number>();
      try {
        await this.c.withdrawals.insertMany(some.map(docOf), { ordered: false });
      } catch (err) {
        // Unordered: the others were inserted. Those the unique index refused (an upload with a
        // withdrawal open, or a retry of the same id) are answered as `open` answers them.
        const errors = (err as { writeErrors?: Array<{ index: number; code?: number }> }).writeErrors;
        if (!errors?.length || !errors.every(isDuplicateKey)) throw err;
        for (const e of errors) refused.add(e.index);
      }
      for (const [i, r] of some.entries())
        answers.push(refused.has(i) ? await this.open(r) : { record: r, opened: true });
    }
    return answers;
  }

  async advanceMany(
    ids: readonly string[],
    from: WithdrawalState,
    to: WithdrawalState,
    at: Date,
    by?: Person,
  ): Promise<Set<string>> {
    const moved = new Set<string>();
    for (let i = 0; i < ids.length; i += 1000) {
      const some = ids.slice(i, i + 1000);
      // Each document moved once, by its own conditional update; the token tells this call's from
      // those another request moved (the one that moves a withdrawal writes its audit event).
      const token = randomBytes(8).toString('hex');
      await this.c.withdrawals.updateMany(
        { _id: { $in: some }, State: from },
        {
          $set: {
            State: to,
            ChangedAt: at,
            MovedBy: token,
            ...(by &&
              (to === 'purging' ? { PurgedBy: person(by), PurgedAt: at } : { RestoredBy: person(by), RestoredAt: at })),
            ...(to === 'purging' && { Uncleared: true as const }),
          },
          ...(to === 'restored' && { $unset: { OpenKey: '' as const } }),
        },
      );
      const docs = await this.c.withdrawals
        .find({ _id: { $in: some }, MovedBy: token }, { projection: { _id: 1 } })
        .toArray();
      for (const d of docs) moved.add(d._id);
    }
    return moved;
  }

  async clearMany(ids: readonly string[]): Promise<Set<string>> {
    const cleared = new Set<string>();
    for (let at = 0; at < ids.length; at += 1000) {
      const some = ids.slice(at, at + 1000);
      // One document's update each: a stop marks `Uncleared` with its token first, and is then not cleared.
      await this.c.withdrawals.updateMany(
        { _id: { $in: some }, State: 'withdrawing', Uncleared: true },
        { $unset: { Uncleared: '' } },
      );
      const docs = await this.c.withdrawals
        .find({ _id: { $in: some }, State: 'withdrawing', Uncleared: { $exists: false } }, { projection: { _id: 1 } })
        .toArray();
      for (const d of docs) cleared.add(d._id);
    }
    return cleared;
  }

  async stopMany(ids: readonly string[]): Promise<Set<string>> {
    const stopped = new Set<string>();
    for (let at = 0; at < ids.length; at += 1000) {
      const some = ids.slice(at, at + 1000);
      // Marked with this call's token (from then on no clear takes them), then removed: a crash
      // between leaves them marked, and the next stop (the sweep's) takes them.
      const token = randomBytes(8).toString('hex');
      await this.c.withdrawals.updateMany(
        { _id: { $in: some }, State: 'withdrawing', Uncleared: { $exists: true } },
        { $set: { Uncleared: token } },
      );
      const docs = await this.c.withdrawals
        .find({ _id: { $in: some }, Uncleared: token }, { projection: { _id: 1 } })
        .toArray();
      if (docs.length === 0) continue;
      await this.c.withdrawals.deleteMany({ _id: { $in: docs.map((d) => d._id) }, Uncleared: token });
      for (const d of docs) stopped.add(d._id);
    }
    return stopped;
  }

  async clearPurge(id: string): Promise<boolean> {
    // One document's update: a stop needs `Uncleared` present, so of the two racing one applies.
    await this.c.withdrawals.updateOne({ _id: id, State: 'purging', Uncleared: true }, { $unset: { Uncleared: '' } });
    return (
      (await this.c.withdrawals.countDocuments({ _id: id, State: 'purging', Uncleared: { $exists: false } })) === 1
    );
  }

  async stopPurge(id: string, at: Date): Promise<boolean> {
    const { modifiedCount } = await this.c.withdrawals.updateOne(
      { _id: id, State: 'purging', Uncleared: { $exists: true } },
      { $set: { State: 'withdrawn', ChangedAt: at, PurgedBy: null, PurgedAt: null }, $unset: { Uncleared: '' } },
    );
    return modifiedCount === 1;
  }

  async getMany(ids: readonly string[]): Promise<Map<string, WithdrawalRecord>> {
    const found = new Map<string, WithdrawalRecord>();
    const unique = [...new Set(ids)];
    for (let at = 0; at < unique.length; at += 1000) {
      const docs = await this.c.withdrawals.find({ _id: { $in: unique.slice(at, at + 1000) } }).toArray();
      for (const doc of docs) found.set(doc._id, recordOf(doc));
    }
    return found;
  }

  async advance(id: string, from: WithdrawalState, to: WithdrawalState, at: Date, by?: Person): Promise<boolean> {
    const { modifiedCount } = await this.c.withdrawals.updateOne(
      { _id: id, State: from },
      {
        $set: {
          State: to,
          ChangedAt: at,
          ...(by &&
            (to === 'purging' ? { PurgedBy: person(by), PurgedAt: at } : { RestoredBy: person(by), RestoredAt: at })),
          // A purge begins not cleared of holds (clearPurge, stopPurge).
          ...(to === 'purging' && { Uncleared: true as const }),
        },
        ...(to === 'restored' && { $unset: { OpenKey: '' as const } }),
      },
    );
    return modifiedCount === 1;
  }

  async close(id: string, at: Date): Promise<boolean> {
    const { modifiedCount } = await this.c.withdrawals.updateOne(
      { _id: id, State: { $nin: ['restored', 'disposed'] } },
      { $set: { State: 'disposed', ChangedAt: at }, $unset: { OpenKey: '' } },
    );
    return modifiedCount === 1;
  }

  async drop(id: string): Promise<void> {
    await this.c.withdrawals.deleteOne({ _id: id, State: 'withdrawing' });
  }

  async get(id: string): Promise<WithdrawalRecord | undefined> {
    const doc = await this.c.withdrawals.findOne({ _id: id });
    return doc ? recordOf(doc) : undefined;
  }

  async openOf(uploadKeys: readonly string[]): Promise<Map<string, WithdrawalRecord>> {
    const found = new Map<string, WithdrawalRecord>();
    const unique = [...new Set(uploadKeys)];
    for (let at = 0; at < unique.length; at += 1000) {
      const docs = await this.c.withdrawals.find({ OpenKey: { $in: unique.slice(at, at + 1000) } }).toArray();
      for (const doc of docs) found.set(doc.UploadKey, recordOf(doc));
    }
    return found;
  }

  async trash(
    scope: ViewScope | undefined,
    page: { limit: number; offset: number },
  ): Promise<{ items: WithdrawalRecord[]; total: number }> {
    const filter: Filter<WithdrawalDoc> = {
      OpenKey: { $exists: true },
      State: { $ne: 'purged' },
      ...scopeFilter(scope),
    };
    const [docs, total] = await Promise.all([
      this.c.withdrawals.find(filter).sort({ At: -1, _id: 1 }).skip(page.offset).limit(page.limit).toArray(),
      this.c.withdrawals.countDocuments(filter),
    ]);
    return { items: docs.map(recordOf), total };
  }

  async unfinished(
    states: readonly WithdrawalState[],
    before: Date,
    limit: number,
    after?: Pick<WithdrawalRecord, 'id' | 'changedAt'>,
  ): Promise<WithdrawalRecord[]> {
    if (states.length === 0) return [];
    const docs = await this.c.withdrawals
      .find({
        State: { $in: [...states] },
        ChangedAt: { $lt: before },
        ...(after && {
          $or: [{ ChangedAt: { $gt: after.changedAt } }, { ChangedAt: after.changedAt, _id: { $gt: after.id } }],
        }),
      })
      .sort({ ChangedAt: 1, _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map(recordOf);
  }

  async expired(before: Date, limit: number): Promise<WithdrawalRecord[]> {
    const docs = await this.c.withdrawals
      .find({ State: 'withdrawn', At: { $lt: before } })
      .sort({ At: 1 })
      .limit(limit)
      .toArray();
    return docs.map(recordOf);
  }

  async ofFile(fileId: string): Promise<WithdrawalRecord[]> {
    const docs = await this.c.withdrawals
      .find({ 'Upload.FileID': fileId, OpenKey: { $exists: true }, State: { $ne: 'purged' } })
      .sort({ At: 1 })
      .toArray();
    return docs.map(recordOf);
  }
}
