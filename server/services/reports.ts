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
} from '../../shared/reports.js';
import type { AccountStore } from '../store/accounts/port.js';
import type {
  ReportFilter,
  ReportPaging,
  Reports,
  StoredCrossUnitRow,
  StoredRepeatRow,
} from '../store/reports/port.js';
import type { ReportCalendar } from './calendar.js';

/** A report's query as the API parsed it, without the output format. */
type Parsed<Q> = Omit<Q, 'format'>;
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
    const page = await this.reports.repeatUploaders({
      ...this.filter(q),
      ...paging(q, REPEAT_SORTS[q.group]),
      group: q.group,
      userName: q.user,
      unitId: q.unitId,
      min: q.min,
    });
    const names = await this.accounts.displayNames(page.items.flatMap((r) => ('userName' in r ? [r.userName] : [])));
    const items = page.items.map((r: StoredRepeatRow): RepeatUploaderRow =>
      'userName' in r ? { ...r, userDisplayName: names.get(r.userName) ?? null } : r,
    );
    return { items, total: page.total, limit: q.limit, offset: q.offset };
  }

  async crossUnit(q: Parsed<CrossUnitQuery>): Promise<ReportPage<CrossUnitRow>> {
    const page = await this.reports.crossUnit({ ...this.filter(q), ...paging(q, CROSS_UNIT_SORTS), min: q.min });
    const names = await this.accounts.displayNames(page.items.flatMap((r) => r.uploaders.flatMap((u) => u.userNames)));
    const items = page.items.map((r: StoredCrossUnitRow): CrossUnitRow => ({
      ...r,
      uploaders: r.uploaders.map((u) => ({
        ...u,
        userDisplayNames: u.userNames.map((login) => names.get(login) ?? null),
      })),
    }));
    return { items, total: page.total, limit: q.limit, offset: q.offset };
  }

  async savings(q: Parsed<SavingsQuery>): Promise<SavingsReport> {
    const page = await this.reports.savings({
      ...this.filter(q),
      ...paging(q, SAVINGS_SORTS[q.group]),
      group: q.group,
    });
    return { ...page, limit: q.limit, offset: q.offset };
  }

  async collisions(q: Parsed<CollisionsQuery>): Promise<ReportPage<CollisionRow>> {
    const page = await this.reports.collisions({ ...this.filter(q), ...paging(q, COLLISION_SORTS), min: q.min });
    return { ...page, limit: q.limit, offset: q.offset };
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

function paging(q: Pick<CommonQuery, 'sort' | 'order' | 'limit' | 'offset'>, sorts: readonly string[]): ReportPaging {
  const sort = q.sort ?? sorts[0]!;
  return { sort, order: q.order ?? defaultOrder(sort), limit: q.limit, offset: q.offset };
}
