import type { NearDuplicatePair } from '../near-duplicates/port.js';

/** A near_pairs row: written by the near-duplicate index, read also by the reports. */
export interface PairRow {
  file_a: string;
  file_b: string;
  method: NearDuplicatePair['method'];
  hamming: number | null;
  jaccard: number;
  containment: number;
  snippet_a: string;
  snippet_b: string;
  found_at: number;
  /** The pair's pages (PairPages) as JSON; null for a pair of documents not compared page by page. */
  pages: string | null;
}
