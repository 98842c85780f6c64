import { AUDIT_GROUPS, auditNoteDetail, type AuditNote } from '../../shared/audit-notes.js';
import type { AuditAction, AuditEventView, AuditQuery, Unit } from '../../shared/schemas.js';
import type { AccountStore } from '../store/accounts/port.js';
import type { AuditEvent, AuditLog, AuditSearch } from '../store/audit/port.js';

/** Who acted: an account, or only the user name someone tried (a failed login). */
export type AuditActor = { id: string; username: string; unit: Unit } | { attemptedUserName: string };

export interface AuditDetails {
  /** The client's address, as the HTTP layer sees it (null for the archive command). */
  address: string | null;
  fileId?: string | null;
  fileName?: string | null;
  /** What happened beyond the action; its English words become the event's detail. */
  note?: AuditNote;
}

/**
 * The audit log's rules: every event gets the time from the service's clock and the actor's unit
 * at that moment. Recording fails closed: when the event cannot be stored, the action reports an
 * error instead of going unrecorded. An event keeps the login of the moment; a page of events
 * read back names each account by its display name now.
 */
export class AuditService {
  constructor(
    private readonly log: AuditLog,
    private readonly accounts: Pick<AccountStore, 'displayNames'>,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async record(action: AuditAction, actor: AuditActor, details: AuditDetails): Promise<void> {
    await this.log.append(this.eventOf(action, actor, details));
  }

  /** Records events of one actor together (one write on the embedded store). */
  async recordMany(
    actor: AuditActor,
    events: ReadonlyArray<{ action: AuditAction; details: AuditDetails }>,
  ): Promise<void> {
    const at = this.clock();
    await this.log.appendMany(events.map((e) => this.eventOf(e.action, actor, e.details, at)));
  }

  /**
   * Records the events of steps, each under its step's key (`withdrawn:<id>`…), before the step's
   * last write: whoever finishes the step (the request, its retry, the sweep after a crash) records
   * them again, and each is recorded once (one write on the embedded store).
   */
  async recordSteps(
    actor: AuditActor,
    events: ReadonlyArray<{ key: string; action: AuditAction; details: AuditDetails }>,
  ): Promise<void> {
    const at = this.clock();
    await this.log.appendOnce(events.map((e) => ({ key: e.key, event: this.eventOf(e.action, actor, e.details, at) })));
  }

  /** The event as it is recorded, for a store that records it with other changes (an upload's count). */
  eventOf(action: AuditAction, actor: AuditActor, details: AuditDetails, at: Date = this.clock()): AuditEvent {
    const who =
      'attemptedUserName' in actor
        ? { userId: null, userName: actor.attemptedUserName, unit: null }
        : { userId: actor.id, userName: actor.username, unit: actor.unit };
    return {
      at,
      action,
      ...who,
      address: details.address,
      fileId: details.fileId ?? null,
      fileName: details.fileName ?? null,
      detail: details.note ? auditNoteDetail(details.note) : '',
      note: details.note ?? null,
    };
  }

  async search(query: Omit<AuditQuery, 'format'>): Promise<{ items: AuditEventView[]; total: number }> {
    const { items, total } = await this.log.search({ ...auditSearch(query), limit: query.limit, offset: query.offset });
    return { total, items: await this.viewed(items) };
  }

  /** Every event the query selects, newest first, `batch` at a time (an export). */
  async *searchRows(
    query: Omit<AuditQuery, 'format' | 'limit' | 'offset'>,
    batch: number,
  ): AsyncGenerator<{ items: AuditEventView[]; total: number }> {
    for await (const { items, total } of this.log.searchBatches(auditSearch(query), batch))
      yield { total, items: await this.viewed(items) };
  }

  /** Events as shown, their accounts' display names looked up once for them. */
  private async viewed(items: Array<AuditEvent & { id: string }>): Promise<AuditEventView[]> {
    // Only an account's events: a failed login's attempted name is nobody's, whoever took it later.
    const names = await this.accounts.displayNames(items.flatMap((e) => (e.userId === null ? [] : [e.userName])));
    return items.map((e) => auditEventView(e, e.userId === null ? null : (names.get(e.userName) ?? null)));
  }
}

function auditSearch(query: Omit<AuditQuery, 'format' | 'limit' | 'offset'>): Omit<AuditSearch, 'limit' | 'offset'> {
  const unit =
    query.city || query.county || query.town ? { city: query.city, county: query.county, town: query.town } : undefined;
  return {
    from: query.from,
    to: query.to,
    action: query.action,
    ...(query.group && { actions: AUDIT_GROUPS[query.group] }),
    userName: query.user,
    unit,
    text: query.q,
  };
}

export function auditEventView(e: AuditEvent & { id: string }, userDisplayName: string | null): AuditEventView {
  return { ...e, userDisplayName, at: e.at.toISOString() };
}
