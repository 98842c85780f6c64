import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import type { ReceiptRow } from '../../../shared/receipts.js';
import { escapeRegex } from '../mongo/documents.js';
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
  /** When it was written (absent on pieces of an earlier version). */
  written?: Date;
}

/**
 * A write of a receipt under way (`uploads.receiptWrites`): recorded before its pieces are
 * written, removed once the receipt points at them and the pieces of the version it replaced are
 * gone. One left behind (a process killed between those writes) tells the sweep which receipt may
 * have pieces that nothing points at; without it, finding them would mean reading every piece.
 */
export interface ReceiptWriteDoc {
  _id: string;
  receipt: string;
  at: Date;
}

/** Rows per document: a receipt of 50,000 files would not fit in one (16 MB). */
const ROWS_PER_PIECE = 1000;

export function receiptCollections(db: Db) {
  return {
    receipts: db.collection<ReceiptDoc>('uploads.receipts'),
    receiptPieces: db.collection<ReceiptPieceDoc>('uploads.receiptRows'),
    receiptWrites: db.collection<ReceiptWriteDoc>('uploads.receiptWrites'),
  };
}

export type ReceiptCollections = ReturnType<typeof receiptCollections>;

export async function createReceiptIndexes(c: ReceiptCollections): Promise<void> {
  await c.receipts.createIndex({ accountId: 1, updatedAt: -1 }, { name: 'account_recent' });
  await c.receiptWrites.createIndex({ at: 1 }, { name: 'at' });
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
 * Without transactions: the write is recorded (`uploads.receiptWrites`), a new version's rows are
 * written, then the receipt is pointed at them, then the old version's rows go, then the record
 * of the write. A crash leaves either version whole; the rows nothing points at any more (the new
 * version's, killed before the receipt pointed at them; the old one's, killed before they went)
 * are removed by the sweep (`finishInterrupted`), found through the record left behind.
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
    const written = new Date();
    const write = { _id: `${_id}:${version}`, receipt: _id, at: written };
    await this.c.receiptWrites.insertOne(write);
    if (pieces > 0)
      await this.c.receiptPieces.insertMany(
        Array.from({ length: pieces }, (_, n) => ({
          _id: pieceId(doc, n),
          rows: r.rows.slice(n * ROWS_PER_PIECE, (n + 1) * ROWS_PER_PIECE),
          written,
        })),
      );
    const before = await this.c.receipts.findOneAndReplace({ _id }, doc, { upsert: true, returnDocument: 'before' });
    if (before && before.version !== version)
      await this.c.receiptPieces.deleteMany({
        _id: { $in: Array.from({ length: before.pieces }, (_, n) => pieceId(before, n)) },
      });
    await this.c.receiptWrites.deleteOne({ _id: write._id });
  }

  /**
   * The writes begun before `before` and left unfinished: each receipt's pieces that its version
   * does not use, written before `before` (a write of the receipt under way now is younger; its
   * pieces stay), removed, then the record of the write. Returns how many writes were cleared.
   * The pieces' ids have a 16-hex-digit version (randomBytes(8)).
   */
  async finishInterrupted(before: Date): Promise<number> {
    let cleared = 0;
    for (;;) {
      const writes = await this.c.receiptWrites
        .find({ at: { $lt: before } })
        .limit(100)
        .toArray();
      for (const write of writes) {
        const receipt = await this.c.receipts.findOne(
          { _id: write.receipt },
          { projection: { _id: 1, version: 1, pieces: 1 } },
        );
        const used = receipt ? Array.from({ length: receipt.pieces }, (_, n) => pieceId(receipt, n)) : [];
        await this.c.receiptPieces.deleteMany({
          $and: [
            // The receipt's pieces (their ids begin with its id: the `_id` index reads only those)…
            { _id: new RegExp(`^${escapeRegex(write.receipt)}:[0-9a-f]{16}:[0-9]+$`) },
            // …but those its version uses, and those a write under way now is writing.
            { _id: { $nin: used } },
            { $or: [{ written: { $lt: before } }, { written: { $exists: false } }] },
          ],
        });
        await this.c.receiptWrites.deleteOne({ _id: write._id });
      }
      cleared += writes.length;
      if (writes.length < 100) return cleared;
    }
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
