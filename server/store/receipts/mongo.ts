import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import type { ReceiptRow } from '../../../shared/receipts.js';
import type { ReceiptHeader, ReceiptRecord, ReceiptStore } from './port.js';

export interface ReceiptDoc {
  _id: string;
  accountId: string;
  id: string;
  title: string;
  startedAt: Date;
  updatedAt: Date;
  counts: ReceiptHeader['counts'];
  /** receiptBytes of title and rows; absent on receipts of an earlier version (taken as 0). */
  bytes?: number;
  /** The version of the rows this receipt shows, and in how many pieces. */
  version: string;
  pieces: number;
}

export interface ReceiptPieceDoc {
  _id: string;
  rows: ReceiptRow[];
}

/** Rows per document: a receipt of 50,000 files would not fit in one (16 MB). */
const ROWS_PER_PIECE = 1000;

export function receiptCollections(db: Db) {
  return {
    receipts: db.collection<ReceiptDoc>('uploads.receipts'),
    receiptPieces: db.collection<ReceiptPieceDoc>('uploads.receiptRows'),
  };
}

export type ReceiptCollections = ReturnType<typeof receiptCollections>;

export async function createReceiptIndexes(c: ReceiptCollections): Promise<void> {
  await c.receipts.createIndex({ accountId: 1, updatedAt: -1 }, { name: 'account_recent' });
}

const pieceId = (doc: Pick<ReceiptDoc, '_id' | 'version'>, n: number) => `${doc._id}:${doc.version}:${n}`;

const header = (doc: ReceiptDoc): ReceiptHeader => ({
  id: doc.id,
  accountId: doc.accountId,
  title: doc.title,
  startedAt: doc.startedAt,
  updatedAt: doc.updatedAt,
  counts: doc.counts,
  bytes: doc.bytes ?? 0,
});

/**
 * Without transactions: a new version's rows are written first, then the receipt is pointed at
 * them, then the old version's rows go. A crash leaves either version whole, and at worst an
 * old version's rows that nothing points at any more.
 */
export class MongoReceiptStore implements ReceiptStore {
  constructor(private readonly c: ReceiptCollections) {}

  async put(r: ReceiptRecord): Promise<void> {
    const _id = `${r.accountId}:${r.id}`;
    const version = randomBytes(8).toString('hex');
    const pieces = Math.ceil(r.rows.length / ROWS_PER_PIECE);
    const doc: ReceiptDoc = {
      _id,
      accountId: r.accountId,
      id: r.id,
      title: r.title,
      startedAt: r.startedAt,
      updatedAt: r.updatedAt,
      counts: r.counts,
      bytes: r.bytes,
      version,
      pieces,
    };
    if (pieces > 0)
      await this.c.receiptPieces.insertMany(
        Array.from({ length: pieces }, (_, n) => ({
          _id: pieceId(doc, n),
          rows: r.rows.slice(n * ROWS_PER_PIECE, (n + 1) * ROWS_PER_PIECE),
        })),
      );
    const before = await this.c.receipts.findOneAndReplace({ _id }, doc, { upsert: true, returnDocument: 'before' });
    if (before && before.version !== version)
      await this.c.receiptPieces.deleteMany({
        _id: { $in: Array.from({ length: before.pieces }, (_, n) => pieceId(before, n)) },
      });
  }

  async get(accountId: string, id: string): Promise<ReceiptRecord | undefined> {
    const doc = await this.c.receipts.findOne({ _id: `${accountId}:${id}` });
    if (!doc) return undefined;
    const ids = Array.from({ length: doc.pieces }, (_, n) => pieceId(doc, n));
    const pieces = await this.c.receiptPieces.find({ _id: { $in: ids } }).toArray();
    const byId = new Map(pieces.map((p) => [p._id, p.rows]));
    return { ...header(doc), rows: ids.flatMap((pid) => byId.get(pid) ?? []) };
  }

  async sizeOf(accountId: string, id: string): Promise<number | undefined> {
    const doc = await this.c.receipts.findOne({ _id: `${accountId}:${id}` }, { projection: { bytes: 1 } });
    return doc ? (doc.bytes ?? 0) : undefined;
  }

  async list(
    accountId: string,
    page: { limit: number; offset: number },
  ): Promise<{ items: ReceiptHeader[]; total: number }> {
    const [docs, total] = await Promise.all([
      this.c.receipts.find({ accountId }).sort({ updatedAt: -1, _id: 1 }).skip(page.offset).limit(page.limit).toArray(),
      this.c.receipts.countDocuments({ accountId }),
    ]);
    return { items: docs.map(header), total };
  }
}
