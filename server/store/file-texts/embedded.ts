import type { Db, EmbeddedSchema } from '../embedded/database.js';
import { fileNumberOf } from '../embedded/file-numbers.js';
import { scopeWhere } from '../embedded/scopes.js';
import type { FileText, FileTexts, TextHit, TextSearchQuery } from './port.js';

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

  constructor(private readonly db: Db) {
    this.putText = db.prepare<[number, string, string]>(
      'INSERT OR REPLACE INTO file_texts (file_no, file_id, text) VALUES (?, ?, ?)',
    );
    this.dropText = db.prepare<[number]>('DELETE FROM file_texts WHERE file_no = ?');
    this.putTerms = db.prepare<[number, string]>('INSERT INTO file_text_terms (rowid, terms) VALUES (?, ?)');
    this.dropTerms = db.prepare<[number]>('DELETE FROM file_text_terms WHERE rowid = ?');
    this.hasText = db.prepare<[number], { found: number }>('SELECT 1 AS found FROM file_texts WHERE file_no = ?');
    this.countTexts = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM file_texts');
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

  async search(q: TextSearchQuery): Promise<{ hits: TextHit[]; more: boolean }> {
    if (q.terms.length === 0) return { hits: [], more: false };
    // The scope reads the ledger's entries by file number (its index ledger_file), as the
    // unit-files listing does: a file outside the view never leaves the database.
    const where = scopeWhere('l', q.scope);
    const inScope = q.scope ? `AND EXISTS (SELECT 1 FROM ledger l WHERE l.file_no = f.rowid AND ${where.sql})` : '';
    const rows = this.db
      .prepare<Record<string, unknown>, { file_id: string; text: string }>(
        `SELECT t.file_id, t.text
           FROM (SELECT f.rowid AS file_no FROM file_text_terms f
                  WHERE file_text_terms MATCH @match ${inScope}
                  ORDER BY f.rowid DESC LIMIT @limit OFFSET @offset) m
           JOIN file_texts t ON t.file_no = m.file_no
          ORDER BY m.file_no DESC`,
      )
      .all({ ...where.params, match: q.terms.map(phrase).join(' AND '), limit: q.limit + 1, offset: q.offset });
    return {
      hits: rows.slice(0, q.limit).map((r) => ({ fileId: r.file_id, text: r.text })),
      more: rows.length > q.limit,
    };
  }

  async has(fileId: string): Promise<boolean> {
    const fileNo = fileNumberOf(this.db, fileId);
    return fileNo !== undefined && this.hasText.get(fileNo) !== undefined;
  }

  async count(): Promise<number> {
    return this.countTexts.get()!.n;
  }
}
