import type { ViewScope } from '../ledger/port.js';

/**
 * A file's text as search keeps it (`file_texts`, `fileTexts.*`): the text extracted from the
 * document or recognised in its images (what near-duplicate detection reads), and its search
 * terms: the words of the normalised text (Chinese segmented), each once.
 */
export interface FileText {
  fileId: string;
  /** The text as read (cut at MAX_INDEXED_CHARACTERS by the service): what snippets are cut from. */
  text: string;
  /** Distinct search terms (normalised words, no spaces): a search finds files holding all of its terms. */
  terms: readonly string[];
}

export interface TextSearchQuery {
  /** Distinct normalised terms, at least one: files holding every one of them. */
  terms: readonly string[];
  /**
   * Only files with an upload in this view (as the ledger records it: a unit's, or a subtree's);
   * the whole archive without one. The store applies it itself, so a file outside never leaves it.
   */
  scope: ViewScope | undefined;
  limit: number;
  offset: number;
}

/** Which set a search walked (plan.ts): the files holding its terms, or a unit's files. */
export type SearchPlan = 'matches' | 'reach';

/** A page of files found, and what finding it cost. */
export interface TextSearchResult {
  hits: TextHit[];
  more: boolean;
  /** Which set the search walked (plan.ts): the files holding the terms, or a unit's files. */
  plan: SearchPlan;
  /**
   * How many files the search read to find the page: the files holding the terms (or its rarest
   * term) it walked, and the unit's files it read (plan.ts): what the search cost. Not counted
   * where one statement walks the matches (the embedded store's `matches`).
   */
  examined?: number;
}

/** A file found, and its text (the service cuts the snippet). */
export interface TextHit {
  fileId: string;
  text: string;
}

/**
 * The full-text index of files' texts: written by the background reading of texts (near-duplicate
 * detection's queue), removed with the content (purge, disposal), read by search.
 */
export interface FileTexts {
  /** Records files' texts and terms, each replacing what was recorded of the file before. */
  put(texts: readonly FileText[]): Promise<void>;
  /** Forgets a file's text and terms (its content was deleted); nothing when it had none. */
  forget(fileId: string): Promise<void>;
  /**
   * Files in the scope whose terms include every term of the query, newest catalogued first on
   * the embedded store and by file id on MongoDB (an order stable from page to page), a page of
   * them; `more` when files beyond the page match. It walks whichever is smaller, the files
   * holding the terms or a unit's files (plan.ts).
   */
  search(query: TextSearchQuery): Promise<TextSearchResult>;
  /** Whether the file's text is recorded. */
  has(fileId: string): Promise<boolean>;
  /** How many files' texts are recorded. */
  count(): Promise<number>;
}
