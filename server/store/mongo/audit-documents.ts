import type { Db, ObjectId } from 'mongodb';
import type { AuditEvent } from '../audit/port.js';

/**
 * The audit log's documents (`audit.events`). The audit log appends them; the ledger also writes
 * the upload action's event, which is its record of counting (docs/decisions/counting-once.md).
 */

/**
 * An audit event in `audit.events`. What it says is never changed. An upload action's event has
 * the action's key as `_id` and is its record of counting (server/store/ledger/mongo.ts): written
 * first with `pending`, which is removed, with the answer set, once the ledger and the day's tally
 * have counted it.
 */
export interface AuditDoc extends AuditEvent {
  _id: ObjectId | string;
  /**
   * The order events were made in within one millisecond: an ObjectId made as the event is
   * written (one process's increase). Absent on events written before 2026-11-29.
   */
  order?: ObjectId;
  upload?: UploadActionDoc;
  pending?: true;
}

/** What an upload action's event holds to count it (again after a crash) and to answer retries. */
export interface UploadActionDoc {
  contentType: string;
  day: string;
  fileLength: number;
  stored: boolean;
  status: 'stored' | 'duplicate';
  /**
   * The action did not store the bytes but holds them in the tallies from its count (counted first
   * into a file whose uploads had all been withdrawn after one stored it; docs/decisions/counts.md).
   */
  holds?: true;
  /** Set when the action was counted. */
  uploadCount?: number;
  /**
   * Its ledger entry's `_id`, set when the action was counted: a restore makes a gone entry again
   * under it, so the reports' tie-breaks (by entry `_id`) are as if it had never been gone.
   */
  entryId?: ObjectId;
  /** The receipt (folder upload) it was sent in, once the receipt names it (Ledger.placeInReceipt). */
  receiptId?: string;
}

export function auditCollections(db: Db) {
  return { audit: db.collection<AuditDoc>('audit.events') };
}

export type AuditCollections = ReturnType<typeof auditCollections>;
