import { createHash, randomBytes } from 'node:crypto';
import type { HoldList, HoldRequest, HoldsQuery, HoldView } from '../../shared/holds.js';
import {
  FileOnHoldError,
  ForbiddenError,
  IdempotencyKeyReusedError,
  NotFoundError,
  type HeldAction,
} from '../errors.js';
import type { Account } from '../store/accounts/port.js';
import type { ArchiveStore } from '../store/archive-store.js';
import type { HeldFile, HoldRecord, Person } from '../store/holds/port.js';
import type { AuditService } from './audit.js';
import { reaches, type UnitDirectory } from './unit-directory.js';

/** Files named one by one in a refusal. */
const NAMED = 5;

/** Of these files, those a new hold covers (the hold's `covers`, as `settleUnderWay` is handed it). */
export type Covered = (fileIds: readonly string[]) => Promise<Set<string>>;

/**
 * The records under way whose files a new hold covers, page by page: what each service's
 * `settleHeld` stops or finishes. `page` reads the records under way (those of the states the
 * caller settles) in a stable order, each page after `after`, the last record of the page before;
 * each page's files are asked about together. Records are yielded before the next page is read, so
 * the caller may move them out of their state meanwhile. A page none of whose files are covered
 * yields nothing; the generator ends at an empty page.
 */
export async function* heldUnderWay<R>(
  page: (after: R | undefined) => Promise<readonly R[]>,
  fileOf: (record: R) => string,
  covered: Covered,
): AsyncGenerator<R[], void, undefined> {
  let after: R | undefined;
  for (;;) {
    const records = await page(after);
    if (records.length === 0) return;
    after = records.at(-1);
    const held = await covered([...new Set(records.map(fileOf))]);
    const underWay = records.filter((r) => held.has(fileOf(r)));
    if (underWay.length > 0) yield underWay;
  }
}

/**
 * 冻结: holds on files, or on every file of a unit, placed and lifted by administrators within
 * their reach. A held file cannot be withdrawn, purged or disposed of: those ask `heldAmong`
 * (or `refuseHeld`) first. A file is held when an active hold names it, or a unit hold covers a
 * unit that has an upload of it, counted or in the trash (the ledger says which units:
 * `Ledger.unitsWithUploads`); nothing here reads another capability's tables
 * (docs/decisions/holds.md).
 */
export class HoldService {
  constructor(
    private readonly deps: {
      store: Pick<ArchiveStore, 'holds' | 'ledger'>;
      directory: Pick<UnitDirectory, 'reachOf' | 'reachSubtree' | 'unitInReach' | 'getMany'>;
      audit: Pick<AuditService, 'recordSteps'>;
      /**
       * Settle the withdrawals, disposals, purges and content deletions under way of the files a new
       * hold covers (each service's `settleHeld`), in this order, so that none takes effect after
       * the hold has answered. Wired by the composition root.
       */
      settleUnderWay?: ReadonlyArray<(covered: Covered) => Promise<void>>;
      clock?: () => Date;
    },
  ) {}

  private now(): Date {
    return (this.deps.clock ?? (() => new Date()))();
  }

  /**
   * Places a hold on files that have an upload in the administrator's reach, or on a unit of it.
   * With the client's key (`Idempotency-Key`), a retry of the request that placed a hold answers
   * that hold, settled again, instead of placing another: its id is made from the key.
   */
  async place(account: Account, request: HoldRequest, address: string | null, key?: string): Promise<HoldView> {
    admin(account);
    const id = key === undefined ? randomBytes(16).toString('hex') : holdIdOf(account, key);
    if (key !== undefined) {
      const placed = await this.deps.store.holds.get(id);
      if (placed) return this.placedAgain(placed, request, account, address);
    }
    const reach = await this.deps.directory.reachOf(account);
    if (reach.kind === 'nothing') throw new NotFoundError('您的单位不在单位目录中，不能冻结：请联系上级管理员。');
    const by: Person = { id: account.id, username: account.username };
    let files: HeldFile[] | null = null;
    let unit: HoldRecord['unit'] = null;
    let area: string;
    if (request.unit !== undefined) {
      const held = await this.deps.directory.unitInReach(account, request.unit);
      unit = { id: held.id, name: held.name, path: held.path.join(' / ') };
      area = held.lineage;
    } else {
      files = await this.filesInReach(account, [...new Set(request.files)]);
      area = reach.kind === 'subtree' ? reach.root.lineage : '';
    }
    const hold: HoldRecord = {
      id,
      files,
      unit,
      area,
      reason: request.reason,
      placedBy: by,
      placedAt: this.now(),
      liftedBy: null,
      liftedAt: null,
    };
    // Two retries of one request racing: the one that did not record it answers the other's.
    if (!(await this.deps.store.holds.place(hold)))
      return this.placedAgain((await this.deps.store.holds.get(id))!, request, account, address);
    return this.settled(hold, account, address);
  }

  /** The hold a retry's key placed before: answered as it is, if the retry asks for the same. */
  private async placedAgain(
    placed: HoldRecord,
    request: HoldRequest,
    account: Account,
    address: string | null,
  ): Promise<HoldView> {
    const files = request.files && [...new Set(request.files)];
    const same =
      placed.reason === request.reason &&
      placed.unit?.id === request.unit &&
      (placed.files?.map((f) => f.id).join() ?? undefined) === files?.join();
    if (!same)
      throw new IdempotencyKeyReusedError(
        'This Idempotency-Key already placed a different hold. Send each new hold with a new key; repeat a key only to retry the same hold.',
      );
    // Lifted since: nothing to settle.
    return placed.liftedAt === null ? this.settled(placed, account, address) : viewOf(placed);
  }

  /**
   * The hold, recorded, in the audit log (once by its key) and settled: the withdrawals, disposals,
   * purges and deletions under way looked for after it was recorded, so that one that asked about
   * holds before it is found here (docs/decisions/holds.md).
   */
  private async settled(hold: HoldRecord, account: Account, address: string | null): Promise<HoldView> {
    await this.audit('hold_placed', hold, account, address);
    for (const settle of this.deps.settleUnderWay ?? []) await settle((fileIds) => this.covers(hold, fileIds));
    return viewOf(hold);
  }

  /** Lifts a hold the administrator sees; a hold lifted already is answered as it is (a retry changes nothing). */
  async lift(account: Account, id: string, address: string | null): Promise<HoldView> {
    const hold = await this.visible(account, id);
    if (hold.liftedAt !== null && hold.liftedBy?.id !== account.id) return viewOf(hold);
    if (hold.liftedAt === null)
      await this.deps.store.holds.lift(id, { id: account.id, username: account.username }, this.now());
    const lifted = (await this.deps.store.holds.get(id))!;
    // After the lift, under the hold's key: the lifter's retry of a lift whose event a crash lost
    // records it, once (another administrator's lift is that one's to record).
    if (lifted.liftedBy?.id === account.id) await this.audit('hold_lifted', lifted, account, address);
    return viewOf(lifted);
  }

  async get(account: Account, id: string): Promise<HoldView> {
    return viewOf(await this.visible(account, id));
  }

  /** The holds of the administrator's reach (units in it, files held by its administrators or below), the latest first. */
  async list(account: Account, query: HoldsQuery): Promise<HoldList> {
    admin(account);
    const page = { limit: query.limit, offset: query.offset };
    const reach = await this.deps.directory.reachOf(account);
    if (reach.kind === 'nothing') return { items: [], total: 0, ...page };
    const area = reach.kind === 'subtree' ? reach.root.lineage : undefined;
    const { items, total } = await this.deps.store.holds.list(area, query.state, page);
    return { items: items.map(viewOf), total, ...page };
  }

  /** Which of these files are on hold (purge and disposal skip or refuse them). */
  async heldAmong(fileIds: readonly string[]): Promise<Set<string>> {
    return new Set((await this.holdsOn(fileIds)).keys());
  }

  /** The active holds on each of these files that is held (files not held are absent). */
  async holdsOn(fileIds: readonly string[]): Promise<Map<string, HoldRecord[]>> {
    const files = [...new Set(fileIds)];
    const found = new Map<string, HoldRecord[]>();
    if (files.length === 0) return found;
    const { holds, ledger } = this.deps.store;
    // Unit holds are few: the ledger is asked only about the units held, by its index.
    const heldUnits = await holds.heldUnits();
    const unitsOf =
      heldUnits.length > 0 ? await ledger.unitsWithUploads(files, heldUnits) : new Map<string, string[]>();
    const covering = await holds.covering(files, [...new Set([...unitsOf.values()].flat())]);
    for (const fileId of files) {
      const units = unitsOf.get(fileId) ?? [];
      const on = covering.filter(
        (h) => h.files?.some((f) => f.id === fileId) || (h.unit !== null && units.includes(h.unit.id)),
      );
      if (on.length > 0) found.set(fileId, on);
    }
    return found;
  }

  /** Which of these files one hold covers: named by it, or with an upload of its unit. */
  private async covers(hold: HoldRecord, fileIds: readonly string[]): Promise<Set<string>> {
    if (hold.files) {
      const named = new Set(hold.files.map((f) => f.id));
      return new Set(fileIds.filter((id) => named.has(id)));
    }
    if (!hold.unit || fileIds.length === 0) return new Set();
    return new Set((await this.deps.store.ledger.unitsWithUploads(fileIds, [hold.unit.id])).keys());
  }

  /**
   * Refuses, before anything changes, an action on files some of which are on hold: throws
   * `FileOnHoldError` (423 `file_on_hold`) naming the first held file, its name and the hold's reason.
   */
  async refuseHeld(action: HeldAction, files: ReadonlyArray<{ fileId: string; fileName: string }>): Promise<void> {
    const held = await this.holdsOn(files.map((f) => f.fileId));
    if (held.size === 0) return;
    const named = new Map(files.map((f) => [f.fileId, f.fileName]));
    throw new FileOnHoldError(
      action,
      [...held].map(([fileId, holds]) => ({
        fileId,
        fileName: named.get(fileId) ?? fileId,
        holdId: holds[0]!.id,
        reason: holds[0]!.reason,
      })),
    );
  }

  /**
   * The files named, each with an upload in the caller's reach (counted or in its trash), with the
   * name the reach last uploaded it under; any other is "not found", as elsewhere.
   */
  private async filesInReach(account: Account, fileIds: string[]): Promise<HeldFile[]> {
    const { ledger } = this.deps.store;
    const reach = await this.deps.directory.reachOf(account);
    const unitsOf = await ledger.unitsWithUploads(fileIds);
    let inReach: (fileId: string) => boolean = (fileId) => unitsOf.has(fileId);
    if (reach.kind === 'subtree') {
      const units = await this.deps.directory.getMany([...new Set([...unitsOf.values()].flat())]);
      const reached = new Set(units.filter((u) => reaches(reach, u)).map((u) => u.id));
      inReach = (fileId) => (unitsOf.get(fileId) ?? []).some((u) => reached.has(u));
    }
    const unknown = fileIds.filter((id) => !inReach(id));
    if (unknown.length > 0)
      throw new NotFoundError(
        `找不到${unknown.length} 个文件（${unknown.slice(0, NAMED).join('、')}${unknown.length > NAMED ? ' 等' : ''}），或不在您的范围内：请从本单位文件中选择。`,
        { files: unknown.slice(0, NAMED), count: unknown.length },
      );
    const subtree = await this.deps.directory.reachSubtree(account);
    const named: HeldFile[] = [];
    for (const id of fileIds) {
      const latest = subtree
        ? await ledger.latestUploadInScope(id, { subtree })
        : (await ledger.entriesForFile(id)).sort((a, b) => b.lastUploadTime.getTime() - a.lastUploadTime.getTime())[0];
      // Only in the trash: no entry names it; its id stands for its name.
      named.push({ id, name: latest?.lastUploadFileName ?? id });
    }
    return named;
  }

  /** A hold the administrator sees: its area within their reach; any other is "not found". */
  private async visible(account: Account, id: string): Promise<HoldRecord> {
    admin(account);
    const hold = await this.deps.store.holds.get(id);
    const reach = await this.deps.directory.reachOf(account);
    if (!hold || reach.kind === 'nothing' || (reach.kind === 'subtree' && !hold.area.startsWith(reach.root.lineage)))
      throw new NotFoundError('找不到这项冻结，或它不在您的范围内：请从“冻结”页面打开它。');
    return hold;
  }

  /** A hold's event, under its key: recorded once, whoever records it (a lift's retry too). */
  private async audit(
    action: 'hold_placed' | 'hold_lifted',
    hold: HoldRecord,
    account: Account,
    address: string | null,
  ): Promise<void> {
    await this.deps.audit.recordSteps({ id: account.id, username: account.username, unit: account.unit }, [
      {
        key: `${action}:${hold.id}`,
        action,
        details: {
          address,
          ...(hold.files?.length === 1 && { fileId: hold.files[0]!.id, fileName: hold.files[0]!.name }),
          note: {
            code: action,
            holdId: hold.id,
            reason: hold.reason,
            ...(hold.unit ? { unit: hold.unit.path } : { files: hold.files?.length ?? 0 }),
          },
        },
      },
    ]);
  }
}

/** A hold's id made from the client's key: the same for a retry by the same account, unguessable without the key. */
function holdIdOf(account: Account, key: string): string {
  return createHash('sha256').update(`hold\u0000${account.id}\u0000${key}`).digest('hex').slice(0, 32);
}

function admin(account: Account): void {
  if (account.role !== 'admin') throw new ForbiddenError('只有管理员可以冻结或解除冻结文件。');
}

export function viewOf(h: HoldRecord): HoldView {
  return {
    id: h.id,
    scope: h.unit ? { kind: 'unit', unit: h.unit } : { kind: 'files', files: h.files ?? [] },
    reason: h.reason,
    placedBy: h.placedBy,
    placedAt: h.placedAt.toISOString(),
    liftedBy: h.liftedBy,
    liftedAt: h.liftedAt?.toISOString() ?? null,
    active: h.liftedAt === null,
  };
}
