import type { AnyBulkWriteOperation, Db, ObjectId } from 'mongodb';
import type { ViewScope } from '../ledger/port.js';
import { isDuplicateKey, objectIdOf } from '../mongo/documents.js';
import type { LedgerCollections } from '../mongo/ledger-documents.js';
import { viewScopeMatch } from '../mongo/scopes.js';
import { REACH_WALK_MAX, searchPlan, walk } from './plan.js';
import type { FileText, FileTexts, TextHit, TextSearchQuery, TextSearchResult } from './port.js';

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
    // A round's texts written together: their earlier terms read at once, then every posting, the
    // counts summed per term, and the texts, each one bulk write (a file put twice: its last text).
    const latest = new Map<string, { _id: ObjectId; text: string; terms: Set<string> }>();
    for (const { fileId, text, terms } of texts) {
      const _id = objectIdOf(fileId);
      if (_id) latest.set(_id.toHexString(), { _id, text, terms: new Set(terms) });
    }
    if (latest.size === 0) return;
    const earlier = await this.c.fileTexts
      .find({ _id: { $in: [...latest.values()].map((t) => t._id) } }, { projection: { Terms: 1 } })
      .toArray();
    const before = new Map(earlier.map((d) => [d._id.toHexString(), new Set(d.Terms)]));
    const postings: AnyBulkWriteOperation<TermDoc>[] = [];
    const counts = new Map<string, number>();
    const count = (term: string, by: number) => counts.set(term, (counts.get(term) ?? 0) + by);
    for (const [hex, { _id, terms }] of latest) {
      const was = before.get(hex) ?? new Set<string>();
      for (const Term of terms)
        if (!was.has(Term)) {
          postings.push({ insertOne: { document: { Term, FileID: _id } } });
          count(Term, 1);
        }
      const removed = [...was].filter((t) => !terms.has(t));
      if (removed.length > 0) postings.push({ deleteMany: { filter: { FileID: _id, Term: { $in: removed } } } });
      for (const term of removed) count(term, -1);
    }
    // The postings first, the texts last: a search returns only files whose text is recorded, and
    // a put cut short is done again (its job is still queued).
    if (postings.length > 0)
      try {
        await this.c.fileTerms.bulkWrite(postings, { ordered: false });
      } catch (err) {
        // Plain inserts (an upsert is a search and an insert): a posting already there, left by a
        // put cut short before its text, is refused by the index (term, file), and is as wanted.
        const errors = (err as { writeErrors?: unknown }).writeErrors;
        const list = Array.isArray(errors) ? errors : errors ? [errors] : [];
        if (list.length === 0 || !list.every(isDuplicateKey)) throw err;
      }
    const changed = [...counts].filter(([, by]) => by !== 0);
    if (changed.length > 0)
      await this.c.termCounts.bulkWrite(
        changed.map(([_id, by]) => ({ updateOne: { filter: { _id }, update: { $inc: { Files: by } }, upsert: true } })),
        { ordered: false },
      );
    await this.c.fileTexts.bulkWrite(
      [...latest.values()].map(({ _id, text, terms }) => ({
        replaceOne: { filter: { _id }, replacement: { Text: text, Terms: [...terms] }, upsert: true },
      })),
      { ordered: false },
    );
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

  async search(q: TextSearchQuery): Promise<TextSearchResult> {
    if (q.terms.length === 0) return { hits: [], more: false, plan: 'matches', examined: 0 };
    const counts = new Map(
      (await this.c.termCounts.find({ _id: { $in: [...q.terms] } }).toArray()).map((d) => [d._id, d.Files]),
    );
    const [rarest, ...others] = [...q.terms].sort((a, b) => (counts.get(a) ?? 0) - (counts.get(b) ?? 0));
    const wanted = q.offset + q.limit + 1;
    const { scope } = q;
    const unitId = scope && 'unitId' in scope ? scope.unitId : undefined;
    // The unit's entries counted only as far as the rarest term's files (its count bounds the matches).
    const rarestFiles = counts.get(rarest!) ?? 0;
    const reach =
      unitId === undefined
        ? undefined
        : await this.c.ledger.countDocuments(
            { 'UploadGeography.UploadGeoNameID': unitId },
            { limit: Math.min(rarestFiles, REACH_WALK_MAX) + 1 },
          );
    const plan = searchPlan({
      reach: reach !== undefined && reach <= REACH_WALK_MAX ? reach : undefined,
      matches: rarestFiles,
      wanted,
      files: reach === undefined ? 0 : await this.c.fileTexts.estimatedDocumentCount(),
    });
    let walked: { found: ObjectId[]; examined: number };
    if (plan === 'reach') {
      // The unit's files (its ledger entries, index unit_recent), in file id order, each batch
      // checked for every term by (term, file) (index term_file): only the unit's files are read.
      const files = await this.unitFiles(unitId!);
      let next = 0;
      walked = await walk<ObjectId>(
        async (_after, n) => files.slice(next, (next += n)),
        async (ids) => this.holding(q.terms, ids),
        wanted,
        BATCH,
      );
      walked.examined = files.length; // every file of the unit was read, to be put in order
    } else {
      // The rarest term's files in file id order (index term_file), each batch checked for the
      // other terms and for an entry in the view (the ledger's index file).
      walked = await walk<ObjectId>(
        async (after, n) =>
          (
            await this.c.fileTerms
              .find({ Term: rarest!, ...(after && { FileID: { $gt: after } }) }, { projection: { FileID: 1 } })
              .sort({ Term: 1, FileID: 1 })
              .limit(n)
              .toArray()
          ).map((d) => d.FileID),
        async (ids) => this.inScope(await this.holding(others, ids), scope),
        wanted,
        BATCH,
      );
    }
    const { found, examined } = walked;
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
    return { hits, more: found.length > q.offset + q.limit, plan, examined };
  }

  /** A unit's files (each once), in file id order, from its ledger entries. */
  private async unitFiles(unitId: string): Promise<ObjectId[]> {
    const entries = await this.c.ledger
      .find({ 'UploadGeography.UploadGeoNameID': unitId }, { projection: { UploadFileID: 1 } })
      .toArray();
    const byId = new Map(entries.map((e) => [e.UploadFileID.toHexString(), e.UploadFileID]));
    return [...byId.keys()].sort().map((hex) => byId.get(hex)!);
  }

  /** Of these files (in order), those holding every one of the terms. */
  private async holding(terms: readonly string[], ids: ObjectId[]): Promise<ObjectId[]> {
    for (const term of terms) {
      if (ids.length === 0) break;
      const holding = await this.c.fileTerms
        .find({ Term: term, FileID: { $in: ids } }, { projection: { FileID: 1 } })
        .toArray();
      const held = new Set(holding.map((d) => d.FileID.toHexString()));
      ids = ids.filter((id) => held.has(id.toHexString()));
    }
    return ids;
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
