import type { Db, Long, ObjectId } from 'mongodb';
import type { ReportUnit } from '../../../shared/reports.js';
import type { GeoType, Unit } from '../../../shared/schemas.js';

/**
 * The ledger's documents (`userInfo.users`, `.uploadDays`, `.firstUploads`, `.names`, `.uploads`), in the
 * seed design's field names. Written only by the ledger (server/store/ledger/mongo.ts); read also by
 * the reports and the listing of a unit's files, which is why their shape is declared here and not
 * in the ledger's folder.
 */

/** An uploader entry in `userInfo.users`, with the seed design's field names. */
export interface LedgerDoc {
  _id?: ObjectId;
  UserID: string;
  UserName: string;
  UploadGeography: { GeoType: GeoType; UploadGeoName: string; UploadGeoNameID: string };
  UploadGeoAddress: { CityName: string; CountyName: string | null; TownName: string | null; StreetName: string | null };
  GeoPts?: { Type: 'Point'; GeoCoordinates: [number, number] };
  UploadFileID: ObjectId;
  UploadTime: Date;
  LastUploadTime: Date;
  UploadFileName: string;
  LastUploadFileName: string;
  LastUploadContentType: string;
  UploadCount: number;
  /** Of UploadCount, copies inside one upload (absent: none; MongoTotals.recountCopies). */
  CopyCount?: number;
  /** Keys of the last upload actions counted here (bounded): counting one again changes nothing. */
  AppliedKeys?: string[];
  /**
   * Tokens of the changes (reversals, restores) applied here, the last 32 (bounded as AppliedKeys):
   * applying one again changes nothing (server/store/ledger/mongo-totals.ts, `changeToken`).
   */
  AppliedChanges?: string[];
}

/**
 * `userInfo.uploadDays`: uploads per (file, unit, calendar day in the report time zone), for the
 * savings report. SavedUploads counts the uploads that did not store the bytes.
 */
export interface UploadDayDoc {
  _id?: ObjectId;
  UploadFileID: ObjectId;
  UnitID: string;
  /** YYYY-MM-DD; Week is its Monday, Month is YYYY-MM. */
  Day: string;
  Week: string;
  Month: string;
  CityName: string;
  CountyName: string | null;
  TownName: string | null;
  FileLength: Long | number;
  Uploads: number;
  SavedUploads: number;
  /** As in the ledger: keys of the last upload actions counted here. */
  AppliedKeys?: string[];
  /** As in the ledger: tokens of the last changes applied here, the file's holder moving included. */
  AppliedChanges?: string[];
}

/**
 * `userInfo.uploads`: an upload action's state once it has been changed after its count (a
 * reversal, a restore), `_id` = the action's key; an action without one is counted as its audit
 * event says (docs/decisions/counts.md). The audit event (`audit.events`, same `_id`) keeps what
 * was counted.
 */
export interface UploadStateDoc {
  _id: string;
  State: 'counted' | 'reversed';
  /** The keys of the changes made to it, each once (few: an action is changed a few times at most). */
  Changes: string[];
  /** Its purge (a reversed action's, for good: it is never restored), by its key. */
  Purged?: { Key: string; At: Date };
  /** The change under way until every total has it; a crash leaves it here for a retry or the sweep to finish. */
  Pending?: {
    Key: string;
    Kind: 'reversed' | 'restored';
    /**
     * claimed: the totals may not have it yet; applied: the entry and the day's tally have it,
     * what is left is settling the rest (first and last upload, name, who holds the file's bytes).
     */
    Step: 'claimed' | 'applied';
    At: Date;
    /** Who holds the file's bytes before and after the change, decided once before any total changes. */
    Holder?: HolderMove;
  };
}

/** The upload actions (keys) holding a file's bytes in the tallies before and after a change; null for none. */
export interface HolderMove {
  From: string | null;
  To: string | null;
}

/**
 * `userInfo.firstUploads`: the first upload action counted of each file (it stored the file if it
 * carried the bytes), decided by one upsert on the file's `_id`, so that two first uploads racing
 * each other cannot both be counted as storing it. `Key` is the action's key, or EARLIER_UPLOADS for files
 * counted before this record existed.
 */
export interface FirstUploadDoc {
  _id: ObjectId | string;
  Key: string;
  /**
   * The action whose upload holds the file's bytes in the tallies (the one not saved), once a
   * reversal or a restore has moved it (null: none); until then the action under `Key` if it
   * stored the file (docs/decisions/counts.md).
   */
  Holder?: string | null;
  /**
   * When a count took the record, until the sweep has seen the count's event recorded: a process
   * killed between taking it and recording the event (and a client that never retries) would
   * otherwise leave the file with a first upload that never counted, and no later upload of it
   * counted as storing it. Absent on records the sweep confirmed, and on earlier ones.
   */
  Taken?: Date;
}

/**
 * `userInfo.names`: every name a unit uploaded a file under (the ledger entry keeps only its first
 * and last), with the unit's address for a reach's view and when the name was first used. `_id`
 * is made of unit, file and name, so one name is kept once (an upsert that only inserts).
 */
export interface NameDoc {
  _id: string;
  UnitID: string;
  UploadFileID: ObjectId;
  Name: string;
  FirstUsed: Date;
  CityName: string;
  CountyName: string | null;
  TownName: string | null;
}

/**
 * `userInfo.fileLeases`: the file (`_id`, its id in hex) whose uploads one request is counting or
 * changing now; the document exists only while it does. Inserted to take the file (the unique `_id`
 * lets one insert win), deleted by the same request's `Token` when done; a request that dies
 * holding it leaves it until `Until`, when the next takes it over and first finishes what the dead
 * one left under way (docs/decisions/counts.md, "One file's changes one after another").
 */
export interface FileLeaseDoc {
  _id: string;
  Token: string;
  Until: Date;
}

export function ledgerCollections(db: Db) {
  return {
    ledger: db.collection<LedgerDoc>('userInfo.users'),
    uploadDays: db.collection<UploadDayDoc>('userInfo.uploadDays'),
    firstUploads: db.collection<FirstUploadDoc>('userInfo.firstUploads'),
    names: db.collection<NameDoc>('userInfo.names'),
    uploadStates: db.collection<UploadStateDoc>('userInfo.uploads'),
    fileLeases: db.collection<FileLeaseDoc>('userInfo.fileLeases'),
  };
}

export type LedgerCollections = ReturnType<typeof ledgerCollections>;

export function unitFromLedgerDoc(doc: Pick<LedgerDoc, 'UploadGeography' | 'UploadGeoAddress' | 'GeoPts'>): Unit {
  const a = doc.UploadGeoAddress;
  return {
    id: doc.UploadGeography.UploadGeoNameID,
    geoType: doc.UploadGeography.GeoType,
    city: a.CityName,
    ...(a.CountyName ? { county: a.CountyName } : {}),
    ...(a.TownName ? { town: a.TownName } : {}),
    ...(a.StreetName ? { street: a.StreetName } : {}),
    ...(doc.GeoPts ? { coordinates: doc.GeoPts.GeoCoordinates } : {}),
  };
}

/** A unit as reports show it: absent levels omitted, no coordinates. */
export function reportUnitFromDoc(doc: Pick<LedgerDoc, 'UploadGeography' | 'UploadGeoAddress'>): ReportUnit {
  const { coordinates: _, ...unit } = unitFromLedgerDoc(doc);
  return unit;
}
