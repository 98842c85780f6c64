import { createHash } from 'node:crypto';
import { Long, ObjectId, type Collection, type Filter, type UpdateFilter, type WithId } from 'mongodb';
import { monthOf, weekOf } from '../../../shared/calendar.js';
import type { Unit } from '../../../shared/schemas.js';
import type { AuditCollections, AuditDoc } from '../mongo/audit-documents.js';
import { isDuplicateKey } from '../mongo/documents.js';
import type { HolderMove, LedgerCollections, LedgerDoc, NameDoc } from '../mongo/ledger-documents.js';
import { entryOf, type KnownUpload } from './entry-without.js';
import type { UploadRecord } from './port.js';

/**
 * The only writer of the ledger's totals on MongoDB (docs/decisions/counts.md): each entry's
 * UploadCount with its first and last upload (`userInfo.users`), the day tallies
 * (`userInfo.uploadDays`), the names (`userInfo.names`) and who stored a file
 * (`userInfo.firstUploads`, with who holds its bytes in the tallies). Without transactions each
 * write is its own, and each is safe to run again: a count is applied once per key (AppliedKeys),
 * a change (a reversal, a restore) once per token of its action and key (AppliedChanges; the
 * ledger keeps the change's progress in `userInfo.uploads`).
 */

/**
 * What marks a document as changed by one change of one action (a change key belongs to its
 * action: two actions may be changed under the same key), and by its moves of the file's holder.
 */
export const changeToken = (actionKey: string, change: string, part: 'upload' | 'from' | 'to' = 'upload') =>
  `${part}:${change}:${actionKey}`;

/**
 * A name's `_id`: unit and file as they are, the name by its SHA-256 (a path of a thousand
 * characters would make a long key; the digest keeps it short and still one per name).
 */
export function nameId(unitId: string, fileId: string, name: string): string {
  return `${unitId}/${fileId}/${createHash('sha256').update(name).digest('base64url')}`;
}

/** A name's document (for an upsert that only inserts). */
export function nameDoc(
  unit: Pick<Unit, 'id' | 'city' | 'county' | 'town'>,
  fileId: ObjectId,
  name: string,
  at: Date,
): NameDoc {
  return {
    _id: nameId(unit.id, fileId.toHexString(), name),
    UnitID: unit.id,
    UploadFileID: fileId,
    Name: name,
    FirstUsed: at,
    CityName: unit.city,
    CountyName: unit.county ?? null,
    TownName: unit.town ?? null,
  };
}

/** The ledger fields that describe who uploaded, from the authenticated account. */
export function ledgerIdentity(account: UploadRecord['account']) {
  const u = account.unit;
  return {
    UserName: account.username,
    'UploadGeography.GeoType': u.geoType,
    'UploadGeography.UploadGeoName': u[u.geoType] ?? u.city,
    UploadGeoAddress: {
      CityName: u.city,
      CountyName: u.county ?? null,
      TownName: u.town ?? null,
      StreetName: u.street ?? null,
    },
    ...(u.coordinates ? { GeoPts: { Type: 'Point' as const, GeoCoordinates: u.coordinates } } : {}),
  };
}

/** Keys kept on a ledger entry or a day's tally: far more than the actions of one uploader, unit and file in flight at once. */
const APPLIED_KEYS = 32;

/** The documents an upload action's event changes: its entry, its day's tally, its name. */
function targetsOf(event: AuditDoc) {
  const unit = event.unit!;
  const UploadFileID = new ObjectId(event.fileId!);
  return {
    unit,
    UploadFileID,
    entry: { UserID: event.userId!, 'UploadGeography.UploadGeoNameID': unit.id, UploadFileID },
    day: { UploadFileID, UnitID: unit.id, Day: event.upload!.day },
    name: nameId(unit.id, UploadFileID.toHexString(), event.fileName!),
  };
}

export class MongoTotals {
  constructor(private readonly c: LedgerCollections & AuditCollections) {}

  /**
   * Counts the action whose event (`_id` = its key) is `event` in every total, each write once per
   * key however often it runs: the entry (UploadCount + 1), its name, its day's tally. Answers the
   * entry as it is then.
   */
  async apply(event: AuditDoc): Promise<WithId<LedgerDoc>> {
    const key = String(event._id);
    const u = event.upload!;
    const { unit, UploadFileID, entry: identity, day } = targetsOf(event);
    const account = { id: event.userId!, username: event.userName, unit };
    const entry = await applyOnce(this.c.ledger, identity, key, {
      $inc: { UploadCount: 1 },
      $max: { LastUploadTime: event.at },
      $set: { LastUploadFileName: event.fileName!, LastUploadContentType: u.contentType },
      // A client-made _id (time, then a counter) orders entries as they were first recorded,
      // the reports' tie-break, on any server.
      $setOnInsert: {
        _id: new ObjectId(),
        ...ledgerIdentity(account),
        UploadTime: event.at,
        UploadFileName: event.fileName!,
      },
    });
    // The name with its entry: inserted once, so a retry of this step changes nothing.
    await insertNames(this.c.names, [nameDoc(unit, UploadFileID, event.fileName!, event.at)]);
    await applyOnce(this.c.uploadDays, day, key, {
      $inc: { Uploads: 1, SavedUploads: u.stored || u.holds ? 0 : 1 },
      $setOnInsert: {
        Week: weekOf(u.day),
        Month: monthOf(u.day),
        CityName: unit.city,
        CountyName: unit.county ?? null,
        TownName: unit.town ?? null,
        FileLength: Long.fromNumber(u.fileLength),
      },
    });
    return entry;
  }

  /**
   * A reversal's first part: the entry and the day's tally count the action's upload no more,
   * each once under the change's token; the day counts one saved upload fewer unless the upload
   * held the file's bytes. Run while the change's step is 'claimed' (the documents are then still
   * there: only `settle` removes them).
   */
  async take(event: AuditDoc, change: string, held: boolean): Promise<void> {
    const { entry, day } = targetsOf(event);
    const token = changeToken(String(event._id), change);
    await changeOnce(this.c.ledger, entry, token, { $inc: { UploadCount: -1 } });
    await changeOnce(this.c.uploadDays, day, token, { $inc: { Uploads: -1, SavedUploads: held ? 0 : -1 } });
  }

  /**
   * A restore's first part: the entry (made again if it was gone) and the day's tally count the
   * action's upload again, each once under the change's token; as a saved upload unless it is
   * to hold the file's bytes. Run while the change's step is 'claimed'.
   */
  async give(event: AuditDoc, change: string, holds: boolean): Promise<void> {
    const u = event.upload!;
    const { unit, entry, day } = targetsOf(event);
    const token = changeToken(String(event._id), change);
    const account = { id: event.userId!, username: event.userName, unit };
    await changeOnce(
      this.c.ledger,
      entry,
      token,
      {
        $inc: { UploadCount: 1 },
        $setOnInsert: {
          // Under its id when the upload was counted: the reports' tie-breaks as if never gone.
          _id: u.entryId ?? new ObjectId(),
          ...ledgerIdentity(account),
          UploadTime: event.at,
          UploadFileName: event.fileName!,
          LastUploadTime: event.at,
          LastUploadFileName: event.fileName!,
          LastUploadContentType: u.contentType,
        },
      },
      true,
    );
    await changeOnce(
      this.c.uploadDays,
      day,
      token,
      {
        $inc: { Uploads: 1, SavedUploads: holds ? 0 : 1 },
        $setOnInsert: {
          Week: weekOf(u.day),
          Month: monthOf(u.day),
          CityName: unit.city,
          CountyName: unit.county ?? null,
          TownName: unit.town ?? null,
          FileLength: Long.fromNumber(u.fileLength),
        },
      },
      true,
    );
  }

  /**
   * A reversal's second part, once `take` is done (every write here is safe to run again): an
   * entry or tally left with no upload goes, the entry's first and last upload become those of its
   * uploads left, the name goes unless the unit's other uploads of the file use it, and the file's
   * first-upload record is given back if no entry of the file is left.
   */
  async settle(event: AuditDoc, change: string): Promise<void> {
    const { unit, UploadFileID, day } = targetsOf(event);
    const token = changeToken(String(event._id), change);
    await this.settleEntry(event, token);
    // Only a tally that carries the change's token (one made anew since, by a count, is not this
    // reversal's to change).
    await this.c.uploadDays.deleteOne({ ...day, AppliedChanges: token, Uploads: { $lte: 0 } });
    await this.settleName(event, unit, UploadFileID);
    if (event.upload?.receiptId) await this.recountCopies(event);
    const firstUpload = await this.c.firstUploads.findOne({ _id: UploadFileID });
    if (firstUpload && !(await this.c.ledger.findOne({ UploadFileID }, { projection: { _id: 1 } })))
      await this.c.firstUploads.deleteOne({ _id: UploadFileID, Key: firstUpload.Key });
  }

  /**
   * A restore's second part, once `give` is done (every write safe to run again): the entry's
   * first and last upload are those of its uploads that count, the name is kept (first used no
   * later than this upload), and the file's first-upload record is taken if nobody holds it (the
   * upload counts again, so no later upload of the file stores it).
   */
  async settleRestore(event: AuditDoc, change: string): Promise<void> {
    const { unit, UploadFileID } = targetsOf(event);
    await this.settleEntry(event, changeToken(String(event._id), change));
    if (event.upload?.receiptId) await this.recountCopies(event);
    const name = nameDoc(unit, UploadFileID, event.fileName!, event.at);
    await insertNames(this.c.names, [name]);
    await this.c.names.updateOne({ _id: name._id, FirstUsed: { $gt: event.at } }, { $set: { FirstUsed: event.at } });
    try {
      await this.c.firstUploads.updateOne(
        { _id: UploadFileID },
        { $setOnInsert: { Key: String(event._id) } },
        { upsert: true },
      );
    } catch (err) {
      // A count took it meanwhile: it is taken, which is all that was asked.
      if (!isDuplicateKey(err)) throw err;
    }
  }

  /**
   * The entry the change's token marks: gone if it has no upload left, else its first and last
   * upload those of the uploads that count (only if no count changed it meanwhile: a count sets
   * the last upload itself).
   */
  private async settleEntry(event: AuditDoc, token: string): Promise<void> {
    const { entry: identity } = targetsOf(event);
    const entry = await this.c.ledger.findOne({ ...identity, AppliedChanges: token });
    if (!entry) return;
    if (entry.UploadCount <= 0) {
      await this.c.ledger.deleteOne({ _id: entry._id, UploadCount: { $lte: 0 } });
      return;
    }
    const before = {
      uploadCount: entry.UploadCount,
      firstTime: entry.UploadTime.getTime(),
      firstName: entry.UploadFileName,
      lastTime: entry.LastUploadTime.getTime(),
      lastName: entry.LastUploadFileName,
      lastType: entry.LastUploadContentType,
    };
    const after = entryOf(entry.UploadCount, before, await this.entryUploads(event));
    if (
      after.firstTime !== before.firstTime ||
      after.firstName !== before.firstName ||
      after.lastTime !== before.lastTime ||
      after.lastName !== before.lastName ||
      after.lastType !== before.lastType
    )
      await this.c.ledger.updateOne(
        {
          _id: entry._id,
          UploadTime: entry.UploadTime,
          LastUploadTime: entry.LastUploadTime,
          LastUploadFileName: entry.LastUploadFileName,
        },
        {
          $set: {
            UploadTime: new Date(after.firstTime),
            UploadFileName: after.firstName,
            LastUploadTime: new Date(after.lastTime),
            LastUploadFileName: after.lastName,
            LastUploadContentType: after.lastType,
          },
        },
      );
  }

  /**
   * Who holds the file's bytes in the tallies before the change of the action `event` records,
   * and who is to hold them after it, by the rule of docs/decisions/counts.md: of the file's
   * uploads that count, the earliest counted as storing it; if none of those counts but one stored
   * it, the earliest that counts; none if no upload stored it. Read once the action's state is
   * changed (it counts, or not, as the change makes it).
   */
  async holderMove(event: AuditDoc, kind: 'reversed' | 'restored'): Promise<HolderMove> {
    const key = String(event._id);
    const UploadFileID = new ObjectId(event.fileId!);
    const uploads = await this.c.audit
      .find(
        { fileId: event.fileId, upload: { $exists: true } },
        { projection: { _id: 1, at: 1, 'upload.stored': 1, 'upload.holds': 1, pending: 1 } },
      )
      .toArray();
    const reversed = await this.reversed(uploads.map((e) => String(e._id)));
    // An upload whose count is not finished yet is not in the totals to hold anything.
    const counting = uploads.filter((e) => !reversed.has(String(e._id)) && !e.pending);
    const storedOnce = uploads.some((e) => e.upload!.stored);
    const heir = storedOnce
      ? counting.sort(
          (a, b) =>
            Number(b.upload!.stored) - Number(a.upload!.stored) ||
            a.at.getTime() - b.at.getTime() ||
            (String(a._id) < String(b._id) ? -1 : 1),
        )[0]
      : undefined;
    const record = await this.c.firstUploads.findOne({ _id: UploadFileID });
    let from: string | null = null;
    if (record && record.Holder !== undefined) from = record.Holder;
    else if (record && holdsFromCount(uploads.find((e) => String(e._id) === record.Key)))
      // Nobody moved it yet: the upload that stored the file (or held it from its count), while it
      // counted (the action reversed now counted until this change).
      from = record.Key === key ? (kind === 'reversed' ? key : null) : reversed.has(record.Key) ? null : record.Key;
    return { From: from, To: heir ? String(heir._id) : null };
  }

  /**
   * Moves the file's holder as the change decided (`holderMove`): the day of the one that held the
   * bytes counts it as saved, the day of the one that holds them now as not; each once under the
   * change's tokens (the changed action's own day is `take`'s or `give`'s).
   */
  async moveHolder(event: AuditDoc, change: string, move: HolderMove): Promise<void> {
    if (move.From === move.To) return;
    const key = String(event._id);
    for (const [holder, saved, part] of [
      [move.From, 1, 'from'],
      [move.To, -1, 'to'],
    ] as const) {
      if (holder === null || holder === key) continue;
      const upload = await this.c.audit.findOne({ _id: holder });
      if (!upload?.upload) continue;
      await this.c.uploadDays.updateOne(
        { ...targetsOf(upload).day, AppliedChanges: { $ne: changeToken(key, change, part) } },
        {
          $inc: { SavedUploads: saved },
          $push: { AppliedChanges: { $each: [changeToken(key, change, part)], $slice: -APPLIED_KEYS } },
        },
      );
    }
    // Only from the holder it moves from (a request finishing this change late must not move back
    // a holder that a later change has moved on).
    await this.c.firstUploads.updateOne(
      { _id: new ObjectId(event.fileId!), $or: [{ Holder: move.From }, { Holder: { $exists: false } }] },
      { $set: { Holder: move.To } },
    );
  }

  /** Which of the actions `keys` are reversed now. */
  private async reversed(keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const states = await this.c.uploadStates
      .find({ _id: { $in: keys }, State: 'reversed' }, { projection: { _id: 1 } })
      .toArray();
    return new Set(states.map((s) => s._id));
  }

  /** The name goes unless still used; its first use becomes the first of the uses left. */
  private async settleName(event: AuditDoc, unit: Unit, UploadFileID: ObjectId): Promise<void> {
    const _id = nameId(unit.id, UploadFileID.toHexString(), event.fileName!);
    const uses = await this.nameUses(event);
    if (uses.length > 0) {
      const first = new Date(Math.min(...uses));
      await this.c.names.updateOne({ _id, FirstUsed: event.at }, { $set: { FirstUsed: first } });
      return;
    }
    await this.c.names.deleteOne({ _id });
    // A count of the same name meanwhile recorded its event before its name, so it is seen here:
    // the name is put back.
    const late = await this.nameUses(event);
    if (late.length > 0)
      await insertNames(this.c.names, [nameDoc(unit, UploadFileID, event.fileName!, new Date(Math.min(...late)))]);
  }

  /** The uploads of an action's entry that count (its own too once restored, not once reversed), by time. */
  private async entryUploads(event: AuditDoc): Promise<KnownUpload[]> {
    const events = await this.counting({ fileId: event.fileId, 'unit.id': event.unit!.id, userId: event.userId });
    return events
      .map((e) => ({ at: e.at.getTime(), fileName: e.fileName!, contentType: e.upload!.contentType }))
      .sort((a, b) => a.at - b.at);
  }

  /**
   * Sets the entry of the action `event` records to its copies (the repeat-uploaders report's
   * copies inside one upload): of its uploads that count, in each receipt all but one. Safe to run
   * again and again; written only if the entry's UploadCount is still the one read with them (a
   * change meanwhile recounts, or this reads again), so a stale count does not stay.
   */
  async recountCopies(event: Pick<AuditDoc, 'fileId' | 'unit' | 'userId'>): Promise<void> {
    const identity = {
      UserID: event.userId!,
      'UploadGeography.UploadGeoNameID': event.unit!.id,
      UploadFileID: new ObjectId(event.fileId!),
    };
    for (let attempt = 0; attempt < 5; attempt++) {
      const entry = await this.c.ledger.findOne(identity, { projection: { UploadCount: 1, CopyCount: 1 } });
      if (!entry) return;
      const uploads = (
        await this.counting({
          fileId: event.fileId,
          'unit.id': event.unit!.id,
          userId: event.userId,
          'upload.receiptId': { $exists: true },
        })
      ).filter((e) => !e.pending);
      const copies = uploads.length - new Set(uploads.map((e) => e.upload!.receiptId)).size;
      if ((entry.CopyCount ?? 0) === copies) return;
      const set = await this.c.ledger.updateOne(
        { _id: entry._id, UploadCount: entry.UploadCount },
        { $set: { CopyCount: copies } },
      );
      if (set.matchedCount === 1) return;
    }
  }

  /** When the unit's uploads of the file that still count used the event's name, and its entries' first and last names. */
  private async nameUses(event: AuditDoc): Promise<number[]> {
    const unitId = event.unit!.id;
    const name = event.fileName!;
    const events = await this.counting({ fileId: event.fileId, 'unit.id': unitId, fileName: name });
    const entries = await this.c.ledger
      .find({
        UploadFileID: new ObjectId(event.fileId!),
        'UploadGeography.UploadGeoNameID': unitId,
        $or: [{ UploadFileName: name }, { LastUploadFileName: name }],
      })
      .toArray();
    return [
      ...events.map((e) => e.at.getTime()),
      ...entries.map((e) => (e.UploadFileName === name ? e.UploadTime : e.LastUploadTime).getTime()),
    ];
  }

  /** Upload actions' events matching `filter` that still count (through the audit index `upload_entry`). */
  private async counting(filter: Filter<AuditDoc>): Promise<AuditDoc[]> {
    const events = await this.c.audit.find({ ...filter, upload: { $exists: true } }).toArray();
    const reversed = await this.reversed(events.map((e) => String(e._id)));
    return events.filter((e) => !reversed.has(String(e._id)));
  }
}

/** Inserts names not yet kept; those kept already (or inserted meanwhile by another request) are left as they are. */
export async function insertNames(names: Collection<NameDoc>, docs: NameDoc[]): Promise<void> {
  try {
    await names.bulkWrite(
      docs.map(({ _id, ...fields }) => ({
        updateOne: { filter: { _id }, update: { $setOnInsert: fields }, upsert: true },
      })),
      { ordered: false },
    );
  } catch (err) {
    // Two upserts of one name raced to insert it: the name is kept, which is all that was asked
    // (unordered, so the other names were written).
    const writeErrors = (err as { writeErrors?: unknown[] }).writeErrors;
    if (!(writeErrors?.length ? writeErrors.every(isDuplicateKey) : isDuplicateKey(err))) throw err;
  }
}

/**
 * Applies an upsert to the document `identity` names unless its AppliedKeys holds `key`, and
 * returns the document as it is then. The filter excludes a document that has the key, so the
 * upsert then tries to insert and the unique index refuses it: a duplicate key is either that (the
 * key was applied: nothing to do) or a lost race between two first inserts (try again, now an
 * update of the winner's document).
 */
async function applyOnce<T extends { AppliedKeys?: string[] }>(
  collection: Collection<T>,
  identity: Filter<T>,
  key: string,
  update: UpdateFilter<T>,
): Promise<WithId<T>> {
  for (let attempt = 0; ; attempt++) {
    try {
      const doc = await collection.findOneAndUpdate(
        { ...identity, AppliedKeys: { $ne: key } },
        { ...update, $push: { AppliedKeys: { $each: [key], $slice: -APPLIED_KEYS } } } as unknown as UpdateFilter<T>,
        {
          upsert: true,
          returnDocument: 'after',
        },
      );
      return doc!;
    } catch (err) {
      if (!isDuplicateKey(err) || attempt >= 3) throw err;
      const existing = await collection.findOne(identity);
      if (existing?.AppliedKeys?.includes(key)) return existing;
    }
  }
}

/**
 * Applies `update` to the document `identity` names unless its AppliedChanges holds `token` (then
 * it was applied: nothing to do), pushing the token (the last APPLIED_KEYS kept). With `upsert`,
 * a missing document is made (a restore's entry or day); a duplicate key then means the token was
 * there, or another request made the document first (try again, now as an update).
 */
async function changeOnce<T extends { AppliedChanges?: string[] }>(
  collection: Collection<T>,
  identity: Filter<T>,
  token: string,
  update: UpdateFilter<T>,
  upsert = false,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await collection.updateOne(
        { ...identity, AppliedChanges: { $ne: token } },
        {
          ...update,
          $push: { AppliedChanges: { $each: [token], $slice: -APPLIED_KEYS } },
        } as unknown as UpdateFilter<T>,
        { upsert },
      );
      return;
    } catch (err) {
      if (!isDuplicateKey(err) || attempt >= 3) throw err;
      const existing = await collection.findOne(identity);
      if (existing?.AppliedChanges?.includes(token)) return;
    }
  }
}

/** Whether an upload held its file's bytes from its count: it stored them, or counted first after all were withdrawn. */
const holdsFromCount = (e: AuditDoc | undefined) => e?.upload?.stored === true || e?.upload?.holds === true;
