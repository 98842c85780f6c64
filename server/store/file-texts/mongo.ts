import type { AnyBulkWriteOperation, Db, ObjectId } from 'mongodb';
import type { ViewScope } from '../ledger/port.js';
import { objectIdOf } from '../mongo/documents.js';
import type { LedgerCollections } from '../mongo/ledger-documents.js';
import { viewScopeMatch } from '../mongo/scopes.js';
import type { FileText, FileTexts, TextHit, TextSearchQuery } from './port.js';

/** A file's text (`fileTexts.texts`), `_id` the file id; `Terms` what its postings are (to replace or remove them). */
export interface FileTextDoc {
  _id: ObjectId;
  Text: string;
  Terms: string[];
}

/**
 * One term of one file (`fileTexts.terms`): the index is a document per posting, keyed (Term,
 * FileID), never a list of files in one document, which would grow without bound for a common
 * word (docs/decisions/mongo-no-document-lists.md). No text index: the emulator has none, and
 * MongoDB's would split Chinese at spaces only.
 */
export interface TermDoc {
  Term: string;
  FileID: ObjectId;
}

/** How many files hold a term (`fileTexts.termCounts`), `_id` the term: a search walks its rarest term. */
export interface TermCountDoc {
  _id: string;
  Files: number;
}

export function fileTextCollections(db: Db) {
  return {
    fileTexts: db.collection<FileTextDoc>('fileTexts.texts'),
    fileTerms: db.collection<TermDoc>('fileTexts.terms'),
    termCounts: db.collection<TermCountDoc>('fileTexts.termCounts'),
  };
}

export type FileTextCollections = ReturnType<typeof fileTextCollections>;

export async function createFileTextIndexes(c: FileTextCollections): Promise<void> {
  await Promise.all([
    c.fileTerms.createIndex({ Term: 1, FileID: 1 }, { unique: true, name: 'term_file' }),
    c.fileTerms.createIndex({ FileID: 1 }, { name: 'file' }),
  ]);
}

/** Postings of the rarest term read at a time; the other terms and the scope are checked a batch at once. */
const BATCH = 1000;

export class MongoFileTexts implements FileTexts {
  constructor(private readonly c: FileTextCollections & Pick<LedgerCollections, 'ledger'>) {}

  async put(texts: readonly FileText[]): Promise<void> {
    for (const { fileId, text, terms } of texts) {
      const _id = objectIdOf(fileId);
      if (!_id) continue;
      const before = new Set((await this.c.fileTexts.findOne({ _id }, { projection: { Terms: 1 } }))?.Terms ?? []);
      const after = new Set(terms);
      const added = [...after].filter((t) => !before.has(t));
      const removed = [...before].filter((t) => !after.has(t));
      // The postings first, the text last: a search returns only files whose text is recorded, and
      // a put cut short is done again (its job is still queued).
      const postings: AnyBulkWriteOperation<TermDoc>[] = added.map((Term) => ({
        updateOne: { filter: { Term, FileID: _id }, update: { $setOnInsert: { Term, FileID: _id } }, upsert: true },
      }));
      if (removed.length > 0) postings.push({ deleteMany: { filter: { FileID: _id, Term: { $in: removed } } } });
      if (postings.length > 0) await this.c.fileTerms.bulkWrite(postings, { ordered: false });
      await this.changeCounts(added, 1);
      await this.changeCounts(removed, -1);
      await this.c.fileTexts.replaceOne({ _id }, { Text: text, Terms: [...after] }, { upsert: true });
    }
  }

  /** The counts only order a search's terms: one a little off makes it slower, never wrong. */
  private async changeCounts(terms: readonly string[], by: number): Promise<void> {
    if (terms.length === 0) return;
    await this.c.termCounts.bulkWrite(
      terms.map((_id) => ({ updateOne: { filter: { _id }, update: { $inc: { Files: by } }, upsert: true } })),
      { ordered: false },
    );
  }

  async forget(fileId: string): Promise<void> {
    const _id = objectIdOf(fileId);
    if (!_id) return;
    const doc = await this.c.fileTexts.findOne({ _id }, { projection: { Terms: 1 } });
    await this.c.fileTexts.deleteOne({ _id });
    // Postings too where the text is missing: a first put cut short leaves postings without it.
    await this.c.fileTerms.deleteMany({ FileID: _id });
    if (doc) await this.changeCounts(doc.Terms, -1);
  }

  async search(q: TextSearchQuery): Promise<{ hits: TextHit[]; more: boolean }> {
    if (q.terms.length === 0) return { hits: [], more: false };
    const counts = new Map(
      (await this.c.termCounts.find({ _id: { $in: [...q.terms] } }).toArray()).map((d) => [d._id, d.Files]),
    );
    const [rarest, ...others] = [...q.terms].sort((a, b) => (counts.get(a) ?? 0) - (counts.get(b) ?? 0));
    const wanted = q.offset + q.limit + 1;
    const found: ObjectId[] = [];
    let after: ObjectId | undefined;
    while (found.length < wanted) {
      const batch = (
        await this.c.fileTerms
          .find({ Term: rarest!, ...(after && { FileID: { $gt: after } }) }, { projection: { FileID: 1 } })
          .sort({ Term: 1, FileID: 1 })
          .limit(BATCH)
          .toArray()
      ).map((d) => d.FileID);
      if (batch.length === 0) break;
      after = batch[batch.length - 1];
      let ids = batch;
      for (const term of others) {
        if (ids.length === 0) break;
        const holding = await this.c.fileTerms
          .find({ Term: term, FileID: { $in: ids } }, { projection: { FileID: 1 } })
          .toArray();
        const held = new Set(holding.map((d) => d.FileID.toHexString()));
        ids = ids.filter((id) => held.has(id.toHexString()));
      }
      ids = await this.inScope(ids, q.scope);
      found.push(...ids);
      if (batch.length < BATCH) break;
    }
    const page = found.slice(q.offset, q.offset + q.limit);
    const texts = new Map(
      (await this.c.fileTexts.find({ _id: { $in: page } }, { projection: { Text: 1 } }).toArray()).map((d) => [
        d._id.toHexString(),
        d.Text,
      ]),
    );
    const hits: TextHit[] = [];
    for (const id of page) {
      const text = texts.get(id.toHexString());
      if (text !== undefined) hits.push({ fileId: id.toHexString(), text });
    }
    return { hits, more: found.length > q.offset + q.limit };
  }

  /** Of these files (in order), those with an upload in the view, as the ledger's entries say. */
  private async inScope(ids: ObjectId[], scope: ViewScope | undefined): Promise<ObjectId[]> {
    if (!scope || ids.length === 0) return ids;
    const entries = await this.c.ledger
      .find({ UploadFileID: { $in: ids }, ...viewScopeMatch(scope) }, { projection: { UploadFileID: 1 } })
      .toArray();
    const seen = new Set(entries.map((e) => e.UploadFileID.toHexString()));
    return ids.filter((id) => seen.has(id.toHexString()));
  }

  async has(fileId: string): Promise<boolean> {
    const _id = objectIdOf(fileId);
    return !!_id && (await this.c.fileTexts.findOne({ _id }, { projection: { _id: 1 } })) !== null;
  }

  async count(): Promise<number> {
    return this.c.fileTexts.countDocuments({});
  }
}
