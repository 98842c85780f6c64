import { randomBytes } from 'node:crypto';
import type {
  DisposalAnswer,
  DisposalList,
  DisposalRequest,
  DisposalView,
  RegisterQuery,
} from '../../shared/disposals.js';
import type { Unit } from '../../shared/schemas.js';
import { AlreadyDisposedError, FileOnHoldError, ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import type { Account } from '../store/accounts/port.js';
import type { ArchiveStore } from '../store/archive-store.js';
import { disposalKey, type DisposalRecord, type Uploader } from '../store/disposals/port.js';
import type { UnitSubtree, ViewScope } from '../store/ledger/port.js';
import type { AuditService } from './audit.js';
import { heldUnderWay, type Covered, type HoldService } from './holds.js';
import type { Person } from '../store/withdrawals/port.js';
import type { ReportCalendar } from './calendar.js';
import { ARCHIVE_UNIT, type UnitDirectory } from './unit-directory.js';

/** Files named one by one in a refusal. */
const NAMED = 5;

/** Any time at all: every disposal under way, for a hold's settling. */
const EVER = new Date(8.64e15);

/**
 * Deletes a content for good: its catalog entry and its bytes (issue 41 part 3's purge of content
 * nobody holds). Safe to call again for a content already gone.
 */
export type ContentDeletion = (fileId: string, by: Person, why: string) => Promise<'deleted' | 'held' | 'gone'>;

export interface DisposalDeps {
  store: Pick<ArchiveStore, 'ledger' | 'catalog' | 'withdrawals' | 'disposals' | 'receipts' | 'accounts'>;
  directory: Pick<UnitDirectory, 'reachOf' | 'reachSubtree' | 'unitInReach' | 'narrowToReach'>;
  audit: Pick<AuditService, 'recordSteps'>;
  calendar: Pick<ReportCalendar, 'startOf' | 'endOf'>;
  /** The content's deletion (the purge's): 'held' when an upload counted since its reversal keeps it. */
  deleteContent: ContentDeletion;
  /** 冻结: a held file is never disposed of (the request is refused whole, 423 file_on_hold). */
  holds: Pick<HoldService, 'refuseHeld' | 'heldAmong'>;
  clock?: () => Date;
}

/**
 * 销毁 and 销毁清册. A top-level administrator disposes of files: for each, the register entry
 * first (`disposing`, with what the 清册 shows, read before anything changes), then every upload
 * of the file that counts reversed by the ledger under a key made from the entry's id (`reverseOnce`), and its
 * withdrawals still in the trash closed; then `deleting`, the content's bytes and catalog entry
 * deleted, and `disposed`. Each step can be run again, so a retry or the sweep
 * (`finishInterrupted`) finishes one a crash interrupted, without transactions
 * (docs/decisions/disposal.md).
 */
export class DisposalService {
  constructor(private readonly deps: DisposalDeps) {}

  private now(): Date {
    return (this.deps.clock ?? (() => new Date()))();
  }

  async dispose(
    account: Account,
    request: DisposalRequest,
    address: string | null,
    attempt = 0,
  ): Promise<DisposalAnswer> {
    await this.requireTopLevel(account);
    const { deleteContent } = this.deps;
    const { store } = this.deps;

    let fileIds: string[];
    let skippedRows = 0;
    if (request.receipt !== undefined) {
      const receipt = await store.receipts.get(account.id, request.receipt);
      if (!receipt) throw new NotFoundError('没有这个上传清单，或它不是您的。请从“我的上传清单”中打开它。');
      const ids = new Set<string>();
      for (const row of receipt.rows) {
        if (row.fileId) ids.add(row.fileId);
        else skippedRows++;
      }
      fileIds = [...ids];
      if (fileIds.length === 0) throw new ValidationError('这份上传清单里没有可销毁的文件（只有上传失败的文件）。');
    } else fileIds = [...new Set(request.fileIds)];
    if (fileIds.length === 0) throw new ValidationError('请给出要销毁的文件（fileIds）或上传清单（receipt）。');

    // Refused whole before anything changes: unknown files, then held ones.
    const register = await store.disposals.ofFiles(fileIds);
    const unknown: string[] = [];
    for (const fileId of fileIds) if (!register.has(fileId) && !(await store.catalog.get(fileId))) unknown.push(fileId);
    if (unknown.length > 0)
      throw new NotFoundError(`找不到 ${unknown.length} 个文件（${named(unknown)}）：请核对文件编号。`, {
        fileIds: unknown.slice(0, NAMED),
        count: unknown.length,
      });
    const pending = fileIds.filter((f) => register.get(f)?.state !== 'disposed');
    const entries = await Promise.all(
      pending.map(async (fileId) => [fileId, await store.catalog.get(fileId)] as const),
    );
    await this.deps.holds.refuseHeld(
      'dispose',
      entries.map(([fileId, entry]) => ({ fileId, fileName: entry?.fileName ?? fileId })),
    );

    const by = { id: account.id, username: account.username };
    const alreadyDisposed: DisposalView[] = [];
    const underWay: DisposalRecord[] = [];
    const mine: string[] = [];
    for (const fileId of fileIds) {
      let record = register.get(fileId);
      if (record?.state === 'disposed') {
        alreadyDisposed.push(fullView(record));
        continue;
      }
      if (!record) {
        const now = this.now();
        const described = await this.describe(fileId);
        if (!described) continue; // deleted meanwhile by another disposal: its entry answers below
        const opened = await store.disposals.open({
          id: randomBytes(16).toString('hex'),
          ...described,
          reason: request.reason,
          approvalRef: request.approvalRef,
          disposedBy: by,
          disposedAt: now,
          state: 'disposing',
          cleared: false,
          changedAt: now,
        });
        record = opened.record;
        if (opened.opened) mine.push(record.id);
      }
      underWay.push(record);
    }
    // 冻结, asked again once the entries are recorded: a hold placed before is seen here; one placed
    // after finds them (HoldService.place) and stops those not yet cleared (docs/decisions/holds.md).
    try {
      await this.deps.holds.refuseHeld(
        'dispose',
        underWay.map((r) => ({ fileId: r.fileId, fileName: r.fileName })),
      );
    } catch (err) {
      // Refused whole: none of this request's entries is cleared, so nothing of them was done.
      if (err instanceof FileOnHoldError) for (const id of mine) await store.disposals.stop(id);
      throw err;
    }
    const disposed: DisposalView[] = [];
    const stopped: DisposalRecord[] = [];
    for (const record of underWay) {
      // Cleared by one conditional write, which a hold placed since the look above cannot undo; or
      // stopped by that hold already (the entry gone), and refused below.
      if (record.state === 'disposing' && !(await store.disposals.clear(record.id))) {
        const now = await store.disposals.get(record.id);
        if (!now) stopped.push(record);
        else if (now.state === 'disposed') alreadyDisposed.push(fullView(now));
        else disposed.push(fullView(await this.finish(now, deleteContent, address, account)));
        continue;
      }
      disposed.push(fullView(await this.finish({ ...record, cleared: true }, deleteContent, address, account)));
    }
    if (stopped.length > 0) {
      // The others are disposed of; these are refused as held, while the hold lasts.
      await this.deps.holds.refuseHeld(
        'dispose',
        stopped.map((r) => ({ fileId: r.fileId, fileName: r.fileName })),
      );
      // Lifted already: asked again (what is disposed of stays so, and is answered as such).
      if (attempt >= 3) throw new Error('the holds on these files keep changing; dispose of them again');
      const again = await this.dispose(
        account,
        { ...request, fileIds: stopped.map((r) => r.fileId) },
        address,
        attempt + 1,
      );
      disposed.push(...again.disposed);
    }
    if (disposed.length === 0 && alreadyDisposed.length > 0) throw new AlreadyDisposedError(alreadyDisposed);
    return { disposed, alreadyDisposed, skippedRows };
  }

  /**
   * 冻结 placed: the disposals under way of files it holds (`covered`) are settled before the hold
   * answers. One not cleared yet is stopped (its entry removed, nothing of it done: its request then
   * refuses it as held); one cleared is finished here, its bytes deleted before the hold answers.
   * After this, no disposal of a held file takes effect (docs/decisions/holds.md).
   */
  async settleHeld(covered: Covered): Promise<void> {
    const { disposals } = this.deps.store;
    // Under way at any moment: a few (a receipt's, at most its files); read by pages all the same.
    const pages = heldUnderWay(
      (after?: DisposalRecord) => disposals.unfinished(EVER, 500, after),
      (r) => r.fileId,
      covered,
    );
    for await (const underWay of pages)
      for (const record of underWay) {
        if (record.state === 'disposing' && !record.cleared && (await disposals.stop(record.id))) continue;
        // Cleared (before, or since it was read): finished here, its bytes gone before the hold answers.
        const now = await disposals.get(record.id);
        if (!now || now.state === 'disposed' || (now.state === 'disposing' && !now.cleared)) continue;
        try {
          await this.finish(now, this.deps.deleteContent, null);
        } catch (err) {
          // Its file counted again as fast as its uploads are reversed: none of its bytes is going
          // now. Left `deleting` for the sweep (or its request's retry), as its request leaves it;
          // the hold is recorded, and answers (docs/decisions/holds.md).
          if (!(err instanceof StillCountedError)) throw err;
        }
      }
  }

  async list(account: Account, query: RegisterQuery): Promise<DisposalList> {
    const page = { limit: query.limit, offset: query.offset };
    const reach = await this.readerReach(account);
    if (reach === null) return { items: [], total: 0, ...page };
    let scope: ViewScope | undefined = reach && { subtree: reach };
    if (query.unit !== undefined) {
      // Everything is in a top-level administrator's reach, units gone from the directory too.
      if (reach !== undefined) await this.deps.directory.unitInReach(account, query.unit);
      scope = { unitId: query.unit };
    } else if (query.city !== undefined) {
      const { city, county, town } = await this.deps.directory.narrowToReach(account, {
        city: query.city,
        ...(query.county !== undefined && { county: query.county }),
        ...(query.town !== undefined && { town: query.town }),
      });
      scope = { subtree: { city, ...(county !== undefined && { county }), ...(town !== undefined && { town }) } };
    }
    const { calendar } = this.deps;
    const { items, total } = await this.deps.store.disposals.list(
      {
        ...(scope && { scope }),
        ...(query.from !== undefined && { from: calendar.startOf(query.from) }),
        ...(query.to !== undefined && { to: calendar.endOf(query.to) }),
      },
      page,
    );
    return { items: items.map((r) => viewOf(r, reach)), total, ...page };
  }

  /** Every entry the query selects, a batch at a time (the CSV export). */
  async *batches(account: Account, query: Omit<RegisterQuery, 'limit' | 'offset'>, size: number) {
    // The register only grows, the latest first: an entry added while exporting pushes the rest a
    // place down the pages, so one seen already may come again; it is skipped.
    const seen = new Set<string>();
    for (let offset = 0; ; offset += size) {
      const batch = await this.list(account, { ...query, limit: size, offset });
      const items = batch.items.filter((d) => !seen.has(d.id));
      for (const d of items) seen.add(d.id);
      yield { items, total: batch.total };
      if (batch.items.length < size) return;
    }
  }

  async get(account: Account, id: string): Promise<DisposalView> {
    const reach = await this.readerReach(account);
    const record = await this.deps.store.disposals.get(id);
    if (!record || reach === null || (reach !== undefined && !record.units.some((u) => inSubtree(u, reach))))
      throw new NotFoundError('找不到这条销毁记录，或它不在您的范围内：请从销毁清册打开它。');
    return viewOf(record, reach);
  }

  /**
   * Finishes disposals a crash interrupted (begun before `before`, never finished by a retry): run
   * by the garbage collector's sweep. Returns how many.
   */
  async finishInterrupted(before: Date): Promise<number> {
    const { deleteContent } = this.deps;
    let finished = 0;
    for (;;) {
      const records = await this.deps.store.disposals.unfinished(before, 100);
      let failure: Error | undefined;
      for (const record of records) {
        try {
          // One a crash left not cleared is asked about holds again: held, it is stopped.
          const cleared = await this.clearOrStop(record);
          if (cleared) await this.finish(cleared, deleteContent, null);
          finished++;
        } catch (err) {
          failure ??= err instanceof Error ? err : new Error('a disposal could not be finished', { cause: err });
        }
      }
      if (failure) throw failure;
      if (records.length < 100) return finished;
    }
  }

  /**
   * An entry the sweep found unfinished: cleared if `disposing` and not cleared and its file is not
   * held, stopped if it is held. Answers it as it is to be finished, or undefined when stopped (or
   * gone).
   */
  private async clearOrStop(record: DisposalRecord): Promise<DisposalRecord | undefined> {
    const { disposals } = this.deps.store;
    if (record.state !== 'disposing' || record.cleared) return record;
    const held = await this.deps.holds.heldAmong([record.fileId]);
    if (held.has(record.fileId) && (await disposals.stop(record.id))) return undefined;
    if (await disposals.clear(record.id)) return { ...record, cleared: true };
    return disposals.get(record.id); // moved on (another request, or stopped): as it is now
  }

  /** What the register shows of a file, read from the catalog and the ledger before anything changes. */
  private async describe(fileId: string) {
    const { store } = this.deps;
    const entry = await store.catalog.get(fileId);
    if (!entry) return undefined;
    const uploads = await store.ledger.uploadsOfFile(fileId);
    const counted = uploads.filter((u) => u.counted);
    const trash = await store.withdrawals.openOf(uploads.filter((u) => !u.counted).map((u) => u.key));
    const units = new Map<string, Unit>();
    const uploaders = new Map<string, Uploader>();
    // The ledger's entries name the units and uploaders of the uploads that count; the trash's
    // records, those of the withdrawn.
    for (const e of await store.ledger.entriesForFile(fileId)) {
      units.set(e.unit.id, plainUnit(e.unit));
      uploaders.set(`${e.userId}\u0000${e.unit.id}`, { id: e.userId, username: e.userName, unitId: e.unit.id });
    }
    for (const w of trash.values()) {
      units.set(w.upload.unit.id, plainUnit(w.upload.unit));
      const { id, username } = w.upload.account;
      uploaders.set(`${id}\u0000${w.upload.unit.id}`, { id, username, unitId: w.upload.unit.id });
    }
    const times = [...counted, ...uploads.filter((u) => trash.has(u.key))].map((u) => u.at.getTime());
    return {
      fileId,
      fileName: entry.fileName,
      fileLength: entry.length,
      storedAt: entry.uploadDate,
      units: [...units.values()].sort((a, b) => unitPath(a).localeCompare(unitPath(b), 'zh-CN')),
      uploaders: [...uploaders.values()].sort((a, b) => a.username.localeCompare(b.username, 'zh-CN')),
      firstUploadAt: times.length > 0 ? new Date(Math.min(...times)) : null,
      lastUploadAt: times.length > 0 ? new Date(Math.max(...times)) : null,
      countedUploads: counted.length,
      withdrawnUploads: trash.size,
    };
  }

  /** The steps after the entry: out of every count and the trash (`disposing`), then the bytes (`deleting`). */
  private async finish(
    record: DisposalRecord,
    deleteContent: ContentDeletion,
    address: string | null,
    actor?: Account,
  ): Promise<DisposalRecord> {
    const { store } = this.deps;
    if (record.state === 'disposing') {
      if (!record.cleared) throw new Error(`disposal ${record.id}: not cleared of holds, it cannot be finished`);
      await this.takeOutOfCounts(record);
      await store.disposals.advance(record.id, 'disposing', 'deleting', this.now());
      record = (await store.disposals.get(record.id))!;
    }
    if (record.state === 'deleting') {
      const why = `销毁（${record.approvalRef}）`;
      // The deletion reads the holders again after marking the content: an upload counted since
      // the rounds above keeps it ('held'), so it is taken out of the counts again and the deletion
      // tried again; still held, the disposal stays 'deleting' for the sweep.
      let fate = await deleteContent(record.fileId, record.disposedBy, why);
      for (let retry = 0; fate === 'held' && retry < 2; retry++) {
        await this.takeOutOfCounts(record);
        fate = await deleteContent(record.fileId, record.disposedBy, why);
      }
      if (fate === 'held') throw new StillCountedError(record);
      // Before the move, under the disposal's key: a crash between the two leaves the event to the
      // retry or the sweep that moves it, which records it once.
      await this.audit(record, address, actor);
      await store.disposals.advance(record.id, 'deleting', 'disposed', this.now());
      record = (await store.disposals.get(record.id))!;
    }
    return record;
  }

  /** Every upload of the file that counts reversed, its withdrawals in the trash closed. */
  private async takeOutOfCounts(record: DisposalRecord): Promise<void> {
    const { store } = this.deps;
    const key = disposalKey(record.id);
    // Read again after the changes: an upload counted or a withdrawal restored meanwhile is
    // caught by the next round (three; the deletion checks once more: see disposal.md).
    for (let round = 0; round < 3; round++) {
      const uploads = await store.ledger.uploadsOfFile(record.fileId);
      let changed = false;
      for (const upload of uploads) {
        // One that no longer counts is asked too: a reversal of it a crash left half done (this
        // disposal's own, on MongoDB's single-document steps) is finished by the asking, else its
        // totals would keep counting it and the deletion find it held (FAULT_SEED=193304).
        if ((await this.reverseOnce(upload.key, key)) === 'reversed') changed = true;
      }
      const open = await store.withdrawals.openOf(uploads.map((u) => u.key));
      for (const withdrawal of open.values()) await store.withdrawals.close(withdrawal.id, this.now());
      if (!changed && open.size === 0) break;
    }
  }

  /**
   * Reverses a counting upload under the disposal's key; if that key reversed it before (a restore
   * raced the disposal since), under the key's next numbered successor, so that a retry after a
   * crash finishes the same change rather than making another.
   */
  private async reverseOnce(actionKey: string, key: string): Promise<string> {
    for (let n = 1; ; n++) {
      const reversal = await this.deps.store.ledger.reverse(actionKey, n === 1 ? key : `${key}#${n}`);
      if (reversal !== 'repeated' || n >= MAX_REVERSALS_OF_ONE_UPLOAD) return reversal;
    }
  }

  private async audit(record: DisposalRecord, address: string | null, actor?: Account): Promise<void> {
    const by = record.disposedBy;
    const account = actor?.id === by.id ? actor : await this.deps.store.accounts.get(by.id);
    await this.deps.audit.recordSteps({ id: by.id, username: by.username, unit: account?.unit ?? ARCHIVE_UNIT }, [
      {
        key: `content_disposed:${record.id}`,
        action: 'content_disposed',
        details: {
          address,
          fileId: record.fileId,
          fileName: record.fileName,
          note: {
            code: 'disposed',
            disposalId: record.id,
            reason: record.reason,
            approvalRef: record.approvalRef,
            uploads: record.countedUploads,
            withdrawn: record.withdrawnUploads,
          },
        },
      },
    ]);
  }

  private async requireTopLevel(account: Account): Promise<void> {
    if (account.role !== 'admin' || (await this.deps.directory.reachOf(account)).kind !== 'everything')
      throw new ForbiddenError('只有顶级管理员可以销毁文件。');
  }

  /** Administrators read the register: a top-level one all of it (undefined), others the entries of their reach. */
  private async readerReach(account: Account): Promise<UnitSubtree | undefined | null> {
    if (account.role !== 'admin') throw new ForbiddenError('只有管理员可以查看销毁清册。');
    return this.deps.directory.reachSubtree(account);
  }
}

function inSubtree(unit: Unit, reach: UnitSubtree): boolean {
  return (
    unit.city === reach.city &&
    (reach.county === undefined || unit.county === reach.county) &&
    (reach.town === undefined || unit.town === reach.town)
  );
}

/** A disposal's file counted again after every round of its reversals: it stays `deleting`. */
class StillCountedError extends Error {
  constructor(record: DisposalRecord) {
    super(`disposal ${record.id}: an upload of ${record.fileId} keeps counting`);
  }
}

/** How many times one disposal reverses an upload that restores keep counting again, at most. */
const MAX_REVERSALS_OF_ONE_UPLOAD = 20;

const named = (ids: string[]) => ids.slice(0, NAMED).join('、') + (ids.length > NAMED ? ' 等' : '');

const unitPath = (u: Unit) => [u.city, u.county, u.town, u.street].filter(Boolean).join(' / ');

/** A unit as the register keeps it: its place, without what a JSON or BSON copy would lose or add. */
function plainUnit(u: Unit): Unit {
  return {
    id: u.id,
    geoType: u.geoType,
    city: u.city,
    ...(u.county !== undefined && { county: u.county }),
    ...(u.town !== undefined && { town: u.town }),
    ...(u.street !== undefined && { street: u.street }),
  };
}

const fullView = (r: DisposalRecord) => viewOf(r, undefined);

/** An entry as a reader sees it: an administrator below the top, only the units and uploaders of their reach. */
export function viewOf(r: DisposalRecord, reach: UnitSubtree | undefined): DisposalView {
  const units = reach ? r.units.filter((u) => inSubtree(u, reach)) : r.units;
  const shown = new Set(units.map((u) => u.id));
  return {
    id: r.id,
    fileId: r.fileId,
    fileName: r.fileName,
    size: r.fileLength,
    storedAt: r.storedAt.toISOString(),
    units: units.map(({ id, city, county, town, street }) => ({
      id,
      city,
      ...(county !== undefined && { county }),
      ...(town !== undefined && { town }),
      ...(street !== undefined && { street }),
    })),
    uploaders: [
      ...new Map(
        r.uploaders.filter((u) => shown.has(u.unitId)).map((u) => [u.id, { id: u.id, username: u.username }]),
      ).values(),
    ],
    otherUnits: r.units.length - units.length,
    firstUploadAt: r.firstUploadAt?.toISOString() ?? null,
    lastUploadAt: r.lastUploadAt?.toISOString() ?? null,
    countedUploads: r.countedUploads,
    withdrawnUploads: r.withdrawnUploads,
    reason: r.reason,
    approvalRef: r.approvalRef,
    disposedBy: r.disposedBy,
    disposedAt: r.disposedAt.toISOString(),
    state: r.state === 'disposed' ? 'disposed' : 'disposing',
  };
}
