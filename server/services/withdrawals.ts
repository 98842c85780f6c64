import { randomBytes } from 'node:crypto';
import { WITHDRAWABLE_MAX, type Unit, type WithdrawableQuery, type WithdrawableUploads } from '../../shared/schemas.js';
import {
  type FileUploadList,
  type FileUploadsQuery,
  type RestoreAnswer,
  type RestoreRequest,
  type TrashList,
  type TrashQuery,
  type WithdrawalAnswer,
  type WithdrawalRequest,
  type WithdrawalView,
} from '../../shared/withdrawals.js';
import {
  AlreadyPurgedError,
  AlreadyRestoredError,
  AlreadyWithdrawnError,
  FileOnHoldError,
  ForbiddenError,
  NotFoundError,
  ValidationError,
  WithdrawalTooLateError,
} from '../errors.js';
import type { Account } from '../store/accounts/port.js';
import type { ArchiveStore } from '../store/archive-store.js';
import type { FileUploadState, UploadDetails, UnitSubtree, ViewScope } from '../store/ledger/port.js';
import { withdrawalKeys, type Person, type WithdrawalRecord } from '../store/withdrawals/port.js';
import type { AuditService } from './audit.js';
import { heldUnderWay, type Covered, type HoldService } from './holds.js';
import { geographyOf, type UnitDirectory } from './unit-directory.js';

const DAY_MS = 86_400_000;

/** Later than any withdrawal's last change: `unfinished` before it lists all. */
const EVER = new Date(8.64e15);

/** Problems named one by one in a refusal. */
const NAMED = 5;

export interface WithdrawalSettings {
  /** A clerk withdraws their own uploads within this many days of each. */
  withdrawDays: number;
  /** A withdrawn upload stays restorable in the trash this long (and after, as 待清除, until the next sweep purges it). */
  trashDays: number;
}

/**
 * 撤回, 回收站 and 恢复. A withdrawal is recorded first (`withdrawing`), then the ledger reverses the
 * upload under a key made from the withdrawal's id, then the record says `withdrawn`; a restore
 * goes the same way (`restoring`, the ledger's restore under its own derived key, `restored`). Each
 * step can be run again, so a retry of the request, or the sweep (`finishInterrupted`), finishes
 * one a crash interrupted, without transactions (docs/decisions/withdrawal.md).
 */
export class WithdrawalService {
  constructor(
    private readonly deps: {
      store: Pick<ArchiveStore, 'ledger' | 'withdrawals' | 'receipts' | 'accounts' | 'unitFiles' | 'catalog'>;
      directory: Pick<UnitDirectory, 'reachSubtree' | 'get' | 'unitInReach'>;
      audit: Pick<AuditService, 'recordSteps'>;
      /** 冻结: a held file is not withdrawn. */
      holds: Pick<HoldService, 'refuseHeld' | 'heldAmong'>;
      settings: WithdrawalSettings;
      clock?: () => Date;
    },
  ) {}

  /** WITHDRAW_DAYS and TRASH_DAYS (the page is told them with the session). */
  get settings(): WithdrawalSettings {
    return this.deps.settings;
  }

  private now(): Date {
    return (this.deps.clock ?? (() => new Date()))();
  }

  async withdraw(
    account: Account,
    request: WithdrawalRequest,
    address: string | null,
    attempt = 1,
  ): Promise<Lazy<WithdrawalAnswer>> {
    const { store } = this.deps;
    let keys: string[];
    let skippedRows = 0;
    if (request.receipt !== undefined) {
      const receipt = await store.receipts.get(account.id, request.receipt);
      if (!receipt) throw new NotFoundError('没有这个上传清单，或它不是您的。请从“我的上传清单”中打开它。');
      keys = [];
      for (const row of receipt.rows) {
        if (row.uploadId) keys.push(row.uploadId);
        else skippedRows++;
      }
      if (keys.length === 0)
        throw new ValidationError('这份上传清单里没有可撤回的文件（只有上传失败的文件，或清单是旧版本生成的）。');
      keys = [...new Set(keys)];
    } else keys = [...new Set(request.uploads)];
    if (keys.length === 0) throw new ValidationError('请给出要撤回的上传（uploads）或上传清单（receipt）。');

    const recorded = await store.ledger.recordedUploads(keys);
    // An upload whose file was disposed of (销毁) or deleted is out of every count for good: a
    // receipt's such rows are skipped, uploads named one by one are refused.
    const gone = await this.goneFiles(keys.flatMap((key) => recorded.get(key) ?? []));
    if (gone.length > 0 && request.receipt !== undefined && gone.length < keys.length) {
      const goneKeys = new Set(gone.map((u) => u.key));
      keys = keys.filter((key) => !goneKeys.has(key));
      skippedRows += gone.length;
    } else if (gone.length > 0)
      throw new NotFoundError(
        `${gone.length} 个上传（${named(gone.map((u) => u.fileName))}）的文件已经销毁或彻底删除（见销毁清册），不必再撤回：它们已不计入任何统计。`,
        { uploads: gone.slice(0, NAMED).map((u) => u.key), count: gone.length },
      );
    const reach = account.role === 'admin' ? await this.deps.directory.reachSubtree(account) : null;
    const unknown: string[] = [];
    const notYours: string[] = [];
    const tooLate: UploadDetails[] = [];
    const units = new Map<string, Unit>();
    for (const key of keys) {
      const upload = recorded.get(key);
      if (!upload) {
        unknown.push(key);
        continue;
      }
      // Known after the first of its unit (a receipt's 10,000 uploads are mostly of one).
      const unit = units.get(upload.unitId) ?? (await this.unitOf(upload, units));
      if (account.role === 'admin') {
        if (reach === null || !inSubtree(unit, reach)) unknown.push(key);
      } else if (upload.accountId !== account.id) {
        // Another clerk's upload of the clerk's own unit may be named; elsewhere it is unknown.
        (unit.id === account.unit.id ? notYours : unknown).push(key);
      } else if (this.now().getTime() - upload.at.getTime() > this.deps.settings.withdrawDays * DAY_MS) {
        tooLate.push(upload);
      }
    }
    if (unknown.length > 0)
      throw new NotFoundError(
        `找不到${unknown.length} 个上传（${named(unknown)}），或不在您的范围内：请核对上传编号（上传清单中的 uploadId）。`,
        { uploads: unknown.slice(0, NAMED), count: unknown.length },
      );
    if (notYours.length > 0)
      throw new ForbiddenError(
        `${notYours.length} 个上传（${named(notYours)}）是本单位其他人上传的：办事员只能撤回自己的上传，请联系上传者或管理员。`,
      );
    if (tooLate.length > 0)
      throw new WithdrawalTooLateError(
        this.deps.settings.withdrawDays,
        tooLate.length,
        tooLate.slice(0, NAMED).map((u) => u.key),
      );
    const withdrawer: Person = { id: account.id, username: account.username };
    const open = await store.withdrawals.openOf(keys);
    // A restore under way is finished first (its upload counts again), then withdrawn anew.
    const restoring = [...open.values()].filter((r) => r.state === 'restoring');
    await this.finishRestores(restoring, address);
    for (const r of restoring) open.delete(r.uploadKey);
    const uploaders = new Map<string, string>();
    for (const upload of recorded.values())
      if (!uploaders.has(upload.accountId))
        uploaders.set(upload.accountId, (await store.accounts.get(upload.accountId))?.username ?? upload.accountId);
    const now = this.now();
    const opened = await store.withdrawals.openMany(
      keys
        .filter((key) => !open.has(key))
        .map((key): WithdrawalRecord => {
          const upload = recorded.get(key)!;
          return {
            id: randomBytes(16).toString('hex'),
            uploadKey: key,
            upload: {
              account: { id: upload.accountId, username: uploaders.get(upload.accountId)! },
              unit: units.get(upload.unitId)!,
              fileId: upload.fileId,
              fileName: upload.fileName,
              fileLength: upload.fileLength,
              at: upload.at,
            },
            withdrawnBy: withdrawer,
            withdrawnAt: now,
            reason: request.reason,
            note: request.note || null,
            state: 'withdrawing',
            cleared: false,
            changedAt: now,
            restoredBy: null,
            restoredAt: null,
            purgedBy: null,
            purgedAt: null,
          };
        }),
    );
    for (const { record } of opened) open.set(record.uploadKey, record);
    // 冻结, asked once the withdrawals are recorded: a hold placed before is seen here; one placed
    // after finds them (HoldService.place) and stops those not yet cleared (docs/decisions/holds.md).
    try {
      await this.deps.holds.refuseHeld(
        'withdraw',
        keys.map((key) => recorded.get(key)!),
      );
    } catch (err) {
      // Refused whole: none of this request's withdrawals is cleared, so none has changed a count.
      // Those an earlier try of it left not cleared (a crash before it asked) go too: the clerk is
      // told it is refused, so it must not take effect once the hold is lifted (stopMany removes
      // only what is not cleared).
      if (err instanceof FileOnHoldError)
        await store.withdrawals.stopMany(
          keys
            .map((key) => open.get(key)!)
            .filter((r) => r.state === 'withdrawing')
            .map((r) => r.id),
        );
      throw err;
    }
    // Begun by this request, or by an earlier one a crash interrupted: cleared, then finished, all at once.
    const unfinished = keys.map((key) => open.get(key)!).filter((r) => r.state === 'withdrawing');
    const cleared = await store.withdrawals.clearMany(unfinished.map((r) => r.id));
    const finished = new Map(
      (
        await this.finishWithdrawals(
          unfinished.filter((r) => cleared.has(r.id)),
          address,
          account,
        )
      ).map((r) => [r.id, r]),
    );
    // Not cleared: a hold placed since the look above stopped it (or another request finished it).
    const stopped = await this.stoppedOf(unfinished.filter((r) => !cleared.has(r.id)));
    if (stopped.length > 0) {
      // The others are withdrawn; these are refused as held …
      await this.deps.holds.refuseHeld(
        'withdraw',
        stopped.map((r) => ({ fileId: r.upload.fileId, fileName: r.upload.fileName })),
      );
      // … unless the hold was lifted already: then asked again (what is withdrawn stays so).
      if (attempt >= 3) throw new Error('the holds on these files keep changing; withdraw them again');
      return this.withdraw(account, request, address, attempt + 1);
    }
    const withdrawn: WithdrawalRecord[] = [];
    const alreadyWithdrawn: WithdrawalRecord[] = [];
    for (const key of keys) {
      const record = open.get(key)!;
      if (finished.has(record.id)) withdrawn.push(finished.get(record.id)!);
      else alreadyWithdrawn.push(record);
    }
    if (withdrawn.length === 0 && alreadyWithdrawn.length > 0) {
      // Purged from the trash: not to be found there, so the answer says it is gone for good.
      if (alreadyWithdrawn.every((r) => r.state === 'purged' || r.state === 'purging'))
        refusePurged(alreadyWithdrawn[0]!);
      throw new AlreadyWithdrawnError(alreadyWithdrawn.map(viewOf));
    }
    return { withdrawn: viewsOf(withdrawn), alreadyWithdrawn: viewsOf(alreadyWithdrawn), skippedRows };
  }

  /**
   * What 撤回 from 本单位文件 would take back, for some files or a whole folder: the uploads there
   * that count now and that the caller may withdraw (a clerk's own within WITHDRAW_DAYS, an
   * administrator's any in reach), and how many others a clerk may not. Read only: `withdraw`
   * checks each again.
   */
  async withdrawable(account: Account, query: WithdrawableQuery): Promise<WithdrawableUploads> {
    let scope: ViewScope | undefined;
    if (account.role === 'admin') {
      const reach = await this.deps.directory.reachSubtree(account);
      if (reach === null) return { uploads: [], othersUploads: 0, tooOld: 0 };
      scope = reach && { subtree: reach };
    } else scope = { unitId: account.unit.id };
    const found = await this.deps.store.unitFiles.uploads({
      ...scope,
      ...(query.folder !== undefined
        ? { folder: query.folder }
        : { fileIds: typeof query.file === 'string' ? [query.file] : (query.file ?? []) }),
      limit: WITHDRAWABLE_MAX + 1,
    });
    const cutoff = this.now().getTime() - this.deps.settings.withdrawDays * DAY_MS;
    let othersUploads = 0;
    let tooOld = 0;
    const uploads: WithdrawableUploads['uploads'] = [];
    for (const u of found) {
      if (account.role !== 'admin' && u.accountId !== account.id) othersUploads++;
      else if (account.role !== 'admin' && u.at.getTime() < cutoff) tooOld++;
      else uploads.push({ uploadId: u.key, fileId: u.fileId, fileName: u.fileName, uploadedAt: u.at.toISOString() });
    }
    if (found.length > WITHDRAWABLE_MAX)
      throw new ValidationError(
        `这个文件夹里的上传超过 ${WITHDRAWABLE_MAX} 个，不能一次撤回：请打开它的子文件夹，分批撤回。`,
        { field: 'folder' },
      );
    return { uploads, othersUploads, tooOld };
  }

  async restore(account: Account, id: string, address: string | null): Promise<WithdrawalView> {
    let record = await this.visible(account, id);
    if (account.role !== 'admin' && record.upload.account.id !== account.id)
      throw new ForbiddenError('只有上传者本人或管理员可以恢复这个上传，请联系上传者或管理员。');
    if (record.state === 'restored') throw new AlreadyRestoredError(viewOf(record));
    // Its file was disposed of (销毁): restoring would count an upload of bytes that are gone.
    if (record.state === 'disposed') throw new NotFoundError('这个上传的文件已经销毁（见销毁清册），不能恢复。');
    if (record.state === 'purging' || record.state === 'purged') refusePurged(record);
    if (record.state === 'withdrawing') {
      const [settled] = await this.settle([record], address);
      // Stopped by a hold before it changed any count: nothing to restore.
      if (!settled) throw new NotFoundError('这次撤回没有完成（文件已被冻结），上传仍计入统计，不需要恢复。');
      record = settled;
    }
    if (record.state === 'withdrawn') {
      const now = this.now();
      const by = { id: account.id, username: account.username };
      // Of two restores racing, the one that moves it restores it; the other finishes the same step.
      await this.deps.store.withdrawals.advance(record.id, 'withdrawn', 'restoring', now, by);
      record = (await this.deps.store.withdrawals.get(record.id))!;
    }
    return viewOf((await this.finishRestores([record], address, account))[0]!);
  }

  /**
   * 恢复 of many: withdrawals by id (each visible to the caller, restorable by them), or every
   * upload of one of the caller's receipts that is withdrawn. Refused whole (`404`, `403`) before
   * anything changes; restored ones are left as they are and listed (`409` if that is all).
   */
  async restoreMany(account: Account, request: RestoreRequest, address: string | null): Promise<Lazy<RestoreAnswer>> {
    const { store } = this.deps;
    let records: WithdrawalRecord[];
    if (request.receipt !== undefined) {
      const receipt = await store.receipts.get(account.id, request.receipt);
      if (!receipt) throw new NotFoundError('没有这个上传清单，或它不是您的。请从“我的上传清单”中打开它。');
      const keys = receipt.rows.flatMap((row) => (row.uploadId ? [row.uploadId] : []));
      records = [...(await store.withdrawals.openOf(keys)).values()];
      if (records.length === 0) throw new ValidationError('这份上传清单里没有已撤回、可恢复的文件。');
    } else {
      const ids = [...new Set(request.withdrawals)];
      const found = await store.withdrawals.getMany(ids);
      const reach = account.role === 'admin' ? await this.deps.directory.reachSubtree(account) : null;
      const unknown = ids.filter((id) => {
        const record = found.get(id);
        if (!record) return true;
        if (account.role === 'admin') return reach === null || !inSubtree(record.upload.unit, reach);
        return record.upload.unit.id !== account.unit.id && record.upload.account.id !== account.id;
      });
      if (unknown.length > 0)
        throw new NotFoundError(
          `找不到${unknown.length} 条撤回记录（${named(unknown)}），或不在您的范围内：请从回收站打开它们。`,
          { withdrawals: unknown.slice(0, NAMED), count: unknown.length },
        );
      records = ids.map((id) => found.get(id)!);
    }
    const notYours = records.filter((r) => account.role !== 'admin' && r.upload.account.id !== account.id);
    if (notYours.length > 0)
      throw new ForbiddenError(
        `${notYours.length} 个上传（${named(notYours.map((r) => r.upload.fileName))}）是本单位其他人上传的：只有上传者本人或管理员可以恢复，请联系上传者或管理员。`,
      );
    // Refused whole, as one restore is: an upload whose file was disposed of, or purged from the trash.
    const gone = records.find((r) => r.state === 'disposed' || r.state === 'purging' || r.state === 'purged');
    if (gone?.state === 'disposed')
      throw new NotFoundError(`“${gone.upload.fileName}”的文件已经销毁（见销毁清册），不能恢复。`);
    if (gone) refusePurged(gone);
    const alreadyRestored = records.filter((r) => r.state === 'restored');
    if (alreadyRestored.length === records.length) throw new AlreadyRestoredError(viewOf(records[0]!));
    const withdrawing = records.filter((r) => r.state === 'withdrawing');
    const finished = new Map((await this.settle(withdrawing, address)).map((r) => [r.id, r]));
    // One a hold stopped before it changed any count has nothing to restore.
    const pending = records
      .filter((r) => r.state !== 'restored' && (r.state !== 'withdrawing' || finished.has(r.id)))
      .map((r) => finished.get(r.id) ?? r);
    const by = { id: account.id, username: account.username };
    const at = this.now();
    // Of two restores racing, the one that moves a withdrawal restores it; the other finishes the same step.
    const moved = await store.withdrawals.advanceMany(
      pending.filter((r) => r.state === 'withdrawn').map((r) => r.id),
      'withdrawn',
      'restoring',
      at,
      by,
    );
    const now = await this.afterMove(pending, moved, {
      state: 'restoring',
      changedAt: at,
      restoredBy: by,
      restoredAt: at,
    });
    const restored = await this.finishRestores(
      now.filter((r) => r.state === 'restoring' || r.state === 'restored'),
      address,
      account,
    );
    return { restored: viewsOf(restored), alreadyRestored: viewsOf(alreadyRestored) };
  }

  async get(account: Account, id: string): Promise<WithdrawalView> {
    return viewOf(await this.visible(account, id));
  }

  async trash(account: Account, query: TrashQuery): Promise<TrashList> {
    const page = { limit: query.limit, offset: query.offset };
    let scope: ViewScope | undefined;
    if (account.role !== 'admin') {
      if (query.unit !== undefined && query.unit !== account.unit.id)
        throw new NotFoundError(`单位“${query.unit}”不在您的范围内：办事员只能查看本单位的回收站。`);
      scope = { unitId: account.unit.id };
    } else if (query.unit !== undefined) {
      await this.deps.directory.unitInReach(account, query.unit);
      scope = { unitId: query.unit };
    } else {
      const reach = await this.deps.directory.reachSubtree(account);
      if (reach === null) return { items: [], total: 0, ...page };
      scope = reach && { subtree: reach };
    }
    const { items, total } = await this.deps.store.withdrawals.trash(scope, page);
    const now = this.now().getTime();
    return {
      items: items.map((r) => {
        const left = this.deps.settings.trashDays - (now - r.withdrawnAt.getTime()) / DAY_MS;
        return {
          ...viewOf(r),
          daysLeft: Math.max(0, Math.ceil(left)),
          expired: left <= 0,
          canRestore: account.role === 'admin' || r.upload.account.id === account.id,
        };
      }),
      total,
      ...page,
    };
  }

  /**
   * A file's uploads the caller sees (a clerk, their unit's; an administrator, their reach's), with
   * their upload ids and whether the caller may withdraw each: where an administrator finds the
   * uploads of others to withdraw (the reports lead there). A file with no upload in sight is
   * unknown (404), as in GET /api/files/:id.
   */
  async fileUploads(account: Account, fileId: string, query: FileUploadsQuery): Promise<FileUploadList> {
    const { store } = this.deps;
    const page = { limit: query.limit, offset: query.offset };
    const unknown = () =>
      new NotFoundError('No file with this id is visible to you. Check the link, or ask your archive administrator.');
    let scope: ViewScope | undefined = { unitId: account.unit.id };
    let reach: UnitSubtree | undefined;
    if (account.role === 'admin') {
      const reached = await this.deps.directory.reachSubtree(account);
      if (reached === null) throw unknown();
      reach = reached;
      scope = reach && { subtree: reach };
    }
    const { items, total } = await store.ledger.fileUploads(fileId, scope, page);
    // None listed: still visible if uploaded in sight before the ledger recorded uploads' details.
    if (
      total === 0 &&
      !(scope
        ? await store.ledger.hasUploadInScope(fileId, scope)
        : (await store.ledger.entriesForFile(fileId)).length > 0)
    )
      throw unknown();
    const open = await store.withdrawals.openOf(items.map((u) => u.key));
    const units = new Map<string, Unit>();
    const now = this.now().getTime();
    const views = [];
    for (const upload of items) {
      const w = open.get(upload.key);
      const withdrawn = w && (w.state === 'withdrawing' || w.state === 'withdrawn') ? w : undefined;
      // The same rule as withdraw(): an administrator's reach by the unit's geography now.
      const mayWithdraw =
        account.role === 'admin'
          ? inSubtree(await this.unitOf(upload, units), reach)
          : upload.accountId === account.id && now - upload.at.getTime() <= this.deps.settings.withdrawDays * DAY_MS;
      const { id, city, county, town } = upload.unit;
      views.push({
        uploadId: upload.key,
        uploader: { id: upload.accountId, username: upload.userName },
        unit: { id, city, ...(county !== undefined && { county }), ...(town !== undefined && { town }) },
        fileName: upload.fileName,
        size: upload.fileLength,
        uploadedAt: upload.at.toISOString(),
        counts: upload.counts,
        withdrawal: withdrawn
          ? {
              id: withdrawn.id,
              withdrawnAt: withdrawn.withdrawnAt.toISOString(),
              withdrawnBy: withdrawn.withdrawnBy.username,
              reason: withdrawn.reason,
              note: withdrawn.note,
            }
          : null,
        canWithdraw: upload.counts && !withdrawn && mayWithdraw,
      });
    }
    return { fileId, items: views, total, ...page };
  }

  /**
   * Finishes withdrawals and restores a crash interrupted (recorded before `before`, never
   * finished by a retry): run by the garbage collector's sweep. Returns how many.
   */
  async finishInterrupted(before: Date): Promise<number> {
    let finished = 0;
    // Purges under way (`purging`) are the purge's sweep's to finish (PurgeService), never restored.
    for (;;) {
      const records = await this.deps.store.withdrawals.unfinished(['withdrawing', 'restoring'], before, 100);
      // One that cannot be finished now does not hold up the others; the sweep says so after them.
      let failure: Error | undefined;
      for (const record of records) {
        try {
          if (record.state === 'withdrawing') await this.settle([record], null);
          else await this.finishRestores([record], null);
          finished++;
        } catch (err) {
          failure ??= err instanceof Error ? err : new Error('a withdrawal could not be finished', { cause: err });
        }
      }
      if (failure) throw failure;
      if (records.length < 100) return finished;
    }
  }

  /**
   * 冻结 placed: the withdrawals under way of files it holds (`covered`) are settled before the hold
   * answers. One not cleared yet (its request has not asked about holds since recording it, or
   * asked before this hold) is stopped, before it changed any count: its request then refuses it.
   * One cleared already is finished here: in the trash, where the hold keeps it from the purge.
   * After this, no withdrawal of a held file takes effect (docs/decisions/holds.md).
   */
  async settleHeld(covered: Covered): Promise<void> {
    const { withdrawals } = this.deps.store;
    // Under way at any moment: few, but a receipt's may be 10,000; read by pages.
    const pages = heldUnderWay(
      (after?: WithdrawalRecord) => withdrawals.unfinished(['withdrawing'], EVER, 500, after),
      (r) => r.upload.fileId,
      covered,
    );
    for await (const underWay of pages) {
      const stopped = await withdrawals.stopMany(underWay.filter((r) => !r.cleared).map((r) => r.id));
      // Cleared (before, or since it was read): its reversal may be under way; made here, once by its key.
      const now = await withdrawals.getMany(underWay.filter((r) => !stopped.has(r.id)).map((r) => r.id));
      await this.finishWithdrawals(
        [...now.values()].filter((r) => r.state === 'withdrawing' && r.cleared),
        null,
      );
    }
  }

  /**
   * Withdrawals found `withdrawing` that this request did not begin (a crash's, another request's):
   * those not cleared are asked about holds now; a held one is stopped, the others cleared and
   * finished. Answers them as they are after, in order, without the stopped.
   */
  private async settle(records: readonly WithdrawalRecord[], address: string | null): Promise<WithdrawalRecord[]> {
    if (records.length === 0) return [];
    const { withdrawals } = this.deps.store;
    const uncleared = records.filter((r) => !r.cleared);
    const held = await this.deps.holds.heldAmong(uncleared.map((r) => r.upload.fileId));
    await withdrawals.stopMany(uncleared.filter((r) => held.has(r.upload.fileId)).map((r) => r.id));
    const cleared = await withdrawals.clearMany(records.map((r) => r.id));
    const finished = new Map(
      (
        await this.finishWithdrawals(
          records.filter((r) => cleared.has(r.id)),
          address,
        )
      ).map((r) => [r.id, r]),
    );
    const stopped = new Set((await this.stoppedOf(records.filter((r) => !cleared.has(r.id)))).map((r) => r.id));
    const others = await withdrawals.getMany(
      records.filter((r) => !cleared.has(r.id) && !stopped.has(r.id)).map((r) => r.id),
    );
    return records.flatMap((r) => {
      const now = finished.get(r.id) ?? others.get(r.id);
      return now ? [now] : [];
    });
  }

  /**
   * Of withdrawals that could not be cleared, those a hold stopped: gone, or still `withdrawing`
   * not cleared (a stop a crash cut short, finished here). The others moved on (another request).
   */
  private async stoppedOf(records: readonly WithdrawalRecord[]): Promise<WithdrawalRecord[]> {
    if (records.length === 0) return [];
    const { withdrawals } = this.deps.store;
    await withdrawals.stopMany(records.map((r) => r.id));
    const now = await withdrawals.getMany(records.map((r) => r.id));
    return records.filter((r) => !now.has(r.id));
  }

  /** A withdrawal the caller may see: of their unit (a clerk), of their reach (an administrator); else unknown. */
  private async visible(account: Account, id: string): Promise<WithdrawalRecord> {
    const record = await this.deps.store.withdrawals.get(id);
    const unknown = () => new NotFoundError('找不到这条撤回记录，或它不在您的范围内：请从回收站打开它。');
    if (!record) throw unknown();
    if (account.role === 'admin') {
      const reach = await this.deps.directory.reachSubtree(account);
      if (reach === null || !inSubtree(record.upload.unit, reach)) throw unknown();
    } else if (record.upload.unit.id !== account.unit.id && record.upload.account.id !== account.id) throw unknown();
    return record;
  }

  /**
   * Steps 2 and 3 of withdrawals: the ledger's reversals under the withdrawals' keys (all in one
   * call: a receipt's in a few transactions), then `withdrawn`, the audit events of those this
   * call moved. One the ledger would not reverse (nothing of it changed the counts) is dropped,
   * after the others are finished, and the request says why.
   */
  private async finishWithdrawals(
    records: readonly WithdrawalRecord[],
    address: string | null,
    actor?: Account,
  ): Promise<WithdrawalRecord[]> {
    if (records.length === 0) return [];
    const { store } = this.deps;
    const answers = await store.ledger.reverseMany(
      records.map((r) => ({ actionKey: r.uploadKey, changeKey: withdrawalKeys(r.id).reversal })),
    );
    const refused = records.flatMap((r, i) =>
      answers[i] === 'reversed' || answers[i] === 'repeated' ? [] : [{ record: r, answer: answers[i]! }],
    );
    const done = records.filter((_, i) => answers[i] === 'reversed' || answers[i] === 'repeated');
    // Before the move, under each withdrawal's key: a crash between the two leaves the event to the
    // retry or the sweep that moves it, which records it once.
    await this.audit('upload_withdrawn', done, (r) => r.withdrawnBy, address, actor);
    const at = this.now();
    const moved = await store.withdrawals.advanceMany(
      done.map((r) => r.id),
      'withdrawing',
      'withdrawn',
      at,
    );
    for (const { record } of refused) await store.withdrawals.drop(record.id);
    if (refused.length > 0) {
      const [{ record, answer }] = refused as [(typeof refused)[number]];
      throw new Error(`upload ${record.uploadKey}: the ledger answered "${answer}" to its withdrawal ${record.id}`);
    }
    return this.afterMove(done, moved, { state: 'withdrawn', changedAt: at });
  }

  /**
   * The uploads whose file was disposed of or deleted: out of every count, no withdrawal of theirs
   * open, and their file no longer in the catalog. A content is deleted only once no upload counts
   * (docs/decisions/purge.md), so only the uploads the ledger no longer counts are asked about: a
   * receipt that counts whole costs no read. (An upload counted for bytes deleted anyway, in the
   * gaps purge.md names, is withdrawn as any other: out of counts it should not be in.) A purged
   * one keeps its withdrawal's record, and is answered from it (already withdrawn, or 410).
   */
  private async goneFiles(recorded: readonly FileUploadState[]): Promise<FileUploadState[]> {
    let uploads = recorded.filter((u) => !u.counted);
    if (uploads.length === 0) return [];
    const open = await this.deps.store.withdrawals.openOf(uploads.map((u) => u.key));
    uploads = uploads.filter((u) => !open.has(u.key));
    const fileIds = [...new Set(uploads.map((u) => u.fileId))];
    const missing = new Set<string>();
    for (let at = 0; at < fileIds.length; at += 50) {
      const some = fileIds.slice(at, at + 50);
      const entries = await Promise.all(some.map((id) => this.deps.store.catalog.get(id)));
      some.forEach((id, i) => entries[i] === undefined && missing.add(id));
    }
    return uploads.filter((u) => missing.has(u.fileId));
  }

  /** Steps 2 and 3 of restores: the ledger's restores under the withdrawals' restore keys, then `restored`. */
  private async finishRestores(
    records: readonly WithdrawalRecord[],
    address: string | null = null,
    actor?: Account,
  ): Promise<WithdrawalRecord[]> {
    if (records.length === 0) return [];
    const { store } = this.deps;
    const answers = await store.ledger.restoreMany(
      records.map((r) => ({ actionKey: r.uploadKey, changeKey: withdrawalKeys(r.id).restore })),
    );
    const refused = records.findIndex(
      (_, i) => answers[i] !== 'restored' && answers[i] !== 'repeated' && answers[i] !== 'not reversed',
    );
    if (refused !== -1)
      throw new Error(
        `upload ${records[refused]!.uploadKey}: the ledger answered "${answers[refused]}" to the restore of ${records[refused]!.id}`,
      );
    await this.audit('upload_restored', records, (r) => r.restoredBy!, address, actor);
    const at = this.now();
    const moved = await store.withdrawals.advanceMany(
      records.map((r) => r.id),
      'restoring',
      'restored',
      at,
    );
    return this.afterMove(records, moved, { state: 'restored', changedAt: at });
  }

  /**
   * The records as they are now, in the same order: those this call moved as the move left them
   * (`change`, what the store wrote), the others read again (another request moved them).
   */
  private async afterMove(
    records: readonly WithdrawalRecord[],
    moved: ReadonlySet<string>,
    change: Partial<WithdrawalRecord>,
  ): Promise<WithdrawalRecord[]> {
    const others = records.filter((r) => !moved.has(r.id));
    const now =
      others.length > 0
        ? await this.deps.store.withdrawals.getMany(others.map((r) => r.id))
        : new Map<string, WithdrawalRecord>();
    return records.map((r) => (moved.has(r.id) ? { ...r, ...change } : now.get(r.id)!));
  }

  /**
   * The audit events of steps, together per person who took them (one write each on the embedded
   * store), each under its withdrawal's key: recorded once, by whoever records it first.
   */
  private async audit(
    action: 'upload_withdrawn' | 'upload_restored',
    records: readonly WithdrawalRecord[],
    byOf: (r: WithdrawalRecord) => Person,
    address: string | null,
    actor?: Account,
  ): Promise<void> {
    const byPerson = new Map<string, WithdrawalRecord[]>();
    for (const r of records) (byPerson.get(byOf(r).id) ?? byPerson.set(byOf(r).id, []).get(byOf(r).id)!).push(r);
    for (const [id, theirs] of byPerson) {
      const by = byOf(theirs[0]!);
      const account = actor?.id === id ? actor : await this.deps.store.accounts.get(id);
      const details = (record: WithdrawalRecord) => ({
        address,
        fileId: record.upload.fileId,
        fileName: record.upload.fileName,
        note: {
          code: action === 'upload_withdrawn' ? ('withdrawn' as const) : ('restored' as const),
          withdrawalId: record.id,
          uploader: record.upload.account.username,
          unit: record.upload.unit.id,
          uploadedAt: record.upload.at.toISOString(),
          reason: record.reason,
          ...(record.note !== null && { note: record.note }),
        },
      });
      const step = (r: WithdrawalRecord) => ({ key: `${action}:${r.id}`, action, details: details(r) });
      if (account)
        await this.deps.audit.recordSteps({ id: by.id, username: by.username, unit: account.unit }, theirs.map(step));
      else
        for (const r of theirs)
          await this.deps.audit.recordSteps({ id: by.id, username: by.username, unit: r.upload.unit }, [step(r)]);
    }
  }

  /** The unit an upload was counted in, with its geography (the uploader's, unless they moved since). */
  private async unitOf(upload: UploadDetails, known: Map<string, Unit>): Promise<Unit> {
    let unit = known.get(upload.unitId);
    if (!unit) {
      const uploader = await this.deps.store.accounts.get(upload.accountId);
      if (uploader?.unit.id === upload.unitId) unit = uploader.unit;
      else {
        const inDirectory = await this.deps.directory.get(upload.unitId);
        unit = inDirectory ? geographyOf(inDirectory) : { id: upload.unitId, geoType: 'city', city: '' };
      }
      known.set(upload.unitId, unit);
    }
    return unit;
  }
}

function inSubtree(unit: Unit, reach: UnitSubtree | undefined): boolean {
  if (reach === undefined) return true;
  return (
    unit.city === reach.city &&
    (reach.county === undefined || unit.county === reach.county) &&
    (reach.town === undefined || unit.town === reach.town)
  );
}

const named = (keys: string[]) => keys.slice(0, NAMED).join('、') + (keys.length > NAMED ? ' 等' : '');

/**
 * Withdrawals as an answer lists them, each made a view only when it is read: a receipt's 10,000
 * are written out one by one (server/http/json-answer.ts), never all views, nor one text, at once.
 */
export interface Views extends Iterable<WithdrawalView> {
  readonly length: number;
}

/** An answer whose lists of withdrawals are `Views`: the same JSON once written. */
export type Lazy<Answer> = { [K in keyof Answer]: Answer[K] extends WithdrawalView[] ? Views : Answer[K] };

function viewsOf(records: readonly WithdrawalRecord[]): Views {
  return {
    length: records.length,
    *[Symbol.iterator]() {
      for (const r of records) yield viewOf(r);
    },
  };
}

export function viewOf(r: WithdrawalRecord): WithdrawalView {
  const { id, city, county, town } = r.upload.unit;
  return {
    id: r.id,
    uploadId: r.uploadKey,
    fileId: r.upload.fileId,
    fileName: r.upload.fileName,
    size: r.upload.fileLength,
    unit: { id, city, ...(county !== undefined && { county }), ...(town !== undefined && { town }) },
    uploader: r.upload.account,
    uploadedAt: r.upload.at.toISOString(),
    withdrawnBy: r.withdrawnBy,
    withdrawnAt: r.withdrawnAt.toISOString(),
    reason: r.reason,
    note: r.note,
    state: r.state === 'restored' ? 'restored' : r.state === 'purging' || r.state === 'purged' ? 'purged' : 'withdrawn',
    restoredBy: r.state === 'restored' ? r.restoredBy : null,
    restoredAt: r.state === 'restored' ? (r.restoredAt?.toISOString() ?? null) : null,
    purgedBy: r.purgedBy,
    purgedAt: r.purgedAt?.toISOString() ?? null,
  };
}

/** A purged withdrawal is gone for good: never restored, nor withdrawn again (docs/decisions/purge.md). */
function refusePurged(record: WithdrawalRecord): never {
  throw new AlreadyPurgedError({
    id: record.id,
    fileName: record.upload.fileName,
    purgedBy: record.purgedBy,
    purgedAt: record.purgedAt?.toISOString() ?? null,
  });
}
