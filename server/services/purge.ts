import type { Unit } from '../../shared/schemas.js';
import type { PurgeAnswer } from '../../shared/withdrawals.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import type { Account } from '../store/accounts/port.js';
import type { ArchiveStore } from '../store/archive-store.js';
import type { DeletingEntry } from '../store/catalog/port.js';
import type { UnitSubtree, ViewScope } from '../store/ledger/port.js';
import { IN_TRASH, type Person, type WithdrawalRecord } from '../store/withdrawals/port.js';
import type { AuditActor, AuditService } from './audit.js';
import { heldUnderWay, type Covered } from './holds.js';
import type { UnitDirectory } from './unit-directory.js';
import { viewOf } from './withdrawals.js';

const DAY_MS = 86_400_000;

/** Any time at all: every purge or deletion under way, for a hold's settling. */
const EVER = new Date(8.64e15);

/**
 * Which of these files are held (冻结: part 4 of issue 41): a held file's withdrawals stay in the
 * trash and its content is never deleted. The one place purging asks; the composition root wires
 * the holds in.
 */
export type HeldFiles = (fileIds: readonly string[]) => Promise<Set<string>>;

/** No file held (until holds are wired in; and in tests that do not test holds). */
export const NONE_HELD: HeldFiles = async () => new Set();

/** Who purges what the trash kept past TRASH_DAYS: the sweep of the garbage collector. */
export const SWEEP: Person = { id: 'system', username: 'system' };

/** The ledger's change key of a withdrawal's purge: derived from its id, so a retry or the sweep makes the same change. */
export const purgeKeyOf = (withdrawalId: string) => `purge:${withdrawalId}`;

/** What deleting a content came to: deleted now (or before), or kept because something holds it. */
export type ContentFate = 'deleted' | 'gone' | 'held';

/**
 * 彻底删除: withdrawals leave the trash for good (their time there over, or an administrator's
 * word), and a content nobody holds any more leaves the catalog with everything kept of it by file
 * and its bytes. Every step can run again, so a retry or the sweep (`finishInterrupted`) finishes
 * what a crash interrupted, without transactions (docs/decisions/purge.md).
 */
export class PurgeService {
  private readonly isHeld: HeldFiles;

  constructor(
    private readonly deps: {
      store: Pick<
        ArchiveStore,
        | 'ledger'
        | 'withdrawals'
        | 'catalog'
        | 'content'
        | 'nearDuplicates'
        | 'fingerprintQueue'
        | 'fileTexts'
        | 'accounts'
      >;
      directory: Pick<UnitDirectory, 'reachSubtree' | 'unitInReach'>;
      audit: Pick<AuditService, 'recordSteps'>;
      settings: { trashDays: number };
      isHeld?: HeldFiles;
      clock?: () => Date;
      /** Test seam: called after each step of a content's deletion, by name (a crash is a throw there). */
      afterStep?: (step: DeletionStep) => Promise<void> | void;
    },
  ) {
    this.isHeld = deps.isHeld ?? NONE_HELD;
  }

  private now(): Date {
    return (this.deps.clock ?? (() => new Date()))();
  }

  /** 彻底删除 of chosen withdrawals, by an administrator of their reach, ahead of their time. */
  async purge(account: Account, ids: readonly string[], address: string | null): Promise<PurgeAnswer> {
    this.mustBeAdmin(account);
    const reach = await this.deps.directory.reachSubtree(account);
    const records: WithdrawalRecord[] = [];
    const unknown: string[] = [];
    for (const id of new Set(ids)) {
      const record = await this.deps.store.withdrawals.get(id);
      if (!record || reach === null || !inSubtree(record.upload.unit, reach)) unknown.push(id);
      else records.push(record);
    }
    if (unknown.length > 0)
      throw new NotFoundError(
        `找不到 ${unknown.length} 条撤回记录（${unknown.slice(0, 5).join('、')}），或不在您的范围内：请从回收站选择。`,
        { withdrawals: unknown.slice(0, 5), count: unknown.length },
      );
    const restored = records.filter((r) => r.state === 'restored');
    if (restored.length > 0)
      throw new ValidationError(
        `${restored.length} 个上传（${restored
          .slice(0, 5)
          .map((r) => r.upload.fileName)
          .join('、')}）已经恢复，不在回收站里：要删除它们，请先撤回。`,
      );
    return this.purgeAll(records, account, address, false);
  }

  /** 清空回收站: every withdrawal in the trash of one unit of the administrator's reach, or of all of it. */
  async emptyTrash(account: Account, unit: string | undefined, address: string | null): Promise<PurgeAnswer> {
    this.mustBeAdmin(account);
    let scope: ViewScope | undefined;
    if (unit !== undefined) {
      await this.deps.directory.unitInReach(account, unit);
      scope = { unitId: unit };
    } else {
      const reach = await this.deps.directory.reachSubtree(account);
      if (reach === null) return { purged: [], skipped: [], contentsDeleted: 0 };
      scope = reach && { subtree: reach };
    }
    const answer: PurgeAnswer = { purged: [], skipped: [], contentsDeleted: 0 };
    // Page by what is left: purged ones leave the listing, skipped ones stay (and are stepped over).
    for (;;) {
      const { items } = await this.deps.store.withdrawals.trash(scope, { limit: 200, offset: answer.skipped.length });
      if (items.length === 0) return answer;
      const part = await this.purgeAll(items, account, address, false);
      answer.purged.push(...part.purged);
      answer.skipped.push(...part.skipped);
      answer.contentsDeleted += part.contentsDeleted;
    }
  }

  /** The sweep: withdrawals whose TRASH_DAYS are over are purged. Returns how many. */
  async purgeExpired(): Promise<number> {
    const before = new Date(this.now().getTime() - this.deps.settings.trashDays * DAY_MS);
    let purged = 0;
    let skipped = 0;
    for (;;) {
      const records = await this.deps.store.withdrawals.expired(before, 100 + skipped);
      const fresh = records.slice(skipped);
      if (fresh.length === 0) return purged;
      const answer = await this.purgeAll(fresh, SWEEP, null, true);
      purged += answer.purged.length;
      skipped += answer.skipped.length;
    }
  }

  /**
   * Deletes a content for every holder at once (disposal, 销毁): every upload of it that counts is
   * reversed, every withdrawal of it in the trash purged, and the content deleted, held or not
   * (a disposal is refused before it gets here when its file is held).
   */
  async purgeContent(
    fileId: string,
    by: Person,
    why: string,
  ): Promise<{ reversed: number; purged: number; fate: ContentFate }> {
    const { store } = this.deps;
    const keys = await store.ledger.countingKeys(fileId);
    let reversed = 0;
    for (const key of keys) {
      const done = await store.ledger.reverse(key, `dispose:${key}`);
      if (done === 'reversed') reversed++;
    }
    const begun: WithdrawalRecord[] = [];
    for (const record of await store.withdrawals.ofFile(fileId)) {
      const purging = await this.beginPurge(record, by);
      if (purging) begun.push(purging);
    }
    let purged = 0;
    for (const record of (await this.clearPurges(begun, { ignoreHolds: true })).cleared) {
      await this.finishPurge(record, record.purgedBy ?? by, null, false);
      purged++;
    }
    const fate = await this.deleteContent(fileId, by, why, { ignoreHolds: true });
    return { reversed, purged, fate };
  }

  /**
   * Finishes purges and deletions a crash interrupted (begun before `before`): withdrawals still
   * `purging`, and contents still being deleted. Run by the garbage collector's sweep.
   */
  async finishInterrupted(before: Date): Promise<number> {
    let finished = 0;
    const files = new Set<string>();
    for (;;) {
      const records = await this.deps.store.withdrawals.unfinished(['purging'], before, 100);
      // Each finished, or stopped by a hold, leaves `purging`: the next page is what is left. One a
      // crash left not cleared is asked about holds again here.
      const { cleared, stopped } = await this.clearPurges(records, {});
      for (const record of cleared) {
        await this.finishPurge(record, record.purgedBy ?? SWEEP, null, false);
        files.add(record.upload.fileId);
      }
      finished += cleared.length + stopped.length;
      if (records.length < 100) break;
    }
    // Their contents now, as the purge would have: a deletion marked just now is not among the
    // interrupted ones below (older than `before`), and would wait for the next sweep.
    for (const fileId of files)
      await this.deleteContent(fileId, SWEEP, 'its last upload was purged from the trash', {});
    for (const entry of await this.deps.store.catalog.deletions(before, 1000)) {
      await this.decideDeletion(entry, SWEEP, 'a deletion a crash interrupted, finished by the sweep', {});
      finished++;
    }
    return finished;
  }

  /** Purges each (those held, or in the middle of a withdrawal or restore, are skipped), then deletes the contents left unheld. */
  private async purgeAll(
    records: readonly WithdrawalRecord[],
    by: Person,
    address: string | null,
    expired: boolean,
  ): Promise<PurgeAnswer> {
    const held = await this.isHeld([...new Set(records.map((r) => r.upload.fileId))]);
    const answer: PurgeAnswer = { purged: [], skipped: [], contentsDeleted: 0 };
    const skip = (r: WithdrawalRecord, reason: 'held' | 'busy') =>
      answer.skipped.push({ id: r.id, fileName: r.upload.fileName, reason });
    const begun: WithdrawalRecord[] = [];
    for (const record of records) {
      if (held.has(record.upload.fileId)) {
        skip(record, 'held');
        continue;
      }
      const purging = await this.beginPurge(record, by);
      if (purging) begun.push(purging);
      else if (record.state !== 'purged' && record.state !== 'purging') skip(record, 'busy');
    }
    // Holds asked again once the purges are recorded: a hold placed since the look above stops
    // those not cleared yet (PurgeService.settleHeld), and they are skipped as held.
    const { cleared, stopped } = await this.clearPurges(begun, {});
    for (const record of stopped) skip(record, 'held');
    if (cleared.length > 0) await this.deps.afterStep?.('cleared');
    const files = new Set<string>();
    for (const record of cleared) {
      answer.purged.push(viewOf(await this.finishPurge(record, record.purgedBy ?? by, address, expired)));
      files.add(record.upload.fileId);
    }
    for (const fileId of files) {
      const fate = await this.deleteContent(fileId, by, 'its last upload was purged from the trash', {});
      if (fate === 'deleted') answer.contentsDeleted++;
    }
    return answer;
  }

  /**
   * Step 1 of a purge: `withdrawn` → `purging`, not cleared of holds yet. Answers the withdrawal
   * `purging` now (by this call, or by another request or a crash's), else undefined.
   */
  private async beginPurge(record: WithdrawalRecord, by: Person): Promise<WithdrawalRecord | undefined> {
    const { withdrawals } = this.deps.store;
    // Of a purge and a restore racing, the one that moves it from `withdrawn` wins.
    if (record.state === 'withdrawn') await withdrawals.advance(record.id, 'withdrawn', 'purging', this.now(), by);
    else if (record.state !== 'purging') return undefined;
    const now = await withdrawals.get(record.id);
    return now?.state === 'purging' ? now : undefined;
  }

  /**
   * Purges recorded (`purging`) asked about holds before the ledger purges their uploads: one
   * held and not cleared yet is stopped (back in the trash); the others are cleared, by one
   * conditional write each, which a hold's settling (`settleHeld`) cannot undo. Of a clear and a
   * stop, exactly one takes a purge. `cleared` are to be finished; `stopped`, a hold stopped.
   */
  private async clearPurges(
    records: readonly WithdrawalRecord[],
    options: { ignoreHolds?: boolean },
  ): Promise<{ cleared: WithdrawalRecord[]; stopped: WithdrawalRecord[] }> {
    const { withdrawals } = this.deps.store;
    const uncleared = records.filter((r) => !r.cleared);
    const held =
      options.ignoreHolds || uncleared.length === 0
        ? new Set<string>()
        : await this.isHeld([...new Set(uncleared.map((r) => r.upload.fileId))]);
    const cleared: WithdrawalRecord[] = [];
    const stopped: WithdrawalRecord[] = [];
    for (const record of records) {
      if (!record.cleared && held.has(record.upload.fileId) && (await withdrawals.stopPurge(record.id, this.now()))) {
        stopped.push(record);
        continue;
      }
      if (await withdrawals.clearPurge(record.id)) {
        cleared.push({ ...record, cleared: true });
        continue;
      }
      // Not `purging` any more: a hold stopped it (back to `withdrawn`), or another request purged it.
      const now = await withdrawals.get(record.id);
      if (now?.state === 'withdrawn') stopped.push(record);
      else if (now?.state === 'purged') cleared.push(now);
    }
    return { cleared, stopped };
  }

  /**
   * 冻结 placed: the purges and content deletions under way of files it holds (`covered`) are
   * settled before the hold answers. A purge not cleared yet is stopped (its withdrawal back in the
   * trash, its request answers it skipped as held); one cleared is finished here (its upload out of
   * the trash for good, its content kept, since the hold is now recorded). A content deletion not
   * cleared is cancelled; one cleared (its bytes may be going) is finished here. After this, no
   * purge of a held file takes effect, and no bytes of it are deleted (docs/decisions/holds.md).
   */
  async settleHeld(covered: Covered): Promise<void> {
    const { withdrawals, catalog } = this.deps.store;
    const pages = heldUnderWay(
      (after?: WithdrawalRecord) => withdrawals.unfinished(['purging'], EVER, 500, after),
      (r) => r.upload.fileId,
      covered,
    );
    for await (const underWay of pages) {
      for (const record of underWay) {
        if (!record.cleared && (await withdrawals.stopPurge(record.id, this.now()))) continue;
        // Cleared (before, or since it was read): finished here, under its key, once whoever makes it.
        const now = await withdrawals.get(record.id);
        if (now?.state === 'purging' && now.cleared) await this.finishPurge(now, now.purgedBy ?? SWEEP, null, false);
      }
    }
    // Deletions under way are few (each is a content's last moments).
    const marked = await catalog.deletions(EVER, 1000);
    const held = await covered(marked.map((e) => e.fileId));
    for (const entry of marked)
      if (held.has(entry.fileId) && !entry.deletionCleared) await catalog.cancelDeletion(entry.fileId);
    // Read again: one cleared before or since the first read (its bytes may be going) is finished now.
    for (const entry of await catalog.deletions(EVER, 1000))
      if (held.has(entry.fileId) && entry.deletionCleared)
        await this.removeContent(
          entry,
          SWEEP,
          'a deletion cleared before a hold was placed, finished before it answered',
        );
  }

  /** Steps 2 and 3 of a purge: the ledger's record of it under the withdrawal's key, then `purged`. */
  private async finishPurge(
    record: WithdrawalRecord,
    by: Person,
    address: string | null,
    expired: boolean,
  ): Promise<WithdrawalRecord> {
    const { store } = this.deps;
    if (record.state === 'purging' && !record.cleared)
      throw new Error(`purge of ${record.id}: not cleared of holds, it cannot be finished`);
    const done = await store.ledger.purge(record.uploadKey, purgeKeyOf(record.id));
    if (done !== 'purged' && done !== 'repeated' && done !== 'already purged')
      throw new Error(`upload ${record.uploadKey}: the ledger answered "${done}" to the purge of ${record.id}`);
    // The last holder going: the catalog entry is marked before the withdrawal says `purged`, which
    // no retry or sweep looks at again; a crash from here on leaves the mark, which the sweep finishes.
    const fileId = record.upload.fileId;
    if (!(await this.isHeld([fileId])).has(fileId) && !(await this.holdersOf(fileId, record.id)))
      await store.catalog.beginDeletion(fileId, this.now());
    // Before the move, under the withdrawal's key: a crash between the two leaves the event to the
    // sweep that moves it, which records it once.
    await this.deps.audit.recordSteps(await this.actorOf(by, record.upload.unit), [
      {
        key: `upload_purged:${record.id}`,
        action: 'upload_purged',
        details: {
          address,
          fileId: record.upload.fileId,
          fileName: record.upload.fileName,
          note: {
            code: 'purged',
            expired,
            withdrawalId: record.id,
            uploader: record.upload.account.username,
            unit: record.upload.unit.id,
            uploadedAt: record.upload.at.toISOString(),
            reason: record.reason,
            ...(record.note !== null && { note: record.note }),
          },
        },
      },
    ]);
    await store.withdrawals.advance(record.id, 'purging', 'purged', this.now());
    await this.deps.afterStep?.('purged');
    return (await store.withdrawals.get(record.id))!;
  }

  /**
   * Deletes a content nobody holds any more. The catalog entry is marked first (a check or proof
   * then finds no content, and a commit of the same bytes stores them anew); the holders are read
   * after the mark (the ledger, the trash, the ledger again), and an upload found counting cancels
   * the deletion; else the file's near-duplicate records and searchable text, its bytes and last its entry go.
   */
  async deleteContent(
    fileId: string,
    by: Person,
    why: string,
    options: { ignoreHolds?: boolean },
  ): Promise<ContentFate> {
    if (!options.ignoreHolds && (await this.isHeld([fileId])).has(fileId)) return 'held';
    if (await this.holdersOf(fileId)) return 'held';
    const entry = await this.deps.store.catalog.beginDeletion(fileId, this.now());
    if (!entry) return 'gone';
    await this.deps.afterStep?.('marked');
    return this.decideDeletion(entry, by, why, options);
  }

  private async decideDeletion(
    entry: DeletingEntry,
    by: Person,
    why: string,
    options: { ignoreHolds?: boolean },
  ): Promise<ContentFate> {
    const { store } = this.deps;
    if (!entry.deletionCleared) {
      // After the mark: an upload counted meanwhile either shows here, or its own check after
      // counting finds the entry gone and takes it back (ClaimService). A deletion a crash left
      // not cleared is asked again here, by the sweep.
      const held =
        (!options.ignoreHolds && (await this.isHeld([entry.fileId])).has(entry.fileId)) ||
        (await this.holdersOf(entry.fileId));
      if (held) {
        await store.catalog.cancelDeletion(entry.fileId);
        return 'held';
      }
      // Cleared by one conditional write: a hold placed since the look above cancels the deletion
      // first (settleHeld), or finds it cleared and finishes it before answering.
      if (!(await store.catalog.clearDeletion(entry.fileId))) return 'held';
    }
    return this.removeContent(entry, by, why);
  }

  /** The last steps of a deletion cleared of holds and holders: what is kept of the file, its bytes, its entry. */
  private async removeContent(entry: DeletingEntry, by: Person, why: string): Promise<ContentFate> {
    const { store } = this.deps;
    await store.nearDuplicates.forget(entry.fileId);
    await store.fingerprintQueue.forget(entry.fileId);
    await store.fileTexts.forget(entry.fileId);
    await this.deps.afterStep?.('derived');
    await store.content.remove(entry);
    await this.deps.afterStep?.('bytes');
    // Before the entry goes, under the deletion's key: a crash between the two leaves the mark,
    // and the sweep that finishes it records the event once.
    await this.deps.audit.recordSteps(await this.actorOf(by, undefined), [
      {
        key: `content_deleted:${entry.fileId}:${entry.deletingSince.getTime()}`,
        action: 'content_deleted',
        details: {
          address: null,
          fileId: entry.fileId,
          fileName: entry.fileName,
          note: { code: 'content_deleted', length: entry.length, why },
        },
      },
    ]);
    await store.catalog.remove(entry.fileId);
    await this.deps.afterStep?.('catalog');
    return 'deleted';
  }

  /**
   * Whether an upload holds the file: one counting (read twice, around the trash), or one in the
   * trash (but the withdrawal `purging` being purged, if named).
   */
  private async holdersOf(fileId: string, purging?: string): Promise<boolean> {
    const { ledger, withdrawals } = this.deps.store;
    if ((await ledger.countingUploads(fileId)) > 0) return true;
    // A withdrawal opens its record before the ledger reverses; a restore counts before closing it:
    // read in this order, an upload moving between the two is seen in one of them.
    if ((await withdrawals.ofFile(fileId)).some((r) => r.id !== purging && IN_TRASH.includes(r.state))) return true;
    return (await ledger.countingUploads(fileId)) > 0;
  }

  /** Who the audit log names: the sweep by its name alone, a person with their unit. */
  private async actorOf(by: Person, fallback: Unit | undefined): Promise<AuditActor> {
    if (by.id === SWEEP.id) return { attemptedUserName: SWEEP.username };
    const unit = (await this.deps.store.accounts.get(by.id))?.unit ?? fallback;
    return unit ? { id: by.id, username: by.username, unit } : { attemptedUserName: by.username };
  }

  private mustBeAdmin(account: Account): void {
    if (account.role !== 'admin')
      throw new ForbiddenError('只有管理员可以彻底删除回收站中的上传；办事员可以恢复自己的上传。');
  }
}

/** Steps of a content's deletion after which a test may inject a crash. */
/** Where a test may cut a purge short: the withdrawal recorded `purged`, then the deletion's steps. */
export type DeletionStep = 'cleared' | 'purged' | 'marked' | 'derived' | 'bytes' | 'catalog';

function inSubtree(unit: { city: string; county?: string; town?: string }, reach: UnitSubtree | undefined): boolean {
  if (reach === undefined) return true;
  return (
    unit.city === reach.city &&
    (reach.county === undefined || unit.county === reach.county) &&
    (reach.town === undefined || unit.town === reach.town)
  );
}
