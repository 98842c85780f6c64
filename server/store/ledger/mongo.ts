import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ObjectId, type Filter } from 'mongodb';
import type { AuditCollections, AuditDoc } from '../mongo/audit-documents.js';
import {
  unitFromLedgerDoc,
  type LedgerCollections,
  type LedgerDoc,
  type NameDoc,
  type UploadStateDoc,
} from '../mongo/ledger-documents.js';
import { insertNames, MongoTotals, nameDoc } from './mongo-totals.js';
import { subtreeMatch, viewScopeMatch } from '../mongo/scopes.js';
import { isDuplicateKey, objectIdOf } from '../mongo/documents.js';
import type {
  CountedUpload,
  FileUpload,
  FileUploadState,
  Ledger,
  LedgerChange,
  LedgerEntry,
  Purge,
  Restoral,
  Reversal,
  UploadAction,
  Uploader,
  UploaderScope,
  ViewScope,
} from './port.js';

/** Changes of different files made side by side by `reverseMany` and `restoreMany`. */
const CHANGES_AT_ONCE = 16;

/** The document that marks `userInfo.names` as holding the names of entries counted before it existed. */
const EARLIER_NAMES_REMEMBERED = 'earlier-names-remembered';

/**
 * How long a request may keep a file's lease (its counts and changes one after another) before
 * another request takes the file over: a count or a change takes tens of milliseconds, a change of
 * a file with thousands of uploads a second or two; a process killed holding the lease delays the
 * file's next count or change by up to this long.
 */
const FILE_LEASE_MS = 10_000;
/** How long a request waits for a file's lease before it fails (then retried by its client). */
const FILE_LEASE_WAIT_MS = 4 * FILE_LEASE_MS;

/** The key recorded for files whose uploads were counted before `userInfo.firstUploads` existed. */
const EARLIER_UPLOADS = 'earlier-uploads';
/** The document that marks `userInfo.firstUploads` as filled in for those files. */
const EARLIER_UPLOADS_CLAIMED = 'earlier-uploads-claimed';

export async function createLedgerIndexes(c: LedgerCollections): Promise<void> {
  await Promise.all([
    c.ledger.createIndex(
      { UserID: 1, 'UploadGeography.UploadGeoNameID': 1, UploadFileID: 1 },
      { unique: true, name: 'uploader_unit_file' },
    ),
    c.ledger.createIndex({ UploadFileID: 1 }, { name: 'file' }),
    c.ledger.createIndex({ 'UploadGeography.UploadGeoNameID': 1, LastUploadTime: -1 }, { name: 'unit_recent' }),
    c.ledger.createIndex(
      { UploadFileID: 1, 'UploadGeoAddress.CityName': 1, 'UploadGeoAddress.CountyName': 1 },
      { name: 'file_county' },
    ),
    c.uploadDays.createIndex({ UploadFileID: 1, UnitID: 1, Day: 1 }, { unique: true, name: 'file_unit_day' }),
    // A unit's names (its searches), a subtree's, and a page's files' names.
    c.names.createIndex({ UnitID: 1, UploadFileID: 1 }, { name: 'unit_file' }),
    c.names.createIndex({ CityName: 1, CountyName: 1, TownName: 1 }, { name: 'subtree' }),
    c.names.createIndex({ UploadFileID: 1 }, { name: 'file' }),
    // 本单位文件's folders: a unit's names under a path, in name order (server/store/unit-files).
    c.names.createIndex({ UnitID: 1, Name: 1 }, { name: 'unit_name' }),
    // The whole archive's folders: the names under a path, whatever their unit.
    c.names.createIndex({ Name: 1 }, { name: 'name' }),
    // What the reports read the entries and the day tallies through (created by the reports
    // until 2026-11-28, under the same names).
    c.ledger.createIndex({ UploadCount: 1 }, { name: 'repeats' }),
    // The repeat uploaders' filter by login (`repeats` alone would read every repeated entry).
    c.ledger.createIndex({ UserName: 1, UploadCount: 1 }, { name: 'user_repeats' }),
    c.ledger.createIndex(
      { 'UploadGeoAddress.CityName': 1, 'UploadGeoAddress.CountyName': 1, 'UploadGeoAddress.TownName': 1 },
      { name: 'subtree' },
    ),
    c.ledger.createIndex({ UploadFileID: 1, 'UploadGeography.UploadGeoNameID': 1 }, { name: 'file_unit' }),
    c.uploadDays.createIndex({ Day: 1 }, { name: 'day' }),
    c.uploadDays.createIndex({ CityName: 1, CountyName: 1, TownName: 1, Day: 1 }, { name: 'subtree_day' }),
    // Changes to counted uploads that a crash interrupted (the field exists only until each is done).
    c.uploadStates.createIndex({ 'Pending.At': 1 }, { sparse: true, name: 'pending' }),
    // First-upload records the sweep has not confirmed yet (the field exists only until it has).
    c.firstUploads.createIndex({ Taken: 1 }, { sparse: true, name: 'taken' }),
  ]);
}

export function ledgerEntryFromDoc(doc: LedgerDoc): LedgerEntry {
  return {
    userId: doc.UserID,
    userName: doc.UserName,
    unit: unitFromLedgerDoc(doc),
    fileId: doc.UploadFileID.toHexString(),
    uploadTime: doc.UploadTime,
    lastUploadTime: doc.LastUploadTime,
    uploadFileName: doc.UploadFileName,
    lastUploadFileName: doc.LastUploadFileName,
    lastContentType: doc.LastUploadContentType,
    uploadCount: doc.UploadCount,
  };
}

/**
 * Counting without transactions: each upload action is counted in single-document steps that
 * can all be run again, so that a crash between any two is finished by a retry, a restart or the
 * sweep, never counted twice (docs/decisions/counting-once.md):
 *   1. its audit event, `_id` = the action's key, inserted once with `pending` (a duplicate key
 *      means it was recorded before: it is answered, or finished from what that event recorded);
 *   2. the ledger entry: UploadCount + 1 unless the entry's AppliedKeys has the key (2 to 3: MongoTotals.apply);
 *   2b. the upload's name in `userInfo.names`, inserted only if not there (nothing to count);
 *   3. the day's tally, the same way;
 *   4. the event: `pending` removed and the answer kept, for retries.
 */
export class MongoLedger implements Ledger {
  private readonly totals: MongoTotals;

  /**
   * @param options.leaseMs how long a file's lease lasts (FILE_LEASE_MS); the tests' dying
   *   ledgers take 0, a process whose lease has run out when it dies.
   */
  constructor(
    private readonly c: LedgerCollections & AuditCollections,
    private readonly options: { leaseMs?: number } = {},
  ) {
    this.totals = new MongoTotals(c);
  }

  /**
   * Runs `work` holding the file's lease: the counts and changes of one file's uploads, made by
   * any request or process, one after another (each decides who holds the file's bytes from what
   * the others wrote, so two interleaved would decide from half-written states). One insert takes
   * the lease; a request holding it is waited for; a lease past its `Until` (its process killed,
   * or its request failed: it ends its lease at once) is taken over, and `work` is told so: the
   * file may have a count or a change under way that it must finish first.
   */
  private async withFile<T>(fileId: string, work: (tookOver: boolean) => Promise<T>): Promise<T> {
    const leaseMs = this.options.leaseMs ?? FILE_LEASE_MS;
    const token = randomUUID();
    const giveUp = Date.now() + FILE_LEASE_WAIT_MS;
    let tookOver = false;
    for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
      try {
        await this.c.fileLeases.insertOne({ _id: fileId, Token: token, Until: new Date(Date.now() + leaseMs) });
        break;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const held = await this.c.fileLeases.findOne({ _id: fileId });
      if (held && held.Until.getTime() <= Date.now()) {
        // Whoever takes it now (this request or another that saw it too) finishes what it left.
        tookOver = true;
        await this.c.fileLeases.deleteOne({ _id: fileId, Token: held.Token });
        continue;
      }
      if (Date.now() > giveUp) throw new Error(`file ${fileId}: its uploads are being changed by another request`);
      if (held) await sleep(wait);
    }
    let result: T;
    try {
      result = await work(tookOver);
    } catch (err) {
      // What it left under way is for the next request to finish: the lease ends now.
      await this.c.fileLeases
        .updateOne({ _id: fileId, Token: token }, { $set: { Until: new Date(0) } })
        .catch(() => {});
      throw err;
    }
    await this.c.fileLeases.deleteOne({ _id: fileId, Token: token });
    return result;
  }

  /**
   * Finishes every count and change of the file's uploads left under way (a crash, a failed
   * request), holding the file's lease: a count's and a change's decisions read the file's uploads
   * as the totals have them.
   */
  private async finishFile(fileId: string): Promise<void> {
    const counts = await this.c.audit.find({ fileId, upload: { $exists: true }, pending: true }).toArray();
    for (const doc of counts) await this.finish(doc, true);
    await this.finishChangesOfFile(fileId);
  }

  async count(action: UploadAction): Promise<CountedUpload> {
    return this.withFile(action.record.fileId, async (tookOver) => {
      if (tookOver) await this.finishFile(action.record.fileId);
      return this.countHolding(action);
    });
  }

  /** `count`, the file's lease held. */
  private async countHolding(action: UploadAction): Promise<CountedUpload> {
    const { record: r } = action;
    // Every action takes part (an instant upload too), so that "first" means first counted.
    const first = await this.firstCounted(r.fileId, action.key);
    const stored = first && r.carriedBytes;
    // Counted first into a file whose uploads all left the counts (withdrawn, the bytes kept for
    // the trash): if an upload of it ever stored the bytes, this one holds them now.
    const holds = first && !r.carriedBytes && (await this.storedEver(r.fileId));
    const event = action.event(stored);
    const status = stored ? 'stored' : action.statusUnlessStored;
    const doc: AuditDoc = {
      ...event,
      _id: action.key,
      order: new ObjectId(),
      upload: {
        contentType: r.contentType,
        day: r.day,
        fileLength: r.fileLength,
        stored,
        status,
        ...(holds && { holds: true as const }),
      },
      pending: true,
    };
    try {
      await this.c.audit.insertOne(doc);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const earlier = (await this.countedHolding(action.key))!;
      // The key was counted for another file (a client reusing it, refused by the caller), or its
      // upload was reversed since (which gave the record back): the record taken for this file
      // now is given back, for the next upload of it to take.
      if (
        earlier.fileId !== r.fileId ||
        (await this.c.uploadStates.findOne({ _id: action.key, State: 'reversed' }, { projection: { _id: 1 } }))
      )
        await this.c.firstUploads.deleteOne({ _id: new ObjectId(r.fileId), Key: action.key });
      return earlier;
    }
    return this.finish(doc, false);
  }

  /**
   * Whether the action under `key` is the file's first upload to be counted: it takes the file's
   * first-upload record, or took it before (a retry after a crash). One upsert, atomic on its own.
   */
  private async firstCounted(fileId: string, key: string): Promise<boolean> {
    const _id = new ObjectId(fileId);
    for (let attempt = 0; ; attempt++) {
      try {
        const doc = await this.c.firstUploads.findOneAndUpdate(
          { _id },
          { $setOnInsert: { Key: key, Taken: new Date() } },
          { upsert: true, returnDocument: 'after' },
        );
        return doc!.Key === key;
      } catch (err) {
        // Two upserts raced to insert: the loser reads the winner's record.
        if (!isDuplicateKey(err) || attempt >= 3) throw err;
      }
    }
  }

  /** Whether an upload of the file was ever counted as storing its bytes. */
  private async storedEver(fileId: string): Promise<boolean> {
    const found = await this.c.audit.findOne({ fileId, 'upload.stored': true }, { projection: { _id: 1 } });
    return found !== null;
  }

  /**
   * Records the files counted before `userInfo.firstUploads` existed as stored by those earlier
   * uploads, once (a data directory upgraded in place): no new upload of them counts as storing them.
   */
  async claimEarlierFirstUploads(): Promise<void> {
    if (await this.c.firstUploads.findOne({ _id: EARLIER_UPLOADS_CLAIMED })) return;
    const files = this.c.ledger.aggregate<{ _id: ObjectId }>([{ $group: { _id: '$UploadFileID' } }]);
    let batch: ObjectId[] = [];
    const claim = async () => {
      if (batch.length === 0) return;
      await this.c.firstUploads.bulkWrite(
        batch.map((_id) => ({
          updateOne: { filter: { _id }, update: { $setOnInsert: { Key: EARLIER_UPLOADS } }, upsert: true },
        })),
        { ordered: false },
      );
      batch = [];
    };
    for await (const { _id } of files) {
      batch.push(_id);
      if (batch.length === 1000) await claim();
    }
    await claim();
    await this.c.firstUploads.updateOne(
      { _id: EARLIER_UPLOADS_CLAIMED },
      { $setOnInsert: { Key: EARLIER_UPLOADS } },
      { upsert: true },
    );
  }

  /**
   * Remembers the names the entries counted before `userInfo.names` existed kept (first and last),
   * once (a database upgraded in place); safe to run again if interrupted.
   */
  async rememberEarlierNames(): Promise<void> {
    if (await this.c.names.findOne({ _id: EARLIER_NAMES_REMEMBERED })) return;
    const entries = this.c.ledger.find(
      {},
      {
        projection: {
          UploadGeography: 1,
          UploadGeoAddress: 1,
          UploadFileID: 1,
          UploadFileName: 1,
          LastUploadFileName: 1,
          UploadTime: 1,
          LastUploadTime: 1,
        },
      },
    );
    let batch: NameDoc[] = [];
    const remember = async () => {
      if (batch.length === 0) return;
      await insertNames(this.c.names, batch);
      batch = [];
    };
    for await (const e of entries) {
      const unit = unitFromLedgerDoc(e);
      batch.push(nameDoc(unit, e.UploadFileID, e.UploadFileName, e.UploadTime));
      batch.push(nameDoc(unit, e.UploadFileID, e.LastUploadFileName, e.LastUploadTime));
      if (batch.length >= 1000) await remember();
    }
    await remember();
    await this.c.names.updateOne(
      { _id: EARLIER_NAMES_REMEMBERED },
      { $setOnInsert: { Name: EARLIER_NAMES_REMEMBERED } },
      { upsert: true },
    );
  }

  async countMany(actions: readonly UploadAction[]): Promise<CountedUpload[]> {
    // One at a time, in order: without transactions a batch is no more atomic than its parts.
    const counts: CountedUpload[] = [];
    for (const action of actions) counts.push(await this.count(action));
    return counts;
  }

  async counted(key: string): Promise<CountedUpload | undefined> {
    const doc = await this.c.audit.findOne({ _id: key });
    if (!doc?.upload) return undefined;
    return doc.pending ? this.finishAlone(doc) : countedFromDoc(doc, doc.upload.uploadCount!, true);
  }

  /** `counted` for a request holding the lease of the file the key's upload is of (or another: a key reused). */
  private async countedHolding(key: string): Promise<CountedUpload | undefined> {
    const doc = await this.c.audit.findOne({ _id: key });
    if (!doc?.upload) return undefined;
    return doc.pending ? this.finish(doc, true) : countedFromDoc(doc, doc.upload.uploadCount!, true);
  }

  /** A count left under way finished, the file's lease taken (once taken, it may have been finished meanwhile). */
  private finishAlone(doc: AuditDoc): Promise<CountedUpload> {
    return this.withFile(doc.fileId!, async (tookOver) => {
      if (tookOver) await this.finishFile(doc.fileId!);
      const now = (await this.c.audit.findOne({ _id: doc._id }))!;
      return now.pending ? this.finish(now, true) : countedFromDoc(now, now.upload!.uploadCount!, true);
    });
  }

  async countedMany(keys: readonly string[]): Promise<Map<string, CountedUpload>> {
    const found = new Map<string, CountedUpload>();
    const unique = [...new Set(keys)];
    for (let at = 0; at < unique.length; at += 1000) {
      const docs = await this.c.audit.find({ _id: { $in: unique.slice(at, at + 1000) } }).toArray();
      for (const doc of docs) {
        if (!doc.upload) continue;
        found.set(
          String(doc._id),
          doc.pending ? await this.finishAlone(doc) : countedFromDoc(doc, doc.upload.uploadCount!, true),
        );
      }
    }
    return found;
  }

  async finishInterrupted(before: Date): Promise<number> {
    return (
      (await this.finishCounts(before)) + (await this.finishChanges(before)) + (await this.confirmFirstUploads(before))
    );
  }

  /**
   * The first-upload records taken before `before` (the sparse index `taken`), each confirmed or
   * given back, the file's lease held: kept if its count's event is recorded for the file (its
   * `Taken` removed); given back if there is none (the process died between the two writes and
   * the client did not retry: the next upload of the file takes it), or it is another file's (a
   * key reused), or the action was reversed and no entry of the file is left (as a reversal's
   * settling gives it back). A count still pending waits for the next sweep. Returns how many
   * were given back.
   */
  private async confirmFirstUploads(before: Date): Promise<number> {
    let givenBack = 0;
    for (;;) {
      const records = await this.c.firstUploads
        .find({ Taken: { $lt: before } })
        .limit(100)
        .toArray();
      let confirmed = 0;
      for (const record of records) {
        const fileId = record._id instanceof ObjectId ? record._id.toHexString() : String(record._id);
        const outcome = await this.withFile(fileId, async (tookOver) => {
          if (tookOver) await this.finishFile(fileId);
          return this.confirmFirstUpload(record._id as ObjectId, record.Key);
        });
        if (outcome === 'given back') givenBack++;
        if (outcome !== 'pending') confirmed++;
      }
      // Counts still pending stay marked: a batch of only those would be read again at once.
      if (records.length < 100 || confirmed === 0) return givenBack;
    }
  }

  /** One first-upload record confirmed or given back (`confirmFirstUploads`), the file's lease held. */
  private async confirmFirstUpload(_id: ObjectId, key: string): Promise<'kept' | 'given back' | 'pending'> {
    const mine = { _id, Key: key, Taken: { $exists: true } };
    const event = await this.c.audit.findOne({ _id: key }, { projection: { fileId: 1, upload: 1, pending: 1 } });
    if (event?.pending && event.fileId === _id.toHexString()) return 'pending';
    const orphan =
      !event?.upload ||
      event.fileId !== _id.toHexString() ||
      ((await this.c.uploadStates.findOne({ _id: key, State: 'reversed' }, { projection: { _id: 1 } })) !== null &&
        (await this.c.ledger.findOne({ UploadFileID: _id }, { projection: { _id: 1 } })) === null);
    if (orphan) return (await this.c.firstUploads.deleteOne(mine)).deletedCount === 1 ? 'given back' : 'kept';
    await this.c.firstUploads.updateOne(mine, { $unset: { Taken: '' } });
    return 'kept';
  }

  /** Changes (reversals, restores) begun before `before` and interrupted. */
  private async finishChanges(before: Date): Promise<number> {
    let finished = 0;
    for (;;) {
      const states = await this.c.uploadStates
        .find({ 'Pending.At': { $lt: before } })
        .limit(100)
        .toArray();
      for (const state of states) {
        const event = await this.c.audit.findOne({ _id: state._id }, { projection: { fileId: 1 } });
        if (!event?.fileId) {
          await this.finishChange(state);
          continue;
        }
        await this.withFile(event.fileId, () => this.finishFile(event.fileId!));
      }
      finished += states.length;
      if (states.length < 100) return finished;
    }
  }

  /** Counts recorded before `before` and interrupted. */
  private async finishCounts(before: Date): Promise<number> {
    let finished = 0;
    for (;;) {
      const docs = await this.c.audit
        .find({ pending: true, at: { $lt: before } })
        .limit(100)
        .toArray();
      for (const doc of docs) await this.finishAlone(doc);
      finished += docs.length;
      if (docs.length < 100) return finished;
    }
  }

  /**
   * Reversal without transactions, in single-document steps that can all be run again:
   *   1. the action's state (`userInfo.uploads`, `_id` = its key): 'reversed', with the change's
   *      key recorded and pending, taken by one conditional upsert (another reversal found there
   *      means it was reversed already);
   *   2. who holds the file's bytes before and after it, decided once (`Pending.Holder`);
   *   3. the totals take its upload (entry, day's tally), once per change (MongoTotals.take);
   *   4. the change's step: 'applied';
   *   5. the totals settle: what is left with no upload goes, first and last upload, name, the
   *      file's first-upload record (MongoTotals.settle), the holder moved (MongoTotals.moveHolder);
   *   6. the change done (`Pending` removed).
   * A retry of the same change key, or the sweep (finishInterrupted), finishes an interrupted one.
   */
  async reverse(actionKey: string, reversalKey: string): Promise<Reversal> {
    const done = await this.change(actionKey, reversalKey, 'reversed');
    // A purged action is reversed (a reversal's filter never matches it).
    return done === 'changed' ? 'reversed' : done === 'unchanged' || done === 'purged' ? 'already reversed' : done;
  }

  /**
   * A restore, in the steps of a reversal: the state 'counted' again (a conditional update of a
   * reversed action's state), the holder decided, the totals given the upload back (MongoTotals.give),
   * 'applied', settled (MongoTotals.settleRestore, moveHolder), done.
   */
  async restore(actionKey: string, restoreKey: string): Promise<Restoral> {
    const done = await this.change(actionKey, restoreKey, 'restored');
    return done === 'changed' ? 'restored' : done === 'unchanged' ? 'not reversed' : done;
  }

  async reverseMany(changes: readonly LedgerChange[]): Promise<Reversal[]> {
    return this.changeMany(changes, (c) => this.reverse(c.actionKey, c.changeKey));
  }

  async restoreMany(changes: readonly LedgerChange[]): Promise<Restoral[]> {
    return this.changeMany(changes, (c) => this.restore(c.actionKey, c.changeKey));
  }

  /**
   * Many changes, each by the single-document steps of one (`change`): as safe against a crash,
   * and made once by its key, as each alone. Changes of different files write different documents
   * (entries, tallies, names, first-upload records, the actions' states are all a file's own), so
   * they run side by side, CHANGES_AT_ONCE at a time, their round trips overlapping; the changes
   * of one file (its holder is decided from all its uploads) one after another, in the order given.
   */
  private async changeMany<A>(changes: readonly LedgerChange[], one: (c: LedgerChange) => Promise<A>): Promise<A[]> {
    const files = new Map<string, string>();
    const keys = [...new Set(changes.map((c) => c.actionKey))];
    for (let at = 0; at < keys.length; at += 1000) {
      const events = await this.c.audit
        .find({ _id: { $in: keys.slice(at, at + 1000) } }, { projection: { _id: 1, fileId: 1 } })
        .toArray();
      for (const e of events) if (e.fileId) files.set(String(e._id), e.fileId);
    }
    // Each file's changes in order (an action unknown here is its own: it changes nothing).
    const lines = new Map<string, number[]>();
    changes.forEach((c, i) => {
      const file = files.get(c.actionKey) ?? `action:${c.actionKey}`;
      (lines.get(file) ?? lines.set(file, []).get(file)!).push(i);
    });
    const answers: A[] = new Array<A>(changes.length);
    const queue = [...lines.values()];
    let failure: Error | undefined;
    const worker = async () => {
      try {
        for (let line = queue.shift(); line; line = queue.shift())
          for (const i of line) answers[i] = await one(changes[i]!);
      } catch (err) {
        // No change begins after a failure; those under way end (each is finished by a retry).
        failure ??= err instanceof Error ? err : new Error('a change failed', { cause: err });
        queue.length = 0;
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHANGES_AT_ONCE, queue.length) }, worker));
    if (failure !== undefined) throw failure;
    return answers;
  }

  /**
   * A purge: one conditional write of the reversed action's state (no change under way, no purge
   * yet), which a restore's own conditional write excludes: of the two racing, one wins.
   */
  async purge(actionKey: string, purgeKey: string): Promise<Purge> {
    const counted = await this.c.audit.findOne({ _id: actionKey }, { projection: { upload: 1, fileId: 1 } });
    if (!counted?.upload) return 'not counted';
    // Its change under way, if any, is finished under the file's lease.
    return this.withFile(counted.fileId!, async (tookOver) => {
      if (tookOver) await this.finishFile(counted.fileId!);
      return this.purgeHolding(actionKey, purgeKey);
    });
  }

  /** `purge`, the file's lease held. */
  private async purgeHolding(actionKey: string, purgeKey: string): Promise<Purge> {
    for (let attempt = 0; ; attempt++) {
      let state = await this.c.uploadStates.findOne({ _id: actionKey });
      if (state?.Pending) {
        await this.finishChange(state);
        state = await this.c.uploadStates.findOne({ _id: actionKey });
      }
      if (state?.Purged) return state.Purged.Key === purgeKey ? 'repeated' : 'already purged';
      if (state?.State !== 'reversed') return 'not reversed';
      const write = await this.c.uploadStates.updateOne(
        { _id: actionKey, State: 'reversed', Pending: { $exists: false }, Purged: { $exists: false } },
        { $set: { Purged: { Key: purgeKey, At: new Date() } }, $push: { Changes: purgeKey } },
      );
      if (write.modifiedCount === 1) return 'purged';
      if (attempt >= 3) throw new Error(`upload ${actionKey}: its state keeps changing under a purge`);
    }
  }

  async placeInReceipt(receiptId: string, actionKeys: readonly string[]): Promise<void> {
    const keys = [...new Set(actionKeys)];
    for (let at = 0; at < keys.length; at += 1000) {
      const some = keys.slice(at, at + 1000);
      // Each action's receipt once: the first receipt to name it stays.
      await this.c.audit.bulkWrite(
        some.map((_id) => ({
          updateOne: {
            filter: { _id, upload: { $exists: true }, 'upload.receiptId': { $exists: false } },
            update: { $set: { 'upload.receiptId': receiptId } },
          },
        })),
        { ordered: false },
      );
      // Only an entry with two uploads or more in this receipt has copies in it to count (again,
      // if a crash came between; the recount is safe to repeat).
      const placed = await this.c.audit
        .find({ _id: { $in: some }, 'upload.receiptId': receiptId }, { projection: { fileId: 1, unit: 1, userId: 1 } })
        .toArray();
      const perEntry = new Map<string, { event: (typeof placed)[number]; uploads: number }>();
      for (const event of placed) {
        const id = `${event.userId}\n${event.unit!.id}\n${event.fileId}`;
        const seen = perEntry.get(id);
        if (seen) seen.uploads++;
        else perEntry.set(id, { event, uploads: 1 });
      }
      for (const { event, uploads } of perEntry.values()) if (uploads > 1) await this.totals.recountCopies(event);
    }
  }

  async countingKeys(fileId: string): Promise<string[]> {
    const events = await this.c.audit.find({ fileId, upload: { $exists: true } }, { projection: { _id: 1 } }).toArray();
    const keys = events.map((e) => String(e._id));
    const reversed = new Set(
      (
        await this.c.uploadStates.find({ _id: { $in: keys }, State: 'reversed' }, { projection: { _id: 1 } }).toArray()
      ).map((s) => s._id),
    );
    return keys.filter((k) => !reversed.has(k)).sort();
  }

  async countingUploads(fileId: string): Promise<number> {
    const UploadFileID = objectIdOf(fileId);
    if (!UploadFileID) return 0;
    const entries = await this.c.ledger.find({ UploadFileID }, { projection: { UploadCount: 1 } }).toArray();
    // A count begun (its event written) and not yet in the entry counts too.
    const begun = await this.c.audit.countDocuments({ fileId, pending: true });
    return entries.reduce((sum, e) => sum + e.UploadCount, 0) + begun;
  }

  /**
   * Changes the action's state once under `changeKey` (step 1: one conditional write, which only
   * one change of an action can win at a time) and finishes the change. `unchanged`: the action
   * is in that state already (by another change key).
   */
  private async change(
    actionKey: string,
    changeKey: string,
    kind: 'reversed' | 'restored',
  ): Promise<'changed' | 'repeated' | 'unchanged' | 'not counted' | 'purged'> {
    const found = await this.c.audit.findOne({ _id: actionKey }, { projection: { fileId: 1, upload: 1 } });
    if (!found?.upload) return 'not counted';
    return this.withFile(found.fileId!, async () => {
      // The file's counts and changes left under way finished first (its own count too: the totals
      // must hold the upload before they can give it back); a lease taken over or not, a change
      // looks, as one killed before the lease existed may have left some.
      await this.finishFile(found.fileId!);
      const counted = (await this.c.audit.findOne({ _id: actionKey }))!;
      return this.changeHolding(counted, actionKey, changeKey, kind);
    });
  }

  /** Step 1 of `change` and the rest finished, the file's lease held. */
  private async changeHolding(
    counted: AuditDoc,
    actionKey: string,
    changeKey: string,
    kind: 'reversed' | 'restored',
  ): Promise<'changed' | 'repeated' | 'unchanged' | 'not counted' | 'purged'> {
    const to = kind === 'reversed' ? 'reversed' : 'counted';
    for (let attempt = 0; ; attempt++) {
      let claimed = false;
      try {
        const write = await this.c.uploadStates.updateOne(
          {
            _id: actionKey,
            // An action never changed has no state: it counts (a reversal makes it, a restore finds none).
            State: kind === 'reversed' ? { $ne: 'reversed' } : 'reversed',
            // A purged action is never restored.
            ...(kind === 'restored' && { Purged: { $exists: false } }),
            Changes: { $ne: changeKey },
            Pending: { $exists: false },
          },
          {
            $set: { State: to, Pending: { Key: changeKey, Kind: kind, Step: 'claimed', At: new Date() } },
            $push: { Changes: changeKey },
          },
          { upsert: kind === 'reversed' },
        );
        claimed = write.modifiedCount + write.upsertedCount === 1;
      } catch (err) {
        // The filter missed an action's state that exists: it was changed before.
        if (!isDuplicateKey(err)) throw err;
      }
      const state = await this.c.uploadStates.findOne({ _id: actionKey });
      if (!state) {
        if (kind === 'restored') return 'unchanged';
        continue;
      }
      if (state.Pending) await this.finishChange(state, counted);
      if (state.Changes.includes(changeKey)) return claimed ? 'changed' : 'repeated';
      if (state.State === to) return 'unchanged';
      if (kind === 'restored' && state.Purged) return 'purged';
      // Another change was under way (finished now): ask again.
      if (attempt >= 3) throw new Error(`upload ${actionKey}: its state keeps changing under a change`);
    }
  }

  /**
   * Finishes the changes of the file's uploads left under way (a crash, a failed request), before
   * a count or change decides who holds the file's bytes from its uploads' states: a reversal
   * claimed and not yet applied passes there for one out of the totals, which it is not yet
   * (FAULT_SEED=601 on MongoDB: a copy withdrawn while a withdrawal given up at a kill waited for
   * the sweep; the tallies kept one saved upload fewer). Changes under way are few (the sparse
   * index `pending`); the file's lease is held, so no other request is at them.
   */
  private async finishChangesOfFile(fileId: string): Promise<void> {
    const pending = await this.c.uploadStates
      .find({ 'Pending.At': { $exists: true } }, { projection: { _id: 1 } })
      .limit(1000)
      .toArray();
    if (pending.length === 0) return;
    const ofFile = await this.c.audit
      .find({ _id: { $in: pending.map((s) => s._id) }, fileId }, { projection: { _id: 1 } })
      .toArray();
    for (const { _id } of ofFile) {
      const state = await this.c.uploadStates.findOne({ _id: String(_id) });
      if (state?.Pending) await this.finishChange(state);
    }
  }

  /** Steps 2 to 6 of a change recorded in step 1, from where it stopped. */
  private async finishChange(state: UploadStateDoc, event?: AuditDoc | null): Promise<void> {
    const pending = state.Pending!;
    const key = state._id;
    const counted = event ?? (await this.c.audit.findOne({ _id: key }));
    if (!counted?.upload) throw new Error(`upload ${key}: changed, but its count is not recorded`);
    const mine = { _id: key, 'Pending.Key': pending.Key };
    let move = pending.Holder;
    if (!move) {
      const decided = await this.totals.holderMove(counted, pending.Kind);
      await this.c.uploadStates.updateOne(
        { ...mine, 'Pending.Holder': { $exists: false } },
        { $set: { 'Pending.Holder': decided } },
      );
      // Decided once: another request finishing the same change may have decided first.
      const now = await this.c.uploadStates.findOne(mine);
      if (!now?.Pending?.Holder) return; // finished meanwhile by that other request
      move = now.Pending.Holder;
    }
    if (pending.Step === 'claimed') {
      if (pending.Kind === 'reversed') await this.totals.take(counted, pending.Key, move.From === key);
      else await this.totals.give(counted, pending.Key, move.To === key);
      await this.c.uploadStates.updateOne(mine, { $set: { 'Pending.Step': 'applied' } });
    }
    if (pending.Kind === 'reversed') await this.totals.settle(counted, pending.Key);
    else await this.totals.settleRestore(counted, pending.Key);
    await this.totals.moveHolder(counted, pending.Key, move);
    await this.c.uploadStates.updateOne(mine, { $unset: { Pending: '' } });
  }

  /** Steps 2 to 4 for an event recorded in step 1; each can run again without counting again. */
  private async finish(doc: AuditDoc, repeated: boolean): Promise<CountedUpload> {
    const key = String(doc._id);
    const entry = await this.totals.apply(doc);
    // The first to finish sets the answer; a concurrent retry answers the same.
    const done = await this.c.audit.updateOne(
      { _id: key, pending: true },
      { $set: { 'upload.uploadCount': entry.UploadCount, 'upload.entryId': entry._id }, $unset: { pending: '' } },
    );
    if (done.modifiedCount === 1) return countedFromDoc(doc, entry.UploadCount, repeated);
    // Another request finished it first (a retry that found it pending): the answer is the one it
    // set, and whether this request is the one that counted stays as the caller knows it (the
    // insert of the event decided that).
    const answered = await this.c.audit.findOne({ _id: key });
    return countedFromDoc(doc, answered?.upload?.uploadCount ?? entry.UploadCount, repeated);
  }

  async hasUploadInScope(fileId: string, scope: UploaderScope): Promise<boolean> {
    const UploadFileID = objectIdOf(fileId);
    if (!UploadFileID) return false;
    const filter =
      'subtree' in scope
        ? { UploadFileID, ...subtreeMatch(scope.subtree) }
        : 'unitId' in scope
          ? { UploadFileID, 'UploadGeography.UploadGeoNameID': scope.unitId }
          : { UploadFileID, 'UploadGeoAddress.CityName': scope.city, 'UploadGeoAddress.CountyName': scope.county };
    return (await this.c.ledger.findOne(filter, { projection: { _id: 1 } })) !== null;
  }

  async uploadedBy(fileId: string, accountId: string, unitId: string): Promise<boolean> {
    const UploadFileID = objectIdOf(fileId);
    if (!UploadFileID) return false;
    const filter = { UserID: accountId, 'UploadGeography.UploadGeoNameID': unitId, UploadFileID };
    return (await this.c.ledger.findOne(filter, { projection: { _id: 1 } })) !== null;
  }

  async uploadOf(fileId: string, accountId: string, unitId: string): Promise<LedgerEntry | undefined> {
    const UploadFileID = objectIdOf(fileId);
    if (!UploadFileID) return undefined;
    const doc = await this.c.ledger.findOne({
      UserID: accountId,
      'UploadGeography.UploadGeoNameID': unitId,
      UploadFileID,
    });
    return doc ? ledgerEntryFromDoc(doc) : undefined;
  }

  async latestUnitUpload(unitId: string, fileId: string): Promise<LedgerEntry | undefined> {
    const UploadFileID = objectIdOf(fileId);
    if (!UploadFileID) return undefined;
    const doc = await this.c.ledger.findOne(
      { 'UploadGeography.UploadGeoNameID': unitId, UploadFileID },
      { sort: { LastUploadTime: -1 } },
    );
    return doc ? ledgerEntryFromDoc(doc) : undefined;
  }

  async latestUploadInScope(fileId: string, scope: ViewScope): Promise<LedgerEntry | undefined> {
    if ('unitId' in scope) return this.latestUnitUpload(scope.unitId, fileId);
    const UploadFileID = objectIdOf(fileId);
    if (!UploadFileID) return undefined;
    const doc = await this.c.ledger.findOne(
      { UploadFileID, ...subtreeMatch(scope.subtree) },
      { sort: { LastUploadTime: -1, _id: -1 } },
    );
    return doc ? ledgerEntryFromDoc(doc) : undefined;
  }

  async entriesForFile(fileId: string): Promise<LedgerEntry[]> {
    const UploadFileID = objectIdOf(fileId);
    if (!UploadFileID) return [];
    const docs = await this.c.ledger.find({ UploadFileID }).sort({ UploadTime: 1, _id: 1 }).toArray();
    return docs.map(ledgerEntryFromDoc);
  }

  async uploaders(scope: ViewScope | undefined): Promise<Uploader[]> {
    const rows = await this.c.ledger
      .aggregate<{ _id: string; username: string }>([
        { $match: viewScopeMatch(scope) },
        { $group: { _id: '$UserID', username: { $max: '$UserName' } } },
        { $sort: { username: 1, _id: 1 } },
      ])
      .toArray();
    return rows.map((r) => ({ id: r._id, username: r.username }));
  }

  async recordedUploads(keys: readonly string[]): Promise<Map<string, FileUploadState>> {
    const found = new Map<string, FileUploadState>();
    const unique = [...new Set(keys)];
    for (let at = 0; at < unique.length; at += 1000) {
      const some = unique.slice(at, at + 1000);
      // An action never changed has no state document: it counts.
      const [docs, reversed] = await Promise.all([
        this.c.audit.find({ _id: { $in: some } }).toArray(),
        this.c.uploadStates
          .find({ _id: { $in: some }, State: { $ne: 'counted' } }, { projection: { _id: 1 } })
          .toArray(),
      ]);
      const notCounting = new Set(reversed.map((s) => s._id));
      for (const doc of docs) {
        if (!doc.upload || !doc.unit || !doc.userId || !doc.fileId || doc.fileName === null) continue;
        found.set(String(doc._id), {
          key: String(doc._id),
          accountId: doc.userId,
          unitId: doc.unit.id,
          fileId: doc.fileId,
          fileName: doc.fileName,
          fileLength: doc.upload.fileLength,
          at: doc.at,
          counted: !notCounting.has(String(doc._id)),
        });
      }
    }
    return found;
  }

  async unitsWithUploads(fileIds: readonly string[], among?: readonly string[]): Promise<Map<string, string[]>> {
    const found = new Map<string, Set<string>>();
    const units = among && [...new Set(among)];
    const unique = [...new Set(fileIds)].filter((id) => objectIdOf(id) !== undefined);
    if (units?.length === 0) return new Map();
    const add = (fileId: string, unitId: string) => {
      const set = found.get(fileId);
      if (set) set.add(unitId);
      else found.set(fileId, new Set([unitId]));
    };
    for (let at = 0; at < unique.length; at += 1000) {
      const some = unique.slice(at, at + 1000);
      // The actions counted (their audit events, counted or reversed since), by the index
      // upload_entry; and entries counted before actions kept their events (seeded, the seed's data).
      const [actions, entries] = await Promise.all([
        this.c.audit
          .aggregate<{ _id: { file: string; unit: string } }>([
            {
              $match: {
                fileId: { $in: some },
                upload: { $exists: true },
                ...(units ? { 'unit.id': { $in: units } } : { 'unit.id': { $exists: true } }),
              },
            },
            { $group: { _id: { file: '$fileId', unit: '$unit.id' } } },
          ])
          .toArray(),
        this.c.ledger
          .aggregate<{ _id: { file: ObjectId; unit: string } }>([
            {
              $match: {
                UploadFileID: { $in: some.map((id) => new ObjectId(id)) },
                ...(units && { 'UploadGeography.UploadGeoNameID': { $in: units } }),
              },
            },
            { $group: { _id: { file: '$UploadFileID', unit: '$UploadGeography.UploadGeoNameID' } } },
          ])
          .toArray(),
      ]);
      for (const { _id } of actions) add(_id.file, _id.unit);
      for (const { _id } of entries) add(_id.file.toHexString(), _id.unit);
    }
    return new Map([...found].map(([fileId, set]) => [fileId, [...set]]));
  }

  async uploadsOfFile(fileId: string): Promise<FileUploadState[]> {
    // The file's upload events, through the audit index upload_entry (fileId first), and their states.
    const events = await this.c.audit
      .find({ fileId, upload: { $exists: true } })
      .sort({ at: 1, _id: 1 })
      .toArray();
    const reversed = new Set<string>();
    const keys = events.map((e) => String(e._id));
    for (let at = 0; at < keys.length; at += 1000) {
      const states = await this.c.uploadStates
        .find({ _id: { $in: keys.slice(at, at + 1000) }, State: { $ne: 'counted' } }, { projection: { _id: 1 } })
        .toArray();
      for (const s of states) reversed.add(s._id);
    }
    const uploads: FileUploadState[] = [];
    for (const doc of events) {
      if (!doc.upload || !doc.unit || !doc.userId || !doc.fileId || doc.fileName === null) continue;
      uploads.push({
        key: String(doc._id),
        accountId: doc.userId,
        unitId: doc.unit.id,
        fileId: doc.fileId,
        fileName: doc.fileName,
        fileLength: doc.upload.fileLength,
        at: doc.at,
        counted: !reversed.has(String(doc._id)),
      });
    }
    return uploads;
  }

  async fileUploads(
    fileId: string,
    scope: ViewScope | undefined,
    page: { limit: number; offset: number },
  ): Promise<{ items: FileUpload[]; total: number }> {
    // The actions' events, by the index on fileId (upload_entry); finished ones only (a pending one is not counted yet).
    const filter: Filter<AuditDoc> = {
      fileId,
      upload: { $exists: true },
      pending: { $exists: false },
      'unit.id': { $exists: true },
      ...auditScopeMatch(scope),
    };
    const [total, docs] = await Promise.all([
      this.c.audit.countDocuments(filter),
      this.c.audit.find(filter).sort({ at: -1, _id: 1 }).skip(page.offset).limit(page.limit).toArray(),
    ]);
    const states = await this.c.uploadStates
      .find({ _id: { $in: docs.map((d) => String(d._id)) }, State: 'reversed' }, { projection: { _id: 1 } })
      .toArray();
    const reversed = new Set(states.map((state) => state._id));
    return {
      total,
      items: docs.map((doc) => ({
        key: String(doc._id),
        accountId: doc.userId!,
        userName: doc.userName,
        unitId: doc.unit!.id,
        unit: doc.unit!,
        fileId,
        fileName: doc.fileName ?? '',
        fileLength: doc.upload!.fileLength,
        at: doc.at,
        counts: !reversed.has(String(doc._id)),
      })),
    };
  }
}

/** The upload events counted in a view's scope, by the unit each event recorded. */
function auditScopeMatch(scope: ViewScope | undefined): Filter<AuditDoc> {
  if (!scope) return {};
  if ('unitId' in scope) return { 'unit.id': scope.unitId };
  const { city, county, town } = scope.subtree;
  return {
    'unit.city': city,
    ...(county !== undefined && { 'unit.county': county }),
    ...(town !== undefined && { 'unit.town': town }),
  };
}

const countedFromDoc = (doc: AuditDoc, uploadCount: number, repeated: boolean): CountedUpload => ({
  accountId: doc.userId!,
  fileId: doc.fileId!,
  status: doc.upload!.status,
  uploadCount,
  stored: doc.upload!.stored,
  repeated,
});
