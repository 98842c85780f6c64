import {
  RECEIPT_OUTCOMES,
  SKIPPED_AS_UPLOADED,
  type ReceiptOutcome,
  type ReceiptRequest,
  type ReceiptRow,
  type ReceiptRowView,
  type ReceiptSummary,
  type ReceiptView,
} from '../../shared/receipts.js';
import { cleanUploadPath } from '../../shared/file-name.js';
import { NotFoundError, ValidationError } from '../errors.js';
import type { Account } from '../store/accounts/port.js';
import type { ArchiveStore } from '../store/archive-store.js';
import type { ReceiptHeader, ReceiptRecord } from '../store/receipts/port.js';
import type { Quotas } from './quotas.js';

/** Problems named one by one in a refusal; past that, counted. */
const NAMED_PROBLEMS = 20;

/**
 * 上传清单: the page reports each file of a folder upload; the archive keeps it as the receipt,
 * with every finished file as the archive counted it (looked up by the upload's key or claim,
 * so a receipt cannot claim an upload that was not counted for the clerk).
 */
export class ReceiptService {
  constructor(
    private readonly store: Pick<ArchiveStore, 'receipts' | 'ledger' | 'withdrawals'>,
    private readonly quotas: Pick<Quotas, 'keepReceipt'>,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async put(account: Account, id: string, request: ReceiptRequest): Promise<ReceiptSummary> {
    const keys = request.rows.map((row) => countedKey(account, row));
    const counted = await this.store.ledger.countedMany(keys.filter((k): k is string => k !== undefined));
    const problems: Array<{ row: number; path: string; problem: string }> = [];
    const rows = request.rows.map((row, i): ReceiptRow => {
      const path = cleanUploadPath(row.path);
      if (row.outcome === 'failed')
        return { path, size: row.size, outcome: 'failed', reason: row.reason ?? 'unknown', at: row.at };
      // Counted nowhere, so there is no count to look up (and no file id to vouch for).
      if (row.outcome === 'skipped')
        return { path, size: row.size, outcome: 'skipped', reason: row.reason ?? SKIPPED_AS_UPLOADED, at: row.at };
      const key = keys[i];
      const answer = key === undefined ? undefined : counted.get(key);
      if (!answer || answer.accountId !== account.id) {
        problems.push({
          row: i + 1,
          path,
          problem: key === undefined ? 'names neither its upload key nor its claim' : 'was not counted for you',
        });
        return { path, size: row.size, outcome: 'failed', at: row.at };
      }
      return {
        path,
        size: row.size,
        outcome: row.claimId ? 'instant' : answer.status,
        fileId: answer.fileId,
        uploadCount: answer.uploadCount,
        uploadId: key,
        at: row.at,
      };
    });
    if (problems.length > 0)
      throw new ValidationError(
        `${problems.length} finished file(s) of the receipt do not match what the archive counted, e.g. row ${problems[0]!.row} (${problems[0]!.path}) ${problems[0]!.problem}.`,
        { rows: problems.slice(0, NAMED_PROBLEMS), count: problems.length },
      );
    const counts = { ...ZERO_COUNTS };
    for (const row of rows) counts[row.outcome]++;
    const record: ReceiptRecord = {
      id,
      accountId: account.id,
      title: request.title,
      startedAt: new Date(request.startedAt),
      updatedAt: this.clock(),
      counts,
      bytes: receiptBytes(request.title, rows),
      rows,
    };
    // Sent again as retries finish, a receipt counts only what it adds to the one kept.
    const kept = await this.store.receipts.sizeOf(account.id, id);
    await this.quotas.keepReceipt(account, {
      isNew: kept === undefined,
      addsBytes: Math.max(0, record.bytes - (kept ?? 0)),
    });
    await this.store.receipts.put(record);
    // The ledger learns which counted uploads came in this one folder upload: the same content
    // twice in it is a copy, not a re-send (the repeat-uploaders report tells them apart).
    await this.store.ledger.placeInReceipt(
      id,
      rows.flatMap((row) => (row.uploadId === undefined ? [] : [row.uploadId])),
    );
    return summaryOf(record);
  }

  async get(account: Account, id: string): Promise<ReceiptView> {
    const record = await this.store.receipts.get(account.id, id);
    if (!record) throw new NotFoundError('No receipt with this id is yours. Open it from your list of receipts.');
    const withdrawn = await this.store.withdrawals.openOf(
      record.rows.flatMap((row) => (row.uploadId === undefined ? [] : [row.uploadId])),
    );
    const firsts = firstOfEachFile(record.rows.filter((row) => row.uploadId && !withdrawn.has(row.uploadId)));
    const rows = record.rows.map((row): ReceiptRowView => {
      const w = row.uploadId === undefined ? undefined : withdrawn.get(row.uploadId);
      if (!w) {
        const first = row.uploadId === undefined || row.fileId === undefined ? undefined : firsts.get(row.fileId);
        return first && first !== row ? { ...row, sameAs: first.path } : row;
      }
      const withdrawal = {
        id: w.id,
        withdrawnAt: w.withdrawnAt.toISOString(),
        withdrawnBy: w.withdrawnBy.username,
        reason: w.reason,
        note: w.note,
      };
      return { ...row, withdrawal };
    });
    return { ...summaryOf(record), rows };
  }

  async list(account: Account, page: { limit: number; offset: number }) {
    const { items, total } = await this.store.receipts.list(account.id, page);
    return { items: items.map(summaryOf), total, ...page };
  }
}

/**
 * The row of each file counted first in a receipt (the lowest upload count, then the earliest,
 * then by path): the other rows of that file are its copies inside this one upload.
 */
function firstOfEachFile(counted: readonly ReceiptRow[]): Map<string, ReceiptRow> {
  const firsts = new Map<string, ReceiptRow>();
  for (const row of counted) {
    const seen = firsts.get(row.fileId!);
    if (!seen || earlier(row, seen)) firsts.set(row.fileId!, row);
  }
  return firsts;
}

function earlier(a: ReceiptRow, b: ReceiptRow): boolean {
  const [ca, cb] = [a.uploadCount ?? 0, b.uploadCount ?? 0];
  if (ca !== cb) return ca < cb;
  if (a.at !== b.at) return a.at < b.at;
  return a.path < b.path;
}

/** What a receipt takes to keep: its title and rows as JSON, in UTF-8 (as the embedded store holds them). */
export function receiptBytes(title: string, rows: ReceiptRow[]): number {
  return Buffer.byteLength(title) + Buffer.byteLength(JSON.stringify(rows));
}

/** The key the archive counted the upload under (server/http/idempotency-key.ts, the tus service, claims). */
function countedKey(account: Account, row: ReceiptRequest['rows'][number]): string | undefined {
  if (row.outcome === 'failed' || row.outcome === 'skipped') return undefined;
  if (row.claimId) return `claim:${row.claimId}`;
  if (!row.key) return undefined;
  return row.via === 'tus' ? `tus:${account.id}:${row.key}` : `file:${account.id}:${row.key}`;
}

const ZERO_COUNTS = Object.fromEntries(RECEIPT_OUTCOMES.map((o) => [o, 0])) as Record<ReceiptOutcome, number>;

function summaryOf(record: ReceiptHeader): ReceiptSummary {
  return {
    id: record.id,
    title: record.title,
    startedAt: record.startedAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    // Receipts kept before files could be skipped have no count of them.
    counts: { ...ZERO_COUNTS, ...record.counts },
    total: Object.values(record.counts).reduce((a, b) => a + b, 0),
  };
}
