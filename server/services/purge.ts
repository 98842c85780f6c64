import type { Unit } from '../../shared/schemas.js';
import type { PurgeAnswer, WithdrawalView } from '../../shared/withdrawals.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import type { Account } from '../store/accounts/port.js';
import type { ArchiveStore } from '../store/archive-store.js';
import type { DeletingEntry } from '../store/catalog/port.js';
import type { UnitSubtree, ViewScope } from '../store/ledger/port.js';
import { IN_TRASH, type Person, type WithdrawalRecord } from '../store/withdrawals/port.js';
import type { AuditActor, AuditService } from './audit.js';
import type { UnitDirectory } from './unit-directory.js';
import { viewOf } from './withdrawals.js';

const DAY_MS = 86_400_000;

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
      audit: Pick<AuditService, 'record'>;
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
    let purged = 0;
    for (const record of await store.withdrawals.ofFile(fileId)) {
      if (await this.purgeOne(record, by, null, false)) purged++;
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
    for (;;) {
      const records = await this.deps.store.withdrawals.unfinished(['purging'], before, 100);
      // Each finished leaves `purging`: the next page is what is left.
      for (const record of records) {
        await this.finishPurge(record, record.purgedBy ?? SWEEP, null, false);
        finished++;
      }
      if (records.length < 100) break;
    }
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
    const files = new Set<string>();
    for (const record of records) {
      if (held.has(record.upload.fileId)) {
        answer.skipped.push({ id: record.id, fileName: record.upload.fileName, reason: 'held' });
        continue;
      }
      const done = await this.purgeOne(record, by, address, expired);
      if (done) {
        answer.purged.push(done);
        files.add(record.upload.fileId);
      } else if (record.state !== 'purged' && record.state !== 'purging')
        answer.skipped.push({ id: record.id, fileName: record.upload.fileName, reason: 'busy' });
    }
    for (const fileId of files) {
      const fate = await this.deleteContent(fileId, by, 'its last upload was purged from the trash', {});
      if (fate === 'deleted') answer.contentsDeleted++;
    }
    return answer;
  }

  /** One withdrawal out of the trash for good; undefined when it is not `withdrawn` (or `purging`) now. */
  private async purgeOne(
    record: WithdrawalRecord,
    by: Person,
    address: string | null,
    expired: boolean,
  ): Promise<WithdrawalView | undefined> {
    const { withdrawals } = this.deps.store;
    if (record.state === 'withdrawn') {
      // Of a purge and a restore racing, the one that moves it from `withdrawn` wins.
      if (!(await withdrawals.advance(record.id, 'withdrawn', 'purging', this.now(), by))) {
        const now = await withdrawals.get(record.id);
        if (now?.state !== 'purging') return undefined;
      }
    } else if (record.state !== 'purging') return undefined;
    const purging = (await withdrawals.get(record.id))!;
    return viewOf(await this.finishPurge(purging, purging.purgedBy ?? by, address, expired));
  }

  /** Steps 2 and 3 of a purge: the ledger's record of it under the withdrawal's key, then `purged`. */
  private async finishPurge(
    record: WithdrawalRecord,
    by: Person,
    address: string | null,
    expired: boolean,
  ): Promise<WithdrawalRecord> {
    const { store } = this.deps;
    const done = await store.ledger.purge(record.uploadKey, purgeKeyOf(record.id));
    if (done !== 'purged' && done !== 'repeated' && done !== 'already purged')
      throw new Error(`upload ${record.uploadKey}: the ledger answered "${done}" to the purge of ${record.id}`);
    // The last holder going: the catalog entry is marked before the withdrawal says `purged`, which
    // no retry or sweep looks at again; a crash from here on leaves the mark, which the sweep finishes.
    const fileId = record.upload.fileId;
    if (!(await this.isHeld([fileId])).has(fileId) && !(await this.holdersOf(fileId, record.id)))
      await store.catalog.beginDeletion(fileId, this.now());
    if (await store.withdrawals.advance(record.id, 'purging', 'purged', this.now())) {
      await this.deps.audit.record('upload_purged', await this.actorOf(by, record.upload.unit), {
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
      });
    }
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
    // After the mark: an upload counted meanwhile either shows here, or its own check after
    // counting finds the entry gone and takes it back (ClaimService).
    const held =
      (!options.ignoreHolds && (await this.isHeld([entry.fileId])).has(entry.fileId)) ||
      (await this.holdersOf(entry.fileId));
    if (held) {
      await store.catalog.cancelDeletion(entry.fileId);
      return 'held';
    }
    await store.nearDuplicates.forget(entry.fileId);
    await store.fingerprintQueue.forget(entry.fileId);
    await store.fileTexts.forget(entry.fileId);
    await this.deps.afterStep?.('derived');
    await store.content.remove(entry);
    await this.deps.afterStep?.('bytes');
    await store.catalog.remove(entry.fileId);
    await this.deps.afterStep?.('catalog');
    await this.deps.audit.record('content_deleted', await this.actorOf(by, undefined), {
      address: null,
      fileId: entry.fileId,
      fileName: entry.fileName,
      note: { code: 'content_deleted', length: entry.length, why },
    });
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
export type DeletionStep = 'purged' | 'marked' | 'derived' | 'bytes' | 'catalog';

function inSubtree(unit: { city: string; county?: string; town?: string }, reach: UnitSubtree | undefined): boolean {
  if (reach === undefined) return true;
  return (
    unit.city === reach.city &&
    (reach.county === undefined || unit.county === reach.county) &&
    (reach.town === undefined || unit.town === reach.town)
  );
}
