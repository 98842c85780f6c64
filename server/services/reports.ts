import { COLLISION_SORTS, defaultOrder, CROSS_UNIT_SORTS, REPEAT_SORTS, SAVINGS_SORTS } from '../../shared/reports.js';
import type {
  CollisionRow,
  CollisionsQuery,
  CrossUnitQuery,
  CrossUnitRow,
  RepeatUploaderRow,
  RepeatUploadersQuery,
  ReportPage,
  SavingsQuery,
  SavingsReport,
  SavingsRow,
} from '../../shared/reports.js';
import type { AccountStore } from '../store/accounts/port.js';
import type {
  Batches,
  CollisionReportQuery,
  CrossUnitReportQuery,
  RepeatReportQuery,
  ReportFilter,
  ReportPaging,
  Reports,
  SavingsReportQuery,
  StoredCrossUnitRow,
  StoredRepeatRow,
} from '../store/reports/port.js';
import type { ReportCalendar } from './calendar.js';

/** A report's query as the API parsed it, without the output format. */
type Parsed<Q> = Omit<Q, 'format'>;
/** The same for an export: every row, no page. */
type Unpaged<Q> = Omit<Q, 'format' | 'limit' | 'offset'>;
type CommonQuery = Parsed<SavingsQuery>;

/**
 * The administrators' reports: turns the API's calendar days into the store's instants (in the
 * report time zone) and picks default sorting; the store computes. Each table is one page, its
 * uploaders named by their accounts' display names (looked up once for the page).
 */
export class ReportService {
  constructor(
    private readonly reports: Reports,
    readonly calendar: ReportCalendar,
    private readonly accounts: Pick<AccountStore, 'displayNames'>,
  ) {}

  async repeatUploaders(q: Parsed<RepeatUploadersQuery>): Promise<ReportPage<RepeatUploaderRow>> {
    const page = await this.reports.repeatUploaders({ ...this.repeatQuery(q), limit: q.limit, offset: q.offset });
    return { items: await this.namedRepeats(page.items), total: page.total, limit: q.limit, offset: q.offset };
  }

  /** Every row of the table, `batch` at a time (an export). */
  async *repeatUploaderRows(q: Unpaged<RepeatUploadersQuery>, batch: number): Batches<RepeatUploaderRow> {
    for await (const page of this.reports.repeatUploaderBatches(this.repeatQuery(q), batch))
      yield { items: await this.namedRepeats(page.items), total: page.total };
  }

  async crossUnit(q: Parsed<CrossUnitQuery>): Promise<ReportPage<CrossUnitRow>> {
    const page = await this.reports.crossUnit({ ...this.crossUnitQuery(q), limit: q.limit, offset: q.offset });
    return { items: await this.namedCrossUnit(page.items), total: page.total, limit: q.limit, offset: q.offset };
  }

  async *crossUnitRows(q: Unpaged<CrossUnitQuery>, batch: number): Batches<CrossUnitRow> {
    for await (const page of this.reports.crossUnitBatches(this.crossUnitQuery(q), batch))
      yield { items: await this.namedCrossUnit(page.items), total: page.total };
  }

  async savings(q: Parsed<SavingsQuery>): Promise<SavingsReport> {
    const page = await this.reports.savings({ ...this.savingsQuery(q), limit: q.limit, offset: q.offset });
    return { ...page, limit: q.limit, offset: q.offset };
  }

  savingsRows(q: Unpaged<SavingsQuery>, batch: number): Batches<SavingsRow> {
    return this.reports.savingsBatches(this.savingsQuery(q), batch);
  }

  async collisions(q: Parsed<CollisionsQuery>): Promise<ReportPage<CollisionRow>> {
    const page = await this.reports.collisions({ ...this.collisionQuery(q), limit: q.limit, offset: q.offset });
    return { ...page, limit: q.limit, offset: q.offset };
  }

  collisionRows(q: Unpaged<CollisionsQuery>, batch: number): Batches<CollisionRow> {
    return this.reports.collisionBatches(this.collisionQuery(q), batch);
  }

  private repeatQuery(q: Unpaged<RepeatUploadersQuery>): Unpaged<RepeatReportQuery> {
    return {
      ...this.filter(q),
      ...order(q, REPEAT_SORTS[q.group]),
      group: q.group,
      userName: q.user,
      unitId: q.unitId,
      min: q.min,
      copies: q.copies,
    };
  }

  private crossUnitQuery(q: Unpaged<CrossUnitQuery>): Unpaged<CrossUnitReportQuery> {
    return { ...this.filter(q), ...order(q, CROSS_UNIT_SORTS), min: q.min };
  }

  private savingsQuery(q: Unpaged<SavingsQuery>): Unpaged<SavingsReportQuery> {
    return { ...this.filter(q), ...order(q, SAVINGS_SORTS[q.group]), group: q.group };
  }

  private collisionQuery(q: Unpaged<CollisionsQuery>): Unpaged<CollisionReportQuery> {
    return { ...this.filter(q), ...order(q, COLLISION_SORTS), min: q.min };
  }

  /** Rows named by their accounts' display names, looked up once for the rows. */
  private async namedRepeats(rows: StoredRepeatRow[]): Promise<RepeatUploaderRow[]> {
    const names = await this.accounts.displayNames(rows.flatMap((r) => ('userName' in r ? [r.userName] : [])));
    return rows.map((r): RepeatUploaderRow =>
      'userName' in r ? { ...r, userDisplayName: names.get(r.userName) ?? null } : r,
    );
  }

  private async namedCrossUnit(rows: StoredCrossUnitRow[]): Promise<CrossUnitRow[]> {
    const names = await this.accounts.displayNames(rows.flatMap((r) => r.uploaders.flatMap((u) => u.userNames)));
    return rows.map((r): CrossUnitRow => ({
      ...r,
      uploaders: r.uploaders.map((u) => ({
        ...u,
        userDisplayNames: u.userNames.map((login) => names.get(login) ?? null),
      })),
    }));
  }

  private filter(q: Pick<CommonQuery, 'from' | 'to' | 'city' | 'county' | 'town' | 'q'>): ReportFilter {
    return {
      from: q.from ? this.calendar.startOf(q.from) : undefined,
      to: q.to ? this.calendar.endOf(q.to) : undefined,
      fromDay: q.from,
      toDay: q.to,
      unit: q.city ? { city: q.city, county: q.county, town: q.town } : undefined,
      fileName: q.q,
    };
  }
}

function order(q: Pick<CommonQuery, 'sort' | 'order'>, sorts: readonly string[]): Pick<ReportPaging, 'sort' | 'order'> {
  const sort = q.sort ?? sorts[0]!;
  return { sort, order: q.order ?? defaultOrder(sort) };
}
