import { scannedPdf, scannedTiff } from './scans.js';
import { NOTICE, OTHER_NOTICE } from './texts.js';

/**
 * Two multi-page scans of partly the same paper (issue 44): a town scanned three pages to a TIFF,
 * another scanned three to a PDF, two of them the same two sheets (in another order, after a page
 * of its own). Printed on slips, a few lines a page, so that OCR reads them in seconds. The pages
 * of one's own are longer than the shared ones, so the two whole texts are not near-duplicates
 * (Jaccard about 0.35, containment about 0.55): only their pages match.
 */
const lines = (text: string, ...at: number[]) => at.map((i) => text.split('\n')[i]!).join('\n');
export const SHARED_PAGES = [lines(NOTICE, 1), lines(NOTICE, 3)] as const;
export const TIFF_ONLY_PAGE = lines(OTHER_NOTICE, 1, 3);
export const PDF_ONLY_PAGE = lines(OTHER_NOTICE, 4, 5);

/** TIFF pages: shared 1, shared 2, its own. PDF pages: its own, shared 2, shared 1. */
export const TIFF_PAGES = [SHARED_PAGES[0], SHARED_PAGES[1], TIFF_ONLY_PAGE];
export const PDF_PAGES = [PDF_ONLY_PAGE, SHARED_PAGES[1], SHARED_PAGES[0]];
/** The pages that match, TIFF page ↔ PDF page. */
export const MATCHING_PAGES = [
  { tiff: 1, pdf: 3 },
  { tiff: 2, pdf: 2 },
];

export async function scansSharingPages(): Promise<{ tiff: Buffer; pdf: Buffer }> {
  return { tiff: await scannedTiff(TIFF_PAGES, 'slip'), pdf: await scannedPdf(PDF_PAGES, 'slip') };
}
