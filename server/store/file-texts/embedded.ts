import type { Db, EmbeddedSchema } from '../embedded/database.js';
import { fileNumberOf } from '../embedded/file-numbers.js';
import { scopeWhere } from '../embedded/scopes.js';
import { REACH_WALK_MAX, searchPlan } from './plan.js';
import type { FileText, FileTexts, TextHit, TextSearchQuery, TextSearchResult } from './port.js';

/**
 * Files' texts, by the catalog's file number, and their terms in an FTS5 index whose rowid is that
 * number. The index keeps no copy of the terms (contentless, deletable) and no positions
 * (`detail=none`): a search asks only which files hold all its terms, so a term costs a posting
 * per file and nothing per occurrence. The terms are segmented before they come here (Chinese
 * has no spaces to split on); SQLite's tokenizer only splits them on the spaces between them.
 */
export const fileTextSchema: EmbeddedSchema = {
  tables: `
CREATE TABLE IF NOT EXISTS file_texts (
  file_no INTEGER PRIMARY KEY,
  file_id TEXT NOT NULL,
  text    TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS file_text_terms USING fts5(
  terms, content = '', contentless_delete = 1, detail = none, tokenize = 'unicode61 remove_diacritics 0'
);
`,
};

/** A term as an FTS5 string (a phrase of one token): quotes doubled, so no term reads as syntax. */
const phrase = (term: string) => `"${term.replaceAll('"', '""')}"`;

export class EmbeddedFileTexts implements FileTexts {
  private readonly putText;
  private readonly dropText;
  private readonly putTerms;
  private readonly dropTerms;
  private readonly hasText;
  private readonly countTexts;
  private readonly countMatches;
  private readonly lastFile;
  private readonly countReach;
  private readonly reachFiles;
  private readonly allMatches;
  private readonly texts;

  constructor(private readonly db: Db) {
    this.putText = db.prepare<[number, string, string]>(
      'INSERT OR REPLACE INTO file_texts (file_no, file_id, text) VALUES (?, ?, ?)',
    );
    this.dropText = db.prepare<[number]>('DELETE FROM file_texts WHERE file_no = ?');
    this.putTerms = db.prepare<[number, string]>('INSERT INTO file_text_terms (rowid, terms) VALUES (?, ?)');
    this.dropTerms = db.prepare<[number]>('DELETE FROM file_text_terms WHERE rowid = ?');
    this.hasText = db.prepare<[number], { found: number }>('SELECT 1 AS found FROM file_texts WHERE file_no = ?');
    this.countTexts = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM file_texts');
    this.countMatches = db.prepare<{ match: string; cap: number }, { n: number }>(
      'SELECT COUNT(*) AS n FROM (SELECT 1 FROM file_text_terms WHERE file_text_terms MATCH @match LIMIT @cap)',
    );
    this.lastFile = db.prepare<[], { n: number | null }>('SELECT MAX(file_no) AS n FROM file_texts');
    this.countReach = db.prepare<{ unit: string; cap: number }, { n: number }>(
      'SELECT COUNT(*) AS n FROM (SELECT 1 FROM ledger WHERE unit_id = @unit LIMIT @cap)',
    );
    this.reachFiles = db.prepare<[string], { file_no: number }>('SELECT file_no FROM ledger WHERE unit_id = ?');
    this.allMatches = db.prepare<[string], { file_no: number }>(
      'SELECT rowid AS file_no FROM file_text_terms WHERE file_text_terms MATCH ? ORDER BY rowid DESC',
    );
    this.texts = db.prepare<[string], { file_no: number; file_id: string; text: string }>(
      'SELECT file_no, file_id, text FROM file_texts WHERE file_no IN (SELECT value FROM json_each(?))',
    );
  }

  async put(texts: readonly FileText[]): Promise<void> {
    this.db.transaction(() => {
      for (const { fileId, text, terms } of texts) {
        const fileNo = fileNumberOf(this.db, fileId);
        if (fileNo === undefined) continue; // its content was deleted since it was read
        if (this.hasText.get(fileNo)) this.dropTerms.run(fileNo); // read again: its old terms go first
        this.putText.run(fileNo, fileId, text);
        this.putTerms.run(fileNo, terms.join(' '));
      }
    })();
  }

  async forget(fileId: string): Promise<void> {
    const fileNo = fileNumberOf(this.db, fileId);
    if (fileNo === undefined) return;
    this.db.transaction(() => {
      this.dropTerms.run(fileNo);
      this.dropText.run(fileNo);
    })();
  }

  async search(q: TextSearchQuery): Promise<TextSearchResult> {
    if (q.terms.length === 0) return { hits: [], more: false, plan: 'matches', examined: 0 };
    const match = q.terms.map(phrase).join(' AND ');
    const wanted = q.offset + q.limit + 1;
    const { scope } = q;
    // The unit's files counted first (a clerk's are few), the matches then only as far as them.
    const unitId = scope && 'unitId' in scope ? scope.unitId : undefined;
    const reach = unitId === undefined ? undefined : this.reachSize(unitId);
    const plan =
      reach === undefined
        ? 'matches'
        : searchPlan({
            reach,
            matches: this.countMatches.get({ match, cap: reach + 1 })!.n,
            wanted,
            files: this.lastFile.get()!.n ?? 0, // file numbers are given in order: about the archive's files
          });
    let found: number[];
    let examined: number | undefined;
    if (plan === 'reach') {
      // The unit's files read at once from its ledger entries (index ledger_unit_files), and the
      // matches walked, newest first, until enough of them are among those: FTS5 reads its
      // matches in order at a fraction of a microsecond each, but costs some 200 µs a lookup of
      // one file, so the unit's files are not looked up one by one. No entry is read per match.
      const files = new Set(this.reachFiles.all(unitId!).map((r) => r.file_no));
      found = [];
      examined = files.size;
      for (const { file_no } of this.allMatches.iterate(match)) {
        examined++;
        if (files.has(file_no) && found.push(file_no) >= wanted) break;
      }
    } else {
      // The matches, newest first, each in the view if the ledger has an entry of it there (index
      // ledger_file), as the unit-files listing reads it: nothing outside leaves the database. One
      // statement (measured: half the CPU time of reading the matches a batch at a time and the
      // ledger for each batch); what it read is not counted.
      const where = scopeWhere('l', scope);
      const inScope = scope ? `AND EXISTS (SELECT 1 FROM ledger l WHERE l.file_no = f.rowid AND ${where.sql})` : '';
      found = this.db
        .prepare<Record<string, unknown>, { file_no: number }>(
          `SELECT f.rowid AS file_no FROM file_text_terms f
            WHERE file_text_terms MATCH @match ${inScope}
            ORDER BY f.rowid DESC LIMIT @wanted`,
        )
        .all({ ...where.params, match, wanted })
        .map((r) => r.file_no);
    }
    const page = found.slice(q.offset, q.offset + q.limit);
    const texts = new Map(this.texts.all(JSON.stringify(page)).map((r) => [r.file_no, r]));
    const hits: TextHit[] = [];
    for (const fileNo of page) {
      const t = texts.get(fileNo);
      if (t) hits.push({ fileId: t.file_id, text: t.text });
    }
    return { hits, more: found.length > q.offset + q.limit, plan, ...(examined !== undefined && { examined }) };
  }

  /** The unit's ledger entries, counted up to one past the most a search reads. */
  private reachSize(unitId: string): number | undefined {
    const n = this.countReach.get({ unit: unitId, cap: REACH_WALK_MAX + 1 })!.n;
    return n > REACH_WALK_MAX ? undefined : n;
  }

  async has(fileId: string): Promise<boolean> {
    const fileNo = fileNumberOf(this.db, fileId);
    return fileNo !== undefined && this.hasText.get(fileNo) !== undefined;
  }

  async count(): Promise<number> {
    return this.countTexts.get()!.n;
  }
}
