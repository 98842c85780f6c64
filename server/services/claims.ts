import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { ProofRefusal } from '../../shared/audit-notes.js';
import { cleanContentType, cleanUploadPath } from '../../shared/file-name.js';
import type {
  ProofResult,
  UploadCheckRequest,
  UploadCheckResult,
  UploadProveRequest,
  UploadResult,
} from '../../shared/schemas.js';
import { ClaimRejectedError } from '../errors.js';
import type { Account } from '../store/accounts/port.js';
import type { ArchiveStore } from '../store/archive-store.js';
import type { ByteRange } from '../store/content/port.js';
import type { ClaimRecord } from '../store/claims/port.js';
import type { CountedUpload, UploadAction } from '../store/ledger/port.js';
import type { AuditService } from './audit.js';
import type { ReportCalendar } from './calendar.js';
import type { DuplicateScope } from './scope.js';
import { TimeSlice } from '../threads/time-slice.js';
import type { UploadMeter } from './upload-meter.js';

/** At most this many bytes are asked for in a proof. */
export const PROOF_BYTES = 64 * 1024;
const PROOF_RANGES = 4;
/** Refused single proofs audited one by one per account and minute (a flood is summed up in one event). */
export const AUDITED_REFUSALS_PER_MINUTE = 100;

/**
 * Fresh random ranges: a small file whole, cut into pieces at random points (its MD5 as one
 * piece would be no proof: the caller sent it with the check); a larger file as a few slices.
 */
export function pickRanges(size: number): ByteRange[] {
  if (size < 2) return [{ start: 0, end: size }];
  if (size <= PROOF_BYTES) {
    const cuts = new Set<number>();
    while (cuts.size < Math.min(PROOF_RANGES - 1, size - 1)) cuts.add(randomInt(1, size));
    const points = [0, ...[...cuts].sort((a, b) => a - b), size];
    return points.slice(1).map((end, i) => ({ start: points[i]!, end }));
  }
  const length = PROOF_BYTES / PROOF_RANGES;
  return Array.from({ length: PROOF_RANGES }, () => {
    const start = randomInt(0, size - length + 1);
    return { start, end: start + length };
  });
}

/** Why a proof was refused, as the audit log records it. */
interface Refusal {
  fileId?: string;
  fileName?: string;
  reason: ProofRefusal;
}

/** What a proof comes to: an upload to count, an answer given before, a refusal, or (in a request) its claim's first proof. */
type Judgement =
  | { kind: 'count'; action: UploadAction; fileLength: number }
  | { kind: 'answered'; result: UploadResult }
  | { kind: 'refused'; refused: Refusal }
  | { kind: 'same'; as: number };

/**
 * The instant-upload handshake. Knowing a file's hashes is not enough to claim it: the caller
 * must show the MD5 of random ranges of the bytes, once, before the claim expires. A claim is
 * consumed by its first answer, right or wrong, so guesses cannot be repeated.
 */
export class ClaimService {
  constructor(
    private readonly store: Pick<ArchiveStore, 'catalog' | 'content' | 'claims' | 'ledger' | 'rateCounts'>,
    private readonly scope: DuplicateScope,
    private readonly audit: Pick<AuditService, 'record' | 'eventOf'>,
    private readonly calendar: ReportCalendar,
    private readonly meter: UploadMeter,
    private readonly ttlMs: number,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async check(caller: Account, req: UploadCheckRequest): Promise<UploadCheckResult> {
    await this.store.claims.purgeExpired(this.clock());
    const { result, claim } = await this.claim(caller, req);
    if (claim) await this.store.claims.create(claim);
    return result;
  }

  /** Many checks, answered in order (a bulk import asks for hundreds of files at once); their claims are made together. */
  async checkMany(caller: Account, reqs: readonly UploadCheckRequest[]): Promise<UploadCheckResult[]> {
    await this.store.claims.purgeExpired(this.clock());
    const results: UploadCheckResult[] = [];
    const claims: ClaimRecord[] = [];
    const slice = new TimeSlice();
    for (const req of reqs) {
      const { result, claim } = await this.claim(caller, req);
      results.push(result);
      if (claim) claims.push(claim);
      await slice.pause();
    }
    await this.store.claims.createMany(claims);
    return results;
  }

  /**
   * Many proofs, answered in order; a refused one is reported in its place and the others still
   * count. The refused ones of a request are audited as one event with their count and reasons,
   * so a request of a thousand made-up claim ids writes one line, not a thousand.
   */
  async proveMany(
    caller: Account,
    reqs: readonly UploadProveRequest[],
    address: string | null,
  ): Promise<ProofResult[]> {
    const results: ProofResult[] = [];
    const refused = new Map<ProofRefusal, number>();
    const slice = new TimeSlice();
    // Each proof is judged (its claim taken) in order; the right ones are then counted together,
    // in one transaction on the embedded store. A claim sent twice in one request is answered
    // as its first proof was (as a proof sent again after a lost answer is).
    const judged: Judgement[] = [];
    const firstOf = new Map<string, number>();
    // Taken together (one transaction on the embedded store); each claim goes to its first proof.
    const taken = await this.store.claims.takeMany(reqs.map((req) => req.claimId));
    for (const [i, req] of reqs.entries()) {
      await slice.pause();
      const first = firstOf.get(req.claimId);
      if (first !== undefined && judged[first]!.kind === 'count') {
        judged.push({ kind: 'same', as: first });
        continue;
      }
      firstOf.set(req.claimId, i);
      const claim = taken.get(req.claimId);
      taken.delete(req.claimId);
      judged.push(await this.judge(caller, req, address, claim));
    }
    const toCount = judged.flatMap((j, i) => (j.kind === 'count' ? [{ i, j }] : []));
    const counted = await this.store.ledger.countMany(toCount.map(({ j }) => j.action));
    const answers = new Map(toCount.map(({ i, j }, k) => [i, this.finish(j, counted[k]!)]));
    const stayed = await this.stillCatalogued(toCount.map(({ j }) => j.action.record.fileId));
    for (const { i, j } of toCount) {
      if (stayed.has(j.action.record.fileId)) continue;
      await this.takeBack(j);
      answers.delete(i);
      judged[i] = { kind: 'refused', refused: { fileId: j.action.record.fileId, reason: 'content_gone' } };
    }
    for (const [i, j] of judged.entries()) {
      if (j.kind === 'refused') {
        refused.set(j.refused.reason, (refused.get(j.refused.reason) ?? 0) + 1);
        results.push({ status: 'rejected', error: 'claim_rejected', message: ClaimRejectedError.MESSAGE });
      } else if (j.kind === 'answered') results.push(j.result);
      else results.push(answers.get(j.kind === 'same' ? j.as : i)!);
    }
    if (refused.size > 0) {
      const count = [...refused.values()].reduce((a, b) => a + b, 0);
      await this.audit.record('proof_failed', caller, {
        address,
        note: { code: 'proofs_refused', count, of: reqs.length, reasons: Object.fromEntries(refused) },
      });
    }
    return results;
  }

  /** A check's answer, and the claim to make for it when the caller may see that the archive holds the file. */
  private async claim(
    caller: Account,
    req: UploadCheckRequest,
  ): Promise<{ result: UploadCheckResult; claim?: ClaimRecord }> {
    const entry = await this.store.catalog.findByKey({ md5: req.md5, sha256: req.sha256, length: req.size });
    if (!entry || !(await this.scope.reveals(entry, caller))) return { result: { status: 'upload' } };
    // A clerk who sent (or proved) these bytes before is asked for none: a folder dropped again,
    // or a copy of a file sent a moment ago, costs neither side a read. It is also told so (and
    // when), to ask before counting it again; only its own entry in its own unit is read.
    const own = await this.store.ledger.uploadOf(entry.fileId, caller.id, caller.unit.id);
    const ownUpload = own && {
      fileId: entry.fileId,
      lastUploadTime: own.lastUploadTime.toISOString(),
      uploadCount: own.uploadCount,
    };
    // Skipped by the caller's own choice: no claim is held for it (nor counted among its outstanding ones).
    if (ownUpload && req.skipOwnUpload) return { result: { status: 'skip', ownUpload } };
    const ranges = own ? [] : pickRanges(entry.length);
    // Unchecked: a damaged chunk makes the proof fail, which is safe; checking would read whole chunks.
    const expected =
      ranges.length === 0
        ? []
        : (await this.store.content.readRanges(entry, ranges)).map((bytes) =>
            createHash('md5').update(bytes).digest('hex'),
          );
    const now = this.clock();
    const claimId = randomBytes(24).toString('base64url');
    const claim: ClaimRecord = {
      id: claimId,
      accountId: caller.id,
      fileId: entry.fileId,
      // Nothing is stored: the name is the upload's, with its folder (the ledger's).
      fileName: cleanUploadPath(req.name),
      contentType: cleanContentType(req.type),
      ranges,
      expected,
      expiresAt: new Date(now.getTime() + this.ttlMs),
    };
    return { result: { status: 'prove', claimId, ranges, ...(ownUpload ? { ownUpload } : {}) }, claim };
  }

  /**
   * One proof. A refused one is audited, up to AUDITED_REFUSALS_PER_MINUTE per account: past
   * that, one event says the rest of the minute's refusals go unrecorded one by one.
   */
  async prove(caller: Account, req: UploadProveRequest, address: string | null): Promise<UploadResult> {
    const answer = await this.answer(caller, req, address);
    if (!('refused' in answer)) return answer;
    const now = this.clock().getTime();
    const windowEnd = new Date((Math.floor(now / 60_000) + 1) * 60_000);
    const seen = await this.store.rateCounts.hit(`audit\nproof_failed\n${caller.id}`, windowEnd);
    if (seen <= AUDITED_REFUSALS_PER_MINUTE) {
      const { reason, ...file } = answer.refused;
      await this.audit.record('proof_failed', caller, { address, ...file, note: { code: 'proof_refused', reason } });
    } else if (seen === AUDITED_REFUSALS_PER_MINUTE + 1) {
      await this.audit.record('proof_failed', caller, {
        address,
        note: { code: 'proofs_unrecorded', limit: AUDITED_REFUSALS_PER_MINUTE },
      });
    }
    throw new ClaimRejectedError();
  }

  /** Takes the claim and counts the upload, or says why the proof is refused (not yet audited). */
  private async answer(
    caller: Account,
    req: UploadProveRequest,
    address: string | null,
  ): Promise<UploadResult | { refused: Refusal }> {
    const judged = await this.judge(caller, req, address, await this.store.claims.take(req.claimId));
    if (judged.kind === 'refused') return { refused: judged.refused };
    if (judged.kind === 'answered') return judged.result;
    if (judged.kind === 'same') throw new Error('a single proof has no earlier one');
    const counted = await this.store.ledger.count(judged.action);
    const { fileId } = judged.action.record;
    if (!(await this.stillCatalogued([fileId])).has(fileId)) {
      await this.takeBack(judged);
      return {
        refused: {
          fileId: judged.action.record.fileId,
          fileName: judged.action.record.fileName,
          reason: 'content_gone',
        },
      };
    }
    return this.finish(judged, counted);
  }

  /**
   * Which of the contents uploads were just counted for are still in the catalog (read side by
   * side: a batch's proofs ask once per file, not one after another). A content's deletion marks
   * the entry and then looks for uploads that count (docs/decisions/purge.md): a count that raced
   * it is seen by one of the two looks. Not seen by the deletion, the count is taken back
   * (`takeBack`) and the proof refused: the client uploads the file instead, never counted for
   * bytes gone.
   */
  private async stillCatalogued(fileIds: readonly string[]): Promise<Set<string>> {
    const unique = [...new Set(fileIds)];
    const found = await Promise.all(unique.map((fileId) => this.store.catalog.get(fileId)));
    return new Set(unique.filter((_, k) => found[k] !== undefined));
  }

  /** Takes back the count of an upload whose content went as it was counted. */
  private async takeBack(judged: Extract<Judgement, { kind: 'count' }>): Promise<void> {
    await this.store.ledger.reverse(judged.action.key, `gone:${judged.action.key}`);
  }

  /**
   * Judges the proof against its claim (taken already, or undefined): the upload to count, the answer already counted (a
   * proof sent again after its answer was lost), or why it is refused (not yet audited).
   */
  private async judge(
    caller: Account,
    req: UploadProveRequest,
    address: string | null,
    claim: ClaimRecord | undefined,
  ): Promise<Judgement> {
    const key = `claim:${req.claimId}`;
    if (claim === undefined) {
      // Taken already: by this caller's proof whose answer was lost (answered again, as counted),
      // or never made, expired, another's.
      const counted = await this.store.ledger.counted(key);
      // Counted, then taken back as its content was being deleted: refused again (below).
      if (counted && counted.accountId === caller.id && (await this.store.catalog.get(counted.fileId)))
        return {
          kind: 'answered',
          result: { status: counted.status, fileId: counted.fileId, uploadCount: counted.uploadCount },
        };
    }
    const valid =
      claim !== undefined &&
      claim.accountId === caller.id &&
      claim.expiresAt > this.clock() &&
      req.digests.length === claim.expected.length &&
      claim.expected.every((digest, i) => timingSafeEqual(Buffer.from(digest), Buffer.from(req.digests[i]!)));
    if (!valid) {
      // Only a claim of the caller's own names its file: another's stays unknown to the log too.
      const own = claim?.accountId === caller.id ? claim : undefined;
      return {
        kind: 'refused',
        refused: {
          fileId: own?.fileId,
          fileName: own?.fileName,
          reason:
            claim === undefined
              ? 'unknown_claim'
              : own === undefined
                ? 'others_claim'
                : claim.expiresAt <= this.clock()
                  ? 'expired_claim'
                  : 'wrong_digests',
        },
      };
    }
    const entry = await this.store.catalog.get(claim.fileId);
    // Deleted (or being deleted) since the check: nothing to count the upload for.
    if (!entry)
      return { kind: 'refused', refused: { fileId: claim.fileId, fileName: claim.fileName, reason: 'content_gone' } };
    const at = this.clock();
    // Counted once under the claim: a crash before the count leaves the claim taken and nothing
    // counted (the client's retry is refused and checks again); after it, a retry is answered above.
    return {
      kind: 'count',
      fileLength: entry.length,
      action: {
        key,
        statusUnlessStored: 'duplicate',
        record: {
          account: caller,
          fileId: claim.fileId,
          fileName: claim.fileName,
          contentType: claim.contentType,
          at,
          day: this.calendar.dayOf(at),
          fileLength: entry.length,
          // Nothing was sent: the whole file is space saved.
          carriedBytes: false,
        },
        event: () =>
          this.audit.eventOf('instant_upload', caller, { address, fileId: claim.fileId, fileName: claim.fileName }, at),
      },
    };
  }

  /** The answer to a counted proof. */
  private finish(judged: Extract<Judgement, { kind: 'count' }>, counted: CountedUpload): UploadResult {
    if (!counted.repeated) this.meter.counted({ via: 'instant', outcome: 'duplicate', bytes: judged.fileLength });
    return { status: 'duplicate', fileId: judged.action.record.fileId, uploadCount: counted.uploadCount };
  }
}
