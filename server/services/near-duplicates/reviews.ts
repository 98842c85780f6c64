import { NotFoundError } from '../../errors.js';
import type { Account } from '../../store/accounts/port.js';
import type { ArchiveStore } from '../../store/archive-store.js';
import type { AuditService } from '../audit.js';
import type { UnitDirectory } from '../unit-directory.js';

/**
 * An administrator marks a near-duplicate pair handled (已处理) with a note, or opens it again.
 * The pair must be one the administrator's report shows: found, and (below the top level) with
 * either file uploaded within its reach, as the report filters. Both are audited.
 */
export class PairReviews {
  constructor(
    private readonly deps: {
      store: Pick<ArchiveStore, 'nearDuplicates' | 'ledger' | 'catalog'>;
      directory: Pick<UnitDirectory, 'reachSubtree'>;
      audit: AuditService;
      clock: () => Date;
    },
  ) {}

  async review(caller: Account, ids: { fileA: string; fileB: string }, note: string, address: string | null) {
    const pair = await this.visiblePair(caller, ids);
    const review = { ...pair, at: this.deps.clock(), userId: caller.id, userName: caller.username, note };
    await this.deps.store.nearDuplicates.review(review);
    await this.deps.audit.record('near_duplicate_reviewed', caller, {
      address,
      fileId: pair.fileA,
      fileName: pair.nameA,
      note: { code: 'pair_reviewed', nameA: pair.nameA, nameB: pair.nameB, note },
    });
    return { at: review.at.toISOString(), userName: review.userName, note };
  }

  async reopen(caller: Account, ids: { fileA: string; fileB: string }, address: string | null): Promise<void> {
    const pair = await this.visiblePair(caller, ids);
    if (!(await this.deps.store.nearDuplicates.reopen(pair.fileA, pair.fileB))) return;
    await this.deps.audit.record('near_duplicate_reopened', caller, {
      address,
      fileId: pair.fileA,
      fileName: pair.nameA,
      note: { code: 'pair_reopened', nameA: pair.nameA, nameB: pair.nameB },
    });
  }

  /** The pair in its stored order, with its files' names; not found when the caller's report would not show it. */
  private async visiblePair(caller: Account, ids: { fileA: string; fileB: string }) {
    const [fileA, fileB] = ids.fileA < ids.fileB ? [ids.fileA, ids.fileB] : [ids.fileB, ids.fileA];
    const missing = new NotFoundError('No such pair of similar files is in your reports.');
    const pair = await this.deps.store.nearDuplicates.pair(fileA, fileB);
    if (!pair) throw missing;
    const subtree = await this.deps.directory.reachSubtree(caller);
    if (subtree === null) throw missing;
    if (subtree) {
      const seen = await Promise.all(
        [fileA, fileB].map((id) => this.deps.store.ledger.hasUploadInScope(id, { subtree })),
      );
      if (!seen.some(Boolean)) throw missing;
    }
    const [a, b] = await Promise.all([this.deps.store.catalog.get(fileA), this.deps.store.catalog.get(fileB)]);
    if (!a || !b) throw missing;
    return { fileA, fileB, nameA: a.fileName, nameB: b.fileName };
  }
}
