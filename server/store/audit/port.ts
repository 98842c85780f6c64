import type { AuditAction, AuditEventFields } from '../../../shared/schemas.js';

/** One audit event: who (or which attempted user name), from which unit and address, did what. */
export interface AuditEvent extends AuditEventFields {
  at: Date;
}

export interface AuditSearch {
  from?: Date;
  /** Exclusive. */
  to?: Date;
  action?: AuditAction;
  /** One of these actions (a group, as 管理操作); with `action` too, both apply. */
  actions?: readonly AuditAction[];
  userName?: string;
  /** A unit subtree: every event of a unit at or below this city / county / town. */
  unit?: { city?: string; county?: string; town?: string };
  /** Part of the file name or the detail. */
  text?: string;
  limit: number;
  offset: number;
}

/** Append-only: the port has no way to change or remove an event. */
export interface AuditLog {
  append(event: AuditEvent): Promise<void>;
  /** Appends events in order (the embedded store in one transaction). */
  appendMany(events: readonly AuditEvent[]): Promise<void>;
  /**
   * Appends each event unless an event was appended under its key before: a step's event, which
   * whoever finishes the step (the request, its retry, the sweep after a crash) records, once.
   */
  appendOnce(events: ReadonlyArray<{ key: string; event: AuditEvent }>): Promise<void>;
  /** Newest first. */
  search(query: AuditSearch): Promise<{ items: Array<AuditEvent & { id: string }>; total: number }>;
  /**
   * Every event the search selects, newest first, `batch` at a time, each batch with the number
   * of events in all (an export): one statement or cursor read through, released when the
   * iteration ends, however it ends. At least one batch (perhaps empty).
   */
  searchBatches(
    query: Omit<AuditSearch, 'limit' | 'offset'>,
    batch: number,
  ): AsyncIterable<{ items: Array<AuditEvent & { id: string }>; total: number }>;
}
