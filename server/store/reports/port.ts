import type * as Rows from '../../../shared/reports.js';
import type { NearDuplicatePair } from '../near-duplicates/port.js';

import type { UnitSubtree } from '../ledger/port.js';

export type { UnitSubtree };

/** What every report is restricted to. */
export interface ReportFilter {
  /**
   * Ledger-based tables: entries with an upload in [from, to) (first upload before `to`, last at
   * or after `from`). Collisions: files first stored in [from, to).
   */
  from?: Date;
  to?: Date;
  /** Savings: upload days, both included (YYYY-MM-DD). */
  fromDay?: string;
  toDay?: string;
  /** Uploads by units in this subtree only. */
  unit?: UnitSubtree;
  /** Part of the file name (the uploader's name for repeat entries, the stored name otherwise). */
  fileName?: string;
}

export interface ReportPaging {
  /** One of the table's sort fields (shared/reports.ts); ties are broken by a stable key. */
  sort: string;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export type RepeatReportQuery = ReportFilter &
  ReportPaging & {
    group: 'entry' | 'user' | 'unit';
    userName?: string;
    unitId?: string;
    min: number;
    /** `exclude`: copies inside one upload are not counted as uploads (shared/reports.ts); absent: `include`. */
    copies?: 'include' | 'exclude';
  };
export type CrossUnitReportQuery = ReportFilter & ReportPaging & { min: number };
export type SavingsReportQuery = ReportFilter & ReportPaging & { group: 'unit' | 'day' | 'week' | 'month' };
export type CollisionReportQuery = ReportFilter & ReportPaging & { min: number };
/** `from`/`to` select pairs found in [from, to); the unit and name filters, pairs where either file matches. */
export type NearDuplicateReportQuery = ReportFilter &
  ReportPaging & { method?: NearDuplicatePair['method']; status?: 'open' | 'reviewed' };

/** A row as the store computes it, without the uploaders' display names: the service adds them (one lookup a page). */
type Unnamed<Row> = Omit<Row, 'userDisplayName'>;
export type StoredRepeatRow = Unnamed<Rows.RepeatEntryRow> | Unnamed<Rows.RepeatUserRow> | Rows.RepeatUnitRow;
export type StoredCrossUnitRow = Omit<Rows.CrossUnitRow, 'uploaders'> & {
  uploaders: Array<Omit<Rows.CrossUnitRow['uploaders'][number], 'userDisplayNames'>>;
};

export interface Page<Row> {
  items: Row[];
  /** Rows matching the filters, over all pages. */
  total: number;
}

/** Read-only aggregations for the administrators, computed by the database (never the whole ledger in memory). */
export interface Reports {
  /** Rows of the shape `group` names. */
  repeatUploaders(q: RepeatReportQuery): Promise<Page<StoredRepeatRow>>;
  crossUnit(q: CrossUnitReportQuery): Promise<Page<StoredCrossUnitRow>>;
  savings(
    q: SavingsReportQuery,
  ): Promise<Page<Rows.SavingsUnitRow | Rows.SavingsPeriodRow> & { summary: Rows.SavingsFigures }>;
  collisions(q: CollisionReportQuery): Promise<Page<Rows.CollisionRow>>;
  nearDuplicates(q: NearDuplicateReportQuery): Promise<Page<Rows.NearDuplicateRow>>;
  /** The same tables whole, for exports: `batch` rows at a time. */
  repeatUploaderBatches(q: Unpaged<RepeatReportQuery>, batch: number): Batches<StoredRepeatRow>;
  crossUnitBatches(q: Unpaged<CrossUnitReportQuery>, batch: number): Batches<StoredCrossUnitRow>;
  savingsBatches(q: Unpaged<SavingsReportQuery>, batch: number): Batches<Rows.SavingsUnitRow | Rows.SavingsPeriodRow>;
  collisionBatches(q: Unpaged<CollisionReportQuery>, batch: number): Batches<Rows.CollisionRow>;
  nearDuplicateBatches(q: Unpaged<NearDuplicateReportQuery>, batch: number): Batches<Rows.NearDuplicateRow>;
}

/** A report's query for all of its rows (an export): no page. */
export type Unpaged<Q> = Omit<Q, 'limit' | 'offset'>;

/**
 * Every row a report selects, in its order, a batch of at most `batch` rows at a time, each with
 * the number of rows in all: what an export writes out as it reads, never holding more than a
 * batch. One statement or cursor read through (no OFFSET re-reading the rows before a page); the
 * adapter releases it when the iteration ends, however it ends. At least one batch (perhaps empty).
 */
export type Batches<Row> = AsyncIterable<Page<Row>>;
